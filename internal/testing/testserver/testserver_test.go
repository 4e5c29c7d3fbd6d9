package testserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"image/png"
	"net/http"
	"os"
	"os/exec"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpadapter/mcpadapter/internal/testing/testserver"
)

func TestMain(m *testing.M) { testserver.Main(m) }

// legacyClient forces the legacy handshake.
var legacyClient = &mcp.ClientSessionOptions{ProtocolVersion: testserver.LegacyVersion}

// manual is a client that hands input-required results to the caller.
func manual() *mcp.ClientOptions {
	return &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{
			Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{},
		}},
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
	}
}

// connect connects a new client with opts over tr and closes it when t ends.
func connect(t *testing.T, tr mcp.Transport, opts *mcp.ClientOptions, sopts *mcp.ClientSessionOptions) *mcp.ClientSession {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, opts).Connect(t.Context(), tr, sopts)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// inMemory connects a client to s in memory.
func inMemory(t *testing.T, s *testserver.Server, opts *mcp.ClientOptions, sopts *mcp.ClientSessionOptions) *mcp.ClientSession {
	t.Helper()
	tr, err := s.Transport()(t.Context())
	if err != nil {
		t.Fatalf("Transport: %v", err)
	}
	return connect(t, tr, opts, sopts)
}

// stdio starts the test binary as a stdio server of kind and connects to it.
func stdio(t *testing.T, kind string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	command, args, env := testserver.Command(t, kind)
	cmd := exec.Command(command, args...)
	cmd.Env = os.Environ()
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Stderr = os.Stderr
	return connect(t, &mcp.CommandTransport{Command: cmd}, opts, nil)
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("CallTool(%q): %v", name, err)
	}
	return res
}

// textOf joins the text blocks of res.
func textOf(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func wantText(t *testing.T, res *mcp.CallToolResult, isError bool, want string) {
	t.Helper()
	if got := textOf(res); got != want || res.IsError != isError {
		t.Errorf("result = %q (isError %v); want %q (isError %v)", got, res.IsError, want, isError)
	}
}

func wantRPCError(t *testing.T, err error, code int64, msg string) {
	t.Helper()
	var we *jsonrpc.Error
	if !errors.As(err, &we) || we.Code != code || !strings.Contains(we.Message, msg) {
		t.Errorf("err = %v; want jsonrpc error %d %q", err, code, msg)
	}
}

func era(cs *mcp.ClientSession) string { return cs.InitializeResult().ProtocolVersion }

func TestEras(t *testing.T) {
	tests := []struct {
		name     string
		opts     testserver.Options
		sopts    *mcp.ClientSessionOptions
		want     string // negotiated version; "" means Connect fails with -32022
		discover int    // server/discover requests the middleware saw
		init     int    // initialize requests the middleware saw
	}{
		{"default", testserver.Options{}, nil, testserver.ModernVersion, 1, 0},
		{"default/legacy client", testserver.Options{}, legacyClient, testserver.LegacyVersion, 0, 1},
		{"legacy", testserver.Options{Legacy: true}, nil, testserver.LegacyVersion, 0, 1},
		{"nodiscover", testserver.Options{NoDiscover: true}, nil, testserver.LegacyVersion, 1, 1},
		{"modernonly", testserver.Options{ModernOnly: true}, nil, testserver.ModernVersion, 1, 0},
		{"modernonly/legacy client", testserver.Options{ModernOnly: true}, legacyClient, "", 0, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := testserver.New(tc.opts).AddFeatures()
			tr, err := s.Transport()(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(t.Context(), tr, tc.sopts)
			if tc.want == "" {
				wantRPCError(t, err, mcp.CodeUnsupportedProtocolVersion, "modern-only")
			} else {
				if err != nil {
					t.Fatalf("Connect: %v", err)
				}
				defer cs.Close()
				if got := era(cs); got != tc.want {
					t.Errorf("negotiated %q; want %q", got, tc.want)
				}
				wantText(t, call(t, cs, "era", nil), false, tc.want)
				if got := cs.InitializeResult().ServerInfo.Name; got != "test-server" {
					t.Errorf("server name = %q; want test-server", got)
				}
			}
			if got := s.Count("server/discover"); got != tc.discover {
				t.Errorf("Count(server/discover) = %d; want %d", got, tc.discover)
			}
			if got := s.Count("initialize"); got != tc.init {
				t.Errorf("Count(initialize) = %d; want %d", got, tc.init)
			}
		})
	}
}

func TestOptionsDefaults(t *testing.T) {
	s := testserver.New(testserver.Options{Instructions: "be nice", Version: "2.0.0"})
	if got := s.Opts(); got.Name != "test-server" || got.Version != "2.0.0" {
		t.Errorf("Opts() = %+v", got)
	}
	for _, sopts := range []*mcp.ClientSessionOptions{nil, legacyClient} {
		cs := inMemory(t, s, nil, sopts)
		ir := cs.InitializeResult()
		if ir.Instructions != "be nice" || ir.ServerInfo.Version != "2.0.0" {
			t.Errorf("%s: instructions %q, version %q", era(cs), ir.Instructions, ir.ServerInfo.Version)
		}
	}
}

func TestConnectDelay(t *testing.T) {
	s := testserver.New(testserver.Options{ConnectDelay: time.Hour})
	tr, _ := s.Transport()(t.Context())
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	_, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, tr, legacyClient)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Connect = %v; want deadline exceeded", err)
	}
}

