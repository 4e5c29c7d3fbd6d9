//go:build unix

package mcpadapter

// Benchmarks of how cost grows with the work (issue 18), against the JS
// adapter (@langchain/mcp-adapters, driven by testdata/jsadapter/driver.mjs)
// where there is one to compare with. BENCHMARKS.md ("Scale") says how to
// run them and what they gave.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testing/extserver"
	"github.com/mcpadapter/mcpadapter/internal/testing/testserver"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// processCPU returns the user and system CPU time of this process so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err) // cannot fail for RUSAGE_SELF
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// A jsDriver is a Node.js process running testdata/jsadapter/driver.mjs: a
// MultiServerMCPClient of the JS adapter on the npm server-everything.
type jsDriver struct {
	in  io.Writer
	out *bufio.Scanner
}

// startJS starts the JS driver, or skips b when Node.js, the pinned JS
// adapter or server-everything is missing (see internal/testing/extserver).
func startJS(b *testing.B) *jsDriver {
	b.Helper()
	node, script := extserver.Everything(b)
	_, adapterScript := extserver.NPM(b, extserver.JSAdapter)
	driver, err := filepath.Abs(filepath.Join("testdata", "jsadapter", "driver.mjs"))
	if err != nil {
		b.Fatal(err)
	}
	in, out := startPiped(b, exec.Command(node, driver, filepath.Dir(filepath.Dir(adapterScript)), node, script))
	return &jsDriver{in: in, out: bufio.NewScanner(out)}
}

// do runs one driver command and returns the CPU time its process spent
// on it and its wall time.
func (d *jsDriver) do(b *testing.B, command string) (cpu, wall time.Duration) {
	if _, err := fmt.Fprintln(d.in, command); err != nil {
		b.Fatalf("js driver: %v", err)
	}
	if !d.out.Scan() {
		b.Fatalf("js driver: no answer to %q: %v", command, d.out.Err())
	}
	var m struct{ CPUUs, WallNs int64 }
	if err := json.Unmarshal(d.out.Bytes(), &m); err != nil {
		b.Fatalf("js driver: %q: %v", d.out.Bytes(), err)
	}
	return time.Duration(m.CPUUs) * time.Microsecond, time.Duration(m.WallNs)
}

// A costSide is one side of a benchSides comparison: run does one block of
// work and returns the CPU time and the wall time it took.
type costSide struct {
	name string
	run  func() (cpu, wall time.Duration)
}

// goBlock returns a side that calls call n times in this process; its CPU
// is getrusage's delta, with a garbage collection at the end of the block
// so that the block pays for the garbage it made (and not the next side).
func goBlock(name string, n int, call func()) costSide {
	return costSide{name, func() (time.Duration, time.Duration) {
		cpu, start := processCPU(), time.Now()
		for range n {
			call()
		}
		runtime.GC()
		return processCPU() - cpu, time.Since(start)
	}}
}

// benchSides runs one block of every side per op, in random order, and
// reports per unit of work (a block is units units) the median CPU and
// wall time of each side ("<side>-cpu-ns/op", "<side>-ns/op") and the
// ratios of the medians of CPU and wall time of each pair in ratios
// ({side, base}) as "<side>/<base>-cpu" and "<side>/<base>".
func benchSides(b *testing.B, units int, sides []costSide, ratios [][2]string) {
	cpus := make(map[string][]float64)
	walls := make(map[string][]float64)
	order := make([]int, len(sides))
	for i := range order {
		order[i] = i
	}
	for b.Loop() {
		rand.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, i := range order {
			cpu, wall := sides[i].run()
			cpus[sides[i].name] = append(cpus[sides[i].name], float64(cpu)/float64(units))
			walls[sides[i].name] = append(walls[sides[i].name], float64(wall)/float64(units))
		}
	}
	mc, mw := make(map[string]float64), make(map[string]float64)
	for _, s := range sides {
		mc[s.name], mw[s.name] = median(cpus[s.name]), median(walls[s.name])
		if mc[s.name] > 0 {
			b.ReportMetric(mc[s.name], s.name+"-cpu-ns/op")
		}
		b.ReportMetric(mw[s.name], s.name+"-ns/op")
	}
	for _, r := range ratios {
		if mc[r[1]] > 0 {
			b.ReportMetric(mc[r[0]]/mc[r[1]], r[0]+"/"+r[1]+"-cpu")
		}
		b.ReportMetric(mw[r[0]]/mw[r[1]], r[0]+"/"+r[1])
	}
	b.ReportMetric(0, "ns/op") // the op is a round of blocks: meaningless
}

// cpuBlock is the number of calls per block of BenchmarkCPUPerCall.
const cpuBlock = 500

