package mcpadapter

import (
	"maps"
	"testing"

	"github.com/tmc/langchaingo/llms"
)

// TestNullsMeanAbsent: a strict-mode null for get_weather's optional unit
// (an enum without null) reaches the server as no unit, through every call
// path; the required city's value is kept.
func TestNullsMeanAbsent(t *testing.T) {
	s := eraServer(false)
	_, ts := discover(t, s, Config{})
	tool := lookup(t, ts, "srv__get_weather")
	const argsJSON = `{"city":"Paris","unit":null}`
	paths := map[string]func() error{
		"Call":       func() error { _, err := tool.Call(t.Context(), argsJSON); return err },
		"InvokeJSON": func() error { _, err := tool.InvokeJSON(t.Context(), argsJSON); return err },
		"Invoke": func() error {
			args := map[string]any{"city": "Paris", "unit": nil}
			_, err := tool.Invoke(t.Context(), args)
			if _, ok := args["unit"]; !ok {
				t.Error("Invoke changed the caller's arguments")
			}
			return err
		},
		"HandleToolCalls": func() error {
			choice := &llms.ContentChoice{ToolCalls: []llms.ToolCall{{ID: "c1", Type: "function",
				FunctionCall: &llms.FunctionCall{Name: tool.Name(), Arguments: argsJSON}}}}
			_, err := ts.HandleToolCalls(t.Context(), choice)
			return err
		},
	}
	for _, name := range []string{"Call", "InvokeJSON", "Invoke", "HandleToolCalls"} {
		if err := paths[name](); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got, want := s.LastArgs("get_weather"), map[string]any{"city": "Paris"}; !maps.Equal(got, want) {
			t.Errorf("%s: the server got %v, want %v", name, got, want)
		}
	}
}
