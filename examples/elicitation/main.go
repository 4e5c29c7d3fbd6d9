// Command elicitation shows a langchaingo agent run that stops because an MCP
// server needs the user's input, and resumes later, with no API key and no
// network:
//
//	go run ./examples/elicitation
//
// A restaurant server runs inside the process. Its book_table tool asks the
// user for the date with an input-required result (the modern protocol's
// multi round-trip requests, SEP-2322). The adapter turns that into an
// [*mcpadapter.Interrupt], and the run of [agent.Executor] (an
// agents.Executor whose runs can pause) stops with an
// [*agent.PausedRun].
//
// The program then does what a web service would do across two requests:
//
//  1. It stores the paused run as JSON: the run's input, the steps the
//     agent completed, the action that was interrupted and the interrupt
//     (which carries the call's arguments and the server's opaque request
//     state, but shows neither), sealed with Config.State.Key.
//  2. It asks the user (here: scripted answers; the first one is invalid
//     and refused before anything is sent) and resumes the same run with
//     [agent.Executor.Resume] on a brand-new Adapter: the completed
//     step is not run again, and the model sees the booking's result.
//
// Finally it shows the synchronous alternative, [mcpadapter.Config]'s
// ElicitationHandler, which answers while the call is open: the only way to
// answer a legacy server, which asks with a live elicitation/create request.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/agent"
	"github.com/mcpadapter/mcpadapter/mcpadaptertest"
	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/callbacks"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/schema"
)

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := run(ctx, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "elicitation:", err)
		os.Exit(1)
	}
}

// secret seals the server's request state. The restarted server below uses
// the same one, so that it accepts answers to questions asked before.
const secret = "restaurant-secret"

// question is the user's request to the agent.
const question = "Book a table for 4 at Chez Nous, on a day with a free table."

// stateKey seals the stored run; every replica that may resume it has it.
var stateKey = []byte("a key of at least 32 random bytes, for every replica")

// run is the whole example; it writes its story to w.
func run(ctx context.Context, w io.Writer) error {
	fmt.Fprintln(w, "mcpadapter elicitation: an agent run that stops for the user, and resumes.")
	llm := newScriptedModel()

	// Part 1: the run that gets interrupted.
	stored, err := firstRun(ctx, w, llm)
	if err != nil {
		return err
	}

	// Part 2: later (another request, another process): answer and resume.
	if err := resume(ctx, w, llm, stored); err != nil {
		return err
	}

	// Part 3: answering synchronously instead.
	return answerInline(ctx, w)
}

// newAdapter returns an adapter over a fresh restaurant server (restarted
// with the same secret, so that it accepts answers to questions it asked
// before).
func newAdapter(w io.Writer) (*mcpadapter.Adapter, error) {
	return mcpadapter.New(mcpadapter.Config{
		Servers:          map[string]mcpadapter.Server{"restaurant": mcpadapter.InMemory(newRestaurantServer(secret, false))},
		State:            mcpadapter.StateOptions{Key: stateKey},
		CallbacksHandler: printer{w: w}, // prints what each tool returns
	})
}

// newExecutor returns a resumable executor over a's tools.
func newExecutor(ctx context.Context, w io.Writer, llm llms.Model, a *mcpadapter.Adapter) (*agent.Executor, error) {
	ts, err := a.ListTools(ctx)
	if err != nil {
		return nil, err
	}
	return agent.NewExecutor(agents.NewOpenAIFunctionsAgent(llm, ts.Tools()),
		agents.WithMaxIterations(5), agents.WithCallbacksHandler(printer{w: w})), nil
}

// firstRun runs the agent until the booking tool interrupts it, and returns
// the paused run as JSON.
func firstRun(ctx context.Context, w io.Writer, llm llms.Model) ([]byte, error) {
	a, err := newAdapter(w)
	if err != nil {
		return nil, err
	}
	defer a.Close()
	executor, err := newExecutor(ctx, w, llm, a)
	if err != nil {
		return nil, err
	}

	fmt.Fprintf(w, "\n1. Agent run: %q\n", question)
	answer, err := chains.Run(ctx, executor, question)
	var paused *agent.PausedRun
	var intr *mcpadapter.Interrupt
	if !errors.As(err, &paused) || !errors.As(err, &intr) {
		if err == nil {
			return nil, fmt.Errorf("the run finished without an interrupt: %q", answer)
		}
		return nil, err
	}
	fmt.Fprintf(w, "   the run stopped: server %q, tool %s needs user input:\n", intr.Server, intr.Tool)
	for _, r := range intr.Requests {
		schema, _ := json.Marshal(r.RequestedSchema)
		fmt.Fprintf(w, "      [%s] %s (%s; answer schema %s)\n", r.Key, r.Message, r.Mode, schema)
	}
	fmt.Fprintf(w, "   steps completed before the interrupt: %d (%s)\n", len(paused.Steps), stepNames(paused.Steps))
	b, err := json.Marshal(paused)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(w, "\n2. Saved the paused run (%d bytes of JSON, sealed with Config.State.Key) and closed the adapter.\n", len(b))
	fmt.Fprintf(w, "   it holds the call's arguments and the server's request state; the error message shows neither:\n   %s\n", intr.Error())
	return b, nil
}