// BenchmarkCPUPerCall measures the client's CPU (user+system, getrusage
// deltas; Node's process.cpuUsage) per call of server-everything's echo
// tool over stdio: Tool.Invoke, the raw ClientSession.CallTool and the JS
// adapter's tool.invoke, each with its own server process, in blocks of
// cpuBlock calls run in random order, after a warm-up of 5 blocks each
// (Node's JIT). Each op is one block of each side.
func BenchmarkCPUPerCall(b *testing.B) {
	srv := npmEverything(b)
	js := startJS(b)
	sides := []costSide{
		goBlock("raw", cpuBlock, rawCall(b, rawCommand(b, srv), "echo", npmEchoArgs, npmEchoWant)),
		goBlock("adapter", cpuBlock, invokeCall(b, adapterTool(b, srv, "echo"), npmEchoArgs, npmEchoWant)),
		{"js", func() (time.Duration, time.Duration) { return js.do(b, fmt.Sprint("calls ", cpuBlock)) }},
	}
	for range 5 {
		for _, s := range sides {
			s.run()
		}
	}
	benchSides(b, cpuBlock, sides, [][2]string{{"adapter", "raw"}, {"adapter", "js"}, {"raw", "js"}})
}

// BenchmarkColdStart measures a cold start on server-everything over stdio:
// the time from nothing to the tool list (a new Adapter and ListTools; a
// go-sdk client's Connect and ListTools; the JS adapter's new
// MultiServerMCPClient and getTools), the process start included, the
// close not. Each op is one cold start of each side, in random order:
// adapter and raw in auto mode (the server/discover probe first) and with
// the legacy era asked for (initialize only), and js.
func BenchmarkColdStart(b *testing.B) {
	srv := npmEverything(b)
	js := startJS(b)
	adapter := func(name string, mode Mode) costSide {
		s := srv
		s.Mode = mode
		return costSide{name, func() (time.Duration, time.Duration) {
			start := time.Now()
			a, err := New(Config{Servers: map[string]Server{"s": s}})
			if err != nil {
				b.Fatal(err)
			}
			if ts, err := a.ListTools(b.Context()); err != nil || len(ts) == 0 {
				b.Fatalf("ListTools = %v, %v", ts, err)
			}
			wall := time.Since(start)
			a.Close()
			return 0, wall
		}}
	}
	raw := func(name string, opts *mcp.ClientSessionOptions) costSide {
		return costSide{name, func() (time.Duration, time.Duration) {
			start := time.Now()
			cs, err := rawClient().Connect(b.Context(), &mcp.CommandTransport{Command: command(srv)}, opts)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := cs.ListTools(b.Context(), nil); err != nil {
				b.Fatal(err)
			}
			wall := time.Since(start)
			cs.Close()
			return 0, wall
		}}
	}
	sides := []costSide{
		adapter("adapter-auto", ModeAuto), adapter("adapter-legacy", ModeLegacy),
		raw("raw-auto", nil), raw("raw-legacy", &mcp.ClientSessionOptions{ProtocolVersion: legacyVersion}),
		{"js", func() (time.Duration, time.Duration) {
			_, wall := js.do(b, "cold")
			return 0, wall
		}},
	}
	benchSides(b, 1, sides, [][2]string{
		{"adapter-auto", "js"}, {"adapter-legacy", "js"}, {"raw-auto", "js"}, {"raw-legacy", "js"},
		{"adapter-auto", "raw-auto"}, {"adapter-auto", "adapter-legacy"},
	})
}

// catalogTools is the size of the catalog of BenchmarkCatalog.
const catalogTools = 10000

// catalogServer returns an in-memory server with n tools, each with the
// schema of a small real tool (two properties, an enum, a required one),
// whose list results carry ttlMs 60000.
func catalogServer(n int) *testserver.Server {
	s := testserver.New(testserver.Options{TTLMs: 60000})
	schema := json.RawMessage(`{"type":"object","properties":{"city":{"type":"string","description":"the city"},` +
		`"unit":{"type":"string","enum":["c","f"]}},"required":["city"]}`)
	handler := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	}
	for i := range n {
		s.Server.AddTool(&mcp.Tool{Name: fmt.Sprintf("weather_%05d", i), Description: "Get the weather.", InputSchema: schema}, handler)
	}
	return s
}