func TestWeather(t *testing.T) {
	for _, sopts := range []*mcp.ClientSessionOptions{nil, legacyClient} {
		s := testserver.New(testserver.Options{}).AddWeather()
		cs := inMemory(t, s, nil, sopts)
		t.Run(era(cs), func(t *testing.T) {
			lt, err := cs.ListTools(t.Context(), nil)
			if err != nil || len(lt.Tools) != 1 {
				t.Fatalf("ListTools = %v, %v", lt, err)
			}
			tool := lt.Tools[0]
			if tool.Name != "get_weather" || tool.Annotations == nil || !tool.Annotations.ReadOnlyHint ||
				tool.Annotations.DestructiveHint == nil || *tool.Annotations.DestructiveHint ||
				tool.Annotations.Title != "Weather" || tool.Meta["acme/owner"] != "team-weather" {
				t.Errorf("descriptor = %+v, annotations %+v", tool, tool.Annotations)
			}
			schema := tool.InputSchema.(map[string]any)
			if !reflect.DeepEqual(schema["required"], []any{"city"}) || schema["additionalProperties"] != false {
				t.Errorf("input schema = %v", schema)
			}

			res := call(t, cs, "get_weather", map[string]any{"city": "Paris"})
			wantText(t, res, false, "Sunny, 21°C in Paris")
			want := map[string]any{"city": "Paris", "tempC": float64(21), "sky": "sunny"}
			if !reflect.DeepEqual(res.StructuredContent, want) {
				t.Errorf("structured = %#v; want %#v", res.StructuredContent, want)
			}
			wantText(t, call(t, cs, "get_weather", map[string]any{"city": "Oslo", "unit": "f"}), false, "Sunny, 69°F in Oslo")
			if got := s.LastArgs("get_weather"); !reflect.DeepEqual(got, map[string]any{"city": "Oslo", "unit": "f"}) {
				t.Errorf("LastArgs = %v", got)
			}
			if res := call(t, cs, "get_weather", map[string]any{}); !res.IsError {
				t.Errorf("missing city: isError false")
			}
			if res := call(t, cs, "get_weather", map[string]any{"city": "X", "unit": "k"}); !res.IsError {
				t.Errorf("bad unit: isError false")
			}
			if got := s.Runs("get_weather"); got != 4 {
				t.Errorf("Runs = %d; want 4", got)
			}
			if got := s.Count("tools/call"); got != 4 {
				t.Errorf("Count(tools/call) = %d; want 4", got)
			}
			if s.LastArgs("nope") != nil || s.Runs("nope") != 0 {
				t.Errorf("unknown tool has a record")
			}
		})
	}
}

func TestFeatures(t *testing.T) {
	for _, sopts := range []*mcp.ClientSessionOptions{nil, legacyClient} {
		s := testserver.New(testserver.Options{}).AddFeatures()
		cs := inMemory(t, s, nil, sopts)
		t.Run(era(cs), func(t *testing.T) {
			wantText(t, call(t, cs, "echo", map[string]any{"text": "hi"}), false, "hi")
			res := call(t, cs, "add", map[string]any{"a": 1.5, "b": 2})
			wantText(t, res, false, "3.5")
			if !reflect.DeepEqual(res.StructuredContent, map[string]any{"sum": 3.5}) {
				t.Errorf("add structured = %v", res.StructuredContent)
			}
			wantText(t, call(t, cs, "fail", nil), true, "it failed")

			_, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "rpc_error"})
			wantRPCError(t, err, -32001, "backend unavailable")

			res = call(t, cs, "image", nil)
			img, ok := res.Content[0].(*mcp.ImageContent)
			if !ok || img.MIMEType != "image/png" {
				t.Fatalf("image content = %#v", res.Content)
			}
			if _, err := png.Decode(bytes.NewReader(img.Data)); err != nil {
				t.Errorf("image is not a PNG: %v", err)
			}

			res = call(t, cs, "media", nil)
			var kinds []string
			for _, c := range res.Content {
				kinds = append(kinds, reflect.TypeOf(c).Elem().Name())
			}
			wantKinds := []string{"TextContent", "ImageContent", "AudioContent", "ResourceLink", "EmbeddedResource", "EmbeddedResource"}
			if !reflect.DeepEqual(kinds, wantKinds) {
				t.Errorf("media kinds = %v; want %v", kinds, wantKinds)
			}
			if er, ok := res.Content[5].(*mcp.EmbeddedResource); !ok || !bytes.Equal(er.Resource.Blob, []byte{0, 1, 2, 3}) {
				t.Errorf("embedded blob = %#v", res.Content[5])
			}
			if got := call(t, cs, "media_images", nil); len(got.Content) != 2 {
				t.Errorf("media_images = %d blocks", len(got.Content))
			}

			res = call(t, cs, "structured_only", nil)
			if len(res.Content) != 0 || !reflect.DeepEqual(res.StructuredContent, map[string]any{"answer": float64(42)}) {
				t.Errorf("structured_only = %#v, %#v", res.Content, res.StructuredContent)
			}
			wantText(t, call(t, cs, "destroy", map[string]any{"target": "db"}), false, "destroyed db")
			wantText(t, call(t, cs, "pid", nil), false, strconv.Itoa(os.Getpid()))
			if res := call(t, cs, "exit", nil); !res.IsError {
				t.Errorf("exit in memory: isError false")
			}

			for tool := range cs.Tools(t.Context(), nil) {
				if tool.Name == "destroy" {
					if a := tool.Annotations; a == nil || a.DestructiveHint == nil || !*a.DestructiveHint {
						t.Errorf("destroy annotations = %+v", a)
					}
				}
			}
		})
	}
}

