package agent

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testing/faultserver"
	"github.com/mcpadapter/mcpadapter/mcpadaptertest"
	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/schema"
)

// finalModel plays a script, then answers with the last tool result it was
// shown: a final answer that can only be right if the model saw the real
// result of the resumed call.
type finalModel struct {
	*mcpadaptertest.Model
	finish string // what starts a text agent's final answer
}

func (m finalModel) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	resp, err := m.Model.GenerateContent(ctx, msgs, opts...)
	if !errors.Is(err, mcpadaptertest.ErrExhausted) {
		return resp, err
	}
	text := m.finish + "The result: " + lastObservation(msgs)
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: text}}}, nil
}

func (m finalModel) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, opts...)
}

// lastObservation returns the last tool result in msgs: a tool message's
// content, or the text after a ReAct prompt's last "Observation: ".
func lastObservation(msgs []llms.MessageContent) string {
	var last string
	for _, m := range msgs {
		for _, p := range m.Parts {
			switch p := p.(type) {
			case llms.ToolCallResponse:
				last = p.Content
			case llms.TextContent:
				if i := strings.LastIndex(p.Text, "\nObservation: "); i >= 0 {
					last, _, _ = strings.Cut(p.Text[i+len("\nObservation: "):], "\n")
				}
			}
		}
	}
	return last
}

// agentKinds builds each agent under test over a model that plays calls
// (tool name, JSON input) and then answers.
var agentKinds = map[string]func(calls [][2]string, ts mcpadapter.Toolset) (agents.Agent, error){
	"tool-calling": func(calls [][2]string, ts mcpadapter.Toolset) (agents.Agent, error) {
		return New(finalModel{Model: mcpadaptertest.NewModel(callTurns(calls)...)}, ts)
	},
	"openai-functions": func(calls [][2]string, ts mcpadapter.Toolset) (agents.Agent, error) {
		return agents.NewOpenAIFunctionsAgent(finalModel{Model: mcpadaptertest.NewModel(callTurns(calls)...)}, ts.Tools()), nil
	},
	"one-shot": func(calls [][2]string, ts mcpadapter.Toolset) (agents.Agent, error) {
		return agents.NewOneShotAgent(finalModel{Model: mcpadaptertest.NewModel(reactTurns(calls)...), finish: "Thought: done\nFinal Answer: "}, ts.Tools()), nil
	},
	"conversational": func(calls [][2]string, ts mcpadapter.Toolset) (agents.Agent, error) {
		return agents.NewConversationalAgent(finalModel{Model: mcpadaptertest.NewModel(reactTurns(calls)...), finish: "AI:"}, ts.Tools()), nil
	},
}

// callTurns are the tool-calling agents' turns that make calls, one a turn.
func callTurns(calls [][2]string) []mcpadaptertest.Turn {
	var turns []mcpadaptertest.Turn
	for i, c := range calls {
		turns = append(turns, mcpadaptertest.ToolCalls(mcpadaptertest.ToolCall("call_"+string(rune('1'+i)), c[0], c[1])))
	}
	return turns
}

// reactTurns are the text agents' turns that make calls.
func reactTurns(calls [][2]string) []mcpadaptertest.Turn {
	var turns []mcpadaptertest.Turn
	for _, c := range calls {
		turns = append(turns, mcpadaptertest.FinalAnswer("Thought: I need "+c[0]+"\nAction: "+c[0]+"\nAction Input: "+c[1]))
	}
	return turns
}