// BenchmarkCatalog measures one server of catalogTools tools (in memory,
// modern era, ttlMs 60000): op=cold is a new Adapter's first ListTools
// (dial, every page, a Tool per descriptor; the server's allocations count
// too), op=cached a ListTools served by the cache, op=llmtools and
// op=llmtools-gemini the conversion of the Toolset for a model without and
// with a provider pass. Each reports per tool ("ns/tool", "allocs/tool");
// op=cold reports the heap the Adapter holds per tool once listed
// ("held-B/tool": live heap after ListTools minus before New).
func BenchmarkCatalog(b *testing.B) {
	s := catalogServer(catalogTools)
	perTool := func(b *testing.B, op func()) {
		b.ReportAllocs()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for b.Loop() {
			op()
		}
		runtime.ReadMemStats(&after)
		n := float64(b.N) * catalogTools
		b.ReportMetric(float64(b.Elapsed())/n, "ns/tool")
		b.ReportMetric(float64(after.Mallocs-before.Mallocs)/n, "allocs/tool")
	}
	list := func(b *testing.B, a *Adapter, opts ...ListOption) Toolset {
		ts, err := a.ListTools(b.Context(), opts...)
		if err != nil || len(ts) != catalogTools {
			b.Fatalf("ListTools = %d tools, %v", len(ts), err)
		}
		return ts
	}
	b.Run("op=cold", func(b *testing.B) {
		var held float64
		perTool(b, func() {
			base := heapInUse()
			a, err := New(Config{Servers: map[string]Server{"big": memServer(s, ModeAuto)}})
			if err != nil {
				b.Fatal(err)
			}
			ts := list(b, a)
			b.StopTimer()
			held = float64(heapInUse()) - float64(base)
			runtime.KeepAlive(ts)
			a.Close()
			b.StartTimer()
		})
		b.ReportMetric(held/catalogTools, "held-B/tool")
	})
	a := newAdapter(b, Config{Servers: map[string]Server{"big": memServer(s, ModeAuto)}})
	ts := list(b, a)
	b.Run("op=cached", func(b *testing.B) {
		lists := s.Count("tools/list")
		perTool(b, func() { list(b, a) })
		if got := s.Count("tools/list") - lists; got != 0 {
			b.Fatalf("cached ListTools sent %d tools/list requests, want 0", got)
		}
	})
	b.Run("op=llmtools", func(b *testing.B) {
		perTool(b, func() {
			if got := ts.LLMTools(); len(got) != catalogTools {
				b.Fatalf("LLMTools = %d tools", len(got))
			}
		})
	})
	b.Run("op=llmtools-gemini", func(b *testing.B) {
		perTool(b, func() {
			if got, err := ts.LLMToolsFor(ForGemini()); err != nil || len(got) != catalogTools {
				b.Fatalf("LLMToolsFor(ForGemini()) = %d tools, %v", len(got), err)
			}
		})
	})
}

// A phaseTransport times the phases of a cold start on the connection its
// base makes: the process start (base.Connect), then each request from
// sending to its answer, by method. Notifications are not timed.
type phaseTransport struct {
	base   mcp.Transport
	phases map[string]time.Duration // "start", a method, or "total"
	start  time.Time
}

// Connect implements [mcp.Transport].
func (t *phaseTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	t.start = time.Now()
	conn, err := t.base.Connect(ctx)
	t.phases["start"] = time.Since(t.start)
	return &phaseConn{Connection: conn, t: t, sent: make(map[jsonrpc.ID]sentRequest)}, err
}

// A sentRequest is a request a phaseConn has sent and not seen answered.
type sentRequest struct {
	method string
	at     time.Time
}

// A phaseConn is the connection of a phaseTransport.
type phaseConn struct {
	mcp.Connection
	t    *phaseTransport
	mu   sync.Mutex
	sent map[jsonrpc.ID]sentRequest
}

// Write implements [mcp.Connection].
func (c *phaseConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if req, ok := msg.(*jsonrpc.Request); ok && req.ID.IsValid() {
		c.mu.Lock()
		c.sent[req.ID] = sentRequest{req.Method, time.Now()}
		c.mu.Unlock()
	}
	return c.Connection.Write(ctx, msg)
}

// Read implements [mcp.Connection].
func (c *phaseConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if resp, ok := msg.(*jsonrpc.Response); ok {
		c.mu.Lock()
		if req, ok := c.sent[resp.ID]; ok {
			delete(c.sent, resp.ID)
			c.t.phases[req.method] += time.Since(req.at)
		}
		c.mu.Unlock()
	}
	return msg, err
}

