package agent

// Resumable agent runs. langchaingo's agents.Executor starts every run with
// no steps and drops them when a tool fails, so a run stopped by an
// interrupt, an approval request or a pending task cannot go on. Executor runs the agent
// the way agents.Executor v0.1.14 does (agents/executor.go: Plan, parse
// errors through ErrorHandler, actions in order, unknown tools as
// observations, MaxIterations, ReturnIntermediateSteps, the callbacks),
// keeping the run's state, so that a pause is a PausedRun that can be
// stored and resumed. A pause is the root package's PausedCalls (the
// paused batch, sealed with Config.State.Key, bound to its principal) with
// the run in its State: the root settles the call, this package goes on
// with the run.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/callbacks"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/schema"
	"github.com/tmc/langchaingo/tools"
)

// Executor is an [agents.Executor] whose runs can pause and resume. Use it
// as the langchaingo executor (chains.Run, chains.Call): a run works the
// same until a tool returns an [*mcpadapter.Interrupt], an
// [*mcpadapter.ApprovalRequired] or an [*mcpadapter.PendingTask]. The run then stops with a [*PausedRun]
// error holding the run's state, which [Executor.Resume] continues, in this
// process or, through JSON, in another one with an Executor over an agent
// with the same tools. A run paused on a live interrupt
// ([mcpadapter.Interrupt.Live]: a legacy server's question, waiting on its
// open connection) is the exception: it resumes only in this process, over
// tools of the Adapter that made the interrupt, within
// [mcpadapter.StateOptions.LiveMaxAge]. A service with several replicas
// routes such a resume to the replica that paused the run (sticky routing,
// as for legacy servers' sessions); elsewhere the resume fails with
// [mcpadapter.ErrInvalidState], saying why, and sends nothing.
//
// With a tool-calling [*Agent], each turn's tool calls run as one batch
// through [mcpadapter.Toolset.HandleToolCalls] (with [WithToolSearch],
// [mcpadapter.ToolSearch.HandleToolCalls]), and the model gets the batch's
// messages (media included) as they are; the steps' observations are the
// tool messages' text.
//
// A tool that does not answer within its timeout
// ([mcpadapter.Config.DefaultToolTimeout],
// [mcpadapter.Server.DefaultToolTimeout]) does not end the run: the model
// gets a tool message (an observation, for other agents) saying that the
// tool did not answer within the timeout and may still be running
// ([mcpadapter.Tool.TimedOut]), and the run goes on. The run's own context
// still bounds it: its deadline or cancellation ends the run with its
// error. For a tool-calling [*Agent], [WithPartOptions] with
// [mcpadapter.TimeoutErrors] makes a timeout end the run instead.
// langchaingo's agents.Executor, which runs tools through
// [mcpadapter.Tool.Call], ends the run on a timeout.
type Executor struct {
	*agents.Executor
}

var (
	_ chains.Chain           = (*Executor)(nil)
	_ callbacks.HandlerHaver = (*Executor)(nil)
)

// NewExecutor returns an [Executor] of agent with langchaingo's executor
// options, as [agents.NewExecutor] takes them.
func NewExecutor(agent agents.Agent, opts ...agents.Option) *Executor {
	return &Executor{Executor: agents.NewExecutor(agent, opts...)}
}

// Call implements [chains.Chain]: it runs the agent as agents.Executor
// does. A tool's interrupt, approval request or pending task stops the
// run with a [*PausedRun] error; [errors.As] finds the
// [*mcpadapter.Interrupt], [*mcpadapter.ApprovalRequired] or
// [*mcpadapter.PendingTask] through it. Call it through chains.Call or chains.Run.
func (e *Executor) Call(ctx context.Context, inputValues map[string]any, options ...chains.ChainCallOption) (map[string]any, error) {
	inputs := make(map[string]string, len(inputValues))
	for key, value := range inputValues {
		s, ok := value.(string)
		if !ok {
			return nil, fmt.Errorf("%w: %s", agents.ErrExecutorInputNotString, key)
		}
		inputs[key] = s
	}
	_, toolCalling := e.Agent.(*Agent)
	return e.run(ctx, &PausedRun{Inputs: inputs, toolCalling: toolCalling}, options)
}

