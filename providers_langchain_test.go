package mcpadapter

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mcpadapter/mcpadapter/internal/testing/testserver"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/openai"
)

// TestOpenAIRequestCarriesConvertedTools builds chat requests with
// langchaingo's openai provider against a local server (no network, no
// key) and checks that the body carries each converted definition as the
// pass made it, strict flag included.
//
// (langchaingo's googleai provider cannot be checked this way: it talks
// gRPC through github.com/google/generative-ai-go, which is not in this
// module's graph. The gemini rules of checkProviderRules are the checks of
// its convertSchemaRecursive instead.)
func TestOpenAIRequestCarriesConvertedTools(t *testing.T) {
	bodies := make(chan []byte, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		bodies <- b
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"1","object":"chat.completion","created":0,"model":"gpt-4o",`+
			`"choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],`+
			`"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`)
	}))
	t.Cleanup(srv.Close)
	llm, err := openai.New(openai.WithBaseURL(srv.URL), openai.WithToken("x"), openai.WithModel("gpt-4o"))
	if err != nil {
		t.Fatal(err)
	}

	s := testserver.New(testserver.Options{}).AddWeather().AddBooking().AddFeatures()
	a := newAdapter(t, Config{Servers: map[string]Server{"s": memServer(s, ModeAuto)}})
	listed, err := a.ListTools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	ts := append(listed, zooTools(t)...)
	for _, pass := range []struct {
		name string
		pass SchemaPass
	}{{"openai", ForOpenAI()}, {"openai-strict", ForOpenAIStrict()}} {
		t.Run(pass.name, func(t *testing.T) {
			tools, _ := ts.LLMToolsFor(pass.pass) // the refused ones are the goldens' business
			if len(tools) == 0 {
				t.Fatal("no tool converted")
			}
			msgs := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "hi")}
			if _, err := llm.GenerateContent(t.Context(), msgs, llms.WithTools(tools)); err != nil {
				t.Fatalf("GenerateContent: %v", err)
			}
			var req struct {
				Tools []struct {
					Type     string `json:"type"`
					Function struct {
						Name       string          `json:"name"`
						Parameters json.RawMessage `json:"parameters"`
						Strict     bool            `json:"strict"`
					} `json:"function"`
				} `json:"tools"`
			}
			if err := json.Unmarshal(<-bodies, &req); err != nil {
				t.Fatal(err)
			}
			if len(req.Tools) != len(tools) {
				t.Fatalf("request has %d tools, want %d", len(req.Tools), len(tools))
			}
			for i, got := range req.Tools {
				want := tools[i].Function
				wantParams, _ := json.Marshal(want.Parameters)
				if got.Type != "function" || got.Function.Name != want.Name || got.Function.Strict != want.Strict ||
					!jsonEqual(t, got.Function.Parameters, wantParams) {
					t.Errorf("tool %d in the request = %s %s strict=%t, want %s %s strict=%t", i,
						got.Function.Name, got.Function.Parameters, got.Function.Strict, want.Name, wantParams, want.Strict)
				}
			}
		})
	}
}

// jsonEqual reports whether a and b hold the same JSON value.
func jsonEqual(t *testing.T, a, b []byte) bool {
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		t.Fatal(err)
	}
	ca, _ := json.Marshal(va)
	cb, _ := json.Marshal(vb)
	return string(ca) == string(cb)
}
