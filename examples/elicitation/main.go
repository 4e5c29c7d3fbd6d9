// Command elicitation shows a langchaingo agent run that stops because an MCP
// server needs the user's input, and resumes later, with no API key and no
// network:
//
//	go run ./examples/elicitation
//
// A restaurant server runs inside the process. Its book_table tool asks the
// user for the date with an input-required result (the modern protocol's
// multi round-trip requests, SEP-2322). The adapter turns that into an
// [*mcpadapter.Interrupt] error, which ends the agents.Executor run.
//
// The program then does what a web service would do across two requests:
//
//  1. It saves a checkpoint as JSON: the run's input, the steps the agent
//     completed before the interrupt, the action that was interrupted, and
//     the Interrupt itself (which carries the call's arguments and the
//     server's opaque request state, but shows neither).
//  2. It asks the user (here: scripted answers; the first one is invalid
//     and refused before anything is sent), resumes the tool call with
//     [mcpadapter.Adapter.Resume] on a brand-new Adapter, and continues the
//     agent run in a new Executor, replaying the completed steps instead of
//     running their tools again.
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
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/callbacks"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/schema"
	"github.com/tmc/langchaingo/tools"
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

// run is the whole example; it writes its story to w.
func run(ctx context.Context, w io.Writer) error {
	fmt.Fprintln(w, "mcpadapter elicitation: an agent run that stops for the user, and resumes.")
	llm := newScriptedModel()

	// Part 1: the run that gets interrupted.
	checkpoint, err := firstRun(ctx, w, llm)
	if err != nil {
		return err
	}

	// Part 2: later (another request, another process): answer and resume.
	if err := resume(ctx, w, llm, checkpoint); err != nil {
		return err
	}

	// Part 3: answering synchronously instead.
	return answerInline(ctx, w)
}

// A checkpoint is what the program stores while it waits for the user.
type checkpoint struct {
	Input     string                `json:"input"`
	Steps     []schema.AgentStep    `json:"steps"`     // completed before the interrupt
	Pending   schema.AgentAction    `json:"pending"`   // the interrupted action
	Interrupt *mcpadapter.Interrupt `json:"interrupt"` // what the server asked
}

