package agent

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testing/testserver"
	"github.com/mcpadapter/mcpadapter/mcpadaptertest"
	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms"
)

// TestOldRunFormat: a run sealed in format 1 (signed, in clear) is
// refused when decoded, with ErrInvalidState (format 1).
func TestOldRunFormat(t *testing.T) {
	old := `{"sealed":"{\"version\":1,\"calls\":[{\"id\":\"1\",\"function\":{\"name\":\"s__t\"}}],\"next\":0}","mac":"c2lnbmF0dXJl"}`
	var p PausedRun
	if err := json.Unmarshal([]byte(old), &p); !errors.Is(err, mcpadapter.ErrInvalidState) || !strings.Contains(err.Error(), "format 1") {
		t.Errorf("Unmarshal of format 1 = %v, want ErrInvalidState for format 1", err)
	}
}

// flipBox returns sealed state b with one byte of its box changed, as
// whoever alters stored state without the key can.
func flipBox(t *testing.T, b []byte) []byte {
	t.Helper()
	var w map[string]any
	if err := json.Unmarshal(b, &w); err != nil {
		t.Fatal(err)
	}
	box, err := base64.StdEncoding.DecodeString(w["box"].(string))
	if err != nil || len(box) < 40 {
		t.Fatalf("no box in %s (%v)", b, err)
	}
	box[len(box)/2] ^= 1
	w["box"] = base64.StdEncoding.EncodeToString(box)
	out, err := json.Marshal(w)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// storedKinds build the agents whose runs are stored: the tool-calling
// Agent and langchaingo's OpenAIFunctionsAgent, over model.
var storedKinds = map[string]func(t *testing.T, model llms.Model, ts mcpadapter.Toolset) agents.Agent{
	"tool-calling": func(t *testing.T, model llms.Model, ts mcpadapter.Toolset) agents.Agent {
		ag, err := New(model, ts)
		if err != nil {
			t.Fatal(err)
		}
		return ag
	},
	"openai-functions": func(_ *testing.T, model llms.Model, ts mcpadapter.Toolset) agents.Agent {
		return agents.NewOpenAIFunctionsAgent(model, ts.Tools())
	},
}

// TestStoredRun: a run paused at an interrupt in a batch of parallel calls
// is sealed with Config.State.Key, its steps included; altered or unsealed,
// under another principal, or resumed by another kind of agent, it is
// refused and nothing is sent; resumed under its principal, the same run
// ends on the booking's real result, and the model saw both results.
func TestStoredRun(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	alice := mcpadapter.WithPrincipal(t.Context(), "alice")
	bob := mcpadapter.WithPrincipal(t.Context(), "bob")
	for kind, newAgent := range storedKinds {
		t.Run(kind, func(t *testing.T) {
			s := testserver.Full(testserver.Options{StateKey: stateKey})
			pause := func(cfg mcpadapter.Config) (*Executor, finalModel, mcpadapter.Toolset, *PausedRun, *mcpadapter.Interrupt) {
				cfg.Servers = map[string]mcpadapter.Server{"s": memServer(s)}
				ts := listTools(t, newAdapter(t, cfg))
				model := finalModel{Model: mcpadaptertest.NewModel(mcpadaptertest.ToolCalls(
					mcpadaptertest.ToolCall("call_w", "s__get_weather", `{"city":"Paris"}`),
					mcpadaptertest.ToolCall("call_b", "s__book_table", `{"party":4}`),
				))}
				ex := NewExecutor(newAgent(t, model, ts), agents.WithReturnIntermediateSteps())
				_, err := chains.Call(alice, ex, map[string]any{"input": "q"})
				var paused *PausedRun
				var intr *mcpadapter.Interrupt
				if !errors.As(err, &paused) || !errors.As(err, &intr) {
					t.Fatalf("run error = %v, want a *PausedRun at an *Interrupt", err)
				}
				return ex, model, ts, paused, intr
			}
			_, _, _, plain, _ := pause(mcpadapter.Config{}) // the same run, not sealed
			unsealed, err := json.Marshal(plain)
			if err != nil {
				t.Fatal(err)
			}
			ex, model, ts, paused, intr := pause(mcpadapter.Config{State: mcpadapter.StateOptions{Key: key}})
			if len(paused.Steps) != 1 || len(paused.Actions) != 1 || paused.Actions[0].ToolID != "call_b" {
				t.Fatalf("paused after steps %+v with actions %+v, want get_weather done and call_b paused", paused.Steps, paused.Actions)
			}
			b, err := json.Marshal(paused)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(unsealed), "Sunny") || strings.Contains(string(b), "Sunny") || !strings.Contains(string(b), `"box"`) {
				t.Fatalf("paused run not sealed with its steps: %s", b)
			}
			if held, err := json.Marshal(struct{ Run PausedRun }{*paused}); err != nil || string(held) != `{"Run":`+string(b)+`}` {
				t.Errorf("a struct holding the run by value marshals to %s, %v; want the run's JSON", held, err)
			}
			otherKind := map[string]string{"tool-calling": "openai-functions", "openai-functions": "tool-calling"}[kind]
			other := NewExecutor(storedKinds[otherKind](t, model, ts))
			runs := s.Runs("book_table")
			ans := dateAnswer("2026-09-18")
			for _, tt := range []struct {
				name, state string
				ex          *Executor
				ctx         context.Context
				want        error
			}{
				{"altered", string(flipBox(t, b)), ex, alice, mcpadapter.ErrTamperedState},
				{"unsealed", string(unsealed), ex, alice, mcpadapter.ErrTamperedState},
				{"another principal", string(b), ex, bob, mcpadapter.ErrWrongPrincipal},
				{"another kind of agent", string(b), other, alice, mcpadapter.ErrInvalidState},
			} {
				var p PausedRun
				if err := json.Unmarshal([]byte(tt.state), &p); err != nil {
					t.Fatalf("%s: %v", tt.name, err)
				}
				if _, err := tt.ex.Resume(tt.ctx, &p, ans); !errors.Is(err, tt.want) {
					t.Errorf("Resume(%s) error = %v, want %v", tt.name, err, tt.want)
				}
			}
			if got := s.Runs("book_table"); got != runs {
				t.Errorf("book_table runs %d after the refusals, want %d (nothing sent)", got, runs)
			}

			var p PausedRun
			if err := json.Unmarshal(b, &p); err != nil {
				t.Fatal(err)
			}
			if p.ID() != intr.ID() || len(p.ID()) != 32 || !p.Issued().Equal(intr.Issued()) {
				t.Errorf("stored run: ID %q issued %v, want its interrupt's, %q issued %v", p.ID(), p.Issued(), intr.ID(), intr.Issued())
			}
			out, err := ex.Resume(alice, &p, ans)
			if err != nil {
				t.Fatalf("Resume: %v", err)
			}
			if _, err := ex.Resume(alice, &p, ans); !errors.Is(err, mcpadapter.ErrClaimedState) {
				t.Errorf("second Resume of the run: error = %v, want ErrClaimedState", err)
			}
			const booked = "Booked a table for 4 on 2026-09-18"
			if got := out["output"]; got != "The result: "+booked {
				t.Errorf("answer = %q, want the booking's result", got)
			}
			var seen []string
			reqs := model.Requests()
			for _, m := range reqs[len(reqs)-1] {
				for _, part := range m.Parts {
					if r, ok := part.(llms.ToolCallResponse); ok {
						seen = append(seen, r.ToolCallID+": "+r.Content)
					}
				}
			}
			if want := "call_w: Sunny, 21°C in Paris|call_b: " + booked; strings.Join(seen, "|") != want {
				t.Errorf("the model saw %q, want %q", seen, want)
			}
		})
	}
}