// BenchmarkColdStartPhases splits a cold start on server-everything over
// stdio into its phases (see phaseTransport), reported as medians in
// "<phase>-ns": the process start, then the round trip of each request
// (server/discover, which in auto mode also waits for Node.js to load the
// server; initialize; subscriptions/listen; tools/list). The raw sides are
// a default go-sdk client in auto mode and with the legacy era asked for;
// the adapter sides are an Adapter whose Server.Transport is the same
// timed CommandTransport (the adapter's own stdio connection cannot be
// timed from outside, so this measures its protocol work, not its
// connection).
func BenchmarkColdStartPhases(b *testing.B) {
	srv := npmEverything(b)
	type side struct {
		name string
		run  func(t mcp.Transport)
	}
	raw := func(opts *mcp.ClientSessionOptions) func(mcp.Transport) {
		return func(t mcp.Transport) {
			cs, err := rawClient().Connect(b.Context(), t, opts)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := cs.ListTools(b.Context(), nil); err != nil {
				b.Fatal(err)
			}
			cs.Close()
		}
	}
	adapter := func(mode Mode) func(mcp.Transport) {
		return func(t mcp.Transport) {
			a, err := New(Config{Servers: map[string]Server{"s": {Mode: mode, Transport: func(context.Context) (mcp.Transport, error) { return t, nil }}}})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := a.ListTools(b.Context()); err != nil {
				b.Fatal(err)
			}
			a.Close()
		}
	}
	sides := []side{
		{"raw-auto", raw(nil)}, {"raw-legacy", raw(&mcp.ClientSessionOptions{ProtocolVersion: legacyVersion})},
		{"adapter-auto", adapter(ModeAuto)}, {"adapter-legacy", adapter(ModeLegacy)},
	}
	phases := make(map[string]map[string][]float64) // side, phase
	for _, s := range sides {
		phases[s.name] = make(map[string][]float64)
	}
	for b.Loop() {
		for _, i := range rand.Perm(len(sides)) {
			t := &phaseTransport{base: &mcp.CommandTransport{Command: command(srv)}, phases: make(map[string]time.Duration)}
			sides[i].run(t)
			for phase, d := range t.phases {
				phases[sides[i].name][phase] = append(phases[sides[i].name][phase], float64(d))
			}
		}
	}
	for side, ps := range phases {
		for phase, ds := range ps {
			b.ReportMetric(median(ds), side+":"+phase+"-ns")
		}
	}
	b.ReportMetric(0, "ns/op")
}

// processRSS returns the resident set size of this process, or 0 where
// /proc/self/statm is not there.
func processRSS() uint64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	var size, resident uint64
	if _, err := fmt.Sscan(string(b), &size, &resident); err != nil {
		return 0
	}
	return resident * uint64(os.Getpagesize())
}

// An idleCost is what n idle connections cost this process, each: live
// heap, resident memory and goroutines.
type idleCost struct {
	heap, rss, goroutines float64
}

// measureIdle opens n connections with open (which dials and lists the
// tools, and returns a call of the echo tool and what closes them), and
// returns their cost per connection once idle, then the growth of live
// heap and goroutines over calls calls spread across them.
func measureIdle(tb testing.TB, n, calls int, open func(tb testing.TB, n int) (call func(i int), close func())) (idle idleCost, growth idleCost) {
	idle, growths := measureGrowth(tb, n, calls, 1, open)
	return idle, growths[0]
}

// measureGrowth is measureIdle with rounds rounds of calls calls: the
// growth after each round, from the idle connections (a growth that stays
// the same from round to round is a bound reached, not a leak).
func measureGrowth(tb testing.TB, n, calls, rounds int, open func(tb testing.TB, n int) (call func(i int), close func())) (idle idleCost, growth []idleCost) {
	heap0, rss0, g0 := heapInUse(), processRSS(), runtime.NumGoroutine()
	call, closeAll := open(tb, n)
	defer closeAll()
	heap1, rss1, g1 := heapInUse(), processRSS(), runtime.NumGoroutine()
	idle = idleCost{
		heap:       (float64(heap1) - float64(heap0)) / float64(n),
		rss:        (float64(rss1) - float64(rss0)) / float64(n),
		goroutines: float64(g1-g0) / float64(n),
	}
	for range rounds {
		for i := range calls {
			call(i % n)
		}
		heap2, g2 := heapInUse(), runtime.NumGoroutine()
		growth = append(growth, idleCost{heap: float64(heap2) - float64(heap1), goroutines: float64(g2 - g1)})
	}
	return idle, growth
}

// openAdapter returns an opener of one Adapter over the n servers server(i)
// gives, named s0, s1, ...: ListTools dials them all. It takes the Config
// to fill, so that other shapes of connections (per-principal ones, say)
// are measured by the same code.
func openAdapter(cfg Config, server func(tb testing.TB, i int) Server) func(tb testing.TB, n int) (func(int), func()) {
	return func(tb testing.TB, n int) (func(int), func()) {
		cfg.Servers = make(map[string]Server, n)
		for i := range n {
			cfg.Servers[fmt.Sprintf("s%d", i)] = server(tb, i)
		}
		a, err := New(cfg)
		if err != nil {
			tb.Fatal(err)
		}
		ts, err := a.ListTools(tb.Context())
		if err != nil {
			tb.Fatal(err)
		}
		tools := make([]*Tool, n)
		for i := range n {
			tools[i] = ts.Lookup(fmt.Sprintf("s%d__echo", i))
		}
		return func(i int) { invokeEcho(tb, tb.Context(), tools[i]) }, func() { a.Close() }
	}
}

