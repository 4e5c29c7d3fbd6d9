// Command client is the client side of the official MCP conformance suite
// (the npm package @modelcontextprotocol/conformance, "client" mode), built
// on mcpadapter: every scenario is done through an [mcpadapter.Adapter]
// with one URL server, its Toolset, [mcpadapter.Tool.Invoke], interrupts
// and [mcpadapter.Config.ElicitationHandler], [mcpadapter.Server.OAuth] and
// [mcpadapter.Server.Headers]. Only prompts, which the adapter does not
// serve, go through the raw go-sdk session ([mcpadapter.Adapter.Session]).
//
// The suite starts a test server for each scenario and runs this program as
//
//	client [flags] <server-url>
//
// with the scenario's name in MCP_CONFORMANCE_SCENARIO, its data (for
// instance pre-registered OAuth credentials, or the tool calls to make) as
// a JSON object in MCP_CONFORMANCE_CONTEXT, and the protocol version the
// scenario is run at in MCP_CONFORMANCE_PROTOCOL_VERSION. The program exits
// 0 when it did the scenario's part without error; the suite then judges
// what it saw on the wire. An unknown scenario, or one that fails on the
// client side, exits 1 with a message naming the scenario and the cause.
//
// The adapter's era follows the protocol version the suite asks for, as its
// README requires of clients: the 2026-07-28 protocol in modern mode,
// earlier ones in legacy mode (the initialize handshake). -mode overrides
// that, e.g. -mode auto to run every scenario in the adapter's default mode,
// which tries the modern protocol first and falls back.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// Environment variables set by the suite.
const (
	scenarioEnv = "MCP_CONFORMANCE_SCENARIO"
	contextEnv  = "MCP_CONFORMANCE_CONTEXT"
	versionEnv  = "MCP_CONFORMANCE_PROTOCOL_VERSION"
)

// modernVersion is the first protocol version of the modern era.
const modernVersion = "2026-07-28"

// serverName is the name of the one server in every scenario's Adapter.
const serverName = "conformance"

// A scenario does the client's part of one conformance scenario.
type scenario func(ctx context.Context, r *run) error

// scenarios maps the suite's client scenario names to their handlers.
var scenarios = map[string]scenario{
	"initialize":                          initialize,
	"tools_call":                          toolsCall,
	"elicitation-sep1034-client-defaults": elicitationDefaults,
	"sse-retry":                           sseRetry,
	"request-metadata":                    requestMetadata,
	"sep-2322-client-request-state":       requestState,
	"http-standard-headers":               standardHeaders,
	"http-custom-headers":                 customHeaders,
	"http-invalid-tool-headers":           invalidToolHeaders,
	"json-schema-ref-no-deref":            refNoDeref,
	"json-schema-2020-12-preservation":    schemaPreservation,

	// OAuth: the authorization code flow, which go-sdk implements.
	"auth/2025-03-26-oauth-endpoint-fallback":   authorizationCode,
	"auth/2025-03-26-oauth-metadata-backcompat": authorizationCode,
	"auth/authorization-server-migration":       authorizationCode,
	"auth/basic-cimd":                           authorizationCode,
	"auth/iss-not-advertised":                   authorizationCode,
	"auth/iss-supported":                        authorizationCode,
	"auth/metadata-default":                     authorizationCode,
	"auth/metadata-var1":                        authorizationCode,
	"auth/metadata-var2":                        authorizationCode,
	"auth/metadata-var3":                        authorizationCode,
	"auth/offline-access-not-supported":         authorizationCode,
	"auth/offline-access-scope":                 authorizationCode,
	"auth/pre-registration":                     authorizationCode,
	"auth/scope-from-scopes-supported":          authorizationCode,
	"auth/scope-from-www-authenticate":          authorizationCode,
	"auth/scope-omitted-when-undefined":         authorizationCode,
	"auth/scope-step-up":                        authorizationCode,
	"auth/token-endpoint-auth-basic":            authorizationCode,
	"auth/token-endpoint-auth-none":             authorizationCode,
	"auth/token-endpoint-auth-post":             authorizationCode,

	// OAuth: servers and authorization servers that the client must refuse
	// (a wrong or missing issuer, a resource that is not the server, a
	// scope challenge repeated forever).
	"auth/iss-normalized":           authorizationRefused,
	"auth/iss-supported-missing":    authorizationRefused,
	"auth/iss-unexpected":           authorizationRefused,
	"auth/iss-wrong-issuer":         authorizationRefused,
	"auth/metadata-issuer-mismatch": authorizationRefused,
	"auth/resource-mismatch":        authorizationRefused,
	"auth/scope-retry-limit":        authorizationRefused,

	// SEP-2640, the skills extension (io.modelcontextprotocol/skills):
	// the adapter has no skills support, and go-sdk v1.8.0 neither sends
	// skills/list nor any request of a method it does not know. Like any
	// client without the extension, this one connects, lists the tools and
	// reads no resource unasked, which is what these scenarios forbid a
	// host before it loads a skill. Having seen no skills/list, the suite
	// reports each scenario's one check SKIPPED (see unobservable in
	// ../conformance_test.go).
	"sep-2640-client-no-prefetch":        initialize,
	"sep-2640-client-verify-digest":      initialize,
	"sep-2640-client-verify-frontmatter": initialize,
	"sep-2640-client-verify-size":        initialize,

	// OAuth extensions that go-sdk v1.8.0 has no client for (see
	// baseline.yml): these fail on purpose, saying so.
	"auth/client-credentials-basic":         unsupportedAuth("the client credentials grant"),
	"auth/client-credentials-jwt":           unsupportedAuth("the client credentials grant with a JWT client assertion"),
	"auth/dpop":                             unsupportedAuth("DPoP sender-constrained tokens (SEP-1932)"),
	"auth/dpop-nonce":                       unsupportedAuth("DPoP sender-constrained tokens (SEP-1932)"),
	"auth/enterprise-managed-authorization": unsupportedAuth("enterprise-managed authorization (token exchange and JWT bearer grant)"),
	"auth/wif-jwt-bearer":                   unsupportedAuth("workload identity federation (JWT bearer grant, SEP-1933)"),
}

