package testserver

import (
	"context"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Resource fixtures served by AddResources.
const (
	// UserTemplate is the URI template of the resource template.
	UserTemplate = "mem://users/{id}"
)

// resourceFixtures are the text resources added by AddResources, in order.
var resourceFixtures = []struct{ uri, name, text string }{
	{"mem://docs/readme", "readme", "Read me first."},
	{"mem://docs/changelog", "changelog", "v1.0.0: first release."},
	{"mem://docs/license", "license", "MIT"},
}

// ResourceURIs returns the URIs of the three text resources AddResources adds.
func ResourceURIs() []string {
	uris := make([]string, len(resourceFixtures))
	for i, r := range resourceFixtures {
		uris[i] = r.uri
	}
	return uris
}

// AddResources adds three text/plain resources (see [ResourceURIs]: readme
// "Read me first.", changelog "v1.0.0: first release.", license "MIT") and
// the resource template [UserTemplate] ("user" ; reading mem://users/<id>
// gives the text "user <id>"), and returns s. With Options.PageSize 1 or 2
// resources/list paginates. Reading an unknown URI is the SDK's resource
// not found error.
func (s *Server) AddResources() *Server {
	for _, r := range resourceFixtures {
		body := r.text
		s.Server.AddResource(&mcp.Resource{URI: r.uri, Name: r.name, MIMEType: "text/plain"},
			func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
					{URI: req.Params.URI, MIMEType: "text/plain", Text: body},
				}}, nil
			})
	}
	s.Server.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: UserTemplate, Name: "user", MIMEType: "text/plain"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			id, ok := strings.CutPrefix(req.Params.URI, "mem://users/")
			if !ok || id == "" {
				return nil, mcp.ResourceNotFoundError(req.Params.URI)
			}
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
				{URI: req.Params.URI, MIMEType: "text/plain", Text: "user " + id},
			}}, nil
		})
	return s
}
