// Command quickstart is mcpadapter end to end in one program, with no API key
// and no network:
//
//	go run ./examples/quickstart
//
// It starts two MCP servers inside the process, one per protocol era:
//
//   - "weather" speaks only the legacy protocol (2025-11-25, the initialize
//     handshake), like most servers deployed today;
//   - "booking" speaks the modern protocol (2026-07-28). Its book_table tool
//     asks the user for a date with an input-required result (SEP-2322).
//
// It builds an [mcpadapter.Adapter] over both, prints the discovered tools and
// their metadata, and runs a tool-calling agent (package agent: the model
// gets each tool's real JSON schema) whose model is scripted: it calls the
// weather tool, then the booking tool. The booking call pauses the run at an
// [*mcpadapter.Interrupt]; the program stores the paused run as JSON,
// answers the server's question and resumes the same run, whose model gets
// the booking's result.
//
// Why the booking server is the modern one: only modern-era servers return
// input requests that the adapter can hand to the caller as an Interrupt. A
// legacy server asks for input with a live elicitation/create request while
// the call is open; the adapter answers those with [mcpadapter.Config]'s
// ElicitationHandler (see examples/elicitation).
//
// With a real model (any OpenAI-compatible endpoint):
//
//	OPENAI_API_KEY=... go run ./examples/quickstart -base-url https://api.openai.com/v1 -model gpt-4o-mini
//
// The model then decides which tools to call (the user's answer to the
// booking question is still scripted); the servers stay in process.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/agent"
	"github.com/mcpadapter/mcpadapter/mcpadaptertest"
	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/callbacks"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/openai"
	"github.com/tmc/langchaingo/schema"
)

func main() {
	baseURL := flag.String("base-url", "", "base URL of an OpenAI-compatible API; empty: use the scripted model")
	apiKey := flag.String("api-key", "", "API key for -base-url; empty: $OPENAI_API_KEY")
	model := flag.String("model", "gpt-4o-mini", "model name for -base-url")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()

	var llm llms.Model = newScriptedModel()
	if *baseURL != "" {
		if *apiKey == "" {
			*apiKey = os.Getenv("OPENAI_API_KEY")
		}
		var err error
		llm, err = openai.New(openai.WithBaseURL(*baseURL), openai.WithToken(*apiKey), openai.WithModel(*model))
		if err != nil {
			fmt.Fprintln(os.Stderr, "quickstart:", err)
			os.Exit(1)
		}
	}
	if err := run(ctx, os.Stdout, llm); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

// run is the whole quickstart; it writes its story to w.
func run(ctx context.Context, w io.Writer, llm llms.Model) error {
	start := time.Now()
	fmt.Fprintln(w, "mcpadapter quickstart: two in-process MCP servers, a langchaingo agent, no network.")

	// 1. An Adapter over the two servers. New only validates: nothing is
	// dialed until the first discovery.
	// Mode is left to auto on both: each server is asked for the modern
	// era first, and the weather server, which speaks only the legacy one,
	// gets the legacy handshake.
	a, err := mcpadapter.New(mcpadapter.Config{
		Servers: map[string]mcpadapter.Server{
			"weather": mcpadapter.InMemory(newWeatherServer()),
			"booking": mcpadapter.InMemory(newBookingServer()),
		},
		CallbacksHandler: printer{w: w}, // prints what each tool returns
	})
	if err != nil {
		return err
	}
	defer a.Close() // ends every session (and stdio server process)

	// 2. Discovery: dials both servers in parallel, negotiates each one's era
	// and lists its tools, named "server__tool".
	ts, err := a.ListTools(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "\n1. Discovery")
	for _, name := range []string{"booking", "weather"} {
		info, err := a.ServerInfo(ctx, name)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "   server %-8s %s %s, %s era (protocol %s)\n", name, info.Name, info.Version, info.Era, info.ProtocolVersion)
	}
	for _, t := range ts {
		fmt.Fprintf(w, "   tool %s  (server %q, MCP name %q)\n", t.Name(), t.Server(), t.MCPName())
		fmt.Fprintf(w, "      description: %s\n", t.Description())
		params, _ := json.Marshal(t.Parameters())
		fmt.Fprintf(w, "      parameters:  %s\n", params)
		fmt.Fprintf(w, "      annotations: %s\n", describeAnnotations(t.Metadata().Annotations()))
		if meta := t.Metadata().Meta(); meta != nil {
			b, _ := json.Marshal(meta)
			fmt.Fprintf(w, "      _meta:       %s\n", b)
		}
	}

	// 3. An agent over the tools: agent.New offers the model every tool with
	// its server's JSON schema (native tool calling, any llms.Model that
	// takes tools). agent.NewExecutor takes agents.NewExecutor's arguments;
	// its runs can pause at a tool that needs the user, and resume. (For a
	// model without tool calling: agents.NewOneShotAgent(llm, ts.Tools()).)
	toolAgent, err := agent.New(llm, ts)
	if err != nil {
		return err
	}
	executor := agent.NewExecutor(
		toolAgent,
		agents.WithMaxIterations(4),
		agents.WithReturnIntermediateSteps(),       // to print the resumed tool's result
		agents.WithCallbacksHandler(printer{w: w}), // prints each tool call the model makes
	)

	question := "What will the weather be in Paris tomorrow?"
	fmt.Fprintf(w, "\n2. Agent run: %q\n", question)
	answer, err := chains.Run(ctx, executor, question)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "   answer: %s\n", answer)

	// 4. A tool that needs input. The server answers book_table with an
	// input request; the run pauses with a *PausedRun error holding its
	// state (the question, the steps so far, the pending call), through
	// which errors.As finds the *Interrupt.
	question = "Book a table for 2 at Chez Nous."
	fmt.Fprintf(w, "\n3. Agent run: %q\n", question)
	answer, err = chains.Run(ctx, executor, question)
	var paused *agent.PausedRun
	var intr *mcpadapter.Interrupt
	switch {
	case errors.As(err, &paused) && errors.As(err, &intr):
	case err != nil:
		return err
	default:
		fmt.Fprintf(w, "   answer: %s\n   (the model did not call the booking tool)\n", answer)
		fmt.Fprintf(w, "\nDone in %v.\n", time.Since(start).Round(time.Millisecond))
		return nil
	}
	fmt.Fprintf(w, "   interrupt: server %q, tool %s needs user input:\n", intr.Server, intr.Tool)
	for _, r := range intr.Requests {
		answerSchema, _ := json.Marshal(r.RequestedSchema)
		fmt.Fprintf(w, "      [%s] %s (%s request, answer schema %s)\n", r.Key, r.Message, r.Mode, answerSchema)
	}

	// A paused run is JSON: store it while the user thinks, and resume it
	// later, in this process or another one (an Executor over the same
	// servers' tools). Set Config.State.Key to seal it.
	saved, err := json.Marshal(paused)
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "   saved the run as JSON, to wait for the user")
	var restored agent.PausedRun
	if err := json.Unmarshal(saved, &restored); err != nil {
		return err
	}

	// 5. The user answers; the adapter validates the answer against the
	// requested schema, calls the tool again with it, and the same run goes
	// on: the model gets the tool's result and answers.
	answers := map[string]mcpadapter.Answer{}
	for _, r := range intr.Requests {
		answers[r.Key] = mcpadapter.Answer{Action: mcpadapter.Accept, Content: map[string]any{"date": "2026-09-18"}}
	}
	fmt.Fprintln(w, "   the user answers date=2026-09-18; resuming the run")
	out, err := executor.Resume(ctx, &restored, mcpadapter.Answered(answers))
	if err != nil {
		return err
	}
	if steps, _ := out["intermediateSteps"].([]schema.AgentStep); len(steps) > 0 {
		fmt.Fprintf(w, "   result: %s\n", steps[len(steps)-1].Observation)
	}
	fmt.Fprintf(w, "   answer: %s\n", out["output"])
	fmt.Fprintf(w, "\nDone in %v.\n", time.Since(start).Round(time.Millisecond))
	return nil
}