// Resume settles the paused call of a run with r (the
// [mcpadapter.Resolution] of what it waits for: [mcpadapter.Answered] for
// an interrupt, [mcpadapter.Approved] or [mcpadapter.Rejected] for an
// approval request, [mcpadapter.Collected] for a pending task; the table
// of stored state is in Resolution's doc) and continues the same run: the steps completed before the pause are not run again, the model
// sees the settled call's result, and the run goes on to its final answer,
// or to the next pause (a new *PausedRun). It returns the run's outputs, as
// chains.Call does (the memory, if any, is saved with the run's inputs).
//
// The paused call is settled by [mcpadapter.Toolset.ResumeToolCalls] over
// the agent's tools, with its checks: with [mcpadapter.StateOptions.Key] the
// run's state must be sealed with the key, and a run resumes under the
// principal of its paused call only. The run must have been made by an
// agent of the same kind (a tool-calling [*Agent] or another one).
func (e *Executor) Resume(ctx context.Context, p *PausedRun, r mcpadapter.Resolution, options ...chains.ChainCallOption) (map[string]any, error) {
	p, err := p.unsealed(mcpToolsOf(e.Agent))
	if err != nil {
		return nil, fmt.Errorf("agent: resume run: %w", err)
	}
	if p == nil || p.calls == nil || len(p.Actions) == 0 {
		return nil, fmt.Errorf("agent: resume run: %w: no paused call", mcpadapter.ErrInvalidState)
	}
	if _, toolCalling := e.Agent.(*Agent); toolCalling != p.toolCalling {
		return nil, fmt.Errorf("agent: resume run: %w: the run was made by another kind of agent", mcpadapter.ErrInvalidState)
	}
	inputs := make(map[string]any, len(p.Inputs))
	memory := e.GetMemory().MemoryVariables(ctx)
	for key, value := range p.Inputs {
		if !slices.Contains(memory, key) {
			inputs[key] = value
		}
	}
	return chains.Call(ctx, resumedRun{e: e, p: p, r: r}, inputs, options...)
}

// resumedRun is the chain of a resumed run: chains.Call gives it the
// memory and the callbacks of the executor.
type resumedRun struct {
	e *Executor
	p *PausedRun
	r mcpadapter.Resolution
}

func (c resumedRun) Call(ctx context.Context, _ map[string]any, options ...chains.ChainCallOption) (map[string]any, error) {
	return c.e.resume(ctx, c.p, c.r, options)
}
func (c resumedRun) GetMemory() schema.Memory              { return c.e.GetMemory() }
func (c resumedRun) GetInputKeys() []string                { return c.e.GetInputKeys() }
func (c resumedRun) GetOutputKeys() []string               { return c.e.GetOutputKeys() }
func (c resumedRun) GetCallbackHandler() callbacks.Handler { return c.e.CallbacksHandler }

// resume settles the paused call of p and runs on.
func (e *Executor) resume(ctx context.Context, p *PausedRun, r mcpadapter.Resolution, options []chains.ChainCallOption) (map[string]any, error) {
	next := &PausedRun{Inputs: p.Inputs, Steps: slices.Clone(p.Steps), Actions: slices.Clone(p.Actions),
		Iterations: p.Iterations, history: slices.Clone(p.history), toolCalling: p.toolCalling}
	var (
		msgs []llms.MessageContent
		err  error
	)
	if a, ok := e.Agent.(*Agent); ok {
		msgs, err = a.resumeToolCalls(ctx, p.history, p.calls, r)
	} else {
		msgs, err = mcpToolsOf(e.Agent).ResumeToolCalls(ctx, p.calls, r)
	}
	if err := next.settled(p.calls.Next, msgs, err); err != nil {
		return nil, err
	}
	return e.run(ctx, next, options)
}

