package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A fileServer is an in-memory file store served over MCP.
type fileServer struct {
	*mcp.Server

	mu    sync.Mutex
	files map[string]string // path -> content
	calls map[string]int    // tool name -> calls received
}

type pathIn struct {
	Path string `json:"path" jsonschema:"the file's path"`
}

type writeIn struct {
	Path string `json:"path" jsonschema:"the file's path"`
	Text string `json:"text" jsonschema:"the text to append"`
}

func newFileServer(files map[string]string) *fileServer {
	f := &fileServer{files: maps.Clone(files), calls: map[string]int{}}
	f.Server = mcp.NewServer(&mcp.Implementation{Name: "file-service", Version: "1.0.0"}, nil)
	f.Server.AddReceivingMiddleware(f.count)
	no := false
	yes := true

	mcp.AddTool(f.Server, &mcp.Tool{
		Name:        "list_files",
		Description: "List the files.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return text(strings.Join(f.names(), ", ")), nil, nil
	})

	mcp.AddTool(f.Server, &mcp.Tool{
		Name:        "read_file",
		Description: "Read a file.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, DestructiveHint: &no},
	}, func(_ context.Context, _ *mcp.CallToolRequest, in pathIn) (*mcp.CallToolResult, any, error) {
		f.mu.Lock()
		defer f.mu.Unlock()
		content, ok := f.files[in.Path]
		if !ok {
			return toolError("no such file: " + in.Path), nil, nil
		}
		return text(content), nil, nil
	})

	mcp.AddTool(f.Server, &mcp.Tool{
		Name:        "delete_file",
		Description: "Delete a file.",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: &yes},
	}, func(_ context.Context, _ *mcp.CallToolRequest, in pathIn) (*mcp.CallToolResult, any, error) {
		f.mu.Lock()
		defer f.mu.Unlock()
		if _, ok := f.files[in.Path]; !ok {
			return toolError("no such file: " + in.Path), nil, nil
		}
		delete(f.files, in.Path)
		return text("deleted " + in.Path), nil, nil
	})

	// No annotations: by the specification's defaults it may be destructive.
	mcp.AddTool(f.Server, &mcp.Tool{
		Name:        "write_file",
		Description: "Append text to a file, creating it if needed.",
	}, func(_ context.Context, _ *mcp.CallToolRequest, in writeIn) (*mcp.CallToolResult, any, error) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.files[in.Path] += "\n" + in.Text
		return text(fmt.Sprintf("wrote %d bytes to %s", len(in.Text), in.Path)), nil, nil
	})
	return f
}

// count counts the tool calls the server receives.
func (f *fileServer) count(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok {
			f.mu.Lock()
			f.calls[p.Name]++
			f.mu.Unlock()
		}
		return next(ctx, method, req)
	}
}

// received reports how many calls of tool the server received.
func (f *fileServer) received(tool string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[tool]
}

// names returns the paths of the files, sorted.
func (f *fileServer) names() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Sorted(maps.Keys(f.files))
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

func toolError(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}
