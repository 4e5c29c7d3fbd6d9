package mcpadapter

// Benchmarks of the adapter against the raw go-sdk. Each adapter benchmark
// has a twin that does the same work with a plain go-sdk client (default
// options) on an equivalent session, so that the results read as ratios.
// BENCHMARKS.md says how to run them (interleaved runs, benchstat) and what
// each figure means.
//
// Sub-benchmarks are named with key=value elements (impl=raw, impl=adapter,
// servers=8, cache=use, ...) so that benchstat can put the two sides of a
// pair in columns: benchstat -col /impl, -col /servers, -col /cache, -col /api.
//
// The call benchmarks use the bare echo server of testserver.Lean (one tool,
// no instrumentation), the same server for both sides: the test servers'
// own work per call would only dilute the ratios.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testing/extserver"
	"github.com/mcpadapter/mcpadapter/internal/testing/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// echoText is what the echo benchmarks send and expect back.
const echoText = "hello"

// echoInput is echoArgs as Call's text input.
const echoInput = `{"text":"` + echoText + `"}`

// echoArgs are the arguments of every echo call. Neither the SDK nor the
// adapter may write into them: the benchmarks share one map across calls
// (and BenchmarkInvokeParallel across goroutines).
var echoArgs = map[string]any{"text": echoText}

// invokeEcho calls the echo tool under ctx and checks its answer.
func invokeEcho(tb testing.TB, ctx context.Context, tool *Tool) {
	if res, err := tool.Invoke(ctx, echoArgs); err != nil || res.Text() != echoText {
		tb.Fatalf("Invoke = %v, %v", res, err)
	}
}

// heapInUse returns the bytes of live heap after a full collection.
func heapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// benchEras are the protocol eras the call benchmarks run in.
var benchEras = []string{"modern", "legacy"}

// rawClient returns a go-sdk client with default options.
func rawClient() *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "raw", Version: "1"}, nil)
}