// TestExecutorResume: an agent run (the tool-calling Agent,
// OpenAIFunctionsAgent, OneShotAgent, ConversationalAgent)
// pauses at an interrupt or an approval request; its JSON is stored and
// everything is closed; a new Adapter over a restarted stdio server resumes
// the same run, whose final answer is the resumed call's real result, and
// the tool that completed before the pause does not run again.
func TestExecutorResume(t *testing.T) {
	type pauseCase struct {
		name, tool, input string
		resolve           mcpadapter.Resolution
		want              string // the resumed call's observation
		runs              int    // of tool on the restarted server
	}
	interrupt := pauseCase{"interrupt", "book_table", `{"party":4}`, dateAnswer("2026-09-18"), "Booked a table for 4 on 2026-09-18", 1}
	approved := pauseCase{"approved", "destroy", `{"target":"db"}`, mcpadapter.Approved(), "destroyed db", 1}
	rejected := pauseCase{"rejected", "destroy", `{"target":"db"}`, mcpadapter.Rejected("keep it"), "The user rejected the call to tool s__destroy; it was not run. Reason: keep it", 0}
	for agentName, newAgent := range agentKinds {
		for _, era := range []string{"modern", "legacy"} {
			cases := []pauseCase{approved, rejected}
			if era == "modern" {
				cases = append(cases, interrupt) // legacy servers ask live, and cannot interrupt
			}
			for _, pc := range cases {
				t.Run(agentName+"/"+era+"/"+pc.name, func(t *testing.T) {
					kind := era + ":key=" + stateKey + ",runs"
					calls := [][2]string{{"s__get_weather", `{"city":"Paris"}`}, {"s__" + pc.tool, pc.input}}
					question := map[string]any{"input": "Weather in Paris, then " + pc.tool}

					// The first process: the run pauses.
					a1 := newAdapter(t, mcpadapter.Config{Servers: map[string]mcpadapter.Server{"s": stdioServer(t, kind)}, Approval: destructiveCall})
					ts1, err := a1.ListTools(t.Context())
					if err != nil {
						t.Fatal(err)
					}
					ag1, err := newAgent(calls, ts1)
					if err != nil {
						t.Fatal(err)
					}
					_, err = chains.Call(t.Context(), NewExecutor(ag1, agents.WithMaxIterations(4)), question)
					var paused *PausedRun
					if !errors.As(err, &paused) {
						t.Fatalf("run error = %v, want *PausedRun", err)
					}
					if len(paused.Steps) != 1 || paused.Steps[0].Action.Tool != "s__get_weather" || len(paused.Actions) != 1 {
						t.Errorf("paused after steps %+v with actions %+v, want get_weather done and %s paused", paused.Steps, paused.Actions, pc.tool)
					}
					if serverRuns(t, ts1, "get_weather") != 1 {
						t.Errorf("get_weather runs before the pause = %d, want 1", serverRuns(t, ts1, "get_weather"))
					}
					stored, err := json.Marshal(paused)
					if err != nil {
						t.Fatal(err)
					}
					a1.Close()

					// Another process: a new Adapter, a restarted server, a
					// model that only has the rest of the script.
					var back PausedRun
					if err := json.Unmarshal(stored, &back); err != nil {
						t.Fatalf("json.Unmarshal(%s): %v", stored, err)
					}
					a2 := newAdapter(t, mcpadapter.Config{Servers: map[string]mcpadapter.Server{"s": stdioServer(t, kind)}, Approval: destructiveCall})
					ts2, err := a2.ListTools(t.Context())
					if err != nil {
						t.Fatal(err)
					}
					ag2, err := newAgent(nil, ts2)
					if err != nil {
						t.Fatal(err)
					}
					ex := NewExecutor(ag2, agents.WithMaxIterations(4), agents.WithReturnIntermediateSteps())
					out, err := ex.Resume(t.Context(), &back, pc.resolve)
					if err != nil {
						t.Fatalf("Resume: %v", err)
					}
					if got, want := out["output"], "The result: "+pc.want; got != want {
						t.Errorf("final answer = %q, want %q", got, want)
					}
					steps, _ := out["intermediateSteps"].([]schema.AgentStep)
					if len(steps) != 2 || steps[0].Observation != paused.Steps[0].Observation || steps[1].Observation != pc.want {
						t.Errorf("steps = %+v, want the stored get_weather step and %s's real result", steps, pc.tool)
					}
					if got := serverRuns(t, ts2, "get_weather"); got != 0 {
						t.Errorf("get_weather ran %d times after the resume, want 0", got)
					}
					if got := serverRuns(t, ts2, pc.tool); got != pc.runs {
						t.Errorf("%s ran %d times on the restarted server, want %d", pc.tool, got, pc.runs)
					}
				})
			}
		}
	}
}

