package mcpadapter

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mcpadapter/mcpadapter/internal/testing/testserver"
	"github.com/mcpadapter/mcpadapter/mcpadaptertest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tmc/langchaingo/llms"
)

// TestErrorsSayPrefixOnce walks representative errors of every layer
// (configuration, discovery, calls, stored state and its resumption) and
// checks that each line of their text says "mcpadapter:" once, at its
// start: an error that wraps another of the package's does not repeat it.
func TestErrorsSayPrefixOnce(t *testing.T) {
	ctx := t.Context()
	errs := map[string]error{}
	add := func(name string, err error) {
		t.Helper()
		if err == nil {
			t.Fatalf("%s: no error", name)
		}
		errs[name] = err
	}
	_, err := New(Config{DialTimeout: -1, Servers: map[string]Server{"x": {}}})
	add("New", err)
	_, err = LoadConfig("/nonexistent/mcp.json", nil)
	add("LoadConfig", err)
	_, err = ParseConfig([]byte(`{"mcpServer": {"s": {"url": "localhost/mcp"}}}`), nil)
	add("ParseConfig", err)

	s := testserver.Full(testserver.Options{StateKey: stateKey})
	broken := func(context.Context) (mcp.Transport, error) { return nil, errors.New("connection refused") }
	a := newAdapter(t, Config{State: StateOptions{Key: []byte("a key of the tests, 32 bytes ...")}, Servers: map[string]Server{
		"s":      memServer(s, ModeAuto),
		"broken": {Transport: broken},
		"users":  {URL: "http://127.0.0.1:1/mcp", HeadersFor: bearer},
	}})
	_, err = a.ListTools(ctx, FromServers("nope"))
	add("unknown server", err)
	_, err = a.ListTools(ctx, FromServers("users"))
	add("no principal", err)
	_, err = a.ListTools(ctx, FromServers("s"))
	add("broken sibling", err)
	ts, err := a.ListToolsets(ctx, FromServers("s"), WithCacheMode(CacheBypass))
	if err == nil {
		t.Fatal("a discovery past the broken server succeeded")
	}
	b := newAdapter(t, Config{Servers: map[string]Server{"s": memServer(s, ModeAuto)}})
	set, err := b.ListTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_ = ts
	_, err = b.GetPrompt(ctx, "s", "nope", nil)
	add("unknown prompt", err)

	_, err = set.HandleToolCalls(ctx, &llms.ContentChoice{ToolCalls: []llms.ToolCall{mcpadaptertest.ToolCall("c1", "s__book_table", `{"party":4}`)}})
	var paused *PausedCalls
	if !errors.As(err, &paused) {
		t.Fatalf("HandleToolCalls: %v, want a pause", err)
	}
	_, err = set.ResumeToolCalls(ctx, paused, Approved())
	add("resume with the wrong resolution", err)
	_, err = set.ResumeToolCalls(ctx, &PausedCalls{}, Approved())
	add("resume without a pause", err)
	var intr *Interrupt
	errors.As(paused, &intr)
	stored, err := json.Marshal(intr)
	if err != nil {
		t.Fatal(err)
	}
	decoded := new(Interrupt)
	if err := json.Unmarshal(stored, decoded); err != nil {
		t.Fatal(err)
	}
	_, err = a.Resume(ctx, decoded, Answered(nil))
	add("resume unsealed state", err)
	elsewhere := new(Interrupt)
	if err := json.Unmarshal(stored, elsewhere); err != nil {
		t.Fatal(err)
	}
	elsewhere.Server = "gone"
	_, err = b.Resume(ctx, elsewhere, Answered(map[string]Answer{"date": {Action: Accept, Content: date("2026-09-18")}}))
	add("resume for an unknown server", err)
	add("decode interrupt", json.Unmarshal([]byte(`{"version": 99}`), new(Interrupt)))
	add("decode paused calls", json.Unmarshal([]byte(`{"calls": 3}`), new(PausedCalls)))
	add("decode approval", json.Unmarshal([]byte(`[]`), new(ApprovalRequired)))

	b.Close()
	_, err = set.Lookup("s__echo").Invoke(ctx, map[string]any{"text": "x"})
	add("call after Close", err)

	// The chain keeps what the text no longer repeats.
	for name, want := range map[string]error{
		"decode interrupt": ErrInvalidState, "decode paused calls": ErrInvalidState, "decode approval": ErrInvalidState,
		"resume without a pause": ErrInvalidState, "resume unsealed state": ErrTamperedState,
		"resume for an unknown server": ErrUnknownServer,
		"no principal":                 errNoPrincipal, "call after Close": ErrClosed,
	} {
		if !errors.Is(errs[name], want) {
			t.Errorf("%s: %v, want it to wrap %v", name, errs[name], want)
		}
	}
	if errors.As(errs["resume with the wrong resolution"], new(*Interrupt)) {
		t.Error("a refused resolution wraps the interrupt, as if the call asked again")
	}
	for name, err := range errs {
		for line := range strings.Lines(err.Error()) {
			if !strings.HasPrefix(line, "mcpadapter: ") || strings.Count(line, "mcpadapter:") != 1 {
				t.Errorf("%s: %q, want \"mcpadapter:\" once, at the start", name, line)
			}
		}
	}
}
