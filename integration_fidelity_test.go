package mcpadapter_test

// Fidelity against real npm servers (see fidelity_test.go for the go-sdk
// and raw-peer cases): no base64 in what server-filesystem's media reach
// the model as text, and MCP Apps tools for the app alone stay out of what
// the model is offered.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testing/extserver"
	"github.com/mcpadapter/mcpadapter/mcpadaptertest"
	"github.com/tmc/langchaingo/llms"
)

// noisyPNG encodes a small image whose pixels do not compress away.
func noisyPNG(t *testing.T) []byte {
	img := image.NewNRGBA(image.Rect(0, 0, 48, 48))
	for i := range img.Pix {
		img.Pix[i] = uint8(i*7919 + i/3)
	}
	img.Set(0, 0, color.White)
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestIntegrationFilesystemMediaNPM: server-filesystem's read_media_file
// answers an image block and mirrors it, base64, into its structured
// content. The model gets the image once, as media, and a placeholder as
// text; the app keeps the structured content, which matches the tool's
// outputSchema.
func TestIntegrationFilesystemMediaNPM(t *testing.T) {
	node, script := extserver.NPM(t, extserver.ServerFilesystem)
	dir := t.TempDir()
	pic := noisyPNG(t)
	file := filepath.Join(dir, "pixel.png")
	if err := os.WriteFile(file, pic, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), integrationTimeout)
	defer cancel()
	a := integAdapter(t, mcpadapter.Server{Command: node, Args: []string{script, dir}}, nil)
	ts := integTools(t, ctx, a)
	tool := integTool(t, ts, "everything__read_media_file")
	encoded := base64.StdEncoding.EncodeToString(pic)
	argsJSON, _ := json.Marshal(map[string]any{"path": file})

	res := integInvoke(t, ctx, tool, map[string]any{"path": file})
	if len(res.Content) != 1 || res.Content[0].Type != mcpadapter.BlockImage || !bytes.Equal(res.Content[0].Data, pic) {
		t.Fatalf("content = %v, want the image", blockTypes(res))
	}
	if res.Artifact == nil {
		t.Fatal("no structured content: the server no longer mirrors its media")
	}
	want := "[image image/png " // then its size
	if text := res.Text(); !strings.HasPrefix(text, want) || strings.Contains(text, encoded[:64]) || len(text) > 64 {
		t.Errorf("Text() = %.200q, want only the placeholder", text)
	}
	text, err := tool.Call(ctx, string(argsJSON))
	if err != nil || strings.Contains(text, encoded[:64]) || !strings.HasPrefix(text, want) {
		t.Errorf("Call() = %.200q, %v; want only the placeholder", text, err)
	}
	msgs, err := ts.HandleToolCalls(ctx, &llms.ContentChoice{ToolCalls: []llms.ToolCall{
		mcpadaptertest.ToolCall("c1", tool.Name(), string(argsJSON)),
	}})
	if err != nil || len(msgs) != 3 {
		t.Fatalf("HandleToolCalls() = %d messages, %v; want AI, tool, media", len(msgs), err)
	}
	if resp := msgs[1].Parts[0].(llms.ToolCallResponse); strings.Contains(resp.Content, encoded[:64]) {
		t.Errorf("tool message carries base64: %.200q", resp.Content)
	}
	if bin, ok := msgs[2].Parts[1].(llms.BinaryContent); !ok || !bytes.Equal(bin.Data, pic) {
		t.Errorf("media message = %+v, want the image once, as a binary part", msgs[2].Parts)
	}
}

// TestIntegrationSystemMonitorNPM: the MCP Apps server-system-monitor lists
// poll-system-stats for its view alone (_meta.ui.visibility ["app"]): the
// model is not offered it, the app reaches it with IncludeAppOnly, and the
// structured results of both tools match their outputSchemas.
func TestIntegrationSystemMonitorNPM(t *testing.T) {
	node, script := extserver.NPM(t, extserver.ServerSystemMonitor)
	ctx, cancel := context.WithTimeout(context.Background(), integrationTimeout)
	defer cancel()
	a := integAdapter(t, mcpadapter.Server{Command: node, Args: []string{script, "--stdio"}}, nil)
	ts := integTools(t, ctx, a)
	info := integTool(t, ts, "everything__get-system-info")
	if ts.Lookup("everything__poll-system-stats") != nil {
		t.Errorf("ListTools() offers the app-only poll-system-stats: %v", integNames(ts))
	}
	for _, lt := range ts.LLMTools() {
		if strings.Contains(lt.Function.Name, "poll") {
			t.Errorf("LLMTools() offers %s", lt.Function.Name)
		}
	}
	if res := integInvoke(t, ctx, info, nil); res.Artifact == nil || res.IsError {
		t.Errorf("get-system-info = %q, want structured content", res.Text())
	}

	all, err := a.ListTools(ctx, mcpadapter.IncludeAppOnly())
	if err != nil {
		t.Fatal(err)
	}
	poll := integTool(t, all, "everything__poll-system-stats")
	if !poll.AppOnly() || info.AppOnly() {
		t.Errorf("AppOnly() = %t, %t; want poll-system-stats only", poll.AppOnly(), info.AppOnly())
	}
	if n := len(all.Tools()); n != len(ts) {
		t.Errorf("Tools() of the full set has %d tools, want the %d the model may see", n, len(ts))
	}
	if res := integInvoke(t, ctx, poll, nil); res.Artifact == nil || res.IsError {
		t.Errorf("poll-system-stats = %q, want structured content", res.Text())
	}
	msgs, err := all.HandleToolCalls(ctx, &llms.ContentChoice{ToolCalls: []llms.ToolCall{mcpadaptertest.ToolCall("c1", poll.Name(), `{}`)}})
	if err != nil || len(msgs) != 2 || !strings.Contains(msgs[1].Parts[0].(llms.ToolCallResponse).Content, "not a valid tool") {
		t.Errorf("HandleToolCalls(poll-system-stats) = %v, %v; want an unknown-tool message", msgs, err)
	}
}

