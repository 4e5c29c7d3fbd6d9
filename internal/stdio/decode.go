package stdio

import (
	"bytes"
	"context"
	"fmt"
	"io"

	segjson "github.com/segmentio/encoding/json"

	"github.com/mcpadapter/mcpadapter/internal/wire"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// decodeMessage decodes data, one JSON-RPC message, as
// jsonrpc.DecodeMessage does, from env, what the screen learned of its
// members when it knows it (known): each member it keeps is decoded alone,
// with the SDK's decoder and flags, without parsing data again nor
// allocating the 32 KiB read buffer the SDK's decoder takes for every
// message (it decodes through a json.Decoder over a bytes.Reader). What it
// keeps is copied: data may be reused. Anything out of the ordinary (a
// version other than "2.0" as is, an id or method that does not decode)
// goes to jsonrpc.DecodeMessage, for the SDK's own error.
func decodeMessage(data []byte, env wire.Envelope, known bool) (jsonrpc.Message, error) {
	if !known || string(env.Version) != `"2.0"` {
		return jsonrpc.DecodeMessage(data)
	}
	var rawID any
	if env.ID != nil {
		if _, err := segjson.Parse(env.ID, &rawID, segjson.DontMatchCaseInsensitiveStructFields); err != nil {
			return jsonrpc.DecodeMessage(data)
		}
	}
	id, err := jsonrpc.MakeID(rawID)
	if err != nil {
		return jsonrpc.DecodeMessage(data)
	}
	if env.Method != nil {
		var method string
		if _, err := segjson.Parse(env.Method, &method, segjson.DontMatchCaseInsensitiveStructFields); err != nil {
			return jsonrpc.DecodeMessage(data)
		}
		return &jsonrpc.Request{Method: method, ID: id, Params: bytes.Clone(env.Params)}, nil
	}
	if !id.IsValid() {
		return jsonrpc.DecodeMessage(data)
	}
	resp := &jsonrpc.Response{ID: id, Result: bytes.Clone(env.Result)}
	if env.Error != nil {
		var e *jsonrpc.Error
		if _, err := segjson.Parse(env.Error, &e, segjson.DontMatchCaseInsensitiveStructFields); err != nil {
			return jsonrpc.DecodeMessage(data)
		}
		if e != nil { // not a typed nil in the error interface
			resp.Error = e
		}
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
	env, known := lines.Envelope()
	return decodeMessage(line, env, known)
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
