package mcpadapter

// Names the package's tests use for code that moved to internal/, which
// the package itself no longer needs.

import (
	"github.com/mcpadapter/mcpadapter/internal/toolsearch"
)

// searchArgs are the search tool's arguments.
type searchArgs = toolsearch.Args