func TestProgress(t *testing.T) {
	for _, sopts := range []*mcp.ClientSessionOptions{nil, legacyClient} {
		got := make(chan float64, 4)
		opts := &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			if req.Params.ProgressToken == "p-1" && req.Params.Message == "working" && req.Params.Total == 2 {
				got <- req.Params.Progress
			}
		}}
		cs := inMemory(t, testserver.New(testserver.Options{}).AddFeatures(), opts, sopts)
		params := &mcp.CallToolParams{Name: "progress"}
		params.SetProgressToken("p-1")
		res, err := cs.CallTool(t.Context(), params)
		if err != nil {
			t.Fatal(err)
		}
		wantText(t, res, false, "done")
		if p1, p2 := <-got, <-got; p1 != 1 || p2 != 2 {
			t.Errorf("%s: progress = %v, %v; want 1, 2", era(cs), p1, p2)
		}
	}
}

func TestLog(t *testing.T) {
	for _, sopts := range []*mcp.ClientSessionOptions{nil, legacyClient} {
		logs := make(chan *mcp.LoggingMessageParams, 4)
		opts := &mcp.ClientOptions{LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			logs <- req.Params
		}}
		cs := inMemory(t, testserver.New(testserver.Options{}).AddFeatures(), opts, sopts)
		// Without a level the message is dropped.
		wantText(t, call(t, cs, "log", map[string]any{"message": "dropped"}), false, "logged")
		params := &mcp.CallToolParams{Name: "log", Arguments: map[string]any{"message": "hello", "level": "warning"}}
		if era(cs) == testserver.ModernVersion {
			params.Meta = mcp.Meta{mcp.MetaKeyLogLevel: "info"}
		} else if err := cs.SetLoggingLevel(t.Context(), &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
			t.Fatal(err)
		}
		if _, err := cs.CallTool(t.Context(), params); err != nil {
			t.Fatal(err)
		}
		if got := <-logs; got.Data != "hello" || got.Level != "warning" || got.Logger != "testserver" {
			t.Errorf("%s: log = %+v", era(cs), got)
		}
		if len(logs) != 0 {
			t.Errorf("%s: %d extra log messages", era(cs), len(logs))
		}
	}
}

func TestBig(t *testing.T) {
	cs := inMemory(t, testserver.New(testserver.Options{}).AddFeatures(), nil, nil)
	if got := textOf(call(t, cs, "big", map[string]any{"size": 100000})); len(got) != 100000 {
		t.Errorf("big = %d bytes", len(got))
	}
	if res := call(t, cs, "big", map[string]any{"size": testserver.MaxBig + 1}); !res.IsError {
		t.Errorf("too big: isError false")
	}
}

func TestSlow(t *testing.T) {
	for _, sopts := range []*mcp.ClientSessionOptions{nil, legacyClient} {
		s := testserver.New(testserver.Options{}).AddFeatures()
		cs := inMemory(t, s, nil, sopts)
		t.Run(era(cs), func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			errc := make(chan error, 1)
			go func() {
				_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow"})
				errc <- err
			}()
			<-s.SlowStarted()
			cancel()
			if err := <-errc; !errors.Is(err, context.Canceled) {
				t.Errorf("cancelled slow = %v; want context.Canceled", err)
			}
			<-s.Cancelled()

			go func() {
				_, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "slow"})
				errc <- err
			}()
			<-s.SlowStarted()
			s.Release()
			s.Release() // idempotent
			if err := <-errc; err != nil {
				t.Errorf("released slow = %v", err)
			}
			wantText(t, call(t, cs, "slow", nil), false, "released")
		})
	}
}

