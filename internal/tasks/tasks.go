// Package tasks is the client side of MCP tasks (long-running tools),
// without the adapter: the wire forms of tasks/*, the poll policy and the
// bounds against hostile servers ([Call]), the requests of the adapter's
// own that carry them ([Calls]), and a pending task's stored form
// ([Stored]). The root package's tasks.go keeps the exported names and
// is the [Host] of every Call.
//
// A server may run a tool call in the background: the client calls it
// task-augmented, the server answers at once with a task (its id, status
// and a poll interval), and the client polls tasks/get until the task
// ends, then collects the outcome. Notes on the design:
//
//   - Two eras. In the legacy era (2025-11-25, SEP-1686) a tool's
//     descriptor says execution.taskSupport ("required", "optional",
//     "forbidden"; absent is forbidden); the client asks for a task with
//     params.task, polls tasks/get, fetches the result with tasks/result
//     (which also carries the server's questions, as live elicitation
//     requests, while the task is input_required) and may tasks/cancel it.
//     In the modern era (2026-07-28) tasks are the io.modelcontextprotocol
//     /tasks extension (SEP-2663): the client declares the extension in a
//     request's own capabilities and the server decides; tasks/get carries
//     the result, the error or the questions (inputRequests), which
//     tasks/update answers.
//   - go-sdk v1.8.0 has no tasks API. Every tasks request, the
//     task-augmented tools/call included, is a request of the adapter's
//     own on the session's connection (Calls; the root's sdkcompat.go,
//     entry 8). The extension is declared only on those requests (Meta):
//     go-sdk's own requests never say the client takes a task, so no
//     server may answer them with one.
//   - A call waits for its task within its context and a wait of its own
//     (the root's Config.TaskWait). When either deadline passes (or at
//     once, under the root's WithPendingTask) it returns a pending task:
//     stored state like an interrupt, sealed and bound to the call's
//     principal, that any adapter collects or cancels later. Cancelling
//     the context sends tasks/cancel.
//   - Modern questions become an interrupt that resumes through
//     tasks/update, in any process. Legacy questions arrive as live
//     requests on the tasks/result stream. Over Streamable HTTP the
//     adapter reads that stream itself, on a task line joined to the
//     task's session (Line): a question is answered inline or becomes an
//     interrupt keyed by its request id, answered later by id on the same
//     session, from any process; a pending task stores its session too
//     (sealed only: without a key the root stores no session id), and
//     the connection that handed it out does not end the session (Route;
//     the root records the sessions kept, and ends them: Kept). A session
//     the server refuses as unknown is tried once on the adapter's own
//     session, where a durable store may still
//     have the task.
//     Over other transports go-sdk reads the stream: the adapter's
//     elicitation handler answers the question; without one, the call
//     waiting for the task takes it as a live interrupt (the root's
//     live.go), whose resume answers it and waits for the same
//     tasks/result (Call.Collect); or it is declined. The task lives as
//     long as the server's process or connection does.
//   - A hostile server cannot make a call poll faster than MinPollInterval,
//     hold it past its deadlines, or grow its memory: statuses are read
//     one poll at a time, status messages are cut to maxStatusMessage,
//     results are bounded by the connection's message bound like any
//     message, and an unknown status, a task id that is not the one asked
//     for, or a task without an id fails the call with ErrBad.
package tasks

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The values of execution.taskSupport a client acts on ("forbidden", or
// none, is never task-augmented).
const (
	Required = "required"
	Optional = "optional"
)

// The statuses of a task.
const (
	statusWorking       = "working"
	statusInputRequired = "input_required"
	statusCompleted     = "completed"
	statusFailed        = "failed"
	statusCancelled     = "cancelled"
)

// Extension is the modern era's name of the tasks extension.
const Extension = "io.modelcontextprotocol/tasks"

// MethodResult is the method that collects a legacy task's outcome. It
// waits for the task to end, and carries the server's questions
// meanwhile: see [Host].Request.
const MethodResult = "tasks/result"

// Bounds of the polling of a task and of what a server tells of it.
const (
	// MinPollInterval is the shortest wait between two polls, whatever a
	// server asks.
	MinPollInterval = 100 * time.Millisecond
	// DefaultWait is the wait of [Call.Follow] given none (the root's
	// Config.TaskWait of 0).
	DefaultWait = 10 * time.Minute

	maxPollInterval     = 30 * time.Second
	defaultPollInterval = time.Second
	taskTTL             = time.Hour // asked of legacy servers
	maxStatusMessage    = 1 << 10
	cancelTimeout       = 5 * time.Second
)

var (
	// ErrFailed is the failure of a task that ended failed or cancelled on
	// the server's side (the root's ErrTaskFailed).
	ErrFailed = errors.New("mcpadapter: task failed")

	// ErrBad is a server's breach of the tasks protocol: a task without an
	// id, an unknown status, a task id other than the one asked for, an
	// answer that cannot be decoded (the root's errBadTask).
	ErrBad = errors.New("mcpadapter: invalid task answer from server")

	// ErrRequestTimeout is the cause ([context.Cause]) of the context of
	// a request that ran past its own bound ([Session].Timeout), as the
	// host sees it in [Host].Request: the host can tell that bound from
	// the caller's deadline, and name it.
	ErrRequestTimeout = errors.New("mcpadapter: task request timed out")

	// ErrPending is returned by [Call.Follow] when a deadline passed before
	// the task ended: the caller's, or the follow's wait. The task goes on.
	ErrPending = errors.New("mcpadapter: task still pending")
)

// Augmented reports whether a call of a tool whose execution.taskSupport
// is support runs as a task, on a server that runs tasks: "required"
// does; "optional" when the call opted in (optIn); "forbidden", none or
// an unknown value never does.
func Augmented(support string, optIn bool) bool {
	return support == Required || support == Optional && optIn
}

// A Capability is whether a legacy server's initialize result declares
// task-augmented tools/call, which go-sdk v1.8.0 does not decode: Saw
// takes the results a connection's screen passes during the dial
// (internal/wire, Options.Handshake). The zero value declares nothing.
type Capability struct{ declared atomic.Bool }

// Saw notes what result, the result of a response, declares when it is
// an initialize result (it names a protocolVersion), and reports whether
// it was one. It declares task-augmented tools/call with
// capabilities.tasks.requests.tools.call, without which a legacy client
// must not ask for a task, whatever a tool's taskSupport says. go-sdk
// v1.8.0 decodes no tasks capability.
func (c *Capability) Saw(result []byte) bool {
	var r struct {
		ProtocolVersion string          `json:"protocolVersion"`
		Capabilities    json.RawMessage `json:"capabilities"`
	}
	if json.Unmarshal(result, &r) != nil || r.ProtocolVersion == "" {
		return false
	}
	var caps struct {
		Tasks struct {
			Requests struct {
				Tools struct {
					Call json.RawMessage `json:"call"`
				} `json:"tools"`
			} `json:"requests"`
		} `json:"tasks"`
	}
	if json.Unmarshal(r.Capabilities, &caps) != nil {
		c.declared.Store(false) // a malformed capability declares nothing
		return true
	}
	call := caps.Tasks.Requests.Tools.Call
	c.declared.Store(len(call) > 0 && call[0] == '{')
	return true
}

// Declared reports whether the initialize result seen declared
// task-augmented tools/call.
func (c *Capability) Declared() bool { return c.declared.Load() }

// Declared reports whether a modern server's capabilities declare the
// tasks extension.
func Declared(caps *mcp.ServerCapabilities) bool {
	if caps == nil {
		return false
	}
	_, ok := caps.Extensions[Extension]
	return ok
}

// Meta returns the _meta of a request of the adapter's own on a session:
// on a modern one, the per-request protocol version, client and
// capabilities, with the tasks extension declared; on a legacy one, none.
func Meta(s Session) map[string]any {
	meta := map[string]any{}
	if s.Modern {
		meta[mcp.MetaKeyProtocolVersion] = s.Version
		meta[mcp.MetaKeyClientInfo] = map[string]any{"name": s.Client, "version": "1"}
		meta[mcp.MetaKeyClientCapabilities] = map[string]any{
			"elicitation": map[string]any{"form": map[string]any{}, "url": map[string]any{}},
			"extensions":  map[string]any{Extension: map[string]any{}},
		}
	}
	return meta
}

// taskWire is a task as both eras send it (tasks/get, tasks/cancel, the
// modern CreateTaskResult; the legacy one nests it under "task").
type taskWire struct {
	ResultType     string          `json:"resultType,omitempty"`
	Task           *taskWire       `json:"task,omitempty"` // legacy CreateTaskResult
	TaskID         string          `json:"taskId"`
	Status         string          `json:"status"`
	StatusMessage  string          `json:"statusMessage,omitempty"`
	PollInterval   *float64        `json:"pollInterval,omitempty"`   // legacy, ms
	PollIntervalMs *float64        `json:"pollIntervalMs,omitempty"` // modern
	InputRequests  json.RawMessage `json:"inputRequests,omitempty"`  // modern, input_required
	Result         json.RawMessage `json:"result,omitempty"`         // modern, completed
	Error          *jsonrpc.Error  `json:"error,omitempty"`          // modern, failed
}

// interval returns the poll interval the server asks for, bounded.
func (w *taskWire) interval() time.Duration {
	ms := w.PollIntervalMs
	if ms == nil {
		ms = w.PollInterval
	}
	if ms == nil {
		return defaultPollInterval
	}
	d := time.Duration(*ms * float64(time.Millisecond))
	return min(max(d, MinPollInterval), maxPollInterval)
}

// seen returns w's status and message as a client keeps them: cut to
// maxStatusMessage.
func (w *taskWire) seen() (status, message string) {
	return Truncate(w.Status), Truncate(w.StatusMessage)
}

// failure is the error of a task that ended failed or cancelled.
func (w *taskWire) failure() error {
	msg := Truncate(w.StatusMessage)
	if w.Error != nil {
		msg = Truncate(w.Error.Message)
	}
	if msg == "" {
		return fmt.Errorf("%w: %s", ErrFailed, w.Status)
	}
	return fmt.Errorf("%w: %s: %s", ErrFailed, w.Status, msg)
}

// toolResult decodes a tool's result from raw.
func toolResult(raw json.RawMessage) (*mcp.CallToolResult, error) {
	var res mcp.CallToolResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fail(fmt.Errorf("%w: result: %w", ErrBad, err))
	}
	return &res, nil
}

// Truncate cuts a server's text about a task to maxStatusMessage bytes,
// as a client keeps it: live, or stored with a pending task.
func Truncate(s string) string {
	if len(s) <= maxStatusMessage {
		return s
	}
	s = s[:maxStatusMessage]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + "…"
}
