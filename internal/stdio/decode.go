package stdio

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	segjson "github.com/segmentio/encoding/json"

	"github.com/mcpadapter/mcpadapter/internal/wire"
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

// ReadLine reads and decodes the next message of a line connection (a
// stdio server's, the root package's in-memory one) for its Read within
// ctx. Once closed is closed a failed read is the connection's own close,
// io.EOF; before, it is fail(err) (err itself when fail is nil).
func ReadLine(ctx context.Context, lines *wire.LineReader, closed <-chan struct{}, fail func(error) error) (jsonrpc.Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	line, err := lines.Next()
	if err != nil {
		select {
		case <-closed:
			return nil, io.EOF
		default:
		}
		if fail != nil {
			err = fail(err)
		}
		return nil, err
	}
	// decodeMessage copies what it keeps: line may be reused.
	return decodeMessage(line)
}

// EncodeLine encodes msg as one line, newline included, for the Write of a
// line connection within ctx.
func EncodeLine(ctx context.Context, msg jsonrpc.Message) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return nil, fmt.Errorf("marshaling message: %w", err)
	}
	return append(data, '\n'), nil
}