// mcpToolsOf returns the MCP tools of another agent than ours.
func mcpToolsOf(agent agents.Agent) mcpadapter.Toolset {
	var ts mcpadapter.Toolset
	for _, t := range agent.GetTools() {
		if t, ok := t.(*mcpadapter.Tool); ok {
			ts = append(ts, t)
		}
	}
	return ts
}

// run drives the agent from the state p, as agents.Executor.Call does:
// the actions left of the last plan first, then a plan per iteration until
// a finish or MaxIterations.
func (e *Executor) run(ctx context.Context, p *PausedRun, options []chains.ChainCallOption) (map[string]any, error) {
	byName := toolsByName(e.Agent.GetTools())
	ours, _ := e.Agent.(*Agent)
	for {
		for len(p.Actions) > 0 {
			step, err := e.act(ctx, byName, p.Actions[0])
			if err != nil {
				return nil, p.stop(toolCall(p.Actions[0]), err)
			}
			p.Steps = append(p.Steps, step)
			p.Actions = p.Actions[1:]
		}
		if p.Iterations >= e.MaxIterations {
			break
		}
		p.Iterations++
		var (
			actions []schema.AgentAction
			finish  *schema.AgentFinish
			err     error
		)
		if ours != nil {
			finish, err = e.turn(ctx, ours, p, options)
		} else {
			actions, finish, err = e.Agent.Plan(ctx, p.Steps, p.Inputs, options...)
		}
		if errors.Is(err, agents.ErrUnableToParseOutput) && e.ErrorHandler != nil {
			observation := err.Error()
			if e.ErrorHandler.Formatter != nil {
				observation = e.ErrorHandler.Formatter(observation)
			}
			p.Steps = append(p.Steps, schema.AgentStep{Observation: observation})
			continue
		}
		if err != nil {
			return nil, err
		}
		if finish != nil {
			if e.CallbacksHandler != nil {
				e.CallbacksHandler.HandleAgentFinish(ctx, *finish)
			}
			return e.outputs(finish, p.Steps), nil
		}
		if len(actions) == 0 && ours == nil {
			return nil, agents.ErrAgentNoReturn
		}
		p.Actions = actions
	}
	if e.CallbacksHandler != nil {
		e.CallbacksHandler.HandleAgentFinish(ctx, schema.AgentFinish{ReturnValues: map[string]any{"output": agents.ErrNotFinished.Error()}})
	}
	return e.outputs(&schema.AgentFinish{ReturnValues: map[string]any{}}, p.Steps), agents.ErrNotFinished
}

// turn is one turn of a tool-calling agent: the model answers the
// conversation of p, and its tool calls run as one batch whose messages
// join the conversation. It returns the finish when the model called no
// tool.
func (e *Executor) turn(ctx context.Context, a *Agent, p *PausedRun, options []chains.ChainCallOption) (*schema.AgentFinish, error) {
	choice, err := a.generate(ctx, p.history, p.Inputs, options)
	if err != nil {
		return nil, err
	}
	if len(choice.ToolCalls) == 0 {
		return finish(choice), nil
	}
	p.Actions = actions(choice)
	if e.CallbacksHandler != nil {
		for _, action := range p.Actions {
			e.CallbacksHandler.HandleAgentAction(ctx, action)
		}
	}
	msgs, err := a.handleToolCalls(ctx, p.history, choice)
	return nil, p.settled(0, msgs, err)
}

