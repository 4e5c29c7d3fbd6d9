package elicit

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxRequests bounds the input requests of one round: a stored
// interrupt's, a task's.
const maxRequests = 256

// DecodeRequests decodes input requests, stored or as a server sent them.
// go-sdk's decoder panics on a null entry ({"k": null}); entries are
// checked first, and their number is bounded.
func DecodeRequests(b json.RawMessage) (mcp.InputRequestMap, error) {
	var entries map[string]json.RawMessage
	if err := json.Unmarshal(b, &entries); err != nil {
		return nil, fmt.Errorf("input requests: %w", err)
	}
	if len(entries) > maxRequests {
		return nil, fmt.Errorf("input requests: %d, more than %d", len(entries), maxRequests)
	}
	for key, e := range entries {
		if t := bytes.TrimSpace(e); len(t) == 0 || t[0] != '{' {
			return nil, fmt.Errorf("input request %q is not an object", key)
		}
	}
	var m mcp.InputRequestMap
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("input requests: %w", err)
	}
	return m, nil
}