// TestStoredRunNeverPanics: malformed runs, and paused batches that hold
// no run, decode to ErrInvalidState.
func TestStoredRunNeverPanics(t *testing.T) {
	batch := func(state string) string {
		return `{"version":1,"calls":[{"id":"c1","type":"function","function":{"name":"s__t","arguments":"{}"}}],"next":0,` +
			`"approval":{"version":1,"kind":"approvalRequired","server":"s","tool":"s__t","mcpName":"t"}` + state + `}`
	}
	for _, b := range []string{
		`null`, `"x"`, `{"version":1,"steps":[null],"actions":[null]}`, `{"version":1,"inputs":{"input":7}}`,
		batch(``),
		batch(`,"state":{"version":2,"actions":[{"tool":"s__t","toolID":"c1"}],"iterations":1}`),
		batch(`,"state":{"version":1,"actions":[],"iterations":1}`),
		batch(`,"state":{"version":1,"actions":[{"tool":"s__t","toolID":"c1"}],"iterations":0}`),
		batch(`,"state":{"version":1,"actions":[{"tool":"s__u","toolID":"c1"}],"iterations":1}`),
		batch(`,"state":{"version":1,"actions":[{"tool":"s__t","toolID":"c2"}],"iterations":1}`),
		batch(`,"state":{"version":1,"actions":[{"tool":"s__t","toolID":"c1"},{"tool":"s__t"}],"iterations":1,"toolCalling":true}`),
		batch(`,"state":{"version":1,"actions":"x","iterations":1}`),
		batch(`,"state":7`),
		batch(`,"state":{"version":1,"actions":[{"tool":"s__t","toolID":"c1"}],"iterations":1,"toolCalling":true,"history":[{"role":"ai","parts":[{"type":"tool_call","tool_call":{"id":"x"}}]}]}`),
	} {
		var p PausedRun
		if err := json.Unmarshal([]byte(b), &p); !errors.Is(err, mcpadapter.ErrInvalidState) {
			t.Errorf("Unmarshal(%.160s): error = %v, want ErrInvalidState", b, err)
		}
	}
	var p PausedRun
	if err := json.Unmarshal([]byte(batch(`,"state":{"version":1,"inputs":{"input":"q"},"actions":[{"tool":"s__t","toolID":"c1"}],"iterations":1}`)), &p); err != nil {
		t.Errorf("a well-formed run: %v", err)
	}
}

// TestZeroRunIsNoError: a zero PausedRun (or a nil one) wraps no error,
// says that nothing is paused, and neither encodes nor resumes.
func TestZeroRunIsNoError(t *testing.T) {
	for _, p := range []*PausedRun{{}, nil} {
		if err := p.Unwrap(); err != nil {
			t.Errorf("Unwrap() = %#v, want nil", err)
		}
		if msg := p.Error(); !strings.Contains(msg, "no paused run") {
			t.Errorf("Error() = %q", msg)
		}
		if _, err := NewExecutor(agents.NewOneShotAgent(mcpadaptertest.NewModel(), nil)).Resume(t.Context(), p, mcpadapter.Approved()); !errors.Is(err, mcpadapter.ErrInvalidState) {
			t.Errorf("Resume(zero run) error = %v, want ErrInvalidState", err)
		}
	}
	if _, err := json.Marshal(PausedRun{}); !errors.Is(err, mcpadapter.ErrInvalidState) {
		t.Errorf("Marshal(zero run) error = %v, want ErrInvalidState", err)
	}
}