func TestBookingManual(t *testing.T) {
	s := testserver.New(testserver.Options{}).AddBooking()
	cs := inMemory(t, s, manual(), nil)
	if era(cs) != testserver.ModernVersion {
		t.Fatalf("era %s", era(cs))
	}
	ask := func(tool string, args any) *mcp.CallToolResult {
		t.Helper()
		res := call(t, cs, tool, args)
		if !res.NeedsInput() || res.RequestState == "" {
			t.Fatalf("%s: NeedsInput %v, state %q, content %q", tool, res.NeedsInput(), res.RequestState, textOf(res))
		}
		return res
	}
	resume := func(tool string, args any, state string, answers mcp.InputResponseMap) (*mcp.CallToolResult, error) {
		return cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: args, InputResponses: answers, RequestState: state})
	}
	accept := func(k, v string) mcp.InputResponseMap {
		return mcp.InputResponseMap{k: &mcp.ElicitResult{Action: "accept", Content: map[string]any{k: v}}}
	}
	party := map[string]any{"party": 4}

	res := ask("book_table", party)
	ep, ok := res.InputRequests["date"].(*mcp.ElicitParams)
	if !ok || ep.Message != "Which date?" || len(res.InputRequests) != 1 {
		t.Fatalf("input requests = %#v", res.InputRequests)
	}
	schema, _ := json.Marshal(ep.RequestedSchema)
	if string(schema) != `{"properties":{"date":{"format":"date","type":"string"}},"required":["date"],"type":"object"}` {
		t.Errorf("requested schema = %s", schema)
	}
	state := res.RequestState

	got, err := resume("book_table", party, state, accept("date", "2026-09-01"))
	if err != nil {
		t.Fatal(err)
	}
	wantText(t, got, false, "Booked a table for 4 on 2026-09-01")
	for action, want := range map[string]string{"decline": "booking declined by user", "cancel": "booking cancelled by user"} {
		got, err := resume("book_table", party, state, mcp.InputResponseMap{"date": &mcp.ElicitResult{Action: action}})
		if err != nil {
			t.Fatal(err)
		}
		wantText(t, got, true, want)
	}
	_, err = resume("book_table", party, state+"x", accept("date", "2026-09-01"))
	wantRPCError(t, err, jsonrpc.CodeInvalidParams, "invalid requestState")
	// A state sealed by another server, or for another tool, is refused too.
	other := testserver.New(testserver.Options{}).AddBooking()
	ocs := inMemory(t, other, manual(), nil)
	_, err = ocs.CallTool(t.Context(), &mcp.CallToolParams{Name: "book_table", Arguments: party, InputResponses: accept("date", "d"), RequestState: state})
	wantRPCError(t, err, jsonrpc.CodeInvalidParams, "invalid requestState")
	_, err = resume("book_two_rounds", party, state, accept("date", "d"))
	wantRPCError(t, err, jsonrpc.CodeInvalidParams, "invalid requestState")
	if got := s.Runs("book_table"); got != 5 {
		t.Errorf("Runs(book_table) = %d; want 5", got)
	}

	// Two rounds, a new state per round.
	res = ask("book_two_rounds", map[string]any{"party": 2})
	res2, err := resume("book_two_rounds", nil, res.RequestState, accept("date", "2026-01-02"))
	if err != nil || !res2.NeedsInput() || res2.RequestState == res.RequestState {
		t.Fatalf("round 2 = %+v, %v", res2, err)
	}
	if tp, ok := res2.InputRequests["time"].(*mcp.ElicitParams); !ok || tp.Message != "Which time?" {
		t.Fatalf("round 2 requests = %#v", res2.InputRequests)
	}
	res3, err := resume("book_two_rounds", nil, res2.RequestState, accept("time", "19:30"))
	if err != nil {
		t.Fatal(err)
	}
	wantText(t, res3, false, "Booked a table for 2 on 2026-01-02 at 19:30")

	// Sampling and roots.
	res = ask("ask_sampling", nil)
	if _, ok := res.InputRequests["summary"].(*mcp.CreateMessageWithToolsParams); !ok {
		t.Errorf("sampling request = %#v", res.InputRequests)
	}
	got, err = resume("ask_sampling", nil, res.RequestState, mcp.InputResponseMap{"summary": &mcp.CreateMessageResult{
		Role: "assistant", Model: "m", Content: &mcp.TextContent{Text: "MCP connects tools."},
	}})
	if err != nil {
		t.Fatal(err)
	}
	wantText(t, got, false, "model said: MCP connects tools.")
	res = ask("ask_roots", nil)
	if _, ok := res.InputRequests["roots"].(*mcp.ListRootsParams); !ok {
		t.Errorf("roots request = %#v", res.InputRequests)
	}
	got, err = resume("ask_roots", nil, res.RequestState, mcp.InputResponseMap{"roots": &mcp.ListRootsResult{Roots: []*mcp.Root{{URI: "file:///a"}}}})
	if err != nil {
		t.Fatal(err)
	}
	wantText(t, got, false, "roots: file:///a")

	// ask_forever keeps asking.
	res = ask("ask_forever", nil)
	for round := 2; round <= 4; round++ {
		res, err = resume("ask_forever", nil, res.RequestState, mcp.InputResponseMap{"again": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"ok": true}}})
		if err != nil || !res.NeedsInput() {
			t.Fatalf("ask_forever round %d = %+v, %v", round, res, err)
		}
		if msg := res.InputRequests["again"].(*mcp.ElicitParams).Message; msg != "Again? (round "+strconv.Itoa(round)+")" {
			t.Errorf("round %d message %q", round, msg)
		}
	}

	// URL mode.
	res = ask("ask_url", nil)
	up, ok := res.InputRequests["consent"].(*mcp.ElicitParams)
	if !ok || up.Mode != "url" || up.URL != testserver.ConsentURL || up.ElicitationID != testserver.ConsentElicitationID {
		t.Fatalf("url request = %#v", res.InputRequests["consent"])
	}
	got, err = resume("ask_url", nil, res.RequestState, mcp.InputResponseMap{"consent": &mcp.ElicitResult{Action: "accept"}})
	if err != nil {
		t.Fatal(err)
	}
	wantText(t, got, false, "consent given")
	got, err = resume("ask_url", nil, res.RequestState, mcp.InputResponseMap{"consent": &mcp.ElicitResult{Action: "decline"}})
	if err != nil {
		t.Fatal(err)
	}
	wantText(t, got, true, "consent declined by user")

	// Live elicitation is impossible on modern sessions.
	if res := call(t, cs, "ask_live", nil); !res.IsError || !strings.HasPrefix(textOf(res), "Elicit failed:") {
		t.Errorf("ask_live on modern = %q (isError %v)", textOf(res), res.IsError)
	}
}