// principalHeaders is the Server.HeadersFor of the per-principal
// benchmarks: a bearer token per principal.
func principalHeaders(_ context.Context, principal string) (map[string]string, error) {
	return map[string]string{"Authorization": "Bearer " + principal}, nil
}

// openPrincipals returns an opener of one Adapter of one Streamable HTTP
// server (a new one per open, stateless or not) with a HeadersFor, and of
// n connections to it, one per principal p0, p1, ..., each dialled by
// ListTools under its principal's context; with share, the Adapter shares
// stateless sessions (Config.ShareStatelessSessions: the principals then
// join one session, the first principal's own dial aside).
func openPrincipals(stateless, share bool) func(tb testing.TB, n int) (func(int), func()) {
	return func(tb testing.TB, n int) (func(int), func()) {
		url := testserver.Lean(testserver.Options{}).StreamableHTTP(tb, stateless).URL
		a, err := New(Config{Servers: map[string]Server{"s": {URL: url, HeadersFor: principalHeaders}},
			ShareStatelessSessions: share, MaxPrincipalConns: max(n, defaultMaxPrincipalConns)})
		if err != nil {
			tb.Fatal(err)
		}
		ctxs, tools := make([]context.Context, n), make([]*Tool, n)
		for i := range n {
			ctxs[i] = WithPrincipal(tb.Context(), fmt.Sprintf("p%d", i))
			ts, err := a.ListTools(ctxs[i])
			if err != nil {
				tb.Fatal(err)
			}
			tools[i] = ts.Lookup("s__echo")
		}
		return func(i int) { invokeEcho(tb, ctxs[i], tools[i]) }, func() { a.Close() }
	}
}

// rawPrincipals returns the transports of the raw side of openPrincipals:
// connection i to one Streamable HTTP server (a new one for i == 0), with
// principal i's header added by its own http.Client, as a go-sdk user
// would.
func rawPrincipals(stateless bool) func(tb testing.TB, i int) mcp.Transport {
	var url string
	return func(tb testing.TB, i int) mcp.Transport {
		if i == 0 {
			url = testserver.Lean(testserver.Options{}).StreamableHTTP(tb, stateless).URL
		}
		header := headerTransport{base: http.DefaultTransport, principal: fmt.Sprintf("p%d", i)}
		return &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: header}}
	}
}

// A headerTransport adds its principal's header (principalHeaders) to
// each request.
type headerTransport struct {
	base      http.RoundTripper
	principal string
}

// RoundTrip implements [http.RoundTripper].
func (t headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	headers, _ := principalHeaders(req.Context(), t.principal)
	req = req.Clone(req.Context())
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	return t.base.RoundTrip(req)
}

// openRaw returns an opener of n go-sdk sessions (default client options)
// over the transports transport(i) gives, each with its tools listed.
func openRaw(transport func(tb testing.TB, i int) mcp.Transport) func(tb testing.TB, n int) (func(int), func()) {
	return openRawClient(rawClient, transport)
}

// rawListChangedClient returns a go-sdk client with list_changed handlers
// (that do nothing) for tools, prompts and resources, as the adapter
// registers them: on a modern session the SDK then opens
// subscriptions/listen, as it does for the adapter.
func rawListChangedClient() *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "raw", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler:     func(context.Context, *mcp.ToolListChangedRequest) {},
		PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) {},
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) {},
	})
}

// openRawClient is openRaw with the clients newClient returns, one per
// session.
func openRawClient(newClient func() *mcp.Client, transport func(tb testing.TB, i int) mcp.Transport) func(tb testing.TB, n int) (func(int), func()) {
	return func(tb testing.TB, n int) (func(int), func()) {
		sessions := make([]*mcp.ClientSession, n)
		for i := range n {
			cs, err := newClient().Connect(tb.Context(), transport(tb, i), nil)
			if err != nil {
				tb.Fatal(err)
			}
			if _, err := cs.ListTools(tb.Context(), nil); err != nil {
				tb.Fatal(err)
			}
			sessions[i] = cs
		}
		return func(i int) {
				res, err := sessions[i].CallTool(tb.Context(), &mcp.CallToolParams{Name: "echo", Arguments: echoArgs})
				if err != nil || firstText(res) != echoText {
					tb.Fatalf("CallTool = %v, %v", res, err)
				}
			}, func() {
				for _, cs := range sessions {
					cs.Close()
				}
			}
	}
}

