package mcpadapter

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/mcpadapter/mcpadapter/internal/testing/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tmc/langchaingo/llms"
)

// promptAdapter is an adapter over one in-memory prompt server "srv" of era.
func promptAdapter(t *testing.T, legacy bool, want Era) (*Adapter, *testserver.Server) {
	t.Helper()
	s := testserver.New(testserver.Options{Legacy: legacy}).AddPrompts()
	a := newAdapter(t, Config{Servers: map[string]Server{"srv": memServer(s, ModeAuto)}})
	checkEra(t, a, "srv", want)
	return a, s
}

// TestPrompts: ListPrompts lists the server's prompts with their declared
// arguments, and GetPrompt renders one into langchaingo messages, in both
// eras.
func TestPrompts(t *testing.T) {
	for _, era := range cacheEras {
		t.Run(era.name, func(t *testing.T) {
			a, _ := promptAdapter(t, era.legacy, era.want)
			ps, err := a.ListPrompts(t.Context(), "srv")
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, p := range ps {
				names = append(names, p.Name)
			}
			if !slices.Equal(names, []string{"greet", "with_media"}) || len(ps[0].Arguments) != 2 || ps[0].Arguments[0].Required == nil || !*ps[0].Arguments[0].Required {
				t.Fatalf("ListPrompts() = %v (greet arguments %v), want greet(name required, greeting), with_media", names, ps[0].Arguments)
			}

			res, err := a.GetPrompt(t.Context(), "srv", "greet", map[string]string{"name": "Ada", "greeting": "Hi"})
			if err != nil {
				t.Fatal(err)
			}
			want := []llms.MessageContent{
				{Role: llms.ChatMessageTypeHuman, Parts: []llms.ContentPart{llms.TextPart("Hi, Ada!")}},
				{Role: llms.ChatMessageTypeAI, Parts: []llms.ContentPart{llms.TextPart("Hi! How can I help Ada?")}},
			}
			if got := res.LLMMessages(); res.Description != "A greeting" || !equalMessages(got, want) {
				t.Fatalf("greet: %q, LLMMessages() = %+v, want %+v", res.Description, got, want)
			}
		})
	}
}

// TestPromptMedia: images and embedded resources of prompt messages are
// converted as tool results are, in either provider style.
func TestPromptMedia(t *testing.T) {
	for _, era := range cacheEras {
		t.Run(era.name, func(t *testing.T) {
			a, _ := promptAdapter(t, era.legacy, era.want)
			res, err := a.GetPrompt(t.Context(), "srv", "with_media", nil)
			if err != nil {
				t.Fatal(err)
			}
			wantBlocks := []PromptMessage{
				{Role: "user", Content: Block{Type: BlockImage, MIMEType: "image/png", Data: testserver.PNG()}},
				{Role: "user", Content: Block{Type: BlockText, MIMEType: "text/plain", URI: testserver.PromptResourceURI, Text: testserver.PromptResourceText}},
			}
			if len(res.Messages) != 2 || res.Messages[0].Role != "user" || !equalBlocks(res.Messages[0].Content, wantBlocks[0].Content) ||
				!equalBlocks(res.Messages[1].Content, wantBlocks[1].Content) {
				t.Fatalf("with_media: Messages = %+v, want %+v", res.Messages, wantBlocks)
			}
			text := llms.TextPart(testserver.PromptResourceText)
			binary := []llms.MessageContent{
				{Role: llms.ChatMessageTypeHuman, Parts: []llms.ContentPart{llms.BinaryPart("image/png", testserver.PNG())}},
				{Role: llms.ChatMessageTypeHuman, Parts: []llms.ContentPart{text}},
			}
			if got := res.LLMMessages(); !equalMessages(got, binary) {
				t.Fatalf("LLMMessages() = %+v, want a binary image part and the resource text", got)
			}
			got := res.LLMMessages(ImagesAsDataURL())
			if len(got) != 2 || !strings.HasPrefix(got[0].Parts[0].(llms.ImageURLContent).URL, "data:image/png;base64,") {
				t.Fatalf("LLMMessages(ImagesAsDataURL()) = %+v, want a data URL image", got)
			}
		})
	}
}

