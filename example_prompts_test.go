package mcpadapter_test

import (
	"context"
	"fmt"
	"log"

	"github.com/mcpadapter/mcpadapter"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// docsPromptServer returns an in-process go-sdk server for the examples,
// as a Server.Transport: a "code_review" prompt with a required "code"
// argument, and a resource "config://app" that clients may subscribe to.
// When subscribed is not nil, it is called once the server has registered
// a subscription.
func docsPromptServer(subscribed func(s *mcp.Server, uri string)) func(context.Context) (mcp.Transport, error) {
	s := mcp.NewServer(&mcp.Implementation{Name: "review-service", Version: "1.0.0"}, &mcp.ServerOptions{
		SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { return nil },
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
	})
	s.AddPrompt(&mcp.Prompt{
		Name:        "code_review",
		Description: "Review a piece of code.",
		Arguments:   []*mcp.PromptArgument{{Name: "code", Description: "The code to review", Required: true}},
	}, func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{
			{Role: "user", Content: &mcp.TextContent{Text: "Please review this code:\n" + req.Params.Arguments["code"]}},
			{Role: "assistant", Content: &mcp.TextContent{Text: "Sure. What should I focus on?"}},
		}}, nil
	})
	s.AddResource(&mcp.Resource{URI: "config://app", Name: "app config", MIMEType: "application/json"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: `{"debug":false}`}}}, nil
		})
	if subscribed != nil {
		// The server acknowledges a modern subscription once it is in place.
		s.AddSendingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				res, err := next(ctx, method, req)
				if p, ok := req.GetParams().(*mcp.SubscriptionsAcknowledgedParams); ok {
					for _, uri := range p.Notifications.ResourceSubscriptions {
						go subscribed(s, uri)
					}
				}
				return res, err
			}
		})
	}
	return docsTransport(s)
}

// docsTransport reaches s in memory, as a Server.Transport.
func docsTransport(s *mcp.Server) func(context.Context) (mcp.Transport, error) {
	return func(ctx context.Context) (mcp.Transport, error) {
		serverEnd, clientEnd := mcp.NewInMemoryTransports()
		if _, err := s.Connect(context.WithoutCancel(ctx), serverEnd, nil); err != nil {
			return nil, err
		}
		return clientEnd, nil
	}
}

// ListPrompts lists a server's prompts with the arguments they declare.
func ExampleAdapter_ListPrompts() {
	a, err := mcpadapter.New(mcpadapter.Config{
		Servers: map[string]mcpadapter.Server{"review": {Transport: docsPromptServer(nil)}},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()

	prompts, err := a.ListPrompts(context.Background(), "review")
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range prompts {
		fmt.Printf("%s: %s\n", p.Name, p.Description)
		for _, arg := range p.Arguments {
			required := arg.Required != nil && *arg.Required // nil: the server did not say (not required)
			fmt.Printf("  %s (required %v): %s\n", arg.Name, required, arg.Description)
		}
	}
	// Output:
	// code_review: Review a piece of code.
	//   code (required true): The code to review
}

// GetPrompt has the server render a prompt; LLMMessages turns it into a
// chat history for GenerateContent. Arguments are checked against the
// prompt's declaration before the server is asked.
func ExampleAdapter_GetPrompt() {
	a, err := mcpadapter.New(mcpadapter.Config{
		Servers: map[string]mcpadapter.Server{"review": {Transport: docsPromptServer(nil)}},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()
	ctx := context.Background()

	res, err := a.GetPrompt(ctx, "review", "code_review", map[string]string{"code": "x := 1"})
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range res.LLMMessages() {
		fmt.Printf("%s: %v\n", m.Role, m.Parts)
	}
	// llm.GenerateContent(ctx, res.LLMMessages()) sends it to a model.

	_, err = a.GetPrompt(ctx, "review", "code_review", map[string]string{"lang": "go"})
	fmt.Println(err)
	// Output:
	// human: [Please review this code:
	// x := 1]
	// ai: [Sure. What should I focus on?]
	// mcpadapter: server "review": prompt "code_review": missing required argument "code"; unknown argument "lang"
}

// OnListChanged runs after a server announced a change of one of its lists,
// once the adapter has dropped its cached copy: listing again from the
// callback gets the new list.
func ExampleConfig_onListChanged() {
	s := mcp.NewServer(&mcp.Implementation{Name: "tools-service", Version: "1.0.0"}, nil)
	addTool := func(name string) {
		mcp.AddTool(s, &mcp.Tool{Name: name, Description: "A tool."},
			func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
				return &mcp.CallToolResult{}, nil, nil
			})
	}
	addTool("first")

	changed := make(chan string)
	var a *mcpadapter.Adapter
	a, err := mcpadapter.New(mcpadapter.Config{
		Servers: map[string]mcpadapter.Server{"svc": {Transport: docsTransport(s)}},
		OnListChanged: func(c mcpadapter.ListChange) {
			// c.Principal is whose connection the change came on: list
			// again under it (here a shared server: none).
			tools, err := a.ListTools(mcpadapter.WithPrincipal(context.Background(), c.Principal))
			if err != nil {
				log.Print(err)
			}
			changed <- fmt.Sprintf("%s %s changed: %d tools", c.Server, c.Kind, len(tools))
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()

	if _, err := a.ListTools(context.Background()); err != nil {
		log.Fatal(err)
	}
	addTool("second") // the server sends notifications/tools/list_changed
	fmt.Println(<-changed)
	// Output:
	// svc tools changed: 2 tools
}

// SubscribeResource asks a server to announce changes of a resource for
// the principal of its context; each announcement calls
// Config.OnResourceUpdated for each principal subscribed, where the
// resource can be read again.
func ExampleAdapter_SubscribeResource() {
	updated := make(chan string)
	var a *mcpadapter.Adapter
	a, err := mcpadapter.New(mcpadapter.Config{
		Servers: map[string]mcpadapter.Server{"review": {Transport: docsPromptServer(func(s *mcp.Server, uri string) {
			// The server changes the resource and says so.
			s.ResourceUpdated(context.Background(), &mcp.ResourceUpdatedNotificationParams{URI: uri})
		})}},
		OnResourceUpdated: func(u mcpadapter.ResourceUpdate) {
			// One call per principal subscribed: read it for that one.
			ctx := mcpadapter.WithPrincipal(context.Background(), u.Principal)
			res, err := a.ReadResource(ctx, u.Server, u.URI)
			if err != nil {
				log.Print(err)
				return
			}
			updated <- fmt.Sprintf("%s %s for %s: %s", u.Server, u.URI, u.Principal, res.Contents[0].Text)
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()
	ctx := mcpadapter.WithPrincipal(context.Background(), "alice") // the subscription is hers

	if err := a.SubscribeResource(ctx, "review", "config://app"); err != nil {
		log.Fatal(err)
	}
	fmt.Println(<-updated)
	if err := a.UnsubscribeResource(ctx, "review", "config://app"); err != nil {
		log.Fatal(err)
	}
	// Output:
	// review config://app for alice: {"debug":false}
}