// TestBookingStateKey checks that a shared StateKey lets a state survive a
// server restart.
func TestBookingStateKey(t *testing.T) {
	opts := testserver.Options{StateKey: "k1"}
	cs1 := inMemory(t, testserver.New(opts).AddBooking(), manual(), nil)
	res := call(t, cs1, "book_table", map[string]any{"party": 3})
	cs2 := inMemory(t, testserver.New(opts).AddBooking(), manual(), nil)
	got, err := cs2.CallTool(t.Context(), &mcp.CallToolParams{Name: "book_table", RequestState: res.RequestState,
		InputResponses: mcp.InputResponseMap{"date": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"date": "d"}}}})
	if err != nil {
		t.Fatal(err)
	}
	wantText(t, got, false, "Booked a table for 3 on d")
}

// TestBookingAuto lets the SDK answer input requests: by multi round-trip on
// modern sessions, by live elicitation/create on legacy ones.
func TestBookingAuto(t *testing.T) {
	for _, tc := range []struct {
		name  string
		opts  testserver.Options
		sopts *mcp.ClientSessionOptions
		runs  int // handler runs of one book_table call
	}{
		{"modern", testserver.Options{}, nil, 2},
		{"legacy server", testserver.Options{Legacy: true}, nil, 2},
		{"legacy client", testserver.Options{}, legacyClient, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var elicited []string
			var mu sync.Mutex
			opts := &mcp.ClientOptions{
				ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					mu.Lock()
					elicited = append(elicited, req.Params.Message)
					mu.Unlock()
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"date": "2026-12-24"}}, nil
				},
			}
			s := testserver.New(tc.opts).AddBooking()
			cs := inMemory(t, s, opts, tc.sopts)
			wantText(t, call(t, cs, "book_table", map[string]any{"party": 2}), false, "Booked a table for 2 on 2026-12-24")
			if got := s.Runs("book_table"); got != tc.runs {
				t.Errorf("Runs = %d; want %d", got, tc.runs)
			}
			if got := s.Count("tools/call"); tc.name != "modern" && got != 1 {
				t.Errorf("legacy Count(tools/call) = %d; want 1 (the shim retries inside the call)", got)
			}
			if era(cs) != testserver.ModernVersion {
				wantText(t, call(t, cs, "ask_live", nil), false, "live elicitation accepted: 2026-12-24")
			}
			mu.Lock()
			defer mu.Unlock()
			if len(elicited) == 0 || elicited[0] != "Which date?" {
				t.Errorf("elicited = %q", elicited)
			}
		})
	}
}