// run is one run of a scenario: what the suite and the flags said.
type run struct {
	scenario string
	url      string
	mode     mcpadapter.Mode
	context  map[string]any // MCP_CONFORMANCE_CONTEXT; nil when unset
	logger   *slog.Logger
}

// main reads the flags and the suite's environment, runs the scenario and
// exits 0, or prints why it failed and exits 1 (2 for bad usage).
func main() {
	modeFlag := flag.String("mode", "era", `the adapter's mode: "era" (the era of `+versionEnv+`), "auto", "legacy" or "modern"`)
	timeout := flag.Duration("timeout", 25*time.Second, "bound on the whole scenario (the suite kills the client after 30s by default)")
	flag.Usage = usage
	flag.Parse()
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))

	name := os.Getenv(scenarioEnv)
	if flag.NArg() != 1 || name == "" {
		fmt.Fprintf(os.Stderr, "conformance client: want one argument, the server URL (got %d), and %s set (got %q)\n", flag.NArg(), scenarioEnv, name)
		usage()
		os.Exit(2)
	}
	r, err := newRun(name, flag.Arg(0), *modeFlag, logger)
	if err != nil {
		fail(name, err)
	}
	do, ok := scenarios[name]
	if !ok {
		fail(name, fmt.Errorf("unknown scenario: this client knows %s", strings.Join(known(), ", ")))
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	logger.Info("conformance client", "scenario", name, "url", r.url, "mode", modeName(r.mode), "protocol", os.Getenv(versionEnv))
	if err := do(ctx, r); err != nil {
		cancel()
		fail(name, err)
	}
}

// usage prints how to run the program and the scenarios it knows.
func usage() {
	fmt.Fprintf(os.Stderr, "usage: %s [flags] <server-url>, with %s set to one of:\n  %s\nflags:\n",
		os.Args[0], scenarioEnv, strings.Join(known(), "\n  "))
	flag.PrintDefaults()
}

// fail reports a failed scenario on stderr and exits 1.
func fail(name string, err error) {
	fmt.Fprintf(os.Stderr, "conformance client: scenario %q: %v\n", name, err)
	os.Exit(1)
}