// TestExecutorLikeAgentsExecutor: without a pause, Executor gives what
// agents.Executor gives, for the tool-calling, OneShot, Conversational and OpenAIFunctions
// agents: the final answer and steps, the unknown-tool observation, parse
// errors with and without the ErrorHandler, ErrNotFinished after
// MaxIterations.
func TestExecutorLikeAgentsExecutor(t *testing.T) {
	s := bookingServer(false).AddWeather()
	a := newAdapter(t, mcpadapter.Config{Servers: map[string]mcpadapter.Server{"s": memServer(s)}})
	ts, err := a.ListTools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	type outcome struct {
		out map[string]any
		err error
	}
	newAgents := map[string]func(llms.Model) agents.Agent{
		"one-shot":         func(m llms.Model) agents.Agent { return agents.NewOneShotAgent(m, ts.Tools()) },
		"conversational":   func(m llms.Model) agents.Agent { return agents.NewConversationalAgent(m, ts.Tools()) },
		"openai-functions": func(m llms.Model) agents.Agent { return agents.NewOpenAIFunctionsAgent(m, ts.Tools()) },
		"tool-calling": func(m llms.Model) agents.Agent {
			ag, err := New(m, ts)
			if err != nil {
				t.Fatal(err)
			}
			return ag
		},
	}
	run := func(newChain func(agents.Agent, ...agents.Option) chains.Chain, agent string, turns []mcpadaptertest.Turn, opts ...agents.Option) outcome {
		out, err := chains.Call(t.Context(), newChain(newAgents[agent](mcpadaptertest.NewModel(turns...)), opts...), map[string]any{"input": "q"})
		return outcome{out, err}
	}
	theirs := func(ag agents.Agent, opts ...agents.Option) chains.Chain { return agents.NewExecutor(ag, opts...) }
	ours := func(ag agents.Agent, opts ...agents.Option) chains.Chain { return NewExecutor(ag, opts...) }
	for _, tt := range []struct {
		name, agent string
		turns       []mcpadaptertest.Turn
		opts        []agents.Option
	}{
		{"functions: calls, unknown tool, answer", "openai-functions", []mcpadaptertest.Turn{
			mcpadaptertest.ToolCalls(mcpadaptertest.ToolCall("c1", "s__get_weather", `{"city":"Paris"}`), mcpadaptertest.ToolCall("c2", "nope", `{}`)),
			mcpadaptertest.FinalAnswer("sunny"),
		}, []agents.Option{agents.WithReturnIntermediateSteps()}},
		{"tool-calling: parallel calls, unknown tool, answer", "tool-calling", []mcpadaptertest.Turn{
			mcpadaptertest.ToolCalls(mcpadaptertest.ToolCall("c1", "s__get_weather", `{"city":"Paris"}`), mcpadaptertest.ToolCall("c2", "nope", `{}`)),
			mcpadaptertest.FinalAnswer("sunny"),
		}, []agents.Option{agents.WithReturnIntermediateSteps()}},
		{"tool-calling: not finished", "tool-calling", []mcpadaptertest.Turn{
			mcpadaptertest.ToolCalls(mcpadaptertest.ToolCall("c1", "s__get_weather", `{"city":"Paris"}`)),
		}, []agents.Option{agents.WithMaxIterations(1), agents.WithReturnIntermediateSteps()}},
		{"functions: not finished", "openai-functions", []mcpadaptertest.Turn{
			mcpadaptertest.ToolCalls(mcpadaptertest.ToolCall("c1", "s__get_weather", `{"city":"Paris"}`)),
		}, []agents.Option{agents.WithMaxIterations(1), agents.WithReturnIntermediateSteps()}},
		{"conversational: call, answer", "conversational", []mcpadaptertest.Turn{
			mcpadaptertest.FinalAnswer("Thought: Do I need to use a tool? Yes\nAction: s__get_weather\nAction Input: {\"city\":\"Paris\"}"),
			mcpadaptertest.FinalAnswer("AI: sunny"),
		}, []agents.Option{agents.WithReturnIntermediateSteps()}},
		{"final answer", "one-shot", []mcpadaptertest.Turn{
			mcpadaptertest.FinalAnswer("Action: s__get_weather\nAction Input: {\"city\":\"Paris\"}"),
			mcpadaptertest.FinalAnswer("Action: nope\nAction Input: x"),
			mcpadaptertest.FinalAnswer("Final Answer: sunny"),
		}, []agents.Option{agents.WithReturnIntermediateSteps()}},
		{"parse error handled", "one-shot", []mcpadaptertest.Turn{
			mcpadaptertest.FinalAnswer("gibberish"),
			mcpadaptertest.FinalAnswer("Final Answer: ok"),
		}, []agents.Option{agents.WithParserErrorHandler(agents.NewParserErrorHandler(nil)), agents.WithReturnIntermediateSteps()}},
		{"parse error", "one-shot", []mcpadaptertest.Turn{mcpadaptertest.FinalAnswer("gibberish")}, nil},
		{"not finished", "one-shot", []mcpadaptertest.Turn{
			mcpadaptertest.FinalAnswer("Action: s__get_weather\nAction Input: {\"city\":\"Paris\"}"),
			mcpadaptertest.FinalAnswer("Action: s__get_weather\nAction Input: {\"city\":\"Oslo\"}"),
		}, []agents.Option{agents.WithMaxIterations(2), agents.WithReturnIntermediateSteps()}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			want := run(theirs, tt.agent, tt.turns, tt.opts...)
			got := run(ours, tt.agent, tt.turns, tt.opts...)
			wb, _ := json.Marshal(want.out)
			gb, _ := json.Marshal(got.out)
			if string(wb) != string(gb) || (want.err == nil) != (got.err == nil) || (want.err != nil && want.err.Error() != got.err.Error()) {
				t.Errorf("Executor = %s, %v; agents.Executor = %s, %v", gb, got.err, wb, want.err)
			}
		})
	}
}