func TestResources(t *testing.T) {
	s := testserver.New(testserver.Options{PageSize: 2, TTLMs: 60000}).AddResources().AddWeather()
	for _, sopts := range []*mcp.ClientSessionOptions{nil, legacyClient} {
		cs := inMemory(t, s, nil, sopts)
		page, err := cs.ListResources(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Resources) != 2 || page.NextCursor == "" || page.TTLMs != 60000 {
			t.Errorf("%s: first page = %d resources, cursor %q, ttl %d", era(cs), len(page.Resources), page.NextCursor, page.TTLMs)
		}
		var uris []string
		for r, err := range cs.Resources(t.Context(), nil) {
			if err != nil {
				t.Fatal(err)
			}
			uris = append(uris, r.URI)
		}
		if len(uris) != 3 {
			t.Errorf("resources = %v; want %v", uris, testserver.ResourceURIs())
		}
		lt, err := cs.ListTools(t.Context(), nil)
		if err != nil || lt.TTLMs != 60000 {
			t.Errorf("ListTools ttl = %v, %v", lt, err)
		}
		tpl, err := cs.ListResourceTemplates(t.Context(), nil)
		if err != nil || len(tpl.ResourceTemplates) != 1 || tpl.ResourceTemplates[0].URITemplate != testserver.UserTemplate {
			t.Errorf("templates = %v, %v", tpl, err)
		}
		rr, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "mem://docs/readme"})
		if err != nil || rr.Contents[0].Text != "Read me first." {
			t.Errorf("read readme = %v, %v", rr, err)
		}
		rr, err = cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "mem://users/42"})
		if err != nil || rr.Contents[0].Text != "user 42" {
			t.Errorf("read user = %v, %v", rr, err)
		}
		if _, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "mem://nope"}); err == nil {
			t.Errorf("read unknown: no error")
		}
	}

	none := testserver.New(testserver.Options{NoResources: true}).AddResources()
	cs := inMemory(t, none, nil, nil)
	_, err := cs.ListResources(t.Context(), nil)
	wantRPCError(t, err, jsonrpc.CodeMethodNotFound, "not found")
	_, err = cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "mem://docs/readme"})
	wantRPCError(t, err, jsonrpc.CodeMethodNotFound, "not found")
}

func TestListChanged(t *testing.T) {
	for _, sopts := range []*mcp.ClientSessionOptions{nil, legacyClient} {
		changed := make(chan struct{}, 8)
		opts := &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			changed <- struct{}{}
		}}
		s := testserver.New(testserver.Options{}).AddWeather()
		cs := inMemory(t, s, opts, sopts)
		s.AddTool("extra")
		<-changed
		wantText(t, call(t, cs, "extra", nil), false, "extra ok")
		s.RemoveTool("extra")
		<-changed
		lt, err := cs.ListTools(t.Context(), nil)
		if err != nil || len(lt.Tools) != 1 {
			t.Errorf("%s: tools after RemoveTool = %v, %v", era(cs), lt, err)
		}
	}
}

func TestDialsAndKill(t *testing.T) {
	s := testserver.New(testserver.Options{}).AddFeatures()
	if s.Dials() != 0 {
		t.Fatalf("Dials before = %d", s.Dials())
	}
	cs1 := inMemory(t, s, nil, nil)
	cs2 := inMemory(t, s, nil, legacyClient)
	if got := s.Dials(); got != 2 {
		t.Errorf("Dials = %d; want 2", got)
	}
	// KillSessions does not wait for calls in flight: it cancels them.
	errc := make(chan error, 2)
	for _, cs := range []*mcp.ClientSession{cs1, cs2} {
		go func() {
			_, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "slow"})
			errc <- err
		}()
		<-s.SlowStarted()
	}
	s.KillSessions()
	for range 2 {
		if err := <-errc; err == nil {
			t.Errorf("slow call survived KillSessions")
		}
		<-s.Cancelled()
	}
	for _, cs := range []*mcp.ClientSession{cs1, cs2} {
		cs.Wait()
		if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "pid"}); err == nil {
			t.Errorf("%s: call after KillSessions succeeded", era(cs))
		}
	}
	// The server still accepts new connections.
	wantText(t, call(t, inMemory(t, s, nil, nil), "echo", map[string]any{"text": "again"}), false, "again")
}

func TestStdio(t *testing.T) {
	if testing.Short() {
		t.Skip("starts subprocesses")
	}
	pids := map[string]bool{strconv.Itoa(os.Getpid()): true}
	for _, tc := range []struct{ kind, era string }{
		{"modern", testserver.ModernVersion},
		{"legacy", testserver.LegacyVersion},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			cs := stdio(t, tc.kind, nil)
			if got := era(cs); got != tc.era {
				t.Errorf("era = %q; want %q", got, tc.era)
			}
			pid := textOf(call(t, cs, "pid", nil))
			if pids[pid] {
				t.Errorf("pid %s is not a new process", pid)
			}
			pids[pid] = true
			wantText(t, call(t, cs, "get_weather", map[string]any{"city": "Rome"}), false, "Sunny, 21°C in Rome")
			if _, err := cs.ListResources(t.Context(), nil); err != nil {
				t.Errorf("ListResources: %v", err)
			}
			// exit kills the process mid-call.
			if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "exit"}); err == nil {
				t.Errorf("exit: no error")
			}
			if err := cs.Wait(); err == nil || !strings.Contains(err.Error(), "exit status 3") {
				t.Errorf("Wait after exit = %v; want exit status 3", err)
			}
		})
	}
	t.Run("options", func(t *testing.T) {
		cs := stdio(t, "modern:ttl=60000,pagesize=2,name=opt-server,key=k1", nil)
		lt, err := cs.ListTools(t.Context(), nil)
		if err != nil || lt.TTLMs != 60000 || len(lt.Tools) != 2 || lt.NextCursor == "" {
			t.Errorf("ListTools = %v, %v", lt, err)
		}
		if got := cs.InitializeResult().ServerInfo.Name; got != "opt-server" {
			t.Errorf("name = %q", got)
		}
		// With a shared key, state sealed in memory opens in the subprocess.
		mem := inMemory(t, testserver.New(testserver.Options{StateKey: "k1"}).AddBooking(), manual(), nil)
		res := call(t, mem, "book_table", map[string]any{"party": 5})
		got, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "book_table", RequestState: res.RequestState,
			InputResponses: mcp.InputResponseMap{"date": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"date": "d"}}}})
		if err != nil {
			t.Fatal(err)
		}
		wantText(t, got, false, "Booked a table for 5 on d")
	})
	t.Run("nodiscover", func(t *testing.T) {
		cs := stdio(t, "legacy:nodiscover", nil)
		if got := era(cs); got != testserver.LegacyVersion {
			t.Errorf("era = %q", got)
		}
	})
	t.Run("lean", func(t *testing.T) {
		cs := stdio(t, "legacy:lean", nil)
		if got := era(cs); got != testserver.LegacyVersion {
			t.Errorf("era = %q", got)
		}
		wantText(t, call(t, cs, "echo", map[string]any{"text": "hi"}), false, "hi")
	})
}

