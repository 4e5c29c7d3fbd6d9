package testserver

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// handler is the shape of every tool handler here: args are the decoded
// arguments (nil when none were sent).
type handler func(ctx context.Context, req *mcp.CallToolRequest, args map[string]any) (*mcp.CallToolResult, error)

// addTool registers t with a handler that records the run (see Runs,
// LastArgs) and decodes the arguments.
func (s *Server) addTool(t *mcp.Tool, h handler) {
	name := t.Name
	s.Server.AddTool(t, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		s.recordRun(name, req)
		var args map[string]any
		if len(req.Params.Arguments) > 0 {
			if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
				return toolError(fmt.Sprintf("arguments must be a JSON object: %v", err)), nil
			}
		}
		return h(ctx, req, args)
	})
}

// text returns a result holding one text block.
func text(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
}

// toolError returns an isError result holding msg.
func toolError(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: msg}}, IsError: true}
}

// echoTool is the descriptor of the "echo" tool: {text string (required)}.
func echoTool() *mcp.Tool {
	return &mcp.Tool{
		Name:        "echo",
		Description: "Echo the text back.",
		InputSchema: map[string]any{
			"type":       "object",
			"properties": map[string]any{"text": map[string]any{"type": "string"}},
			"required":   []any{"text"},
		},
	}
}

// emptyObject is the input schema of tools without parameters.
func emptyObject() map[string]any {
	return map[string]any{"type": "object", "properties": map[string]any{}}
}

func boolPtr(b bool) *bool { return &b }

// Weather fixtures, as returned by "get_weather".
const (
	WeatherTempC = 21
	WeatherSky   = "sunny"
)

// AddWeather adds the tool "get_weather" and returns s.
//
// Input: {"city": string (required), "unit": "c" or "f" (optional)}; the
// schema sets additionalProperties false. The result is the text
// "Sunny, 21°C in <city>" ("Sunny, 69°F in <city>" for unit "f") and the
// structured content {"city": <city>, "tempC": 21, "sky": "sunny"}, which
// matches the declared output schema. A missing city or a bad unit is an
// isError result. The descriptor has annotations readOnlyHint true,
// destructiveHint false, title "Weather", and _meta
// {"acme/owner": "team-weather"}.
func (s *Server) AddWeather() *Server {
	s.addTool(&mcp.Tool{
		Name:        "get_weather",
		Description: "Get the current weather for a city.",
		InputSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"city": map[string]any{"type": "string", "description": "City name"},
				"unit": map[string]any{"type": "string", "enum": []any{"c", "f"}, "description": "Temperature unit"},
			},
			"required":             []any{"city"},
			"additionalProperties": false,
		},
		OutputSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"city":  map[string]any{"type": "string"},
				"tempC": map[string]any{"type": "number"},
				"sky":   map[string]any{"type": "string"},
			},
			"required": []any{"city", "tempC", "sky"},
		},
		Annotations: &mcp.ToolAnnotations{
			ReadOnlyHint:    true,
			DestructiveHint: boolPtr(false),
			Title:           "Weather",
		},
		Meta: mcp.Meta{"acme/owner": "team-weather"},
	}, func(_ context.Context, _ *mcp.CallToolRequest, args map[string]any) (*mcp.CallToolResult, error) {
		city, _ := args["city"].(string)
		if city == "" {
			return toolError(`validating "arguments": missing required property "city"`), nil
		}
		var msg string
		switch unit := args["unit"]; unit {
		case nil, "c":
			msg = fmt.Sprintf("Sunny, %d°C in %s", WeatherTempC, city)
		case "f":
			msg = fmt.Sprintf("Sunny, %d°F in %s", WeatherTempC*9/5+32, city)
		default:
			return toolError(fmt.Sprintf(`validating "arguments": unit must be "c" or "f", got %v`, unit)), nil
		}
		res := text(msg)
		res.StructuredContent = map[string]any{"city": city, "tempC": WeatherTempC, "sky": WeatherSky}
		return res, nil
	})
	return s
}