// TestExecutorParallelPauses: two actions of one plan (parallel tool
// calls) that both need input pause the run twice, one after the other;
// the model then sees both results.
func TestExecutorParallelPauses(t *testing.T) {
	s := bookingServer(false)
	a := newAdapter(t, mcpadapter.Config{Servers: map[string]mcpadapter.Server{"s": memServer(s)}})
	ts, err := a.ListTools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	model := mcpadaptertest.NewModel(
		mcpadaptertest.ToolCalls(mcpadaptertest.ToolCall("call_1", "s__book_table", `{"party":2}`), mcpadaptertest.ToolCall("call_2", "s__book_table", `{"party":4}`)),
		mcpadaptertest.FinalAnswer("both booked"),
	)
	ex := NewExecutor(agents.NewOpenAIFunctionsAgent(model, ts.Tools()))
	_, err = chains.Call(t.Context(), ex, map[string]any{"input": "two tables"})
	for _, d := range []string{"2026-09-18", "2026-09-19"} {
		var paused *PausedRun
		if !errors.As(err, &paused) {
			t.Fatalf("error = %v, want *PausedRun", err)
		}
		var back PausedRun
		b, _ := json.Marshal(paused)
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		var out map[string]any
		out, err = ex.Resume(t.Context(), &back, dateAnswer(d))
		if err == nil && out["output"] != "both booked" {
			t.Errorf("output = %v", out["output"])
		}
	}
	if err != nil {
		t.Fatalf("second Resume: %v", err)
	}
	reqs := model.Requests()
	var seen []string
	for _, m := range reqs[len(reqs)-1] {
		for _, p := range m.Parts {
			if r, ok := p.(llms.ToolCallResponse); ok {
				seen = append(seen, r.Content)
			}
		}
	}
	if want := []string{"Booked a table for 2 on 2026-09-18", "Booked a table for 4 on 2026-09-19"}; strings.Join(seen, "|") != strings.Join(want, "|") {
		t.Errorf("the model saw %q, want %q", seen, want)
	}
	if len(reqs) != 2 {
		t.Errorf("model requests = %d, want 2 (the plan, then the answer)", len(reqs))
	}
}

// TestExecutorTaskPause: a run whose tool runs as a task on the server
// pauses on the pending task like on an interrupt; stored as JSON, every
// Adapter closed, the same run resumes on a new Adapter with Collected,
// and its final answer is the task's real result.
func TestExecutorTaskPause(t *testing.T) {
	for _, modern := range []bool{false, true} {
		peer := &faultserver.TaskPeer{Modern: modern, Support: "required", Steps: 2}
		cfg := mcpadapter.Config{State: mcpadapter.StateOptions{Key: []byte(stateKey)}, Servers: map[string]mcpadapter.Server{"p": {Transport: peer.Transport()}}}
		calls := [][2]string{{"p__job", `{"topic":"tides"}`}}
		question := map[string]any{"input": "Research tides"}

		a1 := newAdapter(t, cfg)
		ts1, err := a1.ListTools(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		ag1, err := agentKinds["tool-calling"](calls, ts1)
		if err != nil {
			t.Fatal(err)
		}
		_, err = chains.Call(mcpadapter.WithPendingTask(t.Context()), NewExecutor(ag1, agents.WithMaxIterations(3)), question)
		var paused *PausedRun
		var pending *mcpadapter.PendingTask
		if !errors.As(err, &paused) || !errors.As(err, &pending) {
			t.Fatalf("run error = %v, want a *PausedRun on a *PendingTask", err)
		}
		stored, err := json.Marshal(paused)
		if err != nil {
			t.Fatal(err)
		}
		a1.Close()

		var back PausedRun
		if err := json.Unmarshal(stored, &back); err != nil {
			t.Fatal(err)
		}
		a2 := newAdapter(t, cfg)
		ts2, err := a2.ListTools(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		ag2, err := agentKinds["tool-calling"](nil, ts2)
		if err != nil {
			t.Fatal(err)
		}
		out, err := NewExecutor(ag2, agents.WithMaxIterations(3)).Resume(t.Context(), &back, mcpadapter.Collected())
		if err != nil {
			t.Fatalf("Resume: %v", err)
		}
		if got := out["output"]; got != "The result: done: tides" {
			t.Errorf("modern %v: final answer = %q, want the task's result", modern, got)
		}
	}
}