// TestLean checks the bare echo server in both eras: one tool, echoed
// text, nothing counted.
func TestLean(t *testing.T) {
	for _, tc := range []struct {
		opts testserver.Options
		era  string
	}{
		{testserver.Options{}, testserver.ModernVersion},
		{testserver.Options{Legacy: true}, testserver.LegacyVersion},
	} {
		t.Run(tc.era, func(t *testing.T) {
			s := testserver.Lean(tc.opts)
			if full := testserver.Full(testserver.Options{Legacy: tc.opts.Legacy, Lean: true}); !full.Opts().Lean || !s.Opts().Lean {
				t.Errorf("Full with Lean: Opts().Lean = false")
			}
			cs := inMemory(t, s, nil, nil)
			if got := era(cs); got != tc.era {
				t.Errorf("era = %q; want %q", got, tc.era)
			}
			lt, err := cs.ListTools(t.Context(), nil)
			if err != nil || len(lt.Tools) != 1 || lt.Tools[0].Name != "echo" {
				t.Fatalf("ListTools = %v, %v; want only echo", lt, err)
			}
			wantText(t, call(t, cs, "echo", map[string]any{"text": "hello"}), false, "hello")
			if res := call(t, cs, "echo", map[string]any{"text": 3}); !res.IsError {
				t.Errorf("echo of a number: not an error")
			}
			if got := s.Counts(); len(got) != 0 {
				t.Errorf("Counts() = %v; want none", got)
			}
			if s.Dials() != 1 {
				t.Errorf("Dials() = %d; want 1", s.Dials())
			}
		})
	}
}

func TestParseKind(t *testing.T) {
	tests := []struct {
		kind string
		want testserver.Options
		bad  bool
	}{
		{kind: "modern", want: testserver.Options{}},
		{kind: "legacy", want: testserver.Options{Legacy: true}},
		{kind: "modern:", want: testserver.Options{}},
		{kind: "modern:ttl=60000,pagesize=2", want: testserver.Options{TTLMs: 60000, PageSize: 2}},
		{kind: "legacy:nodiscover,noresources=true,modernonly=false", want: testserver.Options{Legacy: true, NoDiscover: true, NoResources: true}},
		{kind: "modern:modernonly,delay=50ms,name=n,version=v,instructions=be nice: ok,key=k",
			want: testserver.Options{ModernOnly: true, ConnectDelay: 50 * time.Millisecond, Name: "n", Version: "v", Instructions: "be nice: ok", StateKey: "k"}},
		{kind: "legacy:lean", want: testserver.Options{Legacy: true, Lean: true}},
		{kind: "", bad: true},
		{kind: "future", bad: true},
		{kind: "modern:ttl=x", bad: true},
		{kind: "modern:colour=red", bad: true},
		{kind: "modern:nodiscover=maybe", bad: true},
	}
	for _, tc := range tests {
		got, err := testserver.ParseKind(tc.kind)
		if tc.bad {
			if err == nil {
				t.Errorf("ParseKind(%q) = %+v, nil; want an error", tc.kind, got)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseKind(%q) = %+v, %v; want %+v", tc.kind, got, err, tc.want)
		}
	}
	if _, err := testserver.FromKind("nope"); err == nil {
		t.Errorf("FromKind(nope): no error")
	}
}

// headerTransport adds a header to every request.
type headerTransport struct{ base http.RoundTripper }

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer t0k")
	return h.base.RoundTrip(r)
}