// act runs one action's tool, as agents.Executor does: an unknown tool is
// an observation for the model. So is an MCP tool's own timeout, as in
// HandleToolCalls (mcpadapter.Tool.TimedOut).
func (e *Executor) act(ctx context.Context, byName map[string]tools.Tool, action schema.AgentAction) (schema.AgentStep, error) {
	if e.CallbacksHandler != nil {
		e.CallbacksHandler.HandleAgentAction(ctx, action)
	}
	tool, ok := byName[strings.ToUpper(action.Tool)]
	if !ok {
		return schema.AgentStep{Action: action, Observation: fmt.Sprintf("%s is not a valid tool, try another one", action.Tool)}, nil
	}
	observation, err := tool.Call(ctx, strings.TrimSuffix(action.ToolInput, "\nObservation:"))
	if err != nil {
		mcpTool, _ := tool.(*mcpadapter.Tool)
		text, timedOut := mcpTool.TimedOut(ctx, err)
		if !timedOut {
			return schema.AgentStep{}, err
		}
		observation = text
	}
	return schema.AgentStep{Action: action, Observation: observation}, nil
}

// outputs returns the finish's values, with the steps when the executor
// returns them.
func (e *Executor) outputs(finish *schema.AgentFinish, steps []schema.AgentStep) map[string]any {
	if e.ReturnIntermediateSteps {
		finish.ReturnValues["intermediateSteps"] = steps
	}
	return finish.ReturnValues
}

// toolsByName indexes tools by upper-case name, as agents.Executor looks
// them up.
func toolsByName(ts []tools.Tool) map[string]tools.Tool {
	m := make(map[string]tools.Tool, len(ts))
	for _, t := range ts {
		m[strings.ToUpper(t.Name())] = t
	}
	return m
}

// A PausedRun is returned (as an error) by an [Executor] run, and by
// [Executor.Resume], when a tool call needs user input or approval, or
// stopped waiting for its task. [errors.As] finds the
// [*mcpadapter.Interrupt], [*mcpadapter.ApprovalRequired] or
// [*mcpadapter.PendingTask] through it.
//
// It survives json.Marshal and Unmarshal, as an [mcpadapter.PausedCalls]
// (sealed with [mcpadapter.StateOptions.Key] when set) whose State holds the
// run: the run's inputs, the completed steps with their observations, the
// paused action and those planned after it, and, for a tool-calling
// [*Agent], the conversation. Resume it with [Executor.Resume], under the
// principal of its paused call.
type PausedRun struct {
	Inputs     map[string]string    // the run's inputs, memory variables included
	Steps      []schema.AgentStep   // completed, with their observations
	Actions    []schema.AgentAction // Actions[0] is paused; the others were planned with it and have not run
	Iterations int                  // the agent's plans so far (bounded by MaxIterations)

	calls       *mcpadapter.PausedCalls // the paused batch: Actions[0] is calls.Calls[calls.Next]
	history     []llms.MessageContent   // a tool-calling agent's conversation after the input
	toolCalling bool                    // made by a tool-calling *Agent
}

// stop returns err, as a pause of p when err is the interrupt, approval
// request or pending task of the call tc of another agent's action.
func (p *PausedRun) stop(tc llms.ToolCall, err error) error {
	calls, ok := mcpadapter.PausedCallOf(tc, err)
	if !ok {
		return err
	}
	p.calls = calls
	return p
}

// settled records what a batch of tool calls gave from its call from on:
// msgs, the messages of the batch's answered calls (as HandleToolCalls and
// ResumeToolCalls return them), and err. Each newly answered call is a
// step; a tool-calling agent's conversation gets the messages once the
// batch is done. It returns nil, p when the batch paused again, or err.
func (p *PausedRun) settled(from int, msgs []llms.MessageContent, err error) error {
	var answered []string
	for _, m := range msgs {
		if m.Role != llms.ChatMessageTypeTool || len(m.Parts) == 0 {
			continue
		}
		if r, ok := m.Parts[0].(llms.ToolCallResponse); ok {
			answered = append(answered, r.Content)
		}
	}
	for _, observation := range answered[min(from, len(answered)):] {
		if len(p.Actions) == 0 {
			break
		}
		p.Steps = append(p.Steps, schema.AgentStep{Action: p.Actions[0], Observation: observation})
		p.Actions = p.Actions[1:]
	}
	var paused *mcpadapter.PausedCalls
	switch {
	case errors.As(err, &paused):
		p.calls = paused
		return p
	case err != nil:
		return err
	}
	if p.toolCalling {
		p.history = append(p.history, msgs...)
	}
	return nil
}