// idleTransports are the transports BenchmarkIdleConnection measures, with
// how many connections each opens, and the adapter's server and the raw
// transport of connection i.
func idleTransports(tb testing.TB) []struct {
	name    string
	n       int
	adapter func(tb testing.TB, i int) Server
	raw     func(tb testing.TB, i int) mcp.Transport
} {
	memory := func(tb testing.TB, i int) *testserver.Server { return testserver.Lean(testserver.Options{}) }
	http := func(stateless bool) (func(testing.TB, int) Server, func(testing.TB, int) mcp.Transport) {
		return func(tb testing.TB, i int) Server {
				return Server{URL: memory(tb, i).StreamableHTTP(tb, stateless).URL}
			}, func(tb testing.TB, i int) mcp.Transport {
				return &mcp.StreamableClientTransport{Endpoint: memory(tb, i).StreamableHTTP(tb, stateless).URL}
			}
	}
	statelessServer, statelessRaw := http(true)
	statefulServer, statefulRaw := http(false)
	return []struct {
		name    string
		n       int
		adapter func(tb testing.TB, i int) Server
		raw     func(tb testing.TB, i int) mcp.Transport
	}{
		{"memory", 200,
			func(tb testing.TB, i int) Server { return InMemory(memory(tb, i).Server) },
			func(tb testing.TB, i int) mcp.Transport {
				t, err := memory(tb, i).Transport()(tb.Context())
				if err != nil {
					tb.Fatal(err)
				}
				return t
			}},
		{"stdio", 20,
			func(tb testing.TB, i int) Server { return stdioServer(tb, "modern:lean") },
			func(tb testing.TB, i int) mcp.Transport {
				return &mcp.CommandTransport{Command: command(stdioServer(tb, "modern:lean"))}
			}},
		{"http-stateless", 100, statelessServer, statelessRaw},
		{"http-stateful", 100, statefulServer, statefulRaw},
	}
}

// BenchmarkIdleConnection measures what an idle connection costs the
// client process (see measureGrowth), for the adapter (one Adapter of n
// servers) and raw go-sdk sessions, without and with list_changed
// handlers (raw+listchanged: the SDK then opens subscriptions/listen on
// modern sessions, as for the adapter), in memory (the server's share
// counts too, the same on both sides), over stdio (the server is a child
// process), and over Streamable HTTP (the httptest server is in the
// process: its share counts too), stateless and stateful, with a server
// each or with 1,000 per-principal connections to one server (and, in the
// rows "-shared", 1,000 principals of an Adapter that shares stateless
// sessions: on a stateless server they share one, measured per principal;
// the raw side is the rows' without it); then the
// growth of live heap and goroutines over 10,000 calls ("growth-B",
// "growth-goroutines") and over 20,000 ("growth20k-..."). Each op
// measures afresh; the figures are the last op's.
func BenchmarkIdleConnection(b *testing.B) {
	type opener = func(tb testing.TB, n int) (func(int), func())
	rows := func(name string, n int, adapter opener, raw func(tb testing.TB, i int) mcp.Transport) {
		impls := []string{"raw", "raw+listchanged", "adapter"}
		if raw == nil {
			impls = impls[2:]
		}
		for _, impl := range impls {
			b.Run("transport="+name+"/impl="+impl, func(b *testing.B) {
				open := openRaw(raw)
				switch impl {
				case "raw+listchanged":
					open = openRawClient(rawListChangedClient, raw)
				case "adapter":
					open = adapter
				}
				var (
					idle   idleCost
					growth []idleCost
				)
				for b.Loop() {
					idle, growth = measureGrowth(b, n, 10000, 2, open)
				}
				b.ReportMetric(idle.heap, "heap-B/conn")
				if idle.rss != 0 {
					b.ReportMetric(idle.rss, "rss-B/conn")
				}
				b.ReportMetric(idle.goroutines, "goroutines/conn")
				b.ReportMetric(growth[0].heap, "growth-B")
				b.ReportMetric(growth[0].goroutines, "growth-goroutines")
				b.ReportMetric(growth[1].heap, "growth20k-B")
				b.ReportMetric(growth[1].goroutines, "growth20k-goroutines")
				b.ReportMetric(0, "ns/op")
			})
		}
	}
	for _, tr := range idleTransports(b) {
		rows(tr.name, tr.n, openAdapter(Config{}, tr.adapter), tr.raw)
	}
	for _, stateless := range []bool{true, false} {
		name := "http-stateful-principals"
		if stateless {
			name = "http-stateless-principals"
		}
		rows(name, 1000, openPrincipals(stateless, false), rawPrincipals(stateless))
		rows(name+"-shared", 1000, openPrincipals(stateless, true), nil)
	}
}

