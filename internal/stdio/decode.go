package stdio

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"

	segjson "github.com/segmentio/encoding/json"

	"github.com/mcpadapter/mcpadapter/internal/wire"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// decodeMessage decodes data, one JSON-RPC message, as
// jsonrpc.DecodeMessage does, from env, what the screen learned of its
// members when it knows it (known), without parsing data again nor
// allocating the 32 KiB read buffer the SDK's decoder takes for every
// message (it decodes through a json.Decoder over a bytes.Reader). What it
// keeps is copied: data may be reused. Anything out of the ordinary (a
// version, id or method that is not plain, an error object that does not
// decode) goes to jsonrpc.DecodeMessage, for the SDK's own error.
func decodeMessage(data []byte, env wire.Envelope, known bool) (jsonrpc.Message, error) {
	if !known || string(env.Version) != `"2.0"` {
		return jsonrpc.DecodeMessage(data)
	}
	id, ok := decodeID(env.ID)
	if !ok {
		return jsonrpc.DecodeMessage(data)
	}
	if env.Method != nil {
		method, ok := plainString(env.Method)
		if !ok {
			return jsonrpc.DecodeMessage(data)
		}
		return &jsonrpc.Request{Method: method, ID: id, Params: bytes.Clone(env.Params)}, nil
	}
	if !id.IsValid() {
		return jsonrpc.DecodeMessage(data)
	}
	resp := &jsonrpc.Response{ID: id, Result: bytes.Clone(env.Result)}
	if env.Error != nil && string(env.Error) != "null" {
		e := new(jsonrpc.Error)
		if _, err := segjson.Parse(env.Error, e, segjson.DontMatchCaseInsensitiveStructFields); err != nil {
			return jsonrpc.DecodeMessage(data)
		}
		resp.Error = e
	}
	return resp, nil
}

// decodeID returns the id of raw, a JSON scalar or nil (none), as the SDK
// decodes it: false when it is not a plain string or a number.
func decodeID(raw []byte) (jsonrpc.ID, bool) {
	var v any // none, or null
	switch {
	case raw == nil || string(raw) == "null":
	case raw[0] == '"':
		s, ok := plainString(raw)
		if !ok {
			return jsonrpc.ID{}, false
		}
		v = s
	case raw[0] == '-' || '0' <= raw[0] && raw[0] <= '9':
		f, err := strconv.ParseFloat(string(raw), 64)
		if err != nil {
			return jsonrpc.ID{}, false
		}
		v = f
	default:
		return jsonrpc.ID{}, false
	}
	id, err := jsonrpc.MakeID(v)
	return id, err == nil
}

// plainString returns the value of raw, a JSON string, when it has no
// escape and is valid UTF-8 (what the SDK's decoder takes as it is).
func plainString(raw []byte) (string, bool) {
	v := raw[1 : len(raw)-1]
	if bytes.IndexByte(v, '\\') >= 0 || !utf8.Valid(v) {
		return "", false
	}
	return string(v), true
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
