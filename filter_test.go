package mcpadapter

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/mcpadapter/mcpadapter/internal/testing/faultserver"
	"github.com/mcpadapter/mcpadapter/internal/testing/testserver"
	"github.com/tmc/langchaingo/llms"
)

// TestFilterStatic: Allow and Deny patterns, per server and adapter-wide,
// in both eras; ListTools and ListToolsets agree; a dropped tool cannot be
// called through HandleToolCalls.
func TestFilterStatic(t *testing.T) {
	for _, mode := range []Mode{ModeModern, ModeLegacy} {
		t.Run(string(mode), func(t *testing.T) {
			s := testserver.New(testserver.Options{}).AddWeather().AddFeatures()
			w := testserver.New(testserver.Options{}).AddWeather()
			a := newAdapter(t, Config{
				Servers: map[string]Server{
					"s": {Transport: s.Transport(), Mode: mode},
					"w": {Transport: w.Transport(), Mode: mode},
				},
				Filter: Filter{Allow: []string{"get_*", "e?ho", "[a-d]*"}, Deny: []string{"destroy", "big"}},
			})
			// "[a-d]*" allows add, big and destroy: Deny drops destroy and
			// big.
			want := []string{"s__get_weather", "s__echo", "s__add", "w__get_weather"}
			ts, err := a.ListTools(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if got := toolNames(ts); !slices.Equal(sorted(got), sorted(want)) {
				t.Fatalf("ListTools() = %q, want %q", got, want)
			}
			sets, err := a.ListToolsets(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if got := append(toolNames(sets["s"]), toolNames(sets["w"])...); !slices.Equal(sorted(got), sorted(want)) {
				t.Fatalf("ListToolsets() = %q, want %q (as ListTools)", got, want)
			}

			choice := &llms.ContentChoice{ToolCalls: []llms.ToolCall{
				{ID: "1", Type: "function", FunctionCall: &llms.FunctionCall{Name: "s__destroy", Arguments: `{"target":"x"}`}},
			}}
			msgs, err := ts.HandleToolCalls(t.Context(), choice)
			if err != nil || !strings.Contains(toolResponseText(msgs, 0), "not a valid tool") {
				t.Fatalf("HandleToolCalls(s__destroy) = %q, %v; want a not-a-valid-tool answer", toolResponseText(msgs, 0), err)
			}
			if n := s.Runs("destroy"); n != 0 {
				t.Fatalf("the filtered tool ran %d times", n)
			}
		})
	}
}

// TestFilterRunsBeforeNames: a tool whose name clashes after the name
// policy fails discovery unless a filter drops it.
func TestFilterRunsBeforeNames(t *testing.T) {
	s := testserver.New(testserver.Options{})
	s.AddTool("a.b")
	s.AddTool("a_b")
	a := newAdapter(t, Config{Servers: map[string]Server{"s": {Transport: s.Transport()}}, Filter: Filter{Deny: []string{"a.b"}}})
	ts, err := a.ListTools(t.Context())
	if err != nil || !slices.Equal(toolNames(ts), []string{"s__a_b"}) {
		t.Fatalf("ListTools() = %q, %v; want [s__a_b] and no error", toolNames(ts), err)
	}
	b := newAdapter(t, Config{Servers: map[string]Server{"s": {Transport: s.Transport()}},
		Filter: Filter{Keep: func(_ context.Context, _ string, d *ToolDescriptor) bool { return d.Name != "a_b" }}})
	if ts, err := b.ListTools(t.Context()); err != nil || !slices.Equal(toolNames(ts), []string{"s__a_b"}) {
		t.Fatalf("ListTools() with Keep = %q, %v; want [s__a_b] (from a.b) and no error", toolNames(ts), err)
	}
}

type roleKey struct{}

// TestFilterKeepPerContext: Keep sees each caller's context; the catalog is
// fetched once and shared, and each caller gets its own selection.
func TestFilterKeepPerContext(t *testing.T) {
	for _, mode := range []Mode{ModeModern, ModeLegacy} {
		t.Run(string(mode), func(t *testing.T) {
			s := testserver.New(testserver.Options{TTLMs: 60_000}).AddWeather().AddFeatures()
			a := newAdapter(t, Config{Servers: map[string]Server{"s": {Transport: s.Transport(), Mode: mode}},
				Filter: Filter{Keep: func(ctx context.Context, server string, d *ToolDescriptor) bool {
					return ctx.Value(roleKey{}) == "admin" || d.Annotations.ReadOnly()
				}}})
			admin := context.WithValue(t.Context(), roleKey{}, "admin")
			guest := context.WithValue(t.Context(), roleKey{}, "guest")
			for range 2 { // the second round is served from the cache
				all, err := a.ListTools(admin)
				if err != nil {
					t.Fatal(err)
				}
				few, err := a.ListTools(guest)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(toolNames(few), []string{"s__get_weather"}) {
					t.Fatalf("guest tools = %q, want [s__get_weather]", toolNames(few))
				}
				if len(all) < 5 || !slices.Contains(toolNames(all), "s__destroy") {
					t.Fatalf("admin tools = %q, want every tool", toolNames(all))
				}
				if all.Lookup("s__get_weather") != few.Lookup("s__get_weather") {
					t.Fatal("the two callers got different *Tool values for one cached tool")
				}
				sets, err := a.ListToolsets(guest)
				if err != nil || !slices.Equal(toolNames(sets["s"]), []string{"s__get_weather"}) {
					t.Fatalf("ListToolsets(guest) = %q, %v; want [s__get_weather]", toolNames(sets["s"]), err)
				}
			}
			if n := s.Count("tools/list"); n != 1 {
				t.Fatalf("tools/list was called %d times, want 1 (one cached catalog for both callers)", n)
			}
		})
	}
}

func TestFilterPredicates(t *testing.T) {
	yes, no := true, false
	tests := []struct {
		name                     string
		ann                      *ToolAnnotations
		readOnly, notDestructive bool
	}{
		{"no annotations", nil, false, false},
		{"no hints", &ToolAnnotations{Title: "t"}, false, false},
		{"read-only", &ToolAnnotations{ReadOnlyHint: &yes}, true, true},
		{"not destructive", &ToolAnnotations{DestructiveHint: &no}, false, true},
		{"destructive", &ToolAnnotations{DestructiveHint: &yes}, false, false},
	}
	ctx := t.Context()
	readOnly := func(_ context.Context, _ string, d *ToolDescriptor) bool { return d.Annotations.ReadOnly() }
	notDestructive := func(_ context.Context, _ string, d *ToolDescriptor) bool { return !d.Annotations.MayBeDestructive() }
	for _, tt := range tests {
		d := &ToolDescriptor{Name: "x", Annotations: tt.ann}
		if got := tt.ann.ReadOnly(); got != tt.readOnly {
			t.Errorf("%s: ReadOnly() = %t, want %t", tt.name, got, tt.readOnly)
		}
		if got := !tt.ann.MayBeDestructive(); got != tt.notDestructive {
			t.Errorf("%s: !MayBeDestructive() = %t, want %t", tt.name, got, tt.notDestructive)
		}
		if got := readOnly(ctx, "s", d) && notDestructive(ctx, "s", d); got != tt.readOnly {
			t.Errorf("%s: readOnly && notDestructive = %t, want %t", tt.name, got, tt.readOnly)
		}
	}
}

func TestFilterPatternsValidated(t *testing.T) {
	ok := testserver.New(testserver.Options{}).Transport()
	if _, err := New(Config{Servers: map[string]Server{"fs": {Transport: ok}}, Filter: Filter{Allow: []string{"read_["}}}); err == nil || !strings.Contains(err.Error(), `"read_["`) {
		t.Errorf("New(bad allow pattern) error = %v, want one naming the pattern", err)
	}
	if _, err := New(Config{Filter: Filter{Deny: []string{"[z-a"}}}); err == nil || !strings.Contains(err.Error(), "Filter") {
		t.Errorf("New(bad adapter pattern) error = %v, want one about the Filter", err)
	}
}

// TestFilterResume: an interrupt of a tool that the filters drop is not
// resumed (it may come from storage, or from before the filter).
func TestFilterResume(t *testing.T) {
	s := testserver.New(testserver.Options{}).AddBooking()
	a := newAdapter(t, Config{Servers: map[string]Server{"b": memServer(s, ModeModern)}})
	intr := must(t).interrupt(lookupTool(t, a, "b__book_table").Invoke(t.Context(), map[string]any{"party": 4}))
	answers := map[string]Answer{}
	for _, r := range intr.Requests {
		answers[r.Key] = Answer{Action: Decline}
	}
	filtered := newAdapter(t, Config{Servers: map[string]Server{"b": {Transport: s.Transport(), Mode: ModeModern}}, Filter: Filter{Deny: []string{"book_*"}}})
	runs := s.Runs("book_table")
	if _, err := filtered.Resume(t.Context(), intr, Answered(answers)); !errors.Is(err, errFiltered) {
		t.Fatalf("Resume() error = %v, want the filter's refusal", err)
	}
	if s.Runs("book_table") != runs {
		t.Fatal("the filtered tool ran")
	}
	if _, err := a.Resume(t.Context(), intr, Answered(answers)); err != nil {
		t.Fatalf("Resume() without a filter: %v", err)
	}
}

func sorted(s []string) []string { return slices.Sorted(slices.Values(s)) }

// TestVisibleBeforeDuplicates: the duplicate check sees what a discovery
// offers, after the one visibility pass: a tool for the app alone clashes
// only when IncludeAppOnly offers it, a task-required tool never on a
// server whose tasks are off, and Keep is asked about every tool Allow and
// Deny keep, hidden or not.
func TestVisibleBeforeDuplicates(t *testing.T) {
	peer := faultserver.NewPeer(faultserver.PeerOptions{Tools: []string{
		`{"name":"Poll","inputSchema":{"type":"object"},"_meta":{"ui":{"visibility":["app"]}}}`,
		`{"name":"poll","inputSchema":{"type":"object"}}`,
		`{"name":"Research","inputSchema":{"type":"object"},"execution":{"taskSupport":"required"}}`,
		`{"name":"research","inputSchema":{"type":"object"}}`,
	}})
	var asked []string
	a := newAdapter(t, Config{Servers: map[string]Server{"f": {Transport: peer.Transport(), Tasks: TasksOff}}, Filter: Filter{
		Keep: func(_ context.Context, _ string, d *ToolDescriptor) bool { asked = append(asked, d.Name); return true },
	}})
	ts, err := a.ListTools(t.Context())
	if got := strings.Join(toolNames(ts), ","); err != nil || got != "f__poll,f__research" {
		t.Fatalf("ListTools() = %s, %v; want f__poll,f__research", got, err)
	}
	if got := strings.Join(asked, ","); got != "Poll,poll,Research,research" {
		t.Errorf("Keep asked about %s, want every tool", got)
	}
	if _, err := a.ListTools(t.Context(), IncludeAppOnly()); !errors.Is(err, ErrDuplicateToolName) {
		t.Errorf("ListTools(IncludeAppOnly()) = %v, want ErrDuplicateToolName (Poll and poll)", err)
	}
}