func TestHTTP(t *testing.T) {
	hc := &http.Client{Transport: headerTransport{http.DefaultTransport}}
	tests := []struct {
		name      string
		transport func(s *testserver.Server) mcp.Transport
		era       string
		sessionID bool
	}{
		{"stateless", func(s *testserver.Server) mcp.Transport {
			return &mcp.StreamableClientTransport{Endpoint: s.StreamableHTTP(t, true).URL, HTTPClient: hc}
		}, testserver.ModernVersion, false},
		{"stateful", func(s *testserver.Server) mcp.Transport {
			return &mcp.StreamableClientTransport{Endpoint: s.StreamableHTTP(t, false).URL, HTTPClient: hc}
		}, testserver.LegacyVersion, true},
		{"sse", func(s *testserver.Server) mcp.Transport {
			return &mcp.SSEClientTransport{Endpoint: s.SSE(t).URL, HTTPClient: hc}
		}, testserver.LegacyVersion, false},
		{"sseonly/root", func(s *testserver.Server) mcp.Transport {
			return &mcp.SSEClientTransport{Endpoint: s.SSEOnly(t).URL, HTTPClient: hc}
		}, testserver.LegacyVersion, false},
		{"sseonly/sse", func(s *testserver.Server) mcp.Transport {
			return &mcp.SSEClientTransport{Endpoint: s.SSEOnly(t).URL + "/sse", HTTPClient: hc}
		}, testserver.LegacyVersion, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := testserver.Full(testserver.Options{})
			opts := &mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: "decline"}, nil
			}}
			cs := connect(t, tc.transport(s), opts, nil)
			if got := era(cs); got != tc.era {
				t.Errorf("era = %q; want %q", got, tc.era)
			}
			if (cs.ID() != "") != tc.sessionID {
				t.Errorf("session id %q", cs.ID())
			}
			wantText(t, call(t, cs, "get_weather", map[string]any{"city": "Lima"}), false, "Sunny, 21°C in Lima")
			if got := s.LastHTTPHeader().Get("Authorization"); got != "Bearer t0k" {
				t.Errorf("LastHTTPHeader Authorization = %q", got)
			}
			if tc.name != "stateless" { // stateless HTTP cannot send live requests
				wantText(t, call(t, cs, "book_table", map[string]any{"party": 1}), true, "booking declined by user")
			}
		})
	}
}

func TestHTTPBookingManual(t *testing.T) {
	s := testserver.Full(testserver.Options{})
	cs := connect(t, &mcp.StreamableClientTransport{Endpoint: s.StreamableHTTP(t, true).URL}, manual(), nil)
	res := call(t, cs, "book_table", map[string]any{"party": 6})
	if !res.NeedsInput() {
		t.Fatalf("NeedsInput false: %q", textOf(res))
	}
	got, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "book_table", RequestState: res.RequestState,
		InputResponses: mcp.InputResponseMap{"date": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"date": "2026-02-03"}}}})
	if err != nil {
		t.Fatal(err)
	}
	wantText(t, got, false, "Booked a table for 6 on 2026-02-03")
}

func TestHTTPCancel(t *testing.T) {
	s := testserver.Full(testserver.Options{})
	cs := connect(t, &mcp.StreamableClientTransport{Endpoint: s.StreamableHTTP(t, true).URL}, nil, nil)
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow"})
		errc <- err
	}()
	<-s.SlowStarted()
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("slow = %v; want context.Canceled", err)
	}
	<-s.Cancelled()
}

func TestHTTPFaults(t *testing.T) {
	t.Run("status", func(t *testing.T) {
		s := testserver.Full(testserver.Options{})
		ts := s.StreamableHTTP(t, true)
		s.SetHTTPStatus(http.StatusUnauthorized)
		_, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).
			Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: ts.URL}, nil)
		if err == nil || !strings.Contains(err.Error(), "Unauthorized") {
			t.Errorf("Connect with 401 = %v", err)
		}
		s.SetHTTPStatus(0)
		connect(t, &mcp.StreamableClientTransport{Endpoint: ts.URL}, nil, nil)
	})
	t.Run("sseonly/streamable", func(t *testing.T) {
		ts := testserver.Full(testserver.Options{}).SSEOnly(t)
		for path, want := range map[string]string{"/mcp": "Not Found", "": "Method Not Allowed", "/sse": "Bad Request"} {
			_, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).
				Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: ts.URL + path}, nil)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("streamable to %q = %v; want %q", path, err, want)
			}
		}
	})
	t.Run("kill stateful session", func(t *testing.T) {
		s := testserver.Full(testserver.Options{})
		cs := connect(t, &mcp.StreamableClientTransport{Endpoint: s.StreamableHTTP(t, false).URL}, nil, nil)
		call(t, cs, "pid", nil)
		errc := make(chan error, 1)
		go func() {
			_, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "slow"})
			errc <- err
		}()
		<-s.SlowStarted()
		s.KillSessions()
		<-s.Cancelled()
		if err := <-errc; err == nil {
			t.Errorf("slow call survived KillSessions")
		}
		_, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "pid"})
		if !errors.Is(err, mcp.ErrSessionMissing) {
			t.Errorf("call after KillSessions = %v; want ErrSessionMissing", err)
		}
	})
}
