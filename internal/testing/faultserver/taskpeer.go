package faultserver

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TaskPeer is a hand-written MCP server with tasks, which no go-sdk server
// can have: in the legacy era (2025-11-25, params.task, tasks/result) or,
// with Modern, the modern one (2026-07-28, the io.modelcontextprotocol
// /tasks extension, tasks/update). Its tasks outlive connections: any
// connection can poll any task, as a server with a durable task store
// does. It lists two tools: "job", whose taskSupport is Support, and
// "plain", which never runs as a task. A job's "mode" argument picks its
// behaviour:
//
//	""        working for Steps polls (default 1), then completed with "done: <topic>"
//	"ask"     (modern) input_required with one form request "q" until tasks/update answers it
//	"never"   working forever
//	"unknown" status "exploding"
//	"otherid" tasks/get answers for another task
//	"huge"    completed with a text of HugeBytes bytes
//	"fail"    failed with a JSON-RPC error
//	"flood"   a new status message at every poll, with pollInterval 0
//	"break"   (legacy, HTTP) tasks/result's stream ends unanswered (taskhttp.go)
//	"hang"    working, and tasks/get is never answered
//	"result"  completed with Result, its raw JSON, as the task's result (modern)
//
// A legacy "ask" job asks its question on the stream of tasks/result: an
// elicitation/create request, over HTTP on the event stream (taskhttp.go),
// in memory and over stdio on the connection, where tasks/result is then
// answered once the client answered the question, with a result that says
// the answer: "done: <topic> (accept: <pick>)", "done: <topic> (decline)".
//
// A TaskPeer is safe for concurrent use.
type TaskPeer struct {
	Modern bool
	// NoExtension: a modern peer that does not declare the tasks
	// extension, or a legacy one task-augmented tools/call (it never makes
	// a task).
	NoExtension bool
	Support     string // the job tool's execution.taskSupport
	Steps       int
	HugeBytes   int
	Result      string // the result of a "result" job (modern)
	// IgnoreTasks: a legacy peer that answers a task-augmented call at
	// once, as a server without tasks does.
	IgnoreTasks bool
	// Unbound: over HTTP (taskhttp.go), tasks outlive the session that
	// made them, as in a durable store; by default they belong to it.
	Unbound bool
	// MissingStatus is the HTTP status of a request naming an unknown
	// session (taskhttp.go); 0 means 404 (server-everything answers 400).
	MissingStatus int
	// Progress is how many progress notifications the peer sends, in
	// memory (Transport), before each answer to tasks/get of a task whose
	// tools/call carried a progress token, and before a legacy "ask"
	// task's result: "note 1", "note 2", ... across the task's polls,
	// numbered from 1.
	Progress int

	wg sync.WaitGroup
	mu sync.Mutex
	// guarded by mu
	tasks   map[string]*peerTask
	methods map[string]int // requests by method ("tools/call+task" for task-augmented calls)
	answers []string       // the inputResponses of tasks/update, as JSON
	seq     int
	http    httpState // taskhttp.go
}

// A peerTask is one task of a TaskPeer.
type peerTask struct {
	mode, topic string
	polls       int
	status      string
	answered    bool
	session     string          // over HTTP, the session that made it
	token       json.RawMessage // the progress token of its tools/call, or nil
	notes       int             // the progress notifications sent (Progress)
	reply       string          // the answer to its question, over a pipe
}

// Methods reports how many requests of method the peer received;
// "declared <method>" counts those that declared the modern tasks
// extension, "tagged <method>" those whose _meta has a "x-test/tag",
// "tools/call+task" the task-augmented tools/call requests.
func (p *TaskPeer) Methods(method string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.methods[method]
}

// Answers returns the inputResponses tasks/update delivered, and the
// answers to legacy questions, as JSON (an error answer over HTTP as
// "error " and its JSON).
func (p *TaskPeer) Answers() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.answers...)
}

// Wait waits for the connections being served to end.
func (p *TaskPeer) Wait() { p.wg.Wait() }

// Transport returns a factory for in-memory connections to p, as
// [Peer.Transport] does.
func (p *TaskPeer) Transport() func(ctx context.Context) (mcp.Transport, error) {
	return pipeTransport(&p.wg, func(server net.Conn) { p.serve(server, server) })
}

// taskRequest is a request a TaskPeer reads.
type taskRequest struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name      string `json:"name"`
		Arguments struct {
			Mode  string `json:"mode"`
			Topic string `json:"topic"`
		} `json:"arguments"`
		Task           json.RawMessage `json:"task"`
		TaskID         string          `json:"taskId"`
		InputResponses json.RawMessage `json:"inputResponses"`
		Meta           struct {
			Token json.RawMessage `json:"progressToken"`
			Tag   string          `json:"x-test/tag"`
			Caps  struct {
				Extensions map[string]any `json:"extensions"`
			} `json:"io.modelcontextprotocol/clientCapabilities"`
		} `json:"_meta"`
	} `json:"params"`

	session string // over HTTP, the request's session
}

