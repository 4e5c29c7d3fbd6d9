package mcpadapter_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mcpadapter/mcpadapter"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// One Adapter serving several users: the "crm" server gets each user's own
// token (looked up, and refreshed, per request by HeadersFor), and a
// connection, tool list and cache per user. The request's principal comes
// from its context.
func ExampleWithPrincipal() {
	// A server whose tool answers the Authorization header it received.
	srv := mcp.NewServer(&mcp.Implementation{Name: "crm", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "whoami", InputSchema: &jsonschema.Schema{Type: "object"}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: req.Extra.Header.Get("Authorization")}}}, nil
		})
	web := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	defer web.Close()

	tokens := map[string]string{"alice": "token-for-alice", "bob": "token-for-bob"} // a token store
	a, err := mcpadapter.New(mcpadapter.Config{Servers: map[string]mcpadapter.Server{
		"crm": {URL: web.URL, HeadersFor: func(ctx context.Context, principal string) (map[string]string, error) {
			return map[string]string{"Authorization": "Bearer " + tokens[principal]}, nil
		}},
	}})
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()

	for _, user := range []string{"alice", "bob"} {
		// In a service, the authentication middleware does this once per request.
		ctx := mcpadapter.WithPrincipal(context.Background(), user)
		tools, err := a.ListTools(ctx)
		if err != nil {
			log.Fatal(err)
		}
		res, err := tools.Lookup("crm__whoami").Invoke(ctx, nil)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s: %s\n", user, res.Text())
	}
	fmt.Println("connections:", a.Status().Servers["crm"].Principals)
	// Output:
	// alice: Bearer token-for-alice
	// bob: Bearer token-for-bob
	// connections: 2
}