// TestIntegrationDescriptorNPM: Descriptor() of every server-filesystem
// tool marshals to the JSON the server sent in tools/list (read here by a
// raw JSON-RPC exchange with another process of the server): execution
// (taskSupport, which go-sdk's mcp.Tool lacks) is kept, and the hints the
// server left out stay out of the descriptor and of Metadata, not false.
func TestIntegrationDescriptorNPM(t *testing.T) {
	node, script := extserver.NPM(t, extserver.ServerFilesystem)
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), integrationTimeout)
	defer cancel()
	sent := rawList(t, ctx, "tools", node, script, dir)
	a := integAdapter(t, mcpadapter.Server{Command: node, Args: []string{script, dir}}, nil)
	ts := integTools(t, ctx, a)
	if len(ts) != len(sent) {
		t.Fatalf("ListTools() = %d tools, the server sent %d", len(ts), len(sent))
	}
	var executions, absentHints int
	for name, raw := range sent {
		tool := integTool(t, ts, "everything__"+name)
		got, err := json.Marshal(tool.Descriptor())
		if err != nil {
			t.Fatal(err)
		}
		var want, have map[string]any
		if json.Unmarshal(raw, &want) != nil || json.Unmarshal(got, &have) != nil || !reflect.DeepEqual(want, have) {
			t.Errorf("%s: Descriptor() = %s\nthe server sent %s", name, got, raw)
		}
		d := tool.Descriptor()
		if ex, _ := want["execution"].(map[string]any); ex != nil {
			executions++
			if d.Execution == nil || d.Execution.TaskSupport != ex["taskSupport"] {
				t.Errorf("%s: Execution = %+v, the server sent %v", name, d.Execution, ex)
			}
		}
		ann, _ := want["annotations"].(map[string]any)
		if _, ok := ann["idempotentHint"]; ann != nil && !ok {
			absentHints++
			if h := tool.Metadata().Annotations().IdempotentHint; h != nil {
				t.Errorf("%s: Metadata().Annotations().IdempotentHint = %t, the server sent none", name, *h)
			}
		}
	}
	// What makes this test worth running: the server sends both.
	if executions == 0 || absentHints == 0 {
		t.Errorf("the server sent execution on %d tools and left idempotentHint out on %d; want some of each", executions, absentHints)
	}
}

// rawList starts the stdio server command args..., lists its list
// ("tools", "prompts") with plain JSON-RPC lines (legacy handshake) and
// returns each item's JSON by name.
func rawList(t *testing.T, ctx context.Context, list, command string, args ...string) map[string]json.RawMessage {
	t.Helper()
	cmd := exec.CommandContext(ctx, command, args...)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		in.Close()
		cmd.Wait()
	}()
	lines := bufio.NewScanner(out)
	lines.Buffer(nil, 16<<20)
	send := func(msg string) {
		if _, err := io.WriteString(in, msg+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	answer := func(id int) json.RawMessage {
		for lines.Scan() {
			var m struct {
				ID     *int            `json:"id"`
				Result json.RawMessage `json:"result"`
			}
			if json.Unmarshal(lines.Bytes(), &m) == nil && m.ID != nil && *m.ID == id {
				return m.Result
			}
		}
		t.Fatalf("no answer to request %d: %v", id, lines.Err())
		return nil
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	answer(1)
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"` + list + `/list"}`)
	var res map[string][]json.RawMessage
	if err := json.Unmarshal(answer(2), &res); err != nil {
		t.Fatal(err)
	}
	items := map[string]json.RawMessage{}
	for _, raw := range res[list] {
		var d struct{ Name string }
		json.Unmarshal(raw, &d)
		items[d.Name] = raw
	}
	return items
}

// sameJSON reports whether a and b are the same JSON value.
func sameJSON(a, b []byte) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

// TestIntegrationPromptArgumentsNPM: ListPrompts of server-everything
// gives each prompt as the server sent it (compared with a raw
// prompts/list): an argument's "required" is kept, false included, and
// absent stays nil.
func TestIntegrationPromptArgumentsNPM(t *testing.T) {
	srv := npmEverything(t, "stdio")
	ctx, cancel := context.WithTimeout(context.Background(), integrationTimeout)
	defer cancel()
	sent := rawList(t, ctx, "prompts", srv.Command, srv.Args...)
	a := integAdapter(t, srv, nil)
	ps, err := a.ListPrompts(ctx, "everything")
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != len(sent) {
		t.Fatalf("ListPrompts() = %d prompts, the server sent %d", len(ps), len(sent))
	}
	var required, notRequired int
	for _, p := range ps {
		got, err := json.Marshal(p)
		if err != nil || !sameJSON(got, sent[p.Name]) {
			t.Errorf("%s: ListPrompts() gives %s, %v\nthe server sent %s", p.Name, got, err, sent[p.Name])
		}
		var want struct{ Arguments []map[string]any }
		json.Unmarshal(sent[p.Name], &want)
		for i, arg := range want.Arguments {
			r, ok := arg["required"].(bool)
			switch got := p.Arguments[i].Required; {
			case !ok && got != nil, ok && (got == nil || *got != r):
				t.Errorf("%s: argument %v: Required = %v, the server sent %v", p.Name, arg["name"], got, arg["required"])
			case ok && r:
				required++
			case ok:
				notRequired++
			}
		}
	}
	if required == 0 || notRequired == 0 {
		t.Errorf("the server sent %d required and %d not required arguments; want some of each", required, notRequired)
	}
}
