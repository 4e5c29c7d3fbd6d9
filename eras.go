package mcpadapter

// Era policy: the handshake each Mode asks for, and what differs between
// the eras on the wire once connected. The SDK negotiates the era inside
// Client.Connect; the adapter steers it with session options (ModeLegacy)
// and with the sending middleware eraPolicy (ModeModern), and sends a
// modern session's log level with each request (requestLogLevel).

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Protocol versions of the two eras.
const (
	modernVersion = "2026-07-28" // server/discover, stateless requests
	legacyVersion = "2025-11-25" // initialize handshake
)

// connectEra connects client to the server of c in the era its Mode asks for.
func (d *dialer) connectEra(ctx context.Context, c *conn, client *mcp.Client) (*mcp.ClientSession, error) {
	s := c.cfg
	var opts *mcp.ClientSessionOptions
	switch s.Mode {
	case ModeLegacy:
		opts = &mcp.ClientSessionOptions{ProtocolVersion: legacyVersion}
	case ModeModern:
		ctx = context.WithValue(ctx, modernOnlyKey{}, new(fallbackError))
		cs, err := d.connectTransport(ctx, c, client, opts)
		return cs, classifyModern(err)
	}
	return d.connectTransport(ctx, c, client, opts)
}

// Context keys read by the sending middleware, which is stateless so that
// it can serve a prebuilt client shared by several dials.
type (
	modernOnlyKey struct{}
	logLevelKey   struct{}
)

// A fallbackError is eraPolicy's refusal of the SDK's fallback to
// initialize in a ModeModern handshake. It says why server/discover failed.
// Until then it is the state of the handshake, in its context, where
// eraPolicy records that failure.
type fallbackError struct {
	discoverErr error // nil: the server offered no modern version
}

func (e *fallbackError) Error() string {
	if e.discoverErr == nil {
		return "server/discover offered no modern protocol version"
	}
	return "server/discover: " + e.discoverErr.Error()
}

func (e *fallbackError) Unwrap() error { return e.discoverErr }

// classifyModern classifies the failure err of a ModeModern handshake: when the
// SDK wanted to fall back to initialize because the server answered
// server/discover as a legacy server does (method not found, unsupported
// version, no modern version offered, or, over HTTP, 400, 404 or 405 to
// the discover POST), err also wraps ErrLegacyOnly. Any other discover
// failure (an auth failure, a server down) says nothing about eras, and
// err is left to say what it is.
func classifyModern(err error) error {
	var fe *fallbackError
	if !errors.As(err, &fe) {
		return err
	}
	var rpcErr *jsonrpc.Error
	switch code := httpStatus(err); {
	case fe.discoverErr == nil,
		errors.As(fe.discoverErr, &rpcErr) && (rpcErr.Code == jsonrpc.CodeMethodNotFound || rpcErr.Code == mcp.CodeUnsupportedProtocolVersion),
		code == http.StatusBadRequest || code == http.StatusNotFound || code == http.StatusMethodNotAllowed:
		return fmt.Errorf("%w: %w", ErrLegacyOnly, err)
	}
	return err
}

// eraPolicy is the sending middleware of the era policy. In a ModeModern
// handshake (a *fallbackError in the context) it refuses the SDK's fallback
// to initialize: the SDK falls back on any server/discover failure and has
// no modern-only option (sdkcompat.go, entry 3), so the refusal makes the
// fallback an error, which classifyModern then reads.
func eraPolicy(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		fe, ok := ctx.Value(modernOnlyKey{}).(*fallbackError)
		if !ok {
			return next(ctx, method, req)
		}
		switch method {
		case "server/discover":
			res, err := next(ctx, method, req)
			fe.discoverErr = err // the handshake is sequential
			return res, err
		case "initialize":
			return nil, fe
		}
		return next(ctx, method, req)
	}
}

// requestLogLevel is the sending middleware that gives every request (not
// notifications) of a modern session the server's log level
// (Server.LogLevel), which the modern era takes per request in _meta
// instead of by logging/setLevel. conn.callContext puts the level in the
// context of a modern session's requests.
func requestLogLevel(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		level, ok := ctx.Value(logLevelKey{}).(mcp.LoggingLevel)
		if params := req.GetParams(); ok && params != nil && !strings.HasPrefix(method, "notifications/") {
			m := params.GetMeta()
			if m == nil {
				m = map[string]any{}
			}
			m[mcp.MetaKeyLogLevel] = level
			params.SetMeta(m)
		}
		return next(ctx, method, req)
	}
}

// slogLevel maps an MCP (syslog) level to a slog level.
func slogLevel(l mcp.LoggingLevel) slog.Level {
	switch l {
	case "debug":
		return slog.LevelDebug
	case "info", "notice":
		return slog.LevelInfo
	case "warning":
		return slog.LevelWarn
	default:
		return slog.LevelError
	}
}
