package mcpadapter

import (
	"encoding/json"

	segjson "github.com/segmentio/encoding/json"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// wireMessage is the wire form of a JSON-RPC message, as the go-sdk
// decodes it (its jsonrpc2.wireDecode): Method stays raw to tell an absent
// method from an empty one.
type wireMessage struct {
	VersionTag string          `json:"jsonrpc"`
	ID         any             `json:"id,omitempty"`
	Method     json.RawMessage `json:"method"`
	Params     json.RawMessage `json:"params,omitempty"`
	Result     json.RawMessage `json:"result,omitempty"`
	Error      *jsonrpc.Error  `json:"error,omitempty"`
}

// decodeMessage decodes one JSON-RPC message as jsonrpc.DecodeMessage
// does, with the same decoder and flags, but without the 32 KiB read
// buffer the SDK's decoder allocates for every message (it decodes through
// a json.Decoder over a bytes.Reader). What it keeps is copied: data may
// be reused. Anything the fast path does not accept goes to
// jsonrpc.DecodeMessage, for the SDK's own error.
func decodeMessage(data []byte) (jsonrpc.Message, error) {
	var msg wireMessage
	if _, err := segjson.Parse(data, &msg, segjson.DontMatchCaseInsensitiveStructFields); err != nil || msg.VersionTag != "2.0" {
		return jsonrpc.DecodeMessage(data)
	}
	id, err := jsonrpc.MakeID(msg.ID)
	if err != nil {
		return jsonrpc.DecodeMessage(data)
	}
	if len(msg.Method) > 0 {
		var method string
		if _, err := segjson.Parse(msg.Method, &method, segjson.DontMatchCaseInsensitiveStructFields); err != nil {
			return jsonrpc.DecodeMessage(data)
		}
		return &jsonrpc.Request{Method: method, ID: id, Params: msg.Params}, nil
	}
	if !id.IsValid() {
		return jsonrpc.DecodeMessage(data)
	}
	resp := &jsonrpc.Response{ID: id, Result: msg.Result}
	if msg.Error != nil { // not a typed nil in the error interface
		resp.Error = msg.Error
	}
	return resp, nil
}