// firstRun runs the agent until the booking tool interrupts it, and returns
// the checkpoint as JSON.
func firstRun(ctx context.Context, w io.Writer, llm llms.Model) ([]byte, error) {
	a, err := mcpadapter.New(mcpadapter.Config{
		Servers: map[string]mcpadapter.Server{
			"restaurant": mcpadapter.InMemory(newRestaurantServer(secret, false)),
		},
		CallbacksHandler: printer{w: w}, // prints what each tool returns
	})
	if err != nil {
		return nil, err
	}
	defer a.Close()
	ts, err := a.ListTools(ctx)
	if err != nil {
		return nil, err
	}

	fmt.Fprintf(w, "\n1. Agent run: %q\n", question)
	journal := &resumable{}
	executor := newExecutor(llm, journal, ts.Tools(), w)
	answer, err := chains.Run(ctx, executor, question)
	var intr *mcpadapter.Interrupt
	if !errors.As(err, &intr) {
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

	done, pending, ok := journal.interrupted()
	if !ok {
		return nil, errors.New("no action was interrupted")
	}
	fmt.Fprintf(w, "   steps completed before the interrupt: %d (%s)\n", len(done), stepNames(done))
	b, err := json.Marshal(checkpoint{Input: question, Steps: done, Pending: pending, Interrupt: intr})
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(w, "\n2. Saved a checkpoint (%d bytes of JSON) and closed the adapter.\n", len(b))
	fmt.Fprintf(w, "   it holds the call's arguments and the server's request state; the error message shows neither:\n   %s\n", intr.Error())
	return b, nil
}

// resume restores the checkpoint, asks the user, resumes the tool call on a
// new Adapter (whose server was restarted) and continues the agent run.
func resume(ctx context.Context, w io.Writer, llm *scriptedModel, saved []byte) error {
	var cp checkpoint
	if err := json.Unmarshal(saved, &cp); err != nil {
		return err
	}
	// A new adapter with the same server name; the server was restarted
	// with the same secret.
	a, err := mcpadapter.New(mcpadapter.Config{Servers: map[string]mcpadapter.Server{
		"restaurant": mcpadapter.InMemory(newRestaurantServer(secret, false)),
	}})
	if err != nil {
		return err
	}
	defer a.Close()

	fmt.Fprintln(w, "\n3. The user answers.")
	var res *mcpadapter.Result
	for _, date := range []string{"19 September", "2026-09-19"} { // scripted user input
		fmt.Fprintf(w, "   user: date = %q\n", date)
		answers := map[string]mcpadapter.Answer{"date": {Action: mcpadapter.Accept, Content: map[string]any{"date": date}}}
		res, err = a.Resume(ctx, cp.Interrupt, answers)
		if err == nil {
			break
		}
		var intr *mcpadapter.Interrupt
		if errors.As(err, &intr) {
			return fmt.Errorf("the server asked again: %w", err) // another round: not in this example
		}
		// Invalid answers are refused before anything is sent: ask again.
		fmt.Fprintf(w, "   refused, nothing sent: %s\n", firstLine(err.Error()))
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "   resumed %s: %s\n", cp.Pending.Tool, res.Text())

	// The interrupted action is now a completed step: replay every step and
	// let the model go on from there.
	steps := append(slices.Clone(cp.Steps), schema.AgentStep{Action: cp.Pending, Observation: res.Text()})
	ts, err := a.ListTools(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\n4. Agent run resumed, replaying %d completed steps (%s)\n", len(steps), stepNames(steps))
	executor := newExecutor(llm, &resumable{replay: steps}, ts.Tools(), w)
	answer, err := chains.Run(ctx, executor, cp.Input)
	if err != nil {
		return err
	}
	for _, seen := range llm.lastResults() {
		fmt.Fprintf(w, "   the model saw the tool result: %s\n", seen)
	}
	fmt.Fprintf(w, "   answer: %s\n", answer)
	return nil
}

// answerInline books with a synchronous ElicitationHandler, on a modern and
// on a legacy server: no interrupt, the call waits for the answer.
func answerInline(ctx context.Context, w io.Writer) error {
	fmt.Fprintln(w, "\n5. The synchronous alternative: Config.ElicitationHandler")
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

// newExecutor returns an agent executor over ts whose agent is wrapped by
// journal; w receives the agent's tool calls and the tools' results.
func newExecutor(llm llms.Model, journal *resumable, ts []tools.Tool, w io.Writer) *agents.Executor {
	journal.Agent = agents.NewOpenAIFunctionsAgent(llm, journal.wrap(ts))
	return agents.NewExecutor(journal, agents.WithMaxIterations(5), agents.WithCallbacksHandler(printer{w: w}))
}

// resumable wraps an agent so that a run stopped by an interrupt can go on
// in a new Executor run. Executor.Call starts every run with no steps and
// drops them when a tool fails; resumable remembers them as the run goes
// (the steps each Plan sees, the actions it returns, the outputs of their
// tools), and gives the steps of an earlier run (replay) to Plan first, so
// that their tools do not run again.
type resumable struct {
	agents.Agent
	replay []schema.AgentStep // steps of an earlier run, planned after

	mu      sync.Mutex
	steps   []schema.AgentStep   // the steps the last Plan saw
	actions []schema.AgentAction // what the last Plan returned
	outputs []string             // outputs of those actions' tools so far
}

// Plan implements agents.Agent.
func (r *resumable) Plan(ctx context.Context, steps []schema.AgentStep, inputs map[string]string, options ...chains.ChainCallOption) ([]schema.AgentAction, *schema.AgentFinish, error) {
	all := append(slices.Clone(r.replay), steps...)
	actions, finish, err := r.Agent.Plan(ctx, all, inputs, options...)
	r.mu.Lock()
	r.steps, r.actions, r.outputs = all, actions, nil
	r.mu.Unlock()
	return actions, finish, err
}

// wrap returns ts with each tool's output recorded for r.
func (r *resumable) wrap(ts []tools.Tool) []tools.Tool {
	out := make([]tools.Tool, len(ts))
	for i, t := range ts {
		out[i] = recorded{Tool: t, r: r}
	}
	return out
}

// interrupted returns the steps completed when a tool stopped the run, and
// the action of that tool.
func (r *resumable) interrupted() (done []schema.AgentStep, pending schema.AgentAction, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := len(r.outputs)
	if n >= len(r.actions) {
		return nil, schema.AgentAction{}, false
	}
	done = slices.Clone(r.steps)
	for i, out := range r.outputs {
		done = append(done, schema.AgentStep{Action: r.actions[i], Observation: out})
	}
	return done, r.actions[n], true
}

// recorded is a tool whose outputs are recorded by a resumable.
type recorded struct {
	tools.Tool
	r *resumable
}

func (t recorded) Call(ctx context.Context, input string) (string, error) {
	out, err := t.Tool.Call(ctx, input)
	if err == nil {
		t.r.mu.Lock()
		t.r.outputs = append(t.r.outputs, out)
		t.r.mu.Unlock()
	}
	return out, err
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

// scriptedModel is an llms.Model that plays a fixed script: the model's side
// of the two agent runs. Swap in a real model (openai.New(), ...) and the
// program works the same; the model then decides what to call.
type scriptedModel struct {
	mu    sync.Mutex
	turns []*llms.ContentChoice
	seen  []string // the tool results in the last request
}

func newScriptedModel() *scriptedModel {
	call := func(id, name, args string) *llms.ContentChoice {
		return &llms.ContentChoice{ToolCalls: []llms.ToolCall{{
			ID: id, Type: "function", FunctionCall: &llms.FunctionCall{Name: name, Arguments: args},
		}}}
	}
	return &scriptedModel{turns: []*llms.ContentChoice{
		call("call_1", "restaurant__check_availability", `{"restaurant":"Chez Nous","party":4}`),
		call("call_2", "restaurant__book_table", `{"restaurant":"Chez Nous","party":4}`),
		// The resumed run: the model sees both tool results and answers.
		{Content: "Your table for 4 at Chez Nous is booked for 19 September 2026."},
	}}
}

// GenerateContent implements llms.Model: it returns the next scripted turn.
func (m *scriptedModel) GenerateContent(ctx context.Context, msgs []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.turns) == 0 {
		return nil, errors.New("scripted model: no more turns")
	}
	turn := m.turns[0]
	m.turns = m.turns[1:]
	m.seen = nil
	for _, msg := range msgs {
		for _, part := range msg.Parts {
			if r, ok := part.(llms.ToolCallResponse); ok {
				m.seen = append(m.seen, r.Content)
			}
		}
	}
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{turn}}, nil
}

// lastResults returns the tool results the last request showed the model.
func (m *scriptedModel) lastResults() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.seen)
}

// Call implements llms.Model.
func (m *scriptedModel) Call(ctx context.Context, prompt string, options ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, options...)
}
