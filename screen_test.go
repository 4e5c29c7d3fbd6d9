package mcpadapter

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/mcpadapter/mcpadapter/internal/wire"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// testScreen returns a screen as the adapter builds one, with the default
// bound.
func testScreen() *wire.Screen {
	return wire.New(wire.Options{MaxMessageBytes: defaultMaxMessageBytes, Placeholder: unsupportedText, PlaceholderKey: originalMetaKey})
}

// sanitizeTransport screens the decoded messages of t as the adapter does
// for a custom transport.
func sanitizeTransport(t mcp.Transport) mcp.Transport { return screenTransport(testScreen(), t) }

// sanitizeResultJSON screens a tools/call result as the adapter does, and
// reports whether it changed.
func sanitizeResultJSON(res []byte) ([]byte, bool) {
	out, err := testScreen().Result(res)
	if err != nil {
		return res, false
	}
	return out, !bytes.Equal(out, res)
}

// rawResults are the tools/call results the hand-written peers send, by
// tool name. "mixed" holds a content type the SDK does not know.
var rawResults = map[string]string{
	"mixed": `{"content":[{"type":"text","text":"before"},{"type":"video","uri":"https://example.com/v.mp4","mimeType":"video/mp4"},` +
		`{"type":"image","data":"iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==","mimeType":"image/png"}],` +
		`"_meta":{"acme/trace":"t-9"}}`,
	"plain": `{"content":[{"type":"text","text":"fine"}]}`,
}

// rawReply answers one JSON-RPC request of a legacy client with the
// message a minimal server sends, or nil for a notification.
func rawReply(line []byte) []byte {
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	if err := json.Unmarshal(line, &req); err != nil || req.ID == nil {
		return nil
	}
	reply := `"error":{"code":-32601,"message":"method not found"}`
	switch req.Method {
	case "initialize":
		reply = `"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"raw","version":"v1"}}`
	case "tools/call":
		if res, ok := rawResults[req.Params.Name]; ok {
			reply = `"result":` + res
		} else {
			reply = `"error":{"code":-32602,"message":"unknown tool"}`
		}
	}
	return []byte(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,` + reply + `}`)
}

// TestUnknownContentGolden pins the Result of a tools/call whose result
// holds a content type the SDK does not know, read through the adapter's
// screen: every block survives, the unknown one as a placeholder with its
// original JSON.
func TestUnknownContentGolden(t *testing.T) {
	a := newAdapter(t, Config{Servers: map[string]Server{"srv": {Transport: rawToolsPeer(t)}}})
	ts, err := a.ListTools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	r, err := lookup(t, ts, "srv__mixed").Invoke(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "content/unknown.json", renderResult(t, r, testCall("mixed")))
	if len(r.Content) != 3 || r.Content[1].Type != BlockText || !json.Valid(r.Content[1].Raw) || !bytes.Contains(r.Content[1].Raw, []byte(`"video"`)) {
		t.Errorf("blocks = %+v, want the unknown one as a text placeholder with the original in Raw", r.Content)
	}
}
