package faultserver

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
)

// The state of a TaskPeer served over HTTP: its sessions and the
// questions its tasks asked and were not answered yet.
type httpState struct {
	sessions map[string]bool
	asked    map[string]*question // by the question's id, as JSON
}

// A question is one a legacy "ask" task asked on the stream of
// tasks/result.
type question struct {
	session, task string
	answered      chan struct{}   // over HTTP, closed when the answer came
	request       json.RawMessage // over a pipe, the id of the tasks/result that waits for the answer
}

// taskOf returns the task that asked q, or "" when q is nil.
func (q *question) taskOf() string {
	if q == nil {
		return ""
	}
	return q.task
}

// HTTP returns a handler that serves p over Streamable HTTP, in the legacy
// era (2025-11-25), with sessions: initialize opens one (its id in the
// Mcp-Session-Id header), a request naming an unknown one gets 404 or
// p.MissingStatus (one
// naming none is served outside any: server/discover), and a
// DELETE ends one (counted as method "DELETE"). A task belongs to the
// session that made it, unless p.Unbound. A legacy "ask" job's
// tasks/result answers on an event stream: its question (an
// elicitation/create request related to the task) and, once the client
// posted the answer (on any connection of the session, on this stream or
// after it ended), the result; a "break" job's stream ends after an event
// with an id, without an answer, and the GET that would resume it is
// refused (405).
func (p *TaskPeer) HTTP() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		session := r.Header.Get("Mcp-Session-Id")
		switch r.Method {
		case http.MethodPost:
		case http.MethodDelete:
			p.mu.Lock()
			p.count("DELETE")
			delete(p.http.sessions, session)
			p.mu.Unlock()
			return
		default:
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		var req taskRequest
		if err != nil || json.Unmarshal(body, &req) != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		if req.Method == "initialize" {
			session = p.open()
			w.Header().Set("Mcp-Session-Id", session)
		} else if session != "" && !p.knows(session) {
			w.WriteHeader(cmp.Or(p.MissingStatus, http.StatusNotFound))
			return
		}
		switch {
		case req.Method == "":
			p.answered(session, req.ID, body)
			w.WriteHeader(http.StatusAccepted)
			return
		case req.ID == nil:
			w.WriteHeader(http.StatusAccepted)
			return
		}
		req.session = session
		if req.Method == "tasks/result" && p.streams(&req) {
			p.stream(w, r, &req)
			return
		}
		res, code, msg := p.answer(&req)
		if code == unanswered {
			<-r.Context().Done()
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, envelope(req.ID, res, code, msg))
	})
}

// count counts a request of method. p.mu must be held.
func (p *TaskPeer) count(method string) {
	if p.methods == nil {
		p.methods = map[string]int{}
		p.tasks = map[string]*peerTask{}
	}
	p.methods[method]++
}

// open opens a session and returns its id.
func (p *TaskPeer) open() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.http.sessions == nil {
		p.http.sessions = map[string]bool{}
		p.http.asked = map[string]*question{}
	}
	p.seq++
	id := "session-" + strconv.Itoa(p.seq)
	p.http.sessions[id] = true
	return id
}

// knows reports whether session is open.
func (p *TaskPeer) knows(session string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.http.sessions[session]
}

// ForgetSessions ends every session, as a server restarted with a durable
// task store does: the tasks stay.
func (p *TaskPeer) ForgetSessions() {
	p.mu.Lock()
	defer p.mu.Unlock()
	clear(p.http.sessions)
}

// streams reports whether tasks/result req answers on an event stream: a
// legacy "ask" task not answered yet, or a "break" one.
func (p *TaskPeer) streams(req *taskRequest) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	t := p.tasks[req.Params.TaskID]
	return !p.Modern && t != nil && (t.session == req.session || p.Unbound) && (t.mode == "ask" && !t.answered || t.mode == "break")
}

// stream answers tasks/result req on an event stream: the task's question,
// then, once answered, the result (see HTTP).
func (p *TaskPeer) stream(w http.ResponseWriter, r *http.Request, req *taskRequest) {
	p.mu.Lock()
	p.count("tasks/result")
	t := p.tasks[req.Params.TaskID]
	p.seq++
	qid := strconv.Itoa(p.seq)
	q := &question{session: req.session, task: req.Params.TaskID, answered: make(chan struct{})}
	p.http.asked[qid] = q
	mode := t.mode
	p.mu.Unlock()

	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	send := func(data string) {
		fmt.Fprintf(w, "data: %s\n\n", data)
		w.(http.Flusher).Flush()
	}
	if mode == "break" {
		// An event with an id, then the end without an answer: the client
		// resumes the stream with a GET, which fails.
		fmt.Fprintf(w, "id: e1\ndata: %s\n\n", `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"breaking"}}`)
		return
	}
	send(`{"jsonrpc":"2.0","id":` + qid + `,"method":"elicitation/create","params":{"message":"Which one?","requestedSchema":{"type":"object","properties":{"pick":{"type":"string"}},"required":["pick"]},"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"` + q.task + `"}}}}`)
	select {
	case <-q.answered:
	case <-r.Context().Done():
		return // the question stays asked
	}
	p.mu.Lock()
	res := p.result(t)
	p.mu.Unlock()
	send(envelope(req.ID, res, 0, ""))
}

// answered takes a response the client posted on session: the answer to
// one of its tasks' questions, which completes the task. Answers records
// its result, or "error " and its error.
func (p *TaskPeer) answered(session string, id json.RawMessage, body []byte) {
	var resp struct {
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	json.Unmarshal(body, &resp)
	if resp.Error != nil {
		resp.Result = append([]byte("error "), resp.Error...)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	q := p.http.asked[string(id)]
	if q == nil || q.session != session {
		return
	}
	delete(p.http.asked, string(id))
	if t := p.tasks[q.task]; t != nil {
		t.answered, t.status = true, "completed"
	}
	p.answers = append(p.answers, string(resp.Result))
	close(q.answered)
}

// envelope returns the JSON-RPC response to id: result, or the error of
// code and msg when code is not 0.
func envelope(id json.RawMessage, result string, code int, msg string) string {
	if code != 0 {
		m, _ := json.Marshal(msg)
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%s}}`, id, code, m)
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, id, result)
}