// withoutFunction reports whether m holds a tool call without a function,
// which providers dereference.
func withoutFunction(m llms.MessageContent) bool {
	return slices.ContainsFunc(m.Parts, func(p llms.ContentPart) bool {
		tc, ok := p.(llms.ToolCall)
		return ok && tc.FunctionCall == nil
	})
}

// Error implements error: the pause's message.
func (p *PausedRun) Error() string {
	if p == nil || p.calls == nil {
		return "agent: <no paused run>"
	}
	return p.calls.Error()
}

// ID returns the ID of the [*mcpadapter.Interrupt],
// [*mcpadapter.ApprovalRequired] or [*mcpadapter.PendingTask] the run
// waits for, which its resume claims
// (see [mcpadapter.StateOptions.Claims]).
func (p PausedRun) ID() string {
	if p.calls == nil {
		return ""
	}
	return p.calls.ID()
}

// Issued returns when the [*mcpadapter.Interrupt],
// [*mcpadapter.ApprovalRequired] or [*mcpadapter.PendingTask] the run
// waits for was made
// ([mcpadapter.StateOptions.MaxAge] counts from it).
func (p PausedRun) Issued() time.Time {
	if p.calls == nil {
		return time.Time{}
	}
	return p.calls.Issued()
}

// Unwrap returns the [*mcpadapter.Interrupt],
// [*mcpadapter.ApprovalRequired] or [*mcpadapter.PendingTask] the run
// waits for.
func (p *PausedRun) Unwrap() error {
	if p == nil || p.calls == nil {
		return nil
	}
	return p.calls.Unwrap()
}

// runJSON is the wire form of a run, the State of its paused batch.
type runJSON struct {
	Version     int                   `json:"version"`
	Inputs      map[string]string     `json:"inputs"`
	Steps       []storedStep          `json:"steps,omitempty"`
	Actions     []storedAction        `json:"actions"`
	Iterations  int                   `json:"iterations"`
	ToolCalling bool                  `json:"toolCalling,omitempty"`
	History     []llms.MessageContent `json:"history,omitempty"`
}

type storedAction struct {
	Tool      string `json:"tool,omitempty"`
	ToolInput string `json:"toolInput,omitempty"`
	Log       string `json:"log,omitempty"`
	ToolID    string `json:"toolID,omitempty"`
}

type storedStep struct {
	storedAction
	Observation string `json:"observation"`
}

// Bounds of a stored run.
const (
	maxRunSteps   = 10000
	maxRunActions = 1024
)

// MarshalJSON implements [json.Marshaler]: the paused batch's JSON, the
// run in its State. The JSON holds the run's inputs and the tools'
// observations, and the pause (with the call's arguments): store it where
// those may be stored. A run decoded from sealed JSON marshals to the JSON
// it came from.
func (p PausedRun) MarshalJSON() ([]byte, error) {
	if p.calls == nil {
		return nil, fmt.Errorf("agent: encoding paused run: %w: no paused call", mcpadapter.ErrInvalidState)
	}
	w := runJSON{Version: 1, Inputs: p.Inputs, Iterations: p.Iterations, ToolCalling: p.toolCalling, History: p.history}
	for _, s := range p.Steps {
		w.Steps = append(w.Steps, storedStep{storedAction: storedAction(s.Action), Observation: s.Observation})
	}
	for _, a := range p.Actions {
		w.Actions = append(w.Actions, storedAction(a))
	}
	state, err := json.Marshal(w)
	if err != nil {
		return nil, err
	}
	calls := *p.calls
	calls.State = state
	return json.Marshal(&calls)
}