// known returns the scenario names, sorted.
func known() []string {
	names := make([]string, 0, len(scenarios))
	for name := range scenarios {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// newRun checks the arguments and the environment of a run.
func newRun(name, rawURL, modeFlag string, logger *slog.Logger) (*run, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("server URL %q: want an http(s) URL", rawURL)
	}
	r := &run{scenario: name, url: rawURL, logger: logger}
	switch modeFlag {
	case "era":
		// Dated versions before 2026-07-28 use the initialize handshake;
		// the suite always sets the variable (2025-11-25 by default).
		switch v := os.Getenv(versionEnv); {
		case v == "":
			r.mode = mcpadapter.ModeAuto
		case v >= modernVersion:
			r.mode = mcpadapter.ModeModern
		default:
			r.mode = mcpadapter.ModeLegacy
		}
	case "auto":
		r.mode = mcpadapter.ModeAuto
	case "legacy":
		r.mode = mcpadapter.ModeLegacy
	case "modern":
		r.mode = mcpadapter.ModeModern
	default:
		return nil, fmt.Errorf("-mode %q: want era, auto, legacy or modern", modeFlag)
	}
	if raw := os.Getenv(contextEnv); raw != "" {
		if err := json.Unmarshal([]byte(raw), &r.context); err != nil {
			return nil, fmt.Errorf("%s is not a JSON object: %w", contextEnv, err)
		}
	}
	return r, nil
}

// modeName names a mode for the log.
func modeName(m mcpadapter.Mode) string {
	if m == mcpadapter.ModeAuto {
		return "auto"
	}
	return string(m)
}

// open returns an Adapter with the scenario's server, in the run's mode,
// after configure (when non-nil) has adjusted its configuration. Every
// request carries an X-Conformance-Scenario header, through Server.Headers,
// next to the headers the SDK sets.
func (r *run) open(configure func(*mcpadapter.Config)) (*mcpadapter.Adapter, error) {
	cfg := mcpadapter.Config{
		Servers: map[string]mcpadapter.Server{serverName: {
			URL:     r.url,
			Mode:    r.mode,
			Headers: map[string]string{"X-Conformance-Scenario": r.scenario},
		}},
		Logger: r.logger,
	}
	if configure != nil {
		configure(&cfg)
	}
	a, err := mcpadapter.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("mcpadapter.New: %w", err)
	}
	return a, nil
}

// connect opens an Adapter on the scenario's server (see open), lists its
// tools and logs what was negotiated. The caller closes the Adapter; on an
// error there is none to close.
func (r *run) connect(ctx context.Context, configure func(*mcpadapter.Config)) (*mcpadapter.Adapter, mcpadapter.Toolset, error) {
	a, err := r.open(configure)
	if err != nil {
		return nil, nil, err
	}
	ts, err := a.ListTools(ctx)
	if err != nil {
		a.Close()
		return nil, nil, fmt.Errorf("ListTools: %w", err)
	}
	if info, err := a.ServerInfo(ctx, serverName); err == nil {
		r.logger.Info("connected", "server", info.Name, "era", info.Era, "protocol", info.ProtocolVersion, "tools", len(ts))
	}
	return a, ts, nil
}

// find returns the tool the server calls mcpName.
func find(ts mcpadapter.Toolset, mcpName string) (*mcpadapter.Tool, error) {
	for _, tool := range ts {
		if tool.MCPName() == mcpName {
			return tool, nil
		}
	}
	names := make([]string, len(ts))
	for i, tool := range ts {
		names[i] = tool.MCPName()
	}
	return nil, fmt.Errorf("the server lists no tool %q (it lists %q)", mcpName, names)
}

// invoke calls tool and fails on an error result, or when want is not
// empty and the result's text lacks it.
func invoke(ctx context.Context, tool *mcpadapter.Tool, args map[string]any, want string) (*mcpadapter.Result, error) {
	res, err := tool.Invoke(ctx, args)
	if err != nil {
		return nil, fmt.Errorf("call %q: %w", tool.MCPName(), err)
	}
	return res, checkResult(tool.MCPName(), res, want)
}