// rawConnect connects a default go-sdk client over t and lists the tools
// once, as the adapter's discovery does, so that both sides call on a
// session in the same state (the SDK looks a called tool up in the lists
// it has seen).
func rawConnect(b *testing.B, t mcp.Transport) *mcp.ClientSession {
	b.Helper()
	cs, err := rawClient().Connect(b.Context(), t, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	if _, err := cs.ListTools(b.Context(), nil); err != nil {
		b.Fatal(err)
	}
	return cs
}

// rawMemory connects a raw session to s in memory.
func rawMemory(b *testing.B, s *testserver.Server) *mcp.ClientSession {
	b.Helper()
	t, err := s.Transport()(b.Context())
	if err != nil {
		b.Fatal(err)
	}
	return rawConnect(b, t)
}

// rawCommand starts a stdio server for a raw session, through the SDK's
// own command transport.
func rawCommand(b *testing.B, srv Server) *mcp.ClientSession {
	b.Helper()
	return rawConnect(b, &mcp.CommandTransport{Command: command(srv)})
}

// command returns the command of the stdio server srv.
func command(srv Server) *exec.Cmd {
	cmd := exec.Command(srv.Command, srv.Args...)
	cmd.Env = os.Environ()
	for k, v := range srv.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	return cmd
}

// adapterTool discovers srv, alone in a new Adapter, and returns its tool
// named name.
func adapterTool(b *testing.B, srv Server, name string) *Tool {
	b.Helper()
	a := newAdapter(b, Config{Servers: map[string]Server{"s": srv}})
	ts, err := a.ListTools(b.Context())
	if err != nil {
		b.Fatal(err)
	}
	tool := ts.Lookup("s__" + name)
	if tool == nil {
		b.Fatalf("no tool %q in %v", name, ts)
	}
	return tool
}

// firstText returns the text of the first content item of a raw result.
func firstText(res *mcp.CallToolResult) string {
	if len(res.Content) == 0 {
		return ""
	}
	tc, _ := res.Content[0].(*mcp.TextContent)
	if tc == nil {
		return ""
	}
	return tc.Text
}

// rawCall returns one call of the tool name with ClientSession.CallTool,
// checked to answer want.
func rawCall(b *testing.B, cs *mcp.ClientSession, name string, args map[string]any, want string) func() {
	return func() {
		res, err := cs.CallTool(b.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil || res.IsError || firstText(res) != want {
			b.Fatalf("CallTool(%s) = %v, %v", name, res, err)
		}
	}
}

// invokeCall returns one call of tool with Tool.Invoke, checked to answer
// want.
func invokeCall(b *testing.B, tool *Tool, args map[string]any, want string) func() {
	return func() {
		res, err := tool.Invoke(b.Context(), args)
		if err != nil || res.IsError || len(res.Content) == 0 || res.Content[0].Text != want {
			b.Fatalf("Invoke(%s) = %v, %v", tool.Name(), res, err)
		}
	}
}

// textCall returns one call of tool with Tool.Call, checked to answer
// want.
func textCall(b *testing.B, tool *Tool, input, want string) func() {
	return func() {
		if out, err := tool.Call(b.Context(), input); err != nil || out != want {
			b.Fatalf("Call(%s) = %q, %v", tool.Name(), out, err)
		}
	}
}

// benchLoop runs call once per op, reporting allocations.
func benchLoop(b *testing.B, call func()) {
	b.ReportAllocs()
	for b.Loop() {
		call()
	}
}

// benchRaw calls the tool name with ClientSession.CallTool in a loop.
func benchRaw(b *testing.B, cs *mcp.ClientSession, name string, args map[string]any, want string) {
	benchLoop(b, rawCall(b, cs, name, args, want))
}

// benchInvoke calls tool with Tool.Invoke in a loop.
func benchInvoke(b *testing.B, tool *Tool, args map[string]any, want string) {
	benchLoop(b, invokeCall(b, tool, args, want))
}

// benchPair measures the ratio of two ways of doing the same work, base and
// side, run in alternation within one benchmark: each op runs both, in
// random order (a fixed order lets periodic costs, such as a garbage
// collection every few calls, fall on one side only), and each call is
// timed. The benchmark reports the ratio of the median call times, side
// over base, as the metric unit "<side>/<base>" (e.g. "adapter/raw"), and
// the median call times as "<base>-ns/call" and "<side>-ns/call".
//
// On a noisy machine this is the figure to read: both sides run under the
// same load, microseconds apart, where separate benchmarks (seconds apart)
// drift by more than the overhead being measured; and medians ignore the
// calls that a garbage collection or another process stalled, which
// otherwise swamp a few per cent. Allocations are not reported here: the
// separate benchmarks count them exactly.
func benchPair(b *testing.B, baseName string, base func(), sideName string, side func()) {
	var baseNs, sideNs []float64
	timed := func(f func(), into *[]float64) {
		start := time.Now()
		f()
		*into = append(*into, float64(time.Since(start)))
	}
	for b.Loop() {
		if rand.IntN(2) == 0 {
			timed(base, &baseNs)
			timed(side, &sideNs)
		} else {
			timed(side, &sideNs)
			timed(base, &baseNs)
		}
	}
	mb, ms := median(baseNs), median(sideNs)
	b.ReportMetric(ms/mb, sideName+"/"+baseName)
	b.ReportMetric(mb, baseName+"-ns/call")
	b.ReportMetric(ms, sideName+"-ns/call")
}

// median returns the median of xs, which it sorts.
func median(xs []float64) float64 {
	slices.Sort(xs)
	if n := len(xs); n%2 == 0 {
		return (xs[n/2-1] + xs[n/2]) / 2
	}
	return xs[len(xs)/2]
}

// BenchmarkInvoke compares Tool.Invoke of an echo tool with the raw
// ClientSession.CallTool, in memory, over stdio and over Streamable HTTP
// (modern: a stateless server; legacy: a stateful one), in both eras,
// against the same bare echo server. In memory each side connects as its
// users would: the adapter through InMemory, the raw session over go-sdk's
// in-memory transports. Over stdio, impl=bare is the floor: a minimal
// JSON-RPC loop (one line written, one line read and decoded) against the
// same server process, without any MCP client.
func BenchmarkInvoke(b *testing.B) {
	for _, era := range benchEras {
		opts := testserver.Options{Legacy: era == "legacy"}
		b.Run("transport=memory/era="+era+"/impl=raw", func(b *testing.B) {
			benchRaw(b, rawMemory(b, testserver.Lean(opts)), "echo", echoArgs, echoText)
		})
		b.Run("transport=memory/era="+era+"/impl=adapter", func(b *testing.B) {
			benchInvoke(b, adapterTool(b, InMemory(testserver.Lean(opts).Server), "echo"), echoArgs, echoText)
		})
	}
	for _, era := range benchEras {
		kind := era + ":lean"
		b.Run("transport=stdio/era="+era+"/impl=bare", func(b *testing.B) {
			benchBare(b, stdioServer(b, kind), era)
		})
		b.Run("transport=stdio/era="+era+"/impl=raw", func(b *testing.B) {
			benchRaw(b, rawCommand(b, stdioServer(b, kind)), "echo", echoArgs, echoText)
		})
		b.Run("transport=stdio/era="+era+"/impl=adapter", func(b *testing.B) {
			benchInvoke(b, adapterTool(b, stdioServer(b, kind), "echo"), echoArgs, echoText)
		})
	}
	for _, era := range benchEras {
		stateless := era == "modern"
		b.Run("transport=http/era="+era+"/impl=raw", func(b *testing.B) {
			url := testserver.Lean(testserver.Options{}).StreamableHTTP(b, stateless).URL
			benchRaw(b, rawConnect(b, &mcp.StreamableClientTransport{Endpoint: url}), "echo", echoArgs, echoText)
		})
		b.Run("transport=http/era="+era+"/impl=adapter", func(b *testing.B) {
			url := testserver.Lean(testserver.Options{}).StreamableHTTP(b, stateless).URL
			benchInvoke(b, adapterTool(b, Server{URL: url}, "echo"), echoArgs, echoText)
		})
	}
}

// BenchmarkInvokeParallel is BenchmarkInvoke in memory (modern era) with
// calls from GOMAXPROCS goroutines at once on one session: contention in
// the adapter (locks, shared state) shows up here first.
func BenchmarkInvokeParallel(b *testing.B) {
	b.Run("impl=raw", func(b *testing.B) {
		cs := rawMemory(b, testserver.Lean(testserver.Options{}))
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: echoArgs})
				if err != nil || firstText(res) != echoText {
					b.Errorf("CallTool = %v, %v", res, err)
					return
				}
			}
		})
	})
	b.Run("impl=adapter", func(b *testing.B) {
		tool := adapterTool(b, memServer(testserver.Lean(testserver.Options{}), ModeAuto), "echo")
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				res, err := tool.Invoke(context.Background(), echoArgs)
				if err != nil || len(res.Content) == 0 || res.Content[0].Text != echoText {
					b.Errorf("Invoke = %v, %v", res, err)
					return
				}
			}
		})
	})
}

