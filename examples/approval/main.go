// Command approval gates an agent's destructive tool calls behind human
// approval, using the tools' MCP annotations, with no API key and no
// network:
//
//	go run ./examples/approval
//
// A file server runs inside the process. Its tools declare what they do
// with MCP annotations: list_files and read_file are read-only,
// delete_file is destructive, and write_file declares nothing (by the MCP
// specification's defaults, a tool that declares nothing may be
// destructive).
//
// The adapter's Config.Approval asks
// [mcpadapter.ToolAnnotations.MayBeDestructive] of each call: a call to
// a tool that may be destructive returns an [*mcpadapter.ApprovalRequired]
// error before the server is contacted. In a native tool-calling loop (the
// model's tool calls run with [mcpadapter.Toolset.HandleToolCalls]) a held
// call pauses its batch as a [*mcpadapter.PausedCalls], which is JSON: a
// reviewer approves the call (it runs) or rejects it with a reason (nothing
// runs; the model reads the reason and tells the user), and
// [mcpadapter.Toolset.ResumeToolCalls] finishes the batch. Annotations are hints from the server: gate on them only for
// servers you trust to declare them honestly.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/mcpadaptertest"
	"github.com/tmc/langchaingo/llms"
)

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := run(ctx, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "approval:", err)
		os.Exit(1)
	}
}

// run is the whole example; it writes its story to w.
func run(ctx context.Context, w io.Writer) error {
	fmt.Fprintln(w, "mcpadapter approval: destructive tool calls wait for a human.")
	files := newFileServer(map[string]string{
		"reports/q3.pdf": "quarterly report",
		"tmp/cache.db":   "cache",
		"notes.txt":      "buy milk",
	})
	a, err := mcpadapter.New(mcpadapter.Config{
		Servers:  map[string]mcpadapter.Server{"files": mcpadapter.InMemory(files.Server)},
		Approval: func(c mcpadapter.ToolCall) bool { return c.Metadata.Annotations().MayBeDestructive() },
	})
	if err != nil {
		return err
	}
	defer a.Close()
	ts, err := a.ListTools(ctx)
	if err != nil {
		return err
	}

	fmt.Fprintln(w, "\n1. Tools, and whether their calls need approval (Config.Approval = MayBeDestructive)")
	for _, t := range ts {
		gate := "runs freely"
		if t.Metadata().Annotations().MayBeDestructive() {
			gate = "needs approval"
		}
		fmt.Fprintf(w, "   %-18s %-22s %s\n", t.Name(), describe(t), gate)
	}

	request := "Clean up: delete the temporary files and the old report, then save a note that it is done."
	fmt.Fprintf(w, "\n2. Agent loop: %q\n", request)
	model := newScriptedModel()
	history := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, request)}
	for turn := 1; ; turn++ {
		resp, err := model.GenerateContent(ctx, history, llms.WithTools(ts.LLMTools()))
		if err != nil {
			return err
		}
		choice := resp.Choices[0]
		if len(choice.ToolCalls) == 0 {
			fmt.Fprintf(w, "   turn %d: the model answers: %s\n", turn, choice.Content)
			break
		}
		for _, tc := range choice.ToolCalls {
			fmt.Fprintf(w, "   turn %d: the model calls %s %s\n", turn, tc.FunctionCall.Name, tc.FunctionCall.Arguments)
		}
		// A held call pauses the batch; each pause goes to review, and the
		// batch resumes with the decision.
		msgs, err := ts.HandleToolCalls(ctx, choice)
		var paused *mcpadapter.PausedCalls
		for errors.As(err, &paused) {
			msgs, err = decide(ctx, w, ts, paused)
		}
		if err != nil {
			return err
		}
		for _, text := range toolTexts(msgs) {
			fmt.Fprintf(w, "      result: %s\n", text)
		}
		history = append(history, msgs...)
	}

	fmt.Fprintf(w, "\n3. Files left on the server: %s\n", strings.Join(files.names(), ", "))
	fmt.Fprintf(w, "   delete_file calls the server received: %d (the rejected call never reached it)\n", files.received("delete_file"))
	return nil
}

// decide shows a held call to the reviewer and resumes the batch with the
// decision. A web service would store the pause (it is JSON) and resume it
// when the reviewer answers, on any replica.
func decide(ctx context.Context, w io.Writer, ts mcpadapter.Toolset, paused *mcpadapter.PausedCalls) ([]llms.MessageContent, error) {
	var held *mcpadapter.ApprovalRequired
	errors.As(paused, &held)
	fmt.Fprintf(w, "      held for approval: %s\n", held.Error())
	stored, err := json.Marshal(paused)
	if err != nil {
		return nil, err
	}
	var back mcpadapter.PausedCalls
	if err := json.Unmarshal(stored, &back); err != nil {
		return nil, err
	}
	decision := mcpadapter.Approved()
	if ok, reason := review(held.Call); ok {
		fmt.Fprintln(w, "      reviewer: approve")
	} else {
		fmt.Fprintf(w, "      reviewer: reject (%s)\n", reason)
		decision = mcpadapter.Rejected(reason)
	}
	return ts.ResumeToolCalls(ctx, &back, decision)
}

// review is the human reviewer: temporary files may go and notes may be
// written, anything else stays.
func review(call mcpadapter.ToolCall) (approve bool, reason string) {
	path, _ := call.Args["path"].(string)
	switch {
	case call.MCPName == "delete_file" && strings.HasPrefix(path, "tmp/"):
		return true, ""
	case call.MCPName == "write_file" && strings.HasSuffix(path, ".txt"):
		return true, ""
	}
	return false, fmt.Sprintf("%s must be kept for the auditors", path)
}

// describe renders a tool's annotations.
func describe(t *mcpadapter.Tool) string {
	ann := t.Metadata().Annotations()
	switch {
	case ann == nil:
		return "(no annotations)"
	case ann.ReadOnly():
		return "readOnlyHint"
	case ann.DestructiveHint != nil:
		return fmt.Sprintf("destructiveHint=%t", *ann.DestructiveHint)
	}
	return "(no hints)"
}

// toolTexts returns the texts of the tool messages in msgs.
func toolTexts(msgs []llms.MessageContent) []string {
	var texts []string
	for _, m := range msgs {
		for _, p := range m.Parts {
			if r, ok := p.(llms.ToolCallResponse); ok {
				texts = append(texts, r.Content)
			}
		}
	}
	return texts
}

// newScriptedModel returns a model that plays a fixed script
// (mcpadaptertest, the module's test kit): the model's side of the loop
// above. Swap in a real model (openai.New(), ...) and the loop works the
// same.
func newScriptedModel() *mcpadaptertest.Model {
	call := mcpadaptertest.ToolCall
	return mcpadaptertest.NewModel(
		mcpadaptertest.ToolCalls(call("call_1", "files__list_files", `{}`)),
		mcpadaptertest.ToolCalls(
			call("call_2", "files__delete_file", `{"path":"tmp/cache.db"}`),
			call("call_3", "files__delete_file", `{"path":"reports/q3.pdf"}`),
		),
		mcpadaptertest.ToolCalls(call("call_4", "files__write_file", `{"path":"notes.txt","text":"cleanup done"}`)),
		mcpadaptertest.FinalAnswer("I deleted tmp/cache.db and noted it in notes.txt. The reviewer kept reports/q3.pdf: it must be kept for the auditors."),
	)
}