// resume restores the paused run, asks the user, and resumes the same run
// on a new Adapter (whose server was restarted).
func resume(ctx context.Context, w io.Writer, llm *mcpadaptertest.Model, stored []byte) error {
	var paused agent.PausedRun
	if err := json.Unmarshal(stored, &paused); err != nil {
		return err
	}
	a, err := newAdapter(w)
	if err != nil {
		return err
	}
	defer a.Close()
	executor, err := newExecutor(ctx, w, llm, a)
	if err != nil {
		return err
	}

	fmt.Fprintln(w, "\n3. The user answers; the same run resumes.")
	for _, date := range []string{"19 September", "2026-09-19"} { // scripted user input
		fmt.Fprintf(w, "   user: date = %q\n", date)
		answers := map[string]mcpadapter.Answer{"date": {Action: mcpadapter.Accept, Content: map[string]any{"date": date}}}
		out, err := executor.Resume(ctx, &paused, mcpadapter.Answered(answers))
		var again *agent.PausedRun
		switch {
		case errors.As(err, &again):
			return fmt.Errorf("the run paused again: %w", err) // another round: not in this example
		case err != nil:
			// Invalid answers are refused before anything is sent: ask again.
			fmt.Fprintf(w, "   refused, nothing sent: %s\n", firstLine(err.Error()))
			continue
		}
		for _, seen := range lastResults(llm) {
			fmt.Fprintf(w, "   the model saw the tool result: %s\n", seen)
		}
		fmt.Fprintf(w, "   answer: %s\n", out["output"])
		return nil
	}
	return errors.New("no valid answer")
}

// answerInline books with a synchronous ElicitationHandler, on a modern and
// on a legacy server: no interrupt, the call waits for the answer.
func answerInline(ctx context.Context, w io.Writer) error {
	fmt.Fprintln(w, "\n4. The synchronous alternative: Config.ElicitationHandler")
	for _, legacy := range []bool{false, true} {
		a, err := mcpadapter.New(mcpadapter.Config{
			Servers: map[string]mcpadapter.Server{"restaurant": mcpadapter.InMemory(newRestaurantServer(secret, legacy))},
			ElicitationHandler: func(_ context.Context, req mcpadapter.ElicitationRequest) (mcpadapter.Answer, error) {
				// A terminal prompt or a UI dialog would go here. A live
				// request (legacy) has no key.
				fmt.Fprintf(w, "   handler asked (key %q): %s -> 2026-09-18\n", req.Key, req.Message)
				return mcpadapter.Answer{Action: mcpadapter.Accept, Content: map[string]any{"date": "2026-09-18"}}, nil
			},
		})
		if err != nil {
			return err
		}
		defer a.Close()
		info, err := a.ServerInfo(ctx, "restaurant")
		if err != nil {
			return err
		}
		ts, err := a.ListTools(ctx)
		if err != nil {
			return err
		}
		res, err := ts.Lookup("restaurant__book_table").Invoke(ctx, map[string]any{"restaurant": "Chez Nous", "party": 2})
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "   %s server: %s\n", info.Era, res.Text())
	}
	return nil
}

func stepNames(steps []schema.AgentStep) string {
	names := make([]string, len(steps))
	for i, s := range steps {
		names[i] = s.Action.Tool
	}
	return strings.Join(names, ", ")
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// printer prints the agent's tool calls (executor callbacks) and the
// tools' results (adapter callbacks).
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
// (mcpadaptertest, the module's test kit): the model's side of the two
// agent runs. Swap in a real model (openai.New(), ...) and the program works
// the same; the model then decides what to call.
func newScriptedModel() *mcpadaptertest.Model {
	call := mcpadaptertest.ToolCall
	return mcpadaptertest.NewModel(
		mcpadaptertest.ToolCalls(call("call_1", "restaurant__check_availability", `{"restaurant":"Chez Nous","party":4}`)),
		mcpadaptertest.ToolCalls(call("call_2", "restaurant__book_table", `{"restaurant":"Chez Nous","party":4}`)),
		// The resumed run: the model sees both tool results and answers.
		mcpadaptertest.FinalAnswer("Your table for 4 at Chez Nous is booked for 19 September 2026."),
	)
}

// lastResults returns the tool results the model's last request showed it.
func lastResults(m *mcpadaptertest.Model) []string {
	reqs := m.Requests()
	if len(reqs) == 0 {
		return nil
	}
	var out []string
	for _, msg := range reqs[len(reqs)-1] {
		for _, part := range msg.Parts {
			if r, ok := part.(llms.ToolCallResponse); ok {
				out = append(out, r.Content)
			}
		}
	}
	return out
}