// checkResult fails on an error result, or when want is not empty and the
// result's text lacks it.
func checkResult(tool string, res *mcpadapter.Result, want string) error {
	switch {
	case res.IsError:
		return fmt.Errorf("call %q: error result: %s", tool, res.Text())
	case want != "" && !strings.Contains(res.Text(), want):
		return fmt.Errorf("call %q: result %q lacks %q", tool, res.Text(), want)
	}
	return nil
}

// initialize connects (the initialize handshake on legacy servers) and
// lists the tools.
func initialize(ctx context.Context, r *run) error {
	a, _, err := r.connect(ctx, nil)
	if err != nil {
		return err
	}
	return a.Close()
}

// toolsCall calls add_numbers with two numbers and checks their sum.
func toolsCall(ctx context.Context, r *run) error {
	a, ts, err := r.connect(ctx, nil)
	if err != nil {
		return err
	}
	defer a.Close()
	tool, err := find(ts, "add_numbers")
	if err != nil {
		return err
	}
	_, err = invoke(ctx, tool, map[string]any{"a": 5, "b": 3}, "8")
	return err
}

// elicitationDefaults accepts a live elicitation request with no content
// at all, through Config.ElicitationHandler: the adapter fills in the
// requested schema's defaults (SEP-1034), which the server checks.
func elicitationDefaults(ctx context.Context, r *run) error {
	var asked atomic.Int32
	a, ts, err := r.connect(ctx, func(cfg *mcpadapter.Config) {
		cfg.ElicitationHandler = func(ctx context.Context, req mcpadapter.ElicitationRequest) (mcpadapter.Answer, error) {
			asked.Add(1)
			if req.Mode != "form" {
				return mcpadapter.Answer{}, fmt.Errorf("want a form request, got mode %q", req.Mode)
			}
			return mcpadapter.Answer{Action: mcpadapter.Accept}, nil
		}
	})
	if err != nil {
		return err
	}
	defer a.Close()
	tool, err := find(ts, "test_client_elicitation_defaults")
	if err != nil {
		return err
	}
	if _, err := invoke(ctx, tool, map[string]any{}, "Elicitation completed"); err != nil {
		return err
	}
	if asked.Load() == 0 {
		return errors.New("the server never asked for input")
	}
	return nil
}

// sseRetry calls a tool whose SSE response stream the server closes before
// answering: the answer comes on the stream the client opens again after
// the server's retry interval (SEP-1699).
func sseRetry(ctx context.Context, r *run) error {
	a, ts, err := r.connect(ctx, nil)
	if err != nil {
		return err
	}
	defer a.Close()
	tool, err := find(ts, "test_reconnection")
	if err != nil {
		return err
	}
	_, err = invoke(ctx, tool, map[string]any{}, "Reconnection test completed")
	return err
}

// requestMetadata makes requests whose headers and _meta the server checks
// (SEP-2575); its first answer rejects the protocol version, which the
// client must retry with one the server supports.
func requestMetadata(ctx context.Context, r *run) error { return initialize(ctx, r) }

