package mcpadapter

import (
	"errors"
	"strings"
	"testing"

	"github.com/mcpadapter/mcpadapter/internal/testing/testserver"
	"github.com/mcpadapter/mcpadapter/mcpadaptertest"
	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/fake"
	"github.com/tmc/langchaingo/schema"
	"github.com/tmc/langchaingo/tools"
)

// The adapter's tools are langchaingo tools.
var _ tools.Tool = (*Tool)(nil)

// weatherAgentTools discovers the tools of an in-memory weather server
// (only get_weather), named "weather__get_weather", in the era the server
// speaks, on top of cfg.
func weatherAgentTools(t *testing.T, legacy bool, cfg Config) (*testserver.Server, Toolset) {
	t.Helper()
	s := testserver.New(testserver.Options{Legacy: legacy}).AddWeather()
	cfg.Servers = map[string]Server{"weather": memServer(s, ModeAuto)}
	ts, err := newAdapter(t, cfg).ListTools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if got := toolNames(ts); len(got) != 1 || got[0] != "weather__get_weather" {
		t.Fatalf("ListTools() = %v, want weather__get_weather", got)
	}
	return s, ts
}

// runAgent runs executor on input and returns the output and the
// observations of its steps.
func runAgent(t *testing.T, executor *agents.Executor, input string) (string, []string, error) {
	t.Helper()
	out, err := chains.Call(t.Context(), executor, map[string]any{"input": input})
	if err != nil {
		return "", nil, err
	}
	steps, _ := out["intermediateSteps"].([]schema.AgentStep)
	var obs []string
	for _, s := range steps {
		obs = append(obs, s.Observation)
	}
	answer, _ := out["output"].(string)
	return answer, obs, nil
}

// TestOpenAIFunctionsAgent runs langchaingo's OpenAIFunctionsAgent end to
// end, in both eras, with a scripted model: a tool call with the model's own
// arguments, one in langchaingo's {"__arg1": ...} wrapper under another
// case, one the server refuses (isError: the run goes on), then the answer.
func TestOpenAIFunctionsAgent(t *testing.T) {
	for _, era := range serverEras {
		t.Run(era.name, func(t *testing.T) {
			s, ts := weatherAgentTools(t, era.legacy, Config{})
			model := mcpadaptertest.NewModel(
				mcpadaptertest.ToolCalls(mcpadaptertest.ToolCall("call_1", "weather__get_weather", `{"city":"Paris","unit":"f"}`)),
				mcpadaptertest.ToolCalls(mcpadaptertest.ToolCall("call_2", "WEATHER__GET_WEATHER", `{"__arg1":"{\"city\":\"Oslo\"}"}`)),
				mcpadaptertest.ToolCalls(mcpadaptertest.ToolCall("call_3", "weather__get_weather", `{"town":"Rome"}`)),
				mcpadaptertest.FinalAnswer("Paris is 69°F, Oslo 21°C."),
			)
			executor := agents.NewExecutor(agents.NewOpenAIFunctionsAgent(model, ts.Tools()), agents.WithReturnIntermediateSteps())
			answer, obs, err := runAgent(t, executor, "Weather in Paris and Oslo?")
			if err != nil {
				t.Fatalf("agent run: %v", err)
			}
			if answer != "Paris is 69°F, Oslo 21°C." {
				t.Errorf("answer = %q", answer)
			}
			wantObs := []string{"Sunny, 69°F in Paris", "Sunny, 21°C in Oslo", `validating "arguments": missing required property "city"`}
			if strings.Join(obs, "|") != strings.Join(wantObs, "|") {
				t.Errorf("observations = %q, want %q", obs, wantObs)
			}
			if s.Runs("get_weather") != 3 {
				t.Errorf("the server ran get_weather %d times, want 3", s.Runs("get_weather"))
			}
			if got := s.LastArgs("get_weather"); len(got) != 1 || got["town"] != "Rome" {
				t.Errorf("last arguments = %v, want the model's", got)
			}
			// The agent advertised the tool with its description and hint.
			fns := model.Options()[0].Functions
			if len(fns) != 1 || fns[0].Name != "weather__get_weather" || fns[0].Description != ts[0].Description() ||
				!strings.Contains(fns[0].Description, `"city": string (required)`) {
				t.Errorf("functions offered = %+v", fns)
			}
			// The model saw each observation in a tool message.
			last := model.Requests()[3]
			var seen []string
			for _, m := range last {
				for _, p := range m.Parts {
					if r, ok := p.(llms.ToolCallResponse); ok {
						seen = append(seen, r.Content)
					}
				}
			}
			if strings.Join(seen, "|") != strings.Join(wantObs, "|") {
				t.Errorf("tool messages in the last request = %q, want %q", seen, wantObs)
			}
		})
	}
}

// TestAgentAbortsOnApproval checks that a call needing approval ends the
// agent run with an *ApprovalRequired, reachable with errors.As, and that
// the server was not called.
func TestAgentAbortsOnApproval(t *testing.T) {
	s, ts := weatherAgentTools(t, false, Config{Approval: func(ToolCall) bool { return true }})
	model := mcpadaptertest.NewModel(
		mcpadaptertest.ToolCalls(mcpadaptertest.ToolCall("call_1", "weather__get_weather", `{"city":"Paris"}`)),
		mcpadaptertest.FinalAnswer("unreachable"),
	)
	_, _, err := runAgent(t, agents.NewExecutor(agents.NewOpenAIFunctionsAgent(model, ts.Tools())), "Weather?")
	var ar *ApprovalRequired
	if !errors.As(err, &ar) || ar.Call.Args["city"] != "Paris" {
		t.Fatalf("agent run error = %v, want *ApprovalRequired for the call", err)
	}
	if s.Runs("get_weather") != 0 || model.Remaining() != 1 {
		t.Errorf("server runs %d, model turns left %d; want 0 and 1", s.Runs("get_weather"), model.Remaining())
	}
}

// TestMRKLAgent runs langchaingo's one-shot (MRKL) agent, in both eras, with
// llms/fake: the model writes the action input as text, in the shapes
// models use.
func TestMRKLAgent(t *testing.T) {
	inputs := []struct {
		name  string
		input string
		city  string
	}{
		{"JSON", `{"city": "Paris"}`, "Paris"},
		{"fenced JSON", "```json\n{\"city\": \"Lyon\"}\n```", "Lyon"},
		{"bare string", "Nice", "Nice"},
	}
	for _, era := range serverEras {
		for _, in := range inputs {
			t.Run(era.name+"/"+in.name, func(t *testing.T) {
				s, ts := weatherAgentTools(t, era.legacy, Config{})
				llm := fake.NewFakeLLM([]string{
					"Thought: I need the weather\nAction: weather__get_weather\nAction Input: " + in.input,
					"Thought: I now know the final answer\nFinal Answer: It is sunny in " + in.city + ".",
				})
				executor := agents.NewExecutor(agents.NewOneShotAgent(llm, ts.Tools()), agents.WithReturnIntermediateSteps())
				answer, obs, err := runAgent(t, executor, "Weather in "+in.city+"?")
				if err != nil {
					t.Fatalf("agent run: %v", err)
				}
				if answer != "It is sunny in "+in.city+"." {
					t.Errorf("answer = %q", answer)
				}
				if want := "Sunny, 21°C in " + in.city; len(obs) != 1 || obs[0] != want {
					t.Errorf("observations = %q, want %q", obs, want)
				}
				if got := s.LastArgs("get_weather"); len(got) != 1 || got["city"] != in.city {
					t.Errorf("server got %v, want city %s", got, in.city)
				}
			})
		}
	}
}