// TestPromptArguments: GetPrompt refuses a missing required argument, an
// argument the prompt does not declare, and an unknown prompt, naming the
// server and the prompt, without asking the server.
func TestPromptArguments(t *testing.T) {
	for _, era := range cacheEras {
		t.Run(era.name, func(t *testing.T) {
			a, s := promptAdapter(t, era.legacy, era.want)
			tests := []struct {
				name, prompt     string
				args             map[string]string
				missing, unknown []string
				text             string
			}{
				{"missing", "greet", map[string]string{"greeting": "Hi"}, []string{"name"}, nil,
					`mcpadapter: server "srv": prompt "greet": missing required argument "name"`},
				{"unknown", "greet", map[string]string{"name": "Ada", "tone": "warm", "lang": "en"}, nil, []string{"lang", "tone"},
					`mcpadapter: server "srv": prompt "greet": unknown arguments "lang", "tone"`},
				{"none declared", "with_media", map[string]string{"x": ""}, nil, []string{"x"},
					`mcpadapter: server "srv": prompt "with_media": unknown argument "x"`},
			}
			for _, tt := range tests {
				_, err := a.GetPrompt(t.Context(), "srv", tt.prompt, tt.args)
				var pe *promptArgumentsError
				if !errors.As(err, &pe) || pe.Server != "srv" || pe.Prompt != tt.prompt ||
					!slices.Equal(pe.Missing, tt.missing) || !slices.Equal(pe.Unknown, tt.unknown) || err.Error() != tt.text {
					t.Errorf("%s: GetPrompt() error = %v, want %q", tt.name, err, tt.text)
				}
			}
			_, err := a.GetPrompt(t.Context(), "srv", "nope", nil)
			var se *ServerError
			if !errors.Is(err, errUnknownPrompt) || !errors.As(err, &se) || se.Server != "srv" || !strings.Contains(err.Error(), `"nope"`) {
				t.Errorf("GetPrompt(unknown) error = %v, want errUnknownPrompt naming srv and nope", err)
			}
			// An empty value is a given argument.
			if _, err := a.GetPrompt(t.Context(), "srv", "greet", map[string]string{"name": ""}); err != nil {
				t.Errorf("GetPrompt(name: \"\") = %v", err)
			}
			if n := s.Count("prompts/get"); n != 1 {
				t.Errorf("server got %d prompts/get, want 1 (refused calls never reach it)", n)
			}
			if _, err := a.GetPrompt(t.Context(), "other", "greet", nil); !errors.Is(err, ErrUnknownServer) {
				t.Errorf("GetPrompt(unknown server) error = %v, want ErrUnknownServer", err)
			}
		})
	}
}

// TestPromptRole: a message of a role langchaingo cannot hold is an error
// naming the server and the prompt, never a silent conversion.
func TestPromptRole(t *testing.T) {
	s := testserver.New(testserver.Options{})
	s.Server.AddPrompt(&mcp.Prompt{Name: "odd"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "system", Content: &mcp.TextContent{Text: "x"}}}}, nil
	})
	a := newAdapter(t, Config{Servers: map[string]Server{"srv": memServer(s, ModeAuto)}})
	_, err := a.GetPrompt(t.Context(), "srv", "odd", nil)
	if err == nil || !strings.Contains(err.Error(), `server "srv": get prompt "odd": message 0 has role "system"`) {
		t.Fatalf("GetPrompt() error = %v, want the role refused", err)
	}
}

// TestPromptInputRequired: a modern server's input-required answer to
// prompts/get is an error, not an empty prompt.
func TestPromptInputRequired(t *testing.T) {
	s := testserver.New(testserver.Options{})
	s.Server.AddPrompt(&mcp.Prompt{Name: "ask"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{InputRequests: mcp.InputRequestMap{"topic": testserver.DateRequest()}, RequestState: "s"}, nil
	})
	a := newAdapter(t, Config{Servers: map[string]Server{"srv": memServer(s, ModeAuto)}})
	checkEra(t, a, "srv", EraModern)
	res, err := a.GetPrompt(t.Context(), "srv", "ask", nil)
	if !errors.Is(err, ErrUnsupportedInputRequest) || !strings.Contains(err.Error(), `server "srv": get prompt "ask"`) {
		t.Fatalf("GetPrompt() = %+v, %v; want ErrUnsupportedInputRequest naming srv and ask", res, err)
	}
}

// TestPromptsNone: a server without prompts has none.
func TestPromptsNone(t *testing.T) {
	for _, era := range cacheEras {
		t.Run(era.name, func(t *testing.T) {
			s := testserver.New(testserver.Options{Legacy: era.legacy}).AddWeather()
			a := newAdapter(t, Config{Servers: map[string]Server{"srv": memServer(s, ModeAuto)}})
			if ps, err := a.ListPrompts(t.Context(), "srv"); err != nil || ps == nil || len(ps) != 0 {
				t.Fatalf("ListPrompts() = %v, %v; want an empty list", ps, err)
			}
			if _, err := a.GetPrompt(t.Context(), "srv", "greet", nil); !errors.Is(err, errUnknownPrompt) {
				t.Fatalf("GetPrompt() error = %v, want errUnknownPrompt", err)
			}
		})
	}
}

// equalMessages compares messages by their parts' values.
func equalMessages(a, b []llms.MessageContent) bool {
	return slices.EqualFunc(a, b, func(x, y llms.MessageContent) bool {
		return x.Role == y.Role && slices.EqualFunc(x.Parts, y.Parts, func(p, q llms.ContentPart) bool {
			pb, ok1 := p.(llms.BinaryContent)
			qb, ok2 := q.(llms.BinaryContent)
			if ok1 && ok2 {
				return pb.MIMEType == qb.MIMEType && string(pb.Data) == string(qb.Data)
			}
			return p == q
		})
	})
}

// equalBlocks compares two blocks, their bytes included.
func equalBlocks(a, b Block) bool {
	return a.Type == b.Type && a.Text == b.Text && a.MIMEType == b.MIMEType && string(a.Data) == string(b.Data) &&
		a.URI == b.URI && a.Name == b.Name && a.Raw == nil && b.Raw == nil
}