// requestState drives SEP-2322 input rounds both ways the adapter offers.
//
// Without an ElicitationHandler each round is an *Interrupt: the
// echo-state tool's interrupt goes through JSON and is resumed with
// Adapter.Resume after an unrelated call (which must carry none of its
// state), the no-state tool's as it came; the tool whose result
// has no resultType must not be an interrupt. With an ElicitationHandler,
// the same rounds are answered inline.
func requestState(ctx context.Context, r *run) error {
	answers := map[string]mcpadapter.Answer{"confirm": {Action: mcpadapter.Accept, Content: map[string]any{"confirmed": true}}}

	a, ts, err := r.connect(ctx, nil)
	if err != nil {
		return err
	}
	defer a.Close()
	var echo, noState, unrelated, noType *mcpadapter.Tool
	for _, t := range []struct {
		tool **mcpadapter.Tool
		name string
	}{
		{&echo, "test_mrtr_echo_state"},
		{&noState, "test_mrtr_no_state"},
		{&unrelated, "test_mrtr_unrelated"},
		{&noType, "test_mrtr_no_result_type"},
	} {
		if *t.tool, err = find(ts, t.name); err != nil {
			return err
		}
	}

	intr, err := interrupted(ctx, echo, "confirm")
	if err != nil {
		return err
	}
	if _, err := invoke(ctx, unrelated, map[string]any{}, "unrelated-ok"); err != nil {
		return err
	}
	stored, err := json.Marshal(intr)
	if err != nil {
		return fmt.Errorf("store the interrupt of %q: %w", echo.MCPName(), err)
	}
	var loaded mcpadapter.Interrupt
	if err := json.Unmarshal(stored, &loaded); err != nil {
		return fmt.Errorf("load the interrupt of %q: %w", echo.MCPName(), err)
	}
	res, err := a.Resume(ctx, &loaded, mcpadapter.Answered(answers))
	if err != nil {
		return fmt.Errorf("resume %q: %w", echo.MCPName(), err)
	}
	if err := checkResult(echo.MCPName(), res, "echo-state-ok"); err != nil {
		return err
	}

	if intr, err = interrupted(ctx, noState, "confirm"); err != nil {
		return err
	}
	if res, err = a.Resume(ctx, intr, mcpadapter.Answered(answers)); err != nil {
		return fmt.Errorf("resume %q: %w", noState.MCPName(), err)
	}
	if err := checkResult(noState.MCPName(), res, "no-state-ok"); err != nil {
		return err
	}

	if _, err := invoke(ctx, noType, map[string]any{}, "no-result-type-test-ok"); err != nil {
		return err
	}

	// The same rounds answered inline by an ElicitationHandler.
	var asked atomic.Int32
	inline, ts, err := r.connect(ctx, func(cfg *mcpadapter.Config) {
		cfg.ElicitationHandler = func(ctx context.Context, req mcpadapter.ElicitationRequest) (mcpadapter.Answer, error) {
			asked.Add(1)
			ans, ok := answers[req.Key]
			if !ok {
				return mcpadapter.Answer{}, fmt.Errorf("unexpected request key %q", req.Key)
			}
			return ans, nil
		}
	})
	if err != nil {
		return err
	}
	defer inline.Close()
	for _, c := range []struct{ tool, want string }{
		{"test_mrtr_echo_state", "echo-state-ok"},
		{"test_mrtr_no_state", "no-state-ok"},
	} {
		tool, err := find(ts, c.tool)
		if err != nil {
			return err
		}
		if _, err := invoke(ctx, tool, map[string]any{}, c.want); err != nil {
			return fmt.Errorf("inline: %w", err)
		}
	}
	if n := asked.Load(); n != 2 {
		return fmt.Errorf("inline: the ElicitationHandler was asked %d times, want 2", n)
	}
	return nil
}

// interrupted calls tool and returns the *Interrupt it must return, with
// one form request under key.
func interrupted(ctx context.Context, tool *mcpadapter.Tool, key string) (*mcpadapter.Interrupt, error) {
	res, err := tool.Invoke(ctx, map[string]any{})
	var intr *mcpadapter.Interrupt
	switch {
	case errors.As(err, &intr):
	case err != nil:
		return nil, fmt.Errorf("call %q: %w", tool.MCPName(), err)
	default:
		return nil, fmt.Errorf("call %q: want an interrupt, got a result: %s", tool.MCPName(), res.Text())
	}
	if len(intr.Requests) != 1 || intr.Requests[0].Key != key || intr.Requests[0].Mode != "form" {
		return nil, fmt.Errorf("call %q: want one form request %q, got %+v", tool.MCPName(), key, intr.Requests)
	}
	return intr, nil
}