// describeAnnotations renders a tool's annotations (hints declared by the
// server) on one line.
func describeAnnotations(ann *mcpadapter.ToolAnnotations) string {
	if ann == nil {
		return "(none)"
	}
	var hints []string
	if ann.Title != "" {
		hints = append(hints, fmt.Sprintf("title %q", ann.Title))
	}
	if ann.ReadOnly() {
		hints = append(hints, "read-only")
	}
	if ann.DestructiveHint != nil {
		hints = append(hints, fmt.Sprintf("destructive=%t", *ann.DestructiveHint))
	}
	if ann.IdempotentHint != nil && *ann.IdempotentHint {
		hints = append(hints, "idempotent")
	}
	if ann.OpenWorldHint != nil {
		hints = append(hints, fmt.Sprintf("open-world=%t", *ann.OpenWorldHint))
	}
	return strings.Join(hints, ", ")
}

// printer prints the agent's tool calls (executor callbacks) and the tools'
// results (adapter callbacks); the other callbacks do nothing.
type printer struct {
	callbacks.SimpleHandler
	w io.Writer
}

func (p printer) HandleAgentAction(_ context.Context, action schema.AgentAction) {
	fmt.Fprintf(p.w, "   model calls %s %s\n", action.Tool, action.ToolInput)
}

func (p printer) HandleToolEnd(_ context.Context, output string) {
	fmt.Fprintf(p.w, "   tool result: %s\n", output)
}

// newScriptedModel returns a model that plays a fixed script
// (mcpadaptertest, the module's test kit): the model's side of the two agent
// runs above. It needs no key and no network; swap in a real model with
// -base-url.
func newScriptedModel() *mcpadaptertest.Model {
	call := mcpadaptertest.ToolCall
	return mcpadaptertest.NewModel(
		// Run 2: weather.
		mcpadaptertest.ToolCalls(call("call_1", "weather__get_forecast", `{"city":"Paris"}`)),
		mcpadaptertest.FinalAnswer("Tomorrow in Paris: sunny, 24°C, light wind."),
		// Run 3: booking; the run pauses at the interrupt.
		mcpadaptertest.ToolCalls(call("call_2", "booking__book_table", `{"restaurant":"Chez Nous","party":2}`)),
		// Run 3, resumed: the answer after the resumed call.
		mcpadaptertest.FinalAnswer("Done: your table for 2 at Chez Nous is booked for 18 September 2026."),
	)
}
