package mcpadapter

// Resumable agent runs. langchaingo's agents.Executor starts every run with
// no steps and drops them when a tool fails, so a run stopped by an
// interrupt or an approval request cannot go on. Executor runs the agent
// the way agents.Executor v0.1.14 does (agents/executor.go: Plan, parse
// errors through ErrorHandler, actions in order, unknown tools as
// observations, MaxIterations, ReturnIntermediateSteps, the callbacks),
// keeping the run's state, so that a pause is a PausedRun that can be
// stored and resumed. This is the only file that imports agents.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/callbacks"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/schema"
	"github.com/tmc/langchaingo/tools"
)

// Executor is an [agents.Executor] whose runs can pause and resume. Use it
// as the langchaingo executor (chains.Run, chains.Call): a run works the
// same until a tool returns an [*Interrupt] or an [*ApprovalRequired]. The
// run then stops with a [*PausedRun] error holding the run's state, which
// [Executor.Resume] continues, in this process or, through JSON, in
// another one with an Executor over an agent with the same tools.
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
// does. A tool's interrupt or approval request stops the run with a
// [*PausedRun] error; [errors.As] finds the interrupt or the approval
// request through it. Call it through chains.Call or chains.Run.
func (e *Executor) Call(ctx context.Context, inputValues map[string]any, options ...chains.ChainCallOption) (map[string]any, error) {
	inputs := make(map[string]string, len(inputValues))
	for key, value := range inputValues {
		s, ok := value.(string)
		if !ok {
			return nil, fmt.Errorf("%w: %s", agents.ErrExecutorInputNotString, key)
		}
		inputs[key] = s
	}
	return e.run(ctx, &PausedRun{Inputs: inputs}, options)
}