// AddFeatures adds tools covering every kind of result and returns s:
//
//   - "echo" {text string}: the text.
//   - "add" {a, b number}: the sum as text, and structured {"sum": a+b}.
//   - "fail": an isError result with the message "it failed".
//   - "rpc_error": the JSON-RPC error -32001 "backend unavailable" (data {"retry":true}).
//   - "image": one image block holding [PNG].
//   - "media": text, image ([PNG]), audio ([WAV]), a resource link, an
//     embedded text resource and an embedded blob, in that order (see
//     [MediaContent]).
//   - "media_images": a resource link with an image MIME type and an
//     embedded blob with an image MIME type.
//   - "structured_only": no content blocks, structured {"answer": 42}.
//   - "destroy" {target string}: annotated destructiveHint true.
//   - "pid": the server process id as text.
//   - "era": the protocol version of the request as text.
//   - "exit": exits the process with status 3 at once, when the server runs
//     as a stdio process under [Main]; elsewhere it is an isError result
//     (it would kill the test binary).
//   - "slow": signals [Server.SlowStarted], then blocks until its context is
//     done (and signals [Server.Cancelled]) or [Server.Release] is called.
//   - "progress": sends two progress notifications (1/2 and 2/2, message
//     "working"; Options.ProgressSteps of them when set) when the request
//     has a progress token, then returns "done" at once.
//   - "log" {message string, level string}: sends a log message (logger
//     "testserver", data message, level default "info") and returns "logged".
//     The SDK drops it unless the client asked for that level: with
//     logging/setLevel on legacy sessions, with the request's
//     io.modelcontextprotocol/logLevel _meta on modern ones.
//   - "big" {size integer}: a text block of size bytes ("xxx…"), at most
//     [MaxBig], for message size limits.
func (s *Server) AddFeatures() *Server {
	s.addTool(echoTool(), func(_ context.Context, _ *mcp.CallToolRequest, args map[string]any) (*mcp.CallToolResult, error) {
		t, ok := args["text"].(string)
		if !ok {
			return toolError(`validating "arguments": "text" must be a string`), nil
		}
		return text(t), nil
	})

	s.addTool(&mcp.Tool{
		Name:        "add",
		Description: "Add two numbers.",
		InputSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"a": map[string]any{"type": "number"},
				"b": map[string]any{"type": "number"},
			},
			"required": []any{"a", "b"},
		},
		OutputSchema: map[string]any{
			"type":       "object",
			"properties": map[string]any{"sum": map[string]any{"type": "number"}},
			"required":   []any{"sum"},
		},
	}, func(_ context.Context, _ *mcp.CallToolRequest, args map[string]any) (*mcp.CallToolResult, error) {
		a, okA := args["a"].(float64)
		b, okB := args["b"].(float64)
		if !okA || !okB {
			return toolError(`validating "arguments": "a" and "b" must be numbers`), nil
		}
		res := text(strconv.FormatFloat(a+b, 'g', -1, 64))
		res.StructuredContent = map[string]any{"sum": a + b}
		return res, nil
	})

	s.addTool(&mcp.Tool{Name: "fail", Description: "Always fails.", InputSchema: emptyObject()},
		func(context.Context, *mcp.CallToolRequest, map[string]any) (*mcp.CallToolResult, error) {
			return toolError("it failed"), nil
		})

	s.addTool(&mcp.Tool{Name: "rpc_error", Description: "Always answers with a JSON-RPC error.", InputSchema: emptyObject()},
		func(context.Context, *mcp.CallToolRequest, map[string]any) (*mcp.CallToolResult, error) {
			return nil, &jsonrpc.Error{Code: -32001, Message: "backend unavailable", Data: json.RawMessage(`{"retry":true}`)}
		})

	s.addTool(&mcp.Tool{Name: "image", Description: "Returns a tiny PNG.", InputSchema: emptyObject()},
		func(context.Context, *mcp.CallToolRequest, map[string]any) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{Data: PNG(), MIMEType: "image/png"}}}, nil
		})

	s.addTool(&mcp.Tool{Name: "media", Description: "Returns one block of every content type.", InputSchema: emptyObject()},
		func(context.Context, *mcp.CallToolRequest, map[string]any) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: MediaContent()}, nil
		})

	s.addTool(&mcp.Tool{Name: "media_images", Description: "Returns images by link and by embedded blob.", InputSchema: emptyObject()},
		func(context.Context, *mcp.CallToolRequest, map[string]any) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.ResourceLink{URI: "https://example.com/cat.png", Name: "cat.png", MIMEType: "image/png"},
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "mem://dog.png", MIMEType: "image/png", Blob: PNG()}},
			}}, nil
		})

	s.addTool(&mcp.Tool{Name: "structured_only", Description: "Returns only structured content.", InputSchema: emptyObject()},
		func(context.Context, *mcp.CallToolRequest, map[string]any) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{}, StructuredContent: map[string]any{"answer": 42}}, nil
		})

	s.addTool(&mcp.Tool{
		Name:        "destroy",
		Description: "Destroys the target.",
		InputSchema: map[string]any{
			"type":       "object",
			"properties": map[string]any{"target": map[string]any{"type": "string"}},
		},
		Annotations: &mcp.ToolAnnotations{DestructiveHint: boolPtr(true), Title: "Destroy"},
	}, func(_ context.Context, _ *mcp.CallToolRequest, args map[string]any) (*mcp.CallToolResult, error) {
		target, _ := args["target"].(string)
		return text("destroyed " + target), nil
	})

	s.addTool(&mcp.Tool{Name: "pid", Description: "Returns the server's process id.", InputSchema: emptyObject()},
		func(context.Context, *mcp.CallToolRequest, map[string]any) (*mcp.CallToolResult, error) {
			return text(strconv.Itoa(os.Getpid())), nil
		})

	s.addTool(&mcp.Tool{Name: "era", Description: "Returns the protocol version of the request.", InputSchema: emptyObject()},
		func(_ context.Context, req *mcp.CallToolRequest, _ map[string]any) (*mcp.CallToolResult, error) {
			return text(req.ProtocolVersion()), nil
		})

	s.addTool(&mcp.Tool{Name: "exit", Description: "Exits the server process.", InputSchema: emptyObject()},
		func(context.Context, *mcp.CallToolRequest, map[string]any) (*mcp.CallToolResult, error) {
			if !s.stdio {
				return toolError("exit only works in a stdio server process (testserver.Main)"), nil
			}
			os.Exit(3)
			return nil, nil
		})

	s.addTool(&mcp.Tool{Name: "slow", Description: "Blocks until cancelled or released.", InputSchema: emptyObject()},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ map[string]any) (*mcp.CallToolResult, error) {
			signal(s.slowStarted)
			select {
			case <-ctx.Done():
				signal(s.cancelled)
				return nil, ctx.Err()
			case <-s.release:
				return text("released"), nil
			}
		})

	s.addTool(&mcp.Tool{Name: "progress", Description: "Reports progress twice.", InputSchema: emptyObject()},
		func(ctx context.Context, req *mcp.CallToolRequest, _ map[string]any) (*mcp.CallToolResult, error) {
			if token := req.Params.GetProgressToken(); token != nil {
				n := cmp.Or(s.opts.ProgressSteps, 2)
				for i := 1; i <= n; i++ {
					err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
						ProgressToken: token, Progress: float64(i), Total: float64(n), Message: "working",
					})
					if err != nil {
						return nil, err
					}
				}
			}
			return text("done"), nil
		})
	s.addTool(&mcp.Tool{
		Name:        "log",
		Description: "Sends a log message.",
		InputSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"message": map[string]any{"type": "string"},
				"level":   map[string]any{"type": "string"},
			},
			"required": []any{"message"},
		},
	}, func(ctx context.Context, req *mcp.CallToolRequest, args map[string]any) (*mcp.CallToolResult, error) {
		msg, _ := args["message"].(string)
		level, _ := args["level"].(string)
		if level == "" {
			level = "info"
		}
		err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: mcp.LoggingLevel(level), Logger: "testserver", Data: msg})
		if err != nil {
			return nil, err
		}
		return text("logged"), nil
	})

	s.addTool(&mcp.Tool{
		Name:        "big",
		Description: "Returns a large text block.",
		InputSchema: map[string]any{
			"type":       "object",
			"properties": map[string]any{"size": map[string]any{"type": "integer", "minimum": 0}},
			"required":   []any{"size"},
		},
	}, func(_ context.Context, _ *mcp.CallToolRequest, args map[string]any) (*mcp.CallToolResult, error) {
		size, ok := args["size"].(float64)
		if !ok || size < 0 || size > MaxBig {
			return toolError(fmt.Sprintf(`validating "arguments": "size" must be an integer in [0, %d]`, MaxBig)), nil
		}
		return text(strings.Repeat("x", int(size))), nil
	})
	return s
}