// standardHeaders makes one request of each kind whose Mcp-Method and
// Mcp-Name headers the server checks (SEP-2243): tools and resources
// through the adapter, prompts through the raw session.
func standardHeaders(ctx context.Context, r *run) error {
	a, ts, err := r.connect(ctx, nil)
	if err != nil {
		return err
	}
	defer a.Close()
	if len(ts) == 0 {
		return errors.New("the server lists no tools")
	}
	for _, tool := range ts {
		if _, err := invoke(ctx, tool, map[string]any{}, ""); err != nil {
			return err
		}
	}
	resources, err := a.ListResources(ctx, serverName)
	if err != nil {
		return fmt.Errorf("ListResources: %w", err)
	}
	if len(resources) == 0 {
		return errors.New("the server lists no resources")
	}
	for _, res := range resources {
		if _, err := a.ReadResource(ctx, serverName, res.URI); err != nil {
			return fmt.Errorf("ReadResource %q: %w", res.URI, err)
		}
	}

	// The adapter does not serve prompts (README, Limitations): the
	// escape hatch, the adapter's own session, sends them.
	session, err := a.Session(ctx, serverName)
	if err != nil {
		return fmt.Errorf("adapter session: %w", err)
	}
	prompts, err := session.ListPrompts(ctx, nil)
	if err != nil {
		return fmt.Errorf("prompts/list: %w", err)
	}
	for _, p := range prompts.Prompts {
		if _, err := session.GetPrompt(ctx, &mcp.GetPromptParams{Name: p.Name, Arguments: map[string]string{}}); err != nil {
			return fmt.Errorf("prompts/get %q: %w", p.Name, err)
		}
	}
	return nil
}

// customHeaders makes the tool calls the suite lists in the context, whose
// x-mcp-header parameters the client must mirror into Mcp-Param-* headers
// (SEP-2243).
func customHeaders(ctx context.Context, r *run) error {
	calls, _ := r.context["toolCalls"].([]any)
	if len(calls) == 0 {
		return fmt.Errorf("%s has no toolCalls", contextEnv)
	}
	a, ts, err := r.connect(ctx, nil)
	if err != nil {
		return err
	}
	defer a.Close()
	for i, raw := range calls {
		call, _ := raw.(map[string]any)
		name, _ := call["name"].(string)
		args, _ := call["arguments"].(map[string]any)
		if name == "" {
			return fmt.Errorf("%s: toolCalls[%d] has no name", contextEnv, i)
		}
		if args == nil {
			args = map[string]any{}
		}
		tool, err := find(ts, name)
		if err != nil {
			return err
		}
		if _, err := invoke(ctx, tool, args, ""); err != nil {
			return err
		}
	}
	return nil
}

// invalidToolHeaders lists tools among which all but valid_tool carry an
// invalid x-mcp-header annotation: those must not be listed (SEP-2243).
// Every listed tool is called, so that the server sees which ones the
// client kept.
func invalidToolHeaders(ctx context.Context, r *run) error {
	a, ts, err := r.connect(ctx, nil)
	if err != nil {
		return err
	}
	defer a.Close()
	var kept []string
	for _, tool := range ts {
		if tool.MCPName() != "valid_tool" {
			kept = append(kept, tool.MCPName())
		}
		if _, err := invoke(ctx, tool, map[string]any{"region": "us-west1"}, ""); err != nil {
			return err
		}
	}
	if _, err := find(ts, "valid_tool"); err != nil {
		return err
	}
	if len(kept) > 0 {
		return fmt.Errorf("tools with invalid x-mcp-header annotations were listed: %q", kept)
	}
	return nil
}

// refNoDeref lists a tool whose input schema has a $ref to a network URL
// and builds what a model would get from it: the client must not fetch
// the URL (SEP-2106), which the server watches.
func refNoDeref(ctx context.Context, r *run) error {
	a, ts, err := r.connect(ctx, nil)
	if err != nil {
		return err
	}
	defer a.Close()
	tool, err := find(ts, "lookup_user")
	if err != nil {
		return err
	}
	if _, err := json.Marshal(ts.LLMTools()); err != nil {
		return fmt.Errorf("LLMTools: %w", err)
	}
	if _, ok := tool.Parameters()["properties"].(map[string]any)["profile"]; !ok {
		return fmt.Errorf("tool %q: Parameters() lost the profile property: %v", tool.MCPName(), tool.Parameters())
	}
	return nil
}

// schemaPreservation sends the focal tool's input schema, as the adapter
// gives it to models (Tool.Parameters), back to the server through its echo
// tool: the server checks that no JSON Schema 2020-12 keyword was lost or
// changed (SEP-1613, SEP-2106).
func schemaPreservation(ctx context.Context, r *run) error {
	a, ts, err := r.connect(ctx, nil)
	if err != nil {
		return err
	}
	defer a.Close()
	focal, err := find(ts, "json_schema_2020_12_tool")
	if err != nil {
		return err
	}
	echo, err := find(ts, "json_schema_echo")
	if err != nil {
		return err
	}
	_, err = invoke(ctx, echo, map[string]any{"schema": focal.Parameters()}, "")
	return err
}