// serve answers the requests read from r on w, a line each.
func (p *TaskPeer) serve(r io.Reader, w io.Writer) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		var req taskRequest
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil || req.ID == nil {
			continue
		}
		if out := p.piped(&req, sc.Bytes()); out != "" {
			if _, err := io.WriteString(w, out+"\n"); err != nil {
				return
			}
			continue
		}
		if req.Method == "" {
			continue // an answer to no question
		}
		if notes := p.notes(&req); notes != "" {
			if _, err := io.WriteString(w, notes); err != nil {
				return
			}
		}
		res, code, msg := p.answer(&req)
		if code == unanswered {
			continue
		}
		if _, err := io.WriteString(w, envelope(req.ID, res, code, msg)+"\n"); err != nil {
			return
		}
	}
}

// piped returns what a legacy "ask" task writes over a pipe for req, line:
// for its tasks/result, its question (answered later); for the client's
// answer to it, the result of the tasks/result, after the task's progress
// notifications (Progress); "" for other messages.
func (p *TaskPeer) piped(req *taskRequest, line []byte) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if req.Method == "" { // a response
		var resp struct {
			Result struct {
				Action  string `json:"action"`
				Content struct {
					Pick string `json:"pick"`
				} `json:"content"`
			} `json:"result"`
		}
		q := p.http.asked[string(req.ID)]
		t := p.tasks[q.taskOf()]
		if t == nil || q.request == nil || json.Unmarshal(line, &resp) != nil {
			return ""
		}
		delete(p.http.asked, string(req.ID))
		t.answered, t.status = true, "completed"
		t.reply = resp.Result.Action
		if resp.Result.Content.Pick != "" {
			t.reply += ": " + resp.Result.Content.Pick
		}
		p.answers = append(p.answers, string(line))
		return p.notesOf(t) + envelope(q.request, p.result(t), 0, "")
	}
	t := p.tasks[req.Params.TaskID]
	if p.Modern || req.Method != "tasks/result" || t == nil || t.mode != "ask" || t.answered {
		return ""
	}
	p.count("tasks/result")
	if p.http.asked == nil {
		p.http.asked = map[string]*question{}
	}
	p.seq++
	qid := strconv.Itoa(p.seq)
	p.http.asked[qid] = &question{task: req.Params.TaskID, request: req.ID}
	return `{"jsonrpc":"2.0","id":` + qid + `,"method":"elicitation/create","params":{"message":"Which one?","requestedSchema":{"type":"object","properties":{"pick":{"type":"string"}},"required":["pick"]}}}`
}

// notes returns the progress notifications to send before the answer to
// req, a line each (Progress).
func (p *TaskPeer) notes(req *taskRequest) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if req.Method != "tasks/get" {
		return ""
	}
	return p.notesOf(p.tasks[req.Params.TaskID])
}