// UnmarshalJSON implements [json.Unmarshaler]. Malformed or oversized JSON,
// and a paused batch that holds no run, are an error wrapping
// [mcpadapter.ErrInvalidState], never a panic. A run decoded from sealed
// JSON ([mcpadapter.StateOptions.Key]) shows its ID and Issued only, until
// [Executor.Resume] opens it with the key of the agent's tools.
func (p *PausedRun) UnmarshalJSON(b []byte) error {
	calls := new(mcpadapter.PausedCalls)
	if err := calls.UnmarshalJSON(b); err != nil {
		return err
	}
	if len(calls.Calls) == 0 { // sealed: opened by Resume (unsealed)
		*p = PausedRun{calls: calls}
		return nil
	}
	return p.decode(calls)
}

// unsealed returns p, or, when it was decoded from sealed JSON, a copy
// opened with the key of the adapter of ts whose key sealed it; p is not
// changed.
func (p *PausedRun) unsealed(ts mcpadapter.Toolset) (*PausedRun, error) {
	if p == nil || p.calls == nil || len(p.calls.Calls) > 0 {
		return p, nil
	}
	calls := *p.calls
	if err := ts.Unseal(&calls); err != nil {
		return nil, err
	}
	o := new(PausedRun)
	if err := o.decode(&calls); err != nil {
		return nil, err
	}
	return o, nil
}

// decode sets p to the run that calls, a batch decoded from JSON, holds in
// its State.
func (p *PausedRun) decode(calls *mcpadapter.PausedCalls) error {
	var w runJSON
	err := json.Unmarshal(calls.State, &w)
	switch {
	case len(calls.State) == 0:
		err = errors.New("a paused batch of tool calls, not a paused run")
	case err != nil:
	case w.Version != 1:
		err = fmt.Errorf("unsupported version %d", w.Version)
	case len(w.Steps) > maxRunSteps:
		err = fmt.Errorf("%d steps, more than %d", len(w.Steps), maxRunSteps)
	case len(w.Actions) == 0 || len(w.Actions) > maxRunActions:
		err = fmt.Errorf("%d planned actions, want 1 to %d", len(w.Actions), maxRunActions)
	case w.Iterations < 1 || w.Iterations > maxRunSteps:
		err = fmt.Errorf("invalid iteration count %d", w.Iterations)
	case w.ToolCalling && len(w.Actions) != len(calls.Calls)-calls.Next:
		err = fmt.Errorf("%d planned actions for %d calls left of the batch", len(w.Actions), len(calls.Calls)-calls.Next)
	case !w.ToolCalling && len(calls.Calls) != 1:
		err = fmt.Errorf("a paused batch of %d calls, want 1", len(calls.Calls))
	case slices.ContainsFunc(w.History, withoutFunction):
		err = errors.New("the conversation holds a tool call without a function")
	default:
		if fc := calls.Calls[calls.Next].FunctionCall; !strings.EqualFold(fc.Name, w.Actions[0].Tool) || calls.Calls[calls.Next].ID != w.Actions[0].ToolID {
			err = fmt.Errorf("the paused action (tool %q) is not the paused call (tool %q)", w.Actions[0].Tool, fc.Name)
		}
	}
	if err != nil {
		return fmt.Errorf("agent: decoding paused run: %w: %w", mcpadapter.ErrInvalidState, err)
	}
	*p = PausedRun{Inputs: w.Inputs, Iterations: w.Iterations, calls: calls, history: w.History, toolCalling: w.ToolCalling}
	for _, s := range w.Steps {
		p.Steps = append(p.Steps, schema.AgentStep{Action: schema.AgentAction(s.storedAction), Observation: s.Observation})
	}
	for _, a := range w.Actions {
		p.Actions = append(p.Actions, schema.AgentAction(a))
	}
	return nil
}