// Facts the conformance suite's OAuth scenarios rely on.
const (
	// redirectURL is the redirect URI of the client; the test
	// authorization server redirects to it at once, and nothing listens
	// there: the code is read from the redirect itself.
	redirectURL = "http://localhost:3000/callback"
	// clientMetadataURL is the client ID metadata document URL that the
	// basic-cimd scenario expects as client_id.
	clientMetadataURL = "https://conformance-test.local/client-metadata.json"
)

// authorizationCode authorizes with go-sdk's authorization code handler,
// set as Server.OAuth, then lists the tools and calls test-tool. Client
// registration is tried as go-sdk orders it: a client ID metadata
// document, pre-registered credentials (when the suite gives them),
// dynamic registration.
func authorizationCode(ctx context.Context, r *run) error { return authorize(ctx, r, false) }

// authorizationRefused is authorizationCode where the authorization must
// fail: listing the tools must fail with a *ServerError, and the tools are
// never called.
func authorizationRefused(ctx context.Context, r *run) error { return authorize(ctx, r, true) }

// authorize does authorizationCode (refuse false) or authorizationRefused.
func authorize(ctx context.Context, r *run, refuse bool) error {
	cfg := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL:                    redirectURL,
		AuthorizationCodeFetcher:       fetchAuthorizationCode,
		ClientIDMetadataDocumentConfig: &auth.ClientIDMetadataDocumentConfig{URL: clientMetadataURL},
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{
			Metadata: &oauthex.ClientRegistrationMetadata{RedirectURIs: []string{redirectURL}},
		},
	}
	id, _ := r.context["client_id"].(string)
	secret, _ := r.context["client_secret"].(string)
	if id != "" && secret != "" {
		cfg.PreregisteredClient = &oauthex.ClientCredentials{ClientID: id, ClientSecretAuth: &oauthex.ClientSecretAuth{ClientSecret: secret}}
	}
	handler, err := auth.NewAuthorizationCodeHandler(cfg)
	if err != nil {
		return fmt.Errorf("auth.NewAuthorizationCodeHandler: %w", err)
	}
	a, ts, err := r.connect(ctx, func(cfg *mcpadapter.Config) {
		s := cfg.Servers[serverName]
		s.OAuth = handler
		cfg.Servers[serverName] = s
	})
	if err == nil {
		defer a.Close()
	}
	var serr *mcpadapter.ServerError
	switch {
	case refuse && err == nil:
		return fmt.Errorf("the authorization should have failed, yet the server listed %d tools", len(ts))
	case refuse && errors.As(err, &serr):
		r.logger.Info("refused, as the scenario wants", "error", err)
		return nil
	case err != nil:
		return err
	}
	tool, err := find(ts, "test-tool")
	if err != nil {
		return err
	}
	_, err = invoke(ctx, tool, map[string]any{}, "")
	return err
}

// fetchAuthorizationCode plays the user's browser: it opens the
// authorization URL and, instead of following the redirect to the client's
// redirect URI, reads the code, state and issuer from it.
func fetchAuthorizationCode(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, args.URL, nil)
	if err != nil {
		return nil, fmt.Errorf("authorization request: %w", err)
	}
	browser := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := browser.Do(req)
	if err != nil {
		return nil, fmt.Errorf("authorization request: %w", err)
	}
	resp.Body.Close()
	location, err := resp.Location()
	if err != nil {
		return nil, fmt.Errorf("authorization request: %s without a redirect: %w", resp.Status, err)
	}
	q := location.Query()
	if q.Get("code") == "" {
		return nil, fmt.Errorf("authorization request: redirected to %s without a code", location.Redacted())
	}
	return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
}

// unsupportedAuth returns the handler of an OAuth scenario whose mechanism
// go-sdk has no client for: it fails, naming the mechanism.
func unsupportedAuth(mechanism string) scenario {
	return func(ctx context.Context, r *run) error {
		return fmt.Errorf("not supported: go-sdk v1.8.0, whose OAuth handlers the adapter takes, has no client for %s", mechanism)
	}
}