// TestIdleStdioConnection counts the goroutines an idle stdio connection
// keeps in the client process (exact, unlike the times), over n
// connections: the SDK's reader, and on a modern session its
// subscriptions/listen, as many as the raw go-sdk's CommandTransport keeps
// (its reader and the SDK's: 2). No watch goroutine (the session's end
// starts it: endConn); on Linux no waiter and no stderr copier either:
// one process-wide spawner and one poller serve every server
// (internal/stdio/procwatch_linux.go), started here beforehand so that they do not count.
// Elsewhere each server keeps both (internal/stdio: process.run). It also bounds the
// live heap of one: the line reader's buffer starts small and no stderr
// read buffer is kept (they held 64 and 32 KiB each, 125 KiB in all, where
// the raw go-sdk holds about 16).
func TestIdleStdioConnection(t *testing.T) {
	perProcess := 0.0
	if !sharedWatcher() {
		perProcess = 2
	}
	for _, tt := range []struct {
		kind string
		want float64
	}{
		{"legacy:lean", 1},
		{"modern:lean", 2},
	} {
		t.Run(tt.kind, func(t *testing.T) {
			idle := idleGoroutines(t, tt.want+perProcess, openAdapter(Config{}, func(tb testing.TB, i int) Server { return stdioServer(tb, tt.kind) }))
			if idle.goroutines != tt.want+perProcess {
				t.Errorf("an idle %s stdio connection keeps %v goroutines, want %v", tt.kind, idle.goroutines, tt.want+perProcess)
			}
			if idle.heap > 32<<10 {
				t.Errorf("an idle %s stdio connection holds %.0f bytes of heap, want under 32 KiB", tt.kind, idle.heap)
			}
		})
	}
}

// idleGoroutines measures 10 idle connections that open opens (measureIdle)
// until they keep want goroutines each, three times at most, and returns
// the last measurement. The count is exact, but goroutines of earlier
// work that end during a measurement (an in-memory server's readers after
// its client closed, which nothing waits for) lower it by a fraction: a
// connection that keeps more or fewer than want does so every time.
func idleGoroutines(t *testing.T, want float64, open func(tb testing.TB, n int) (func(int), func())) idleCost {
	var idle idleCost
	for range 3 {
		if idle, _ = measureIdle(t, 10, 0, open); idle.goroutines == want {
			break
		}
		t.Logf("%v goroutines per connection, want %v: measuring again", idle.goroutines, want)
	}
	return idle
}

// TestIdleMemoryConnection counts the goroutines an idle in-memory
// connection keeps, the server's side included, against raw go-sdk
// sessions over the same transport: the same on a legacy session (each
// side's reader and its net.Pipe reader: 4), and on a modern one the two
// of subscriptions/listen (the client's, and the server's handler), which
// the adapter opens to hear of list changes and the raw client does not.
func TestIdleMemoryConnection(t *testing.T) {
	for _, tt := range []struct {
		name   string
		legacy bool
		extra  float64
	}{
		{"legacy", true, 0},
		{"modern", false, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			opts := testserver.Options{Legacy: tt.legacy}
			raw := idleGoroutines(t, 4, openRaw(func(tb testing.TB, i int) mcp.Transport {
				tr, err := testserver.Lean(opts).Transport()(tb.Context())
				if err != nil {
					tb.Fatal(err)
				}
				return tr
			}))
			adapter := idleGoroutines(t, 4+tt.extra, openAdapter(Config{}, func(tb testing.TB, i int) Server {
				return memServer(testserver.Lean(opts), ModeAuto)
			}))
			if raw.goroutines != 4 || adapter.goroutines != raw.goroutines+tt.extra {
				t.Errorf("an idle %s in-memory connection keeps %v goroutines (raw go-sdk: %v), want %v (raw: 4)",
					tt.name, adapter.goroutines, raw.goroutines, 4+tt.extra)
			}
		})
	}
}

// TestIdleHTTPConnection counts the goroutines an idle Streamable HTTP
// connection keeps, the in-process server's included, against raw go-sdk
// sessions doing the same work (with list_changed handlers, as the
// adapter has): no more, stateless (modern) and stateful (legacy). No
// goroutine waits for the session's end (httpConn.end); it kept
// one more than raw.
func TestIdleHTTPConnection(t *testing.T) {
	for _, tr := range idleTransports(t) {
		if !strings.HasPrefix(tr.name, "http") {
			continue
		}
		t.Run(tr.name, func(t *testing.T) {
			var raw, adapter idleCost
			for range 3 {
				raw, _ = measureIdle(t, 10, 0, openRawClient(rawListChangedClient, tr.raw))
				adapter, _ = measureIdle(t, 10, 0, openAdapter(Config{}, tr.adapter))
				if adapter.goroutines <= raw.goroutines {
					t.Logf("%v goroutines per connection, raw go-sdk %v", adapter.goroutines, raw.goroutines)
					return
				}
				t.Logf("%v goroutines per connection, raw go-sdk %v: measuring again", adapter.goroutines, raw.goroutines)
			}
			t.Errorf("an idle %s connection keeps %v goroutines, raw go-sdk %v", tr.name, adapter.goroutines, raw.goroutines)
		})
	}
}

