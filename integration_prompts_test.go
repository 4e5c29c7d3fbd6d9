package mcpadapter_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/mcpadapter/mcpadapter"
	"github.com/tmc/langchaingo/llms"
)

// TestIntegrationPromptsNPM lists and renders the prompts of
// @modelcontextprotocol/server-everything: its argument checks, and its
// embedded resource converted as in tool results.
func TestIntegrationPromptsNPM(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), integrationTimeout)
	defer cancel()
	a := integAdapter(t, npmEverything(t, "stdio"), nil)
	ps, err := a.ListPrompts(ctx, "everything")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range ps {
		names = append(names, p.Name)
	}
	for _, want := range []string{"simple-prompt", "args-prompt", "resource-prompt"} {
		if !slices.Contains(names, want) {
			t.Fatalf("ListPrompts() = %v, want %s among them", names, want)
		}
	}

	res, err := a.GetPrompt(ctx, "everything", "args-prompt", map[string]string{"city": "Lima"})
	if err != nil {
		t.Fatal(err)
	}
	msgs := res.LLMMessages()
	if len(msgs) != 1 || msgs[0].Role != llms.ChatMessageTypeHuman || msgs[0].Parts[0] != llms.TextPart("What's weather in Lima?") {
		t.Fatalf("args-prompt: LLMMessages() = %+v", msgs)
	}
	if _, err := a.GetPrompt(ctx, "everything", "args-prompt", map[string]string{"state": "Lima"}); err == nil || !strings.Contains(err.Error(), `missing required argument "city"`) {
		t.Fatalf("args-prompt without city: %v, want the missing city", err)
	}

	res, err = a.GetPrompt(ctx, "everything", "resource-prompt", map[string]string{"resourceType": "Text", "resourceId": "1"})
	if err != nil {
		t.Fatal(err)
	}
	const uri = "demo://resource/dynamic/text/1"
	if len(res.Messages) != 2 || res.Messages[1].Content.Type != mcpadapter.BlockText || res.Messages[1].Content.URI != uri {
		t.Fatalf("resource-prompt: Messages = %+v, want a text and the embedded resource %s", res.Messages, uri)
	}
	msgs = res.LLMMessages()
	if len(msgs) != 2 || !strings.HasPrefix(msgs[1].Parts[0].(llms.TextContent).Text, "Resource 1: This is a plaintext resource") {
		t.Fatalf("resource-prompt: LLMMessages() = %+v, want the resource's text", msgs)
	}
}

// TestIntegrationSubscribeNPM subscribes to a resource of
// @modelcontextprotocol/server-everything and waits for its
// notifications/resources/updated: the server sends one for each
// subscribed resource as soon as its toggle-subscriber-updates tool turns
// updates on (then every 5 seconds).
func TestIntegrationSubscribeNPM(t *testing.T) {
	for _, transport := range []string{"stdio", "streamableHttp"} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), integrationTimeout)
			defer cancel()
			updated := make(chan string, 16)
			a := integAdapter(t, npmEverything(t, transport), func(cfg *mcpadapter.Config) {
				cfg.OnResourceUpdated = func(u mcpadapter.ResourceUpdate) {
					if u.Server == "everything" {
						updated <- u.URI
					}
				}
			})
			const uri = "demo://resource/dynamic/text/1"
			if err := a.SubscribeResource(ctx, "everything", uri); err != nil {
				t.Fatal(err)
			}
			toggle := integTool(t, integTools(t, ctx, a), "everything__toggle-subscriber-updates")
			integInvoke(t, ctx, toggle, nil)
			select {
			case got := <-updated:
				if got != uri {
					t.Fatalf("OnResourceUpdated(%q), want %q", got, uri)
				}
			case <-ctx.Done():
				t.Fatal("no notifications/resources/updated")
			}
			integInvoke(t, ctx, toggle, nil) // updates off again
			if err := a.UnsubscribeResource(ctx, "everything", uri); err != nil {
				t.Fatal(err)
			}
		})
	}
}
