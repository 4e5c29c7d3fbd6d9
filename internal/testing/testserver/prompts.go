package testserver

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Prompt fixtures served by AddPrompts.
const (
	// PromptResourceURI is the URI of the resource embedded by "with_media".
	PromptResourceURI = "mem://docs/style"
	// PromptResourceText is that resource's text.
	PromptResourceText = "Be brief."
)

// AddPrompts adds two prompts and returns s:
//
//   - "greet" {name (required), greeting (optional, default "Hello")}: a
//     user message "<greeting>, <name>!" and an assistant message "Hi! How
//     can I help <name>?".
//   - "with_media" (no arguments): a user message holding [PNG] as an
//     image, then a user message embedding the text resource
//     [PromptResourceURI] ("text/plain", [PromptResourceText]).
//
// A go-sdk server with prompts advertises prompts.listChanged; adding or
// removing a prompt on the live server sends list_changed.
func (s *Server) AddPrompts() *Server {
	s.Server.AddPrompt(&mcp.Prompt{
		Name:        "greet",
		Description: "Greet someone.",
		Arguments: []*mcp.PromptArgument{
			{Name: "name", Description: "Who to greet", Required: true},
			{Name: "greeting", Description: "The greeting word"},
		},
	}, func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		name, greeting := req.Params.Arguments["name"], req.Params.Arguments["greeting"]
		if greeting == "" {
			greeting = "Hello"
		}
		return &mcp.GetPromptResult{
			Description: "A greeting",
			Messages: []*mcp.PromptMessage{
				{Role: "user", Content: &mcp.TextContent{Text: fmt.Sprintf("%s, %s!", greeting, name)}},
				{Role: "assistant", Content: &mcp.TextContent{Text: fmt.Sprintf("Hi! How can I help %s?", name)}},
			},
		}, nil
	})
	s.Server.AddPrompt(&mcp.Prompt{Name: "with_media", Description: "A prompt with an image and a resource."},
		func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{
				{Role: "user", Content: &mcp.ImageContent{Data: PNG(), MIMEType: "image/png"}},
				{Role: "user", Content: &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{
					URI: PromptResourceURI, MIMEType: "text/plain", Text: PromptResourceText,
				}}},
			}}, nil
		})
	return s
}