// Resume settles the paused call of a run with r (the user's answers for
// an interrupt, a decision for an approval request) and continues the same
// run: the steps completed before the pause are not run again, the model
// sees the settled call's result as that step's observation, and the run
// goes on to its final answer, or to the next pause (a new *PausedRun). It
// returns the run's outputs, as chains.Call does (the memory, if any, is
// saved with the run's inputs).
//
// The paused call runs on the adapter of the agent's tool it names, after
// the checks of [Adapter.Resume] or [Adapter.Approve] (so a run resumes
// under the principal of its paused call only); with [Config.StateKey] the
// run's state must be sealed with the key. That tool
// must be an mcpadapter [*Tool].
func (e *Executor) Resume(ctx context.Context, p *PausedRun, r Resolution, options ...chains.ChainCallOption) (map[string]any, error) {
	if p == nil || len(p.Actions) == 0 {
		return nil, fmt.Errorf("mcpadapter: resume run: %w: no paused call", ErrInvalidState)
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
	r Resolution
}

func (c resumedRun) Call(ctx context.Context, _ map[string]any, options ...chains.ChainCallOption) (map[string]any, error) {
	return c.e.resume(ctx, c.p, c.r, options)
}
func (c resumedRun) GetMemory() schema.Memory              { return c.e.GetMemory() }
func (c resumedRun) GetInputKeys() []string                { return c.e.GetInputKeys() }
func (c resumedRun) GetOutputKeys() []string               { return c.e.GetOutputKeys() }
func (c resumedRun) GetCallbackHandler() callbacks.Handler { return c.e.CallbacksHandler }

// resume settles the paused call of p and runs on.
func (e *Executor) resume(ctx context.Context, p *PausedRun, r Resolution, options []chains.ChainCallOption) (map[string]any, error) {
	action := p.Actions[0]
	t, ok := toolsByName(e.Agent.GetTools())[strings.ToUpper(action.Tool)].(*Tool)
	if !ok {
		return nil, fmt.Errorf("mcpadapter: resume run: %w: the paused call's tool %q is not an mcpadapter tool of the agent", ErrInvalidState, action.Tool)
	}
	if err := p.pause.open(ctx, t.a, stateRun, p.seal); err != nil {
		return nil, fmt.Errorf("mcpadapter: resume run: %w", err)
	}
	next := &PausedRun{Inputs: p.Inputs, Steps: slices.Clone(p.Steps), Actions: slices.Clone(p.Actions), Iterations: p.Iterations}
	res, err := p.pause.settle(ctx, t, r)
	if err != nil {
		return nil, next.stop(err)
	}
	next.Steps = append(next.Steps, schema.AgentStep{Action: action, Observation: res.Text()})
	next.Actions = next.Actions[1:]
	return e.run(ctx, next, options)
}

// run drives the agent from the state p, as agents.Executor.Call does:
// the actions left of the last plan first, then a plan per iteration until
// a finish or MaxIterations.
func (e *Executor) run(ctx context.Context, p *PausedRun, options []chains.ChainCallOption) (map[string]any, error) {
	byName := toolsByName(e.Agent.GetTools())
	for {
		for len(p.Actions) > 0 {
			step, err := e.act(ctx, byName, p.Actions[0])
			if err != nil {
				return nil, p.stop(err)
			}
			p.Steps = append(p.Steps, step)
			p.Actions = p.Actions[1:]
		}
		if p.Iterations >= e.MaxIterations {
			break
		}
		p.Iterations++
		actions, finish, err := e.Agent.Plan(ctx, p.Steps, p.Inputs, options...)
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
		if len(actions) == 0 {
			return nil, agents.ErrAgentNoReturn
		}
		p.Actions = actions
	}
	if e.CallbacksHandler != nil {
		e.CallbacksHandler.HandleAgentFinish(ctx, schema.AgentFinish{ReturnValues: map[string]any{"output": agents.ErrNotFinished.Error()}})
	}
	return e.outputs(&schema.AgentFinish{ReturnValues: map[string]any{}}, p.Steps), agents.ErrNotFinished
}

// act runs one action's tool, as agents.Executor does: an unknown tool is
// an observation for the model.
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
		return schema.AgentStep{}, err
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
// [Executor.Resume], when a tool call needs user input or approval.
// [errors.As] finds the [*Interrupt] or [*ApprovalRequired] through it.
//
// It survives json.Marshal and Unmarshal (sealed with [Config.StateKey]
// when set): the run's inputs, the completed steps with their
// observations, the paused action and those planned after it, and the
// pause, which records the principal of its call. Resume it with
// [Executor.Resume], under that principal.
type PausedRun struct {
	Inputs     map[string]string    // the run's inputs, memory variables included
	Steps      []schema.AgentStep   // completed, with their observations
	Actions    []schema.AgentAction // Actions[0] is paused; the others were planned with it and have not run
	Iterations int                  // the agent's plans so far (bounded by MaxIterations)

	pause pause
	seal  stateSeal
}

// stop returns err, as a pause of p when err is an interrupt or an approval
// request.
func (p *PausedRun) stop(err error) error {
	pend, ok := pauseOf(err)
	if !ok {
		return err
	}
	p.pause, p.seal = pend, stateSeal{}
	return p
}

// Error implements error: the pause's message.
func (p *PausedRun) Error() string {
	if p == nil || p.pause.err() == nil {
		return "mcpadapter: <no paused run>"
	}
	return p.pause.err().Error()
}

// Unwrap returns the [*Interrupt] or [*ApprovalRequired] the run waits for.
func (p *PausedRun) Unwrap() error {
	if p == nil {
		return nil
	}
	return p.pause.err()
}

// pausedRunJSON is the wire form of a PausedRun.
type pausedRunJSON struct {
	Version    int               `json:"version"`
	Inputs     map[string]string `json:"inputs"`
	Steps      []storedStep      `json:"steps,omitempty"`
	Actions    []storedAction    `json:"actions"`
	Iterations int               `json:"iterations"`
	pause
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

// MarshalJSON implements [json.Marshaler]. The JSON holds the run's inputs
// and the tools' observations, and the pause (with the call's arguments):
// store it where those may be stored.
func (p *PausedRun) MarshalJSON() ([]byte, error) {
	return marshalState(p.pause.adapter(), stateRun, p.seal, func() ([]byte, error) {
		w := pausedRunJSON{Version: 1, Inputs: p.Inputs, Iterations: p.Iterations, pause: p.pause}
		for _, s := range p.Steps {
			w.Steps = append(w.Steps, storedStep{storedAction: storedAction(s.Action), Observation: s.Observation})
		}
		for _, a := range p.Actions {
			w.Actions = append(w.Actions, storedAction(a))
		}
		return json.Marshal(w)
	})
}

// UnmarshalJSON implements [json.Unmarshaler]. Malformed or oversized JSON
// is an error wrapping [ErrInvalidState], never a panic.
func (p *PausedRun) UnmarshalJSON(b []byte) error {
	var w pausedRunJSON
	seal, err := decodeState("paused run", b, &w)
	if err != nil {
		return err
	}
	switch {
	case w.Version != 1:
		err = fmt.Errorf("unsupported version %d", w.Version)
	case len(w.Steps) > maxRunSteps:
		err = fmt.Errorf("%d steps, more than %d", len(w.Steps), maxRunSteps)
	case len(w.Actions) == 0 || len(w.Actions) > maxRunActions:
		err = fmt.Errorf("%d planned actions, want 1 to %d", len(w.Actions), maxRunActions)
	case w.Iterations < 1 || w.Iterations > maxRunSteps:
		err = fmt.Errorf("invalid iteration count %d", w.Iterations)
	default:
		err = w.pause.check(w.Actions[0].Tool)
	}
	if err != nil {
		return fmt.Errorf("mcpadapter: decoding paused run: %w: %w", ErrInvalidState, err)
	}
	*p = PausedRun{Inputs: w.Inputs, Iterations: w.Iterations, pause: w.pause, seal: seal}
	for _, s := range w.Steps {
		p.Steps = append(p.Steps, schema.AgentStep{Action: schema.AgentAction(s.storedAction), Observation: s.Observation})
	}
	for _, a := range w.Actions {
		p.Actions = append(p.Actions, schema.AgentAction(a))
	}
	return nil
}