// notesOf returns the progress notifications of t to send now (Progress),
// a line each. p.mu must be held.
func (p *TaskPeer) notesOf(t *peerTask) string {
	if p.Progress == 0 || t == nil || t.token == nil {
		return ""
	}
	var b strings.Builder
	for range p.Progress {
		t.notes++
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%s,"progress":%d,"message":"note %d"}}`+"\n", t.token, t.notes, t.notes)
	}
	return b.String()
}

// answer returns the result of req, or its error code and message.
func (p *TaskPeer) answer(req *taskRequest) (string, int, string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	method := req.Method
	if method == "tools/call" && p.taskAsked(req) {
		method += "+task"
	}
	p.count(method)
	if _, ok := req.Params.Meta.Caps.Extensions["io.modelcontextprotocol/tasks"]; ok {
		p.methods["declared "+req.Method]++
	}
	if req.Params.Meta.Tag != "" {
		p.methods["tagged "+method]++
	}
	switch req.Method {
	case "server/discover":
		if !p.Modern {
			return "", -32601, "Method not found"
		}
		ext := `,"extensions":{"io.modelcontextprotocol/tasks":{}}`
		if p.NoExtension {
			ext = ""
		}
		return `{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}` + ext + `},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"taskpeer","version":"1"}}}`, 0, ""
	case "initialize":
		tasks := `,"tasks":{"cancel":{},"requests":{"tools":{"call":{}}}}`
		if p.NoExtension {
			tasks = `,"tasks":{"cancel":{}}`
		}
		return `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}` + tasks + `},"serverInfo":{"name":"taskpeer","version":"1"}}`, 0, ""
	case "tools/list":
		support := ""
		if p.Support != "" {
			support = `,"execution":{"taskSupport":"` + p.Support + `"}`
		}
		return `{"tools":[{"name":"job","inputSchema":{"type":"object"}` + support + `},{"name":"plain","inputSchema":{"type":"object"}}]}`, 0, ""
	case "tools/call":
		if !p.taskAsked(req) {
			return `{"content":[{"type":"text","text":"sync: ` + req.Params.Name + `"}]}`, 0, ""
		}
		p.seq++
		id := "task-" + strconv.Itoa(p.seq)
		t := &peerTask{mode: req.Params.Arguments.Mode, topic: req.Params.Arguments.Topic, status: "working", session: req.session, token: req.Params.Meta.Token}
		p.tasks[id] = t
		if p.Modern {
			return `{"resultType":"task",` + p.taskFields(id, t)[1:], 0, ""
		}
		return `{"task":` + p.taskFields(id, t) + `}`, 0, ""
	case "tasks/get", "tasks/result", "tasks/update", "tasks/cancel":
		t := p.tasks[req.Params.TaskID]
		if t == nil || t.session != req.session && !p.Unbound {
			return "", -32602, "Failed to retrieve task: Task not found"
		}
		if t.mode == "hang" && req.Method == "tasks/get" {
			return "", unanswered, ""
		}
		return p.taskMethod(req, t)
	}
	return "", -32601, "Method not found"
}

// unanswered is the code answer gives a request that gets no answer.
const unanswered = -1

// taskAsked reports whether a tools/call asks for a task.
func (p *TaskPeer) taskAsked(req *taskRequest) bool {
	if req.Params.Name != "job" {
		return false
	}
	if p.Modern {
		_, ok := req.Params.Meta.Caps.Extensions["io.modelcontextprotocol/tasks"]
		return ok
	}
	return len(req.Params.Task) > 0 && !p.IgnoreTasks && !p.NoExtension
}

// taskMethod answers a tasks request for t.
func (p *TaskPeer) taskMethod(req *taskRequest, t *peerTask) (string, int, string) {
	id := req.Params.TaskID
	switch req.Method {
	case "tasks/cancel":
		t.status = "cancelled"
		if p.Modern {
			return `{}`, 0, ""
		}
		return p.taskFields(id, t), 0, ""
	case "tasks/update":
		p.answers = append(p.answers, string(req.Params.InputResponses))
		t.answered = true
		t.status = "working"
		return `{"resultType":"complete"}`, 0, ""
	case "tasks/result":
		if t.status != "completed" {
			return "", -32602, "task not completed"
		}
		return p.result(t), 0, ""
	}
	t.polls++
	p.advance(t)
	if t.mode == "otherid" {
		id = "task-other"
	}
	return p.taskFields(id, t), 0, ""
}

// advance moves t on at a poll.
func (p *TaskPeer) advance(t *peerTask) {
	if t.status != "working" && t.status != "input_required" {
		return
	}
	switch t.mode {
	case "never", "flood", "otherid":
	case "unknown":
		t.status = "exploding"
	case "fail":
		t.status = "failed"
	case "ask":
		if !t.answered {
			t.status = "input_required"
			return
		}
		t.status = "completed"
	default:
		if t.polls >= max(p.Steps, 1) {
			t.status = "completed"
		}
	}
}

// taskFields returns the task t as JSON, with what its status carries in
// the modern era (the result, the error, the input requests).
func (p *TaskPeer) taskFields(id string, t *peerTask) string {
	poll := `"pollInterval":100`
	if p.Modern {
		poll = `"pollIntervalMs":100`
	}
	msg := "step " + strconv.Itoa(t.polls)
	if t.mode == "flood" {
		poll = strings.Replace(poll, "100", "0", 1)
		msg = "flood " + strconv.Itoa(t.polls)
	}
	s := fmt.Sprintf(`{"taskId":%q,"status":%q,"statusMessage":%q,"createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z","ttl":60000,%s`, id, t.status, msg, poll)
	if p.Modern {
		switch t.status {
		case "completed":
			s += `,"result":` + p.result(t)
		case "failed":
			s += `,"error":{"code":-32603,"message":"backend exploded"}`
		case "input_required":
			s += `,"inputRequests":{"q":{"method":"elicitation/create","params":{"mode":"form","message":"Which one?","requestedSchema":{"type":"object","properties":{"pick":{"type":"string"}},"required":["pick"]}}}}`
		}
	}
	return s + "}"
}

// result is the tool result of completed t.
func (p *TaskPeer) result(t *peerTask) string {
	text := "done: " + t.topic
	if t.reply != "" {
		text += " (" + t.reply + ")"
	}
	switch t.mode {
	case "huge":
		text = strings.Repeat("x", p.HugeBytes)
	case "result":
		return p.Result
	}
	b, _ := json.Marshal(text)
	return `{"content":[{"type":"text","text":` + string(b) + `}]}`
}