// fleetDelay is the handshake delay of each in-memory server of
// BenchmarkFleet.
const fleetDelay = 10 * time.Millisecond

// BenchmarkFleet measures cold discovery of a fleet (see coldDiscovery),
// as ratios of two sides run in alternation (benchPair): in memory, 100
// servers that each answer the handshake fleetDelay late against one such
// server ("100/1"), for the adapter (the servers as InMemory, as a user
// would run them) and for go-sdk clients connected in parallel over
// go-sdk's in-memory transports (rawFleet); over stdio, 100 servers (the test binary) discovered
// by one Adapter against the same 100 discovered one after another, an
// Adapter each ("parallel/sequential"). transport=memory/cost is the CPU
// (getrusage, a garbage collection included: goBlock) per server of one
// cold discovery of 100 such servers: by the adapter, by go-sdk clients,
// and by bare clients (bareFleet), whose cost is the servers' share.
func BenchmarkFleet(b *testing.B) {
	memory := func(n int) func() {
		cfg := Config{Servers: map[string]Server{}}
		for i, s := range delayedFleet(n, fleetDelay) {
			cfg.Servers[fmt.Sprintf("s%d", i)] = InMemory(s.Server)
		}
		return coldDiscovery(b, cfg)
	}
	b.Run("transport=memory/impl=adapter", func(b *testing.B) { benchPair(b, "1", memory(1), "100", memory(100)) })
	b.Run("transport=memory/impl=raw", func(b *testing.B) {
		benchPair(b, "1", rawFleet(b, delayedFleet(1, fleetDelay)), "100", rawFleet(b, delayedFleet(100, fleetDelay)))
	})
	b.Run("transport=memory/cost", func(b *testing.B) {
		const n = 100
		benchSides(b, n, []costSide{
			goBlock("adapter", 1, memory(n)),
			goBlock("raw", 1, rawFleet(b, delayedFleet(n, fleetDelay))),
			goBlock("bare", 1, bareFleet(b, delayedFleet(n, fleetDelay))),
		}, [][2]string{{"adapter", "raw"}, {"adapter", "bare"}, {"raw", "bare"}})
	})
	b.Run("transport=stdio", func(b *testing.B) {
		const n = 100
		all := Config{Servers: map[string]Server{}}
		sequential := make([]func(), n)
		for i := range n {
			srv := stdioServer(b, "legacy:lean")
			all.Servers[fmt.Sprintf("s%d", i)] = srv
			sequential[i] = coldDiscovery(b, Config{Servers: map[string]Server{"s": srv}})
		}
		benchPair(b, "sequential", func() {
			for _, discover := range sequential {
				discover()
			}
		}, "parallel", coldDiscovery(b, all))
	})
}

// bareFleet returns one cold discovery of servers by bare clients, one per
// server in its own goroutine (see bareDiscovery).
func bareFleet(b *testing.B, servers []*testserver.Server) func() {
	return func() {
		var wg sync.WaitGroup
		errs := make([]error, len(servers))
		for i, s := range servers {
			wg.Go(func() { errs[i] = bareDiscovery(s.Server) })
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			b.Fatal(err)
		}
	}
}

// bareDiscovery connects a session of srv over a pipe, as InMemory does,
// and discovers its tools as a go-sdk client would in the modern era
// (server/discover, then tools/list), each request a line written and its
// answer a line read, without decoding more than the answer's id and
// error; then it closes the pipe and waits for the session to end. The
// client costs next to nothing: what it measures is the server's share.
func bareDiscovery(srv *mcp.Server) error {
	serverEnd, clientEnd := net.Pipe()
	ss, err := srv.Connect(context.Background(), &mcp.IOTransport{Reader: serverEnd, Writer: serverEnd}, nil)
	if err != nil {
		return err
	}
	defer ss.Wait()
	defer clientEnd.Close()
	r := bufio.NewReader(clientEnd)
	for id, method := range []string{"server/discover", "tools/list"} {
		if _, err := fmt.Fprintf(clientEnd, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":{%s}}`+"\n", id+1, method, bareMeta); err != nil {
			return err
		}
		for {
			line, err := r.ReadBytes('\n')
			if err != nil {
				return fmt.Errorf("%s: %w", method, err)
			}
			var resp struct {
				ID    int             `json:"id"`
				Error json.RawMessage `json:"error"`
			}
			if err := json.Unmarshal(line, &resp); err != nil {
				return fmt.Errorf("%s: %w", method, err)
			}
			if resp.ID == id+1 {
				if resp.Error != nil {
					return fmt.Errorf("%s: %s", method, resp.Error)
				}
				break
			}
		}
	}
	return nil
}
