package mcpadapter

// Names the package's tests use for code that moved to internal/, which
// the package itself no longer needs.

import (
	"github.com/mcpadapter/mcpadapter/internal/elicit"
	"github.com/mcpadapter/mcpadapter/internal/toolsearch"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// elicitationRequest converts one elicitation; key is empty for a live one.
func elicitationRequest(key string, p *mcp.ElicitParams) ElicitationRequest {
	return elicit.FromParams[ElicitationRequest](key, p)
}

// searchArgs are the search tool's arguments.
type searchArgs = toolsearch.Args