// MaxBig is the largest size the "big" tool accepts (64 MiB).
const MaxBig = 64 << 20

// AddTool adds a trivial tool named name that answers "<name> ok". On a live
// server this notifies clients with notifications/tools/list_changed.
func (s *Server) AddTool(name string) {
	s.addTool(&mcp.Tool{Name: name, Description: "A tool added at run time.", InputSchema: emptyObject()},
		func(context.Context, *mcp.CallToolRequest, map[string]any) (*mcp.CallToolResult, error) {
			return text(name + " ok"), nil
		})
}

// RemoveTool removes the tool named name, notifying clients with
// notifications/tools/list_changed.
func (s *Server) RemoveTool(name string) { s.Server.RemoveTools(name) }

// pngBase64 is a real 1x1 PNG.
const pngBase64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="

// PNG returns a tiny real PNG image (1x1 pixel). The caller owns the slice.
func PNG() []byte {
	b, err := base64.StdEncoding.DecodeString(pngBase64)
	if err != nil {
		panic("testserver: internal error: bad PNG fixture")
	}
	return b
}

// WAV returns a tiny WAV header (no samples). The caller owns the slice.
func WAV() []byte {
	return []byte("RIFF\x24\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00\x40\x1f\x00\x00\x80\x3e\x00\x00\x02\x00\x10\x00data\x00\x00\x00\x00")
}

// blob is the data of the embedded blob returned by "media".
var blob = []byte{0, 1, 2, 3}

// MediaContent returns the content of the "media" tool's result, freshly
// built: text "here is some media"; image/png [PNG]; audio/wav [WAV]; a
// resource link to file:///report.pdf (name "report.pdf", application/pdf);
// an embedded text resource mem://notes.txt (text/plain, "embedded notes");
// an embedded blob mem://data.bin (application/octet-stream, bytes 0 1 2 3).
func MediaContent() []mcp.Content {
	return []mcp.Content{
		&mcp.TextContent{Text: "here is some media"},
		&mcp.ImageContent{Data: PNG(), MIMEType: "image/png"},
		&mcp.AudioContent{Data: WAV(), MIMEType: "audio/wav"},
		&mcp.ResourceLink{URI: "file:///report.pdf", Name: "report.pdf", MIMEType: "application/pdf"},
		&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "mem://notes.txt", MIMEType: "text/plain", Text: "embedded notes"}},
		&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "mem://data.bin", MIMEType: "application/octet-stream", Blob: append([]byte(nil), blob...)}},
	}
}