// startPiped starts cmd with pipes to its stdin and from its stdout; the
// cleanup of b closes its stdin and waits for it.
func startPiped(b *testing.B, cmd *exec.Cmd) (io.WriteCloser, io.Reader) {
	b.Helper()
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		in.Close()
		cmd.Wait()
	})
	return in, out
}

// benchBare runs the bare JSON-RPC loop of BenchmarkInvoke against the stdio
// server srv: the handshake (legacy) or none (modern: each request carries
// the _meta the protocol asks for), then one tools/call line per op, its
// answer read as one line and decoded with encoding/json.
func benchBare(b *testing.B, srv Server, era string) {
	stdin, stdout := startPiped(b, command(srv))
	r := bufio.NewReaderSize(stdout, 64<<10)
	var resp struct {
		ID     int64 `json:"id"`
		Result struct {
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
			IsError bool `json:"isError"`
		} `json:"result"`
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	roundTrip := func(line []byte, id int64) {
		if _, err := stdin.Write(line); err != nil {
			b.Fatal(err)
		}
		if id == 0 { // a notification
			return
		}
		for {
			answer, err := r.ReadSlice('\n')
			if err != nil {
				b.Fatal(err)
			}
			resp.ID, resp.Error, resp.Result.Content = 0, nil, resp.Result.Content[:0]
			if err := json.Unmarshal(answer, &resp); err != nil {
				b.Fatal(err)
			}
			if resp.ID == id {
				break // anything else is a notification from the server
			}
		}
		if resp.Error != nil {
			b.Fatalf("bare call %d: %s", id, resp.Error.Message)
		}
	}
	meta := ""
	if era == "modern" {
		meta = "," + bareMeta
	} else {
		roundTrip([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+legacyVersion+
			`","capabilities":{},"clientInfo":{"name":"bare","version":"1"}}}`+"\n"), 1)
		roundTrip([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}`+"\n"), 0)
	}
	var line []byte
	id := int64(1)
	b.ReportAllocs()
	for b.Loop() {
		id++
		line = fmt.Appendf(line[:0], `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":%q}%s}}`+"\n", id, echoText, meta)
		roundTrip(line, id)
		if resp.Result.IsError || len(resp.Result.Content) != 1 || resp.Result.Content[0].Text != echoText {
			b.Fatalf("bare call %d = %+v", id, resp.Result)
		}
	}
}

// bareMeta is the _meta member of a bare client's modern request: the
// protocol version, client info and capabilities the era asks for.
const bareMeta = `"_meta":{"` + mcp.MetaKeyProtocolVersion + `":"` + modernVersion + `","` +
	mcp.MetaKeyClientInfo + `":{"name":"bare","version":"1"},"` + mcp.MetaKeyClientCapabilities + `":{}}`

// BenchmarkCall compares the text API (argument decoding and text output)
// with Invoke, in memory, modern era.
func BenchmarkCall(b *testing.B) {
	tool := adapterTool(b, memServer(testserver.Lean(testserver.Options{}), ModeAuto), "echo")
	b.Run("api=invoke", func(b *testing.B) { benchInvoke(b, tool, echoArgs, echoText) })
	b.Run("api=call", func(b *testing.B) { benchLoop(b, textCall(b, tool, echoInput, echoText)) })
}

// BenchmarkInvokeNPM compares Tool.Invoke with the raw CallTool against a
// third-party server: the echo tool of the pinned npm package
// @modelcontextprotocol/server-everything, over stdio. It is skipped when
// Node.js or the package is missing (see internal/testing/extserver), unless
// MCPADAPTER_REQUIRE_INTEGRATION=1.
func BenchmarkInvokeNPM(b *testing.B) {
	b.Run("impl=raw", func(b *testing.B) {
		benchRaw(b, rawCommand(b, npmEverything(b)), "echo", npmEchoArgs, npmEchoWant)
	})
	b.Run("impl=adapter", func(b *testing.B) {
		benchInvoke(b, adapterTool(b, npmEverything(b), "echo"), npmEchoArgs, npmEchoWant)
	})
}

// BenchmarkRatio measures the figures the overhead targets are stated in,
// as ratios of two sides run in alternation (see benchPair): Invoke over the
// raw CallTool on the bare echo server (in memory and over stdio, both
// eras), Invoke over the raw CallTool on the npm server-everything over
// stdio, Call over Invoke, and cold discovery of 8 servers over one (100 ms
// handshake delay each), for the adapter and for raw go-sdk clients. In
// memory each side connects as in BenchmarkInvoke.
func BenchmarkRatio(b *testing.B) {
	for _, era := range benchEras {
		opts := testserver.Options{Legacy: era == "legacy"}
		b.Run("invoke/transport=memory/era="+era, func(b *testing.B) {
			raw := rawCall(b, rawMemory(b, testserver.Lean(opts)), "echo", echoArgs, echoText)
			tool := adapterTool(b, InMemory(testserver.Lean(opts).Server), "echo")
			benchPair(b, "raw", raw, "adapter", invokeCall(b, tool, echoArgs, echoText))
		})
	}
	// Over stdio each side gets stdioSessions server processes and calls one
	// at random: where the scheduler puts a process pair (same core or
	// not) changes its latency by a few per cent for the session's life.
	for _, era := range benchEras {
		kind := era + ":lean"
		b.Run("invoke/transport=stdio/era="+era, func(b *testing.B) {
			var raw, adapter []func()
			for range stdioSessions {
				raw = append(raw, rawCall(b, rawCommand(b, stdioServer(b, kind)), "echo", echoArgs, echoText))
				adapter = append(adapter, invokeCall(b, adapterTool(b, stdioServer(b, kind), "echo"), echoArgs, echoText))
			}
			benchPair(b, "raw", anyOf(raw), "adapter", anyOf(adapter))
		})
	}
	b.Run("invoke/npm", func(b *testing.B) {
		srv := npmEverything(b)
		var raw, adapter []func()
		for range stdioSessions {
			raw = append(raw, rawCall(b, rawCommand(b, srv), "echo", npmEchoArgs, npmEchoWant))
			adapter = append(adapter, invokeCall(b, adapterTool(b, srv, "echo"), npmEchoArgs, npmEchoWant))
		}
		benchPair(b, "raw", anyOf(raw), "adapter", anyOf(adapter))
	})
	b.Run("call", func(b *testing.B) {
		tool := adapterTool(b, memServer(testserver.Lean(testserver.Options{}), ModeAuto), "echo")
		benchPair(b, "invoke", invokeCall(b, tool, echoArgs, echoText), "call", textCall(b, tool, echoInput, echoText))
	})
	for _, impl := range []string{"raw", "adapter"} {
		b.Run("discovery/impl="+impl, func(b *testing.B) {
			discover := rawDiscovery
			if impl == "adapter" {
				discover = adapterDiscovery
			}
			benchPair(b, "1", discover(b, 1), "8", discover(b, 8))
		})
	}
}

// stdioSessions is the number of server processes per side in the stdio
// pairs of BenchmarkRatio.
const stdioSessions = 3

// anyOf returns a call of one of calls, picked at random each time.
func anyOf(calls []func()) func() {
	return func() { calls[rand.IntN(len(calls))]() }
}

// BenchmarkOverhead splits the adapter's overhead per call (in memory, on
// the bare echo server, both eras) into its parts, each a pair run like
// BenchmarkRatio:
//
//   - part=none: two raw sessions (the harness's noise floor);
//   - part=options: a go-sdk client built with the adapter's options
//     (elicitation capability, list_changed and logging handlers,
//     multi-round-trip off, its sending middleware) against a default one,
//     both on a plain transport;
//   - part=transport: a default client on the adapter's transport stack
//     (the wire screen and the unknown-content sanitizer) against one on
//     the plain transport;
//   - part=wrapper: Tool.Invoke against ClientSession.CallTool on the
//     adapter's own session (callbacks, approval gate, the session check,
//     rounds, Result conversion; no context of its own since Close ends
//     calls by closing the connection).
func BenchmarkOverhead(b *testing.B) {
	for _, era := range benchEras {
		opts := testserver.Options{Legacy: era == "legacy"}
		a := newAdapter(b, Config{Servers: map[string]Server{"s": memServer(testserver.Lean(opts), ModeAuto)}})
		session := func(b *testing.B, client *mcp.Client, adapterTransport bool) func() {
			t, err := testserver.Lean(opts).Transport()(b.Context())
			if err != nil {
				b.Fatal(err)
			}
			if adapterTransport {
				t = screenTransport(a.pool.dialer.newScreen("s", nil, nil, nil), t)
			}
			cs, err := client.Connect(b.Context(), t, nil)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { cs.Close() })
			if _, err := cs.ListTools(b.Context(), nil); err != nil {
				b.Fatal(err)
			}
			return rawCall(b, cs, "echo", echoArgs, echoText)
		}
		b.Run("era="+era+"/part=none", func(b *testing.B) {
			benchPair(b, "raw", session(b, rawClient(), false), "raw2", session(b, rawClient(), false))
		})
		b.Run("era="+era+"/part=options", func(b *testing.B) {
			benchPair(b, "raw", session(b, rawClient(), false), "options", session(b, a.pool.dialer.newClient(a.pool.generation(), connKey{server: "s"}), false))
		})
		b.Run("era="+era+"/part=transport", func(b *testing.B) {
			benchPair(b, "raw", session(b, rawClient(), false), "transport", session(b, rawClient(), true))
		})
		b.Run("era="+era+"/part=wrapper", func(b *testing.B) {
			tool := adapterTool(b, memServer(testserver.Lean(opts), ModeAuto), "echo")
			cs, err := tool.a.Session(b.Context(), "s")
			if err != nil {
				b.Fatal(err)
			}
			benchPair(b, "session", rawCall(b, cs, "echo", echoArgs, echoText), "wrapper", invokeCall(b, tool, echoArgs, echoText))
		})
	}
}

// npmEverything returns the stdio Server of the pinned npm package
// @modelcontextprotocol/server-everything, or skips b (see
// internal/testing/extserver).
func npmEverything(b *testing.B) Server {
	node, script := extserver.Everything(b)
	return Server{Command: node, Args: []string{script, "stdio"}}
}

// The echo call of the npm server-everything: its tool takes "message".
var npmEchoArgs = map[string]any{"message": echoText}

const npmEchoWant = "Echo: " + echoText

// discoveryDelay is how long each server of BenchmarkDiscovery takes to
// answer the handshake.
const discoveryDelay = 100 * time.Millisecond

// BenchmarkDiscovery measures cold discovery (dial, handshake, tools/list)
// of 8 servers that each take 100 ms to answer the handshake, against one
// such server; impl=raw does the same with go-sdk clients, connected in
// parallel.
func BenchmarkDiscovery(b *testing.B) {
	for _, n := range []int{1, 8} {
		b.Run(fmt.Sprintf("servers=%d/impl=raw", n), func(b *testing.B) { benchLoop(b, rawDiscovery(b, n)) })
		b.Run(fmt.Sprintf("servers=%d/impl=adapter", n), func(b *testing.B) { benchLoop(b, adapterDiscovery(b, n)) })
	}
}

// delayedServers returns n servers that take discoveryDelay to answer the
// handshake.
func delayedServers(n int) []*testserver.Server { return delayedFleet(n, discoveryDelay) }

// delayedFleet returns n servers that take delay to answer the handshake.
func delayedFleet(n int, delay time.Duration) []*testserver.Server {
	servers := make([]*testserver.Server, n)
	for i := range servers {
		servers[i] = testserver.New(testserver.Options{ConnectDelay: delay}).AddWeather()
	}
	return servers
}

// rawDiscovery returns one cold discovery of n delayed servers by go-sdk
// clients: each connects in its own goroutine and lists the tools, then
// every session is closed.
func rawDiscovery(b *testing.B, n int) func() { return rawFleet(b, delayedServers(n)) }

// rawFleet returns one cold discovery of servers by go-sdk clients, as
// rawDiscovery.
func rawFleet(b *testing.B, servers []*testserver.Server) func() {
	n := len(servers)
	return func() {
		var wg sync.WaitGroup
		sessions := make([]*mcp.ClientSession, n)
		errs := make([]error, n)
		for i, s := range servers {
			wg.Go(func() {
				t, err := s.Transport()(b.Context())
				if err != nil {
					errs[i] = err
					return
				}
				if sessions[i], errs[i] = rawClient().Connect(b.Context(), t, nil); errs[i] != nil {
					return
				}
				_, errs[i] = sessions[i].ListTools(b.Context(), nil)
			})
		}
		wg.Wait()
		for _, cs := range sessions {
			if cs != nil {
				cs.Close()
			}
		}
		if err := errors.Join(errs...); err != nil {
			b.Fatal(err)
		}
	}
}

// adapterDiscovery returns one cold discovery of n delayed servers (as
// InMemory) by an Adapter: ListTools, then Close, so that the next one
// dials again.
func adapterDiscovery(b *testing.B, n int) func() {
	cfg := Config{Servers: map[string]Server{}}
	for i, s := range delayedServers(n) {
		cfg.Servers[fmt.Sprintf("s%d", i)] = InMemory(s.Server)
	}
	return coldDiscovery(b, cfg)
}

// coldDiscovery returns one cold discovery of the servers of cfg by an
// Adapter: ListTools, then Close, so that the next one dials again.
func coldDiscovery(b *testing.B, cfg Config) func() {
	n := len(cfg.Servers)
	a := newAdapter(b, cfg)
	return func() {
		ts, err := a.ListTools(b.Context())
		if err != nil || len(ts) != n {
			b.Fatalf("ListTools = %d tools, %v", len(ts), err)
		}
		a.Close()
	}
}

// bigCatalog returns an in-memory server with n tools whose list results
// carry ttlMs.
func bigCatalog(n, ttlMs int) *testserver.Server {
	s := testserver.New(testserver.Options{TTLMs: ttlMs})
	for i := range n {
		s.AddTool(fmt.Sprintf("tool_%04d", i))
	}
	return s
}

// BenchmarkListTools measures ListTools of one server with a 1000-tool
// catalog (ttlMs 60000, modern era, in memory): served from the cache
// (CacheUse) against asked for every time (CacheBypass: tools/list, then the
// wrappers of the unchanged descriptors are found again). The cached runs
// must not reach the server.
func BenchmarkListTools(b *testing.B) {
	const tools = 1000
	s := bigCatalog(tools, 60000)
	a := newAdapter(b, Config{Servers: map[string]Server{"big": memServer(s, ModeAuto)}})
	if _, err := a.ListTools(b.Context()); err != nil {
		b.Fatal(err)
	}
	for _, bm := range []struct {
		name string
		mode CacheMode
	}{{"use", CacheUse}, {"bypass", CacheBypass}} {
		b.Run("cache="+bm.name, func(b *testing.B) {
			lists := s.Count("tools/list")
			b.ReportAllocs()
			for b.Loop() {
				ts, err := a.ListTools(b.Context(), WithCacheMode(bm.mode))
				if err != nil || len(ts) != tools {
					b.Fatalf("ListTools(%q) = %d tools, %v", bm.mode, len(ts), err)
				}
			}
			if got := s.Count("tools/list") - lists; bm.mode == CacheUse && got != 0 {
				b.Fatalf("cached ListTools sent %d tools/list requests, want 0", got)
			}
		})
	}
}

// BenchmarkNewTool measures the conversion of a descriptor into a Tool
// (name, metadata, normalized schema, description with its argument hint),
// one op per tool, over a catalog of 1000 descriptors.
func BenchmarkNewTool(b *testing.B) {
	const schema = `{"type":"object","properties":{"city":{"type":"string","description":"the city"},` +
		`"unit":{"type":"string","enum":["c","f"]}},"required":["city"]}`
	descs := make([]*mcp.Tool, 1000)
	for i := range descs {
		var m map[string]any
		if err := json.Unmarshal([]byte(schema), &m); err != nil {
			b.Fatal(err)
		}
		descs[i] = &mcp.Tool{Name: fmt.Sprintf("tool_%d", i), Description: "Get the weather.", InputSchema: m}
	}
	policy := toolPolicy{cfg: &Config{}}
	c := &conn{server: "s", a: &Adapter{}, info: ServerInfo{Name: "srv", Version: "1"}}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		d := descs[i%len(descs)]
		newTool(c, policy.name(c.server, d.Name), d, nil)
		i++
	}
}

// TestBenchEcho runs one call of each call benchmark's pair, so that
// go test (without -bench) checks that both sides of a pair work and give
// the same text.
func TestBenchEcho(t *testing.T) {
	for _, era := range benchEras {
		opts := testserver.Options{Legacy: era == "legacy"}
		a := newAdapter(t, Config{Servers: map[string]Server{
			"mem":   memServer(testserver.Lean(opts), ModeAuto),
			"stdio": stdioServer(t, era+":lean"),
		}})
		ts, err := a.ListTools(t.Context())
		if err != nil {
			t.Fatalf("%s: ListTools: %v", era, err)
		}
		for _, name := range []string{"mem__echo", "stdio__echo"} {
			res, err := ts.Lookup(name).Invoke(t.Context(), echoArgs)
			if err != nil || res.Text() != echoText {
				t.Errorf("%s: %s: Invoke = %v, %v; want %q", era, name, res, err, echoText)
			}
		}
		out, err := ts.Lookup("mem__echo").Call(t.Context(), echoInput)
		if err != nil || out != echoText {
			t.Errorf("%s: Call = %q, %v; want %q", era, out, err, echoText)
		}
	}
}
