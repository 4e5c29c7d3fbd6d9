// Command nativeloop drives MCP tools with native tool calling, without an
// agent:
//
//	go run ./examples/nativeloop
//
// The model gets the tools' real JSON schemas (Toolset.LLMTools with
// llms.WithTools) instead of the single-string "__arg1" schema that
// langchaingo's OpenAIFunctionsAgent advertises, and Toolset.HandleToolCalls
// runs each tool call and returns the messages to append to the history: an
// AI message with the call and its tool message, for each call (a layout
// OpenAI and Anthropic both accept), then one human message with the media
// the tools returned. Unknown tools, bad arguments and isError results
// become tool messages the model can act on, so the loop goes on.
//
// The model here is scripted (no key, no network). With a real one, replace
// newScriptedModel() by any llms.Model that supports tools, e.g. openai.New(),
// and pass mcpadapter.ImagesAsDataURL() to HandleToolCalls for OpenAI.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/mcpadaptertest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tmc/langchaingo/llms"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := run(ctx, os.Stdout, newScriptedModel()); err != nil {
		fmt.Fprintln(os.Stderr, "nativeloop:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, w io.Writer, model llms.Model) error {
	a, err := mcpadapter.New(mcpadapter.Config{Servers: map[string]mcpadapter.Server{
		"math": mcpadapter.InMemory(newMathServer()),
	}})
	if err != nil {
		return err
	}
	defer a.Close()
	ts, err := a.ListTools(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "Tools offered to the model (llms.WithTools), with their real schemas:")
	for _, t := range ts.LLMTools() {
		params, _ := json.Marshal(t.Function.Parameters)
		fmt.Fprintf(w, "  %s %s\n", t.Function.Name, params)
	}

	history := []llms.MessageContent{
		llms.TextParts(llms.ChatMessageTypeHuman, "What is 19.5 + 22.5? Chart it, please."),
	}
	for turn := 1; turn <= 5; turn++ {
		resp, err := model.GenerateContent(ctx, history, llms.WithTools(ts.LLMTools()))
		if err != nil {
			return err
		}
		choice := resp.Choices[0]
		if len(choice.ToolCalls) == 0 {
			fmt.Fprintf(w, "\nturn %d: the model answers: %s\n", turn, choice.Content)
			return nil
		}
		fmt.Fprintf(w, "\nturn %d: the model asks for %d tool calls; appended to the history:\n", turn, len(choice.ToolCalls))
		// An *Interrupt, an *ApprovalRequired or a lost connection stops
		// the loop with an error; everything else is a message.
		msgs, err := ts.HandleToolCalls(ctx, choice)
		if err != nil {
			return err
		}
		for _, m := range msgs {
			fmt.Fprintf(w, "  %s\n", describeMessage(m))
		}
		history = append(history, msgs...)
	}
	return errors.New("the model did not answer in 5 turns")
}

// describeMessage renders a message on one line: its role and its parts.
func describeMessage(m llms.MessageContent) string {
	parts := make([]string, 0, len(m.Parts))
	for _, p := range m.Parts {
		switch p := p.(type) {
		case llms.TextContent:
			parts = append(parts, fmt.Sprintf("text %q", p.Text))
		case llms.ToolCall:
			parts = append(parts, fmt.Sprintf("call %s %s(%s)", p.ID, p.FunctionCall.Name, p.FunctionCall.Arguments))
		case llms.ToolCallResponse:
			parts = append(parts, fmt.Sprintf("response to %s from %s: %q", p.ToolCallID, p.Name, p.Content))
		case llms.BinaryContent:
			parts = append(parts, fmt.Sprintf("binary %s, %d bytes", p.MIMEType, len(p.Data)))
		case llms.ImageURLContent:
			parts = append(parts, fmt.Sprintf("image URL, %d characters", len(p.URL)))
		default:
			parts = append(parts, fmt.Sprintf("%T", p))
		}
	}
	return fmt.Sprintf("%-5s %s", m.Role, strings.Join(parts, "; "))
}

type sumIn struct {
	A float64 `json:"a"`
	B float64 `json:"b"`
}

// newMathServer returns a server with a tool that adds and one that draws a
// (very small) bar chart as a PNG image.
func newMathServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "math-server", Version: "1.0.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "add", Description: "Add two numbers."},
		func(_ context.Context, _ *mcp.CallToolRequest, in sumIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprint(in.A + in.B)}}}, nil, nil
		})
	type chartIn struct {
		Values []float64 `json:"values" jsonschema:"the bar heights"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "bar_chart", Description: "Draw a bar chart as a PNG image."},
		func(_ context.Context, _ *mcp.CallToolRequest, in chartIn) (*mcp.CallToolResult, any, error) {
			if len(in.Values) == 0 {
				return nil, nil, errors.New("values must not be empty") // an isError result
			}
			img, err := barChart(in.Values)
			if err != nil {
				return nil, nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.TextContent{Text: fmt.Sprintf("a chart of %d bars", len(in.Values))},
				&mcp.ImageContent{MIMEType: "image/png", Data: img},
			}}, nil, nil
		})
	return s
}

// barChart draws values as 4-pixel bars, 32 pixels high at most.
func barChart(values []float64) ([]byte, error) {
	top := slices.Max(values)
	img := image.NewGray(image.Rect(0, 0, 4*len(values), 32))
	for i, v := range values {
		h := 0
		if top > 0 {
			h = int(32 * v / top)
		}
		for x := 4 * i; x < 4*i+3; x++ {
			for y := 32 - h; y < 32; y++ {
				img.SetGray(x, y, color.Gray{Y: 255})
			}
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// newScriptedModel returns a model that plays a fixed script
// (mcpadaptertest, the module's test kit): two parallel tool calls, a
// mistaken call it then sees fail, and an answer.
func newScriptedModel() *mcpadaptertest.Model {
	call := mcpadaptertest.ToolCall
	return mcpadaptertest.NewModel(
		mcpadaptertest.ToolCalls(
			call("call_1", "math__add", `{"a":19.5,"b":22.5}`),
			call("call_2", "math__bar_chart", `{"values":[19.5,22.5,42]}`),
		),
		mcpadaptertest.ToolCalls(
			call("call_3", "math__bar_chart", `{"values":[]}`),
			call("call_4", "math__plot", `{}`),
		),
		mcpadaptertest.FinalAnswer("19.5 + 22.5 = 42. The chart shows the two numbers and their sum."),
	)
}
