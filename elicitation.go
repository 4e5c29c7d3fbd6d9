package mcpadapter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	// maxRounds caps the input rounds of one call (LangChain JS's cap).
	maxRounds = 32
	// emptyRoundDelay is the first wait before retrying a round in which the
	// server asked for nothing (load shedding); it doubles each time.
	emptyRoundDelay    = 100 * time.Millisecond
	maxEmptyRoundDelay = 5 * time.Second
)

// An Interrupt is returned (as an error) by a tool call when the server
// needs input from the user: it lists the server's requests by their keys.
// Answer them with [Interrupt.Resume], or store the Interrupt with
// json.Marshal and resume it later with [Adapter.Resume], in any process
// whose Adapter has a server of the same name. Find it with [errors.As].
//
// The call's arguments and the server's opaque request state travel in the
// JSON but never appear in Requests or in Error.
type Interrupt struct {
	Server   string // the server's name
	Tool     string // the adapter's tool name ([Tool.Name])
	Requests []ElicitationRequest

	a        *Adapter // the adapter that made it; nil after JSON decoding
	mcpName  string
	args     map[string]any
	state    string
	round    int
	requests mcp.InputRequestMap
}

// ElicitationRequest is one request for user input. Form requests (Mode
// "form") carry a Message and the RequestedSchema the answer's content must
// match; URL requests (Mode "url") ask the user to visit URL (the adapter
// never opens it) and carry an ElicitationID.
type ElicitationRequest struct {
	Key                string // the server's key for this request; empty for live (legacy) requests
	Mode               string // "form" or "url"
	Message            string
	RequestedSchema    map[string]any
	URL, ElicitationID string
}

// Action is the user's response to an [ElicitationRequest].
type Action string

// The three actions of an [Answer].
const (
	Accept  Action = "accept"  // the user answered; Content holds the answer (form mode)
	Decline Action = "decline" // the user said no
	Cancel  Action = "cancel"  // the user dismissed the request
)

// Answer is the user's answer to one [ElicitationRequest]. Content is the
// form's content for Accept in form mode, and must be empty otherwise.
type Answer struct {
	Action  Action
	Content map[string]any
}

// Error implements error. It names the server and the tool and summarizes
// the requests.
func (i *Interrupt) Error() string {
	msgs := make([]string, 0, len(i.Requests))
	for _, r := range i.Requests {
		if r.Mode == "url" {
			msgs = append(msgs, fmt.Sprintf("%s: visit %s", r.Key, r.URL))
		} else {
			msgs = append(msgs, fmt.Sprintf("%s: %s", r.Key, r.Message))
		}
	}
	return fmt.Sprintf("mcpadapter: server %q: tool %q needs user input (%s)", i.Server, i.Tool, strings.Join(msgs, "; "))
}

// Resume answers the interrupt's requests, one answer per request key, and
// calls the tool again. The answers are validated before anything is sent.
// Another round of questions returns another *Interrupt. An Interrupt that
// came from JSON has no adapter: use [Adapter.Resume].
func (i *Interrupt) Resume(ctx context.Context, answers map[string]Answer) (*Result, error) {
	if i.a == nil {
		return nil, errors.New("mcpadapter: interrupt decoded from JSON: resume it with Adapter.Resume")
	}
	return i.a.Resume(ctx, i, answers)
}

// Resume answers an interrupt's requests and calls the tool again on the
// named server's current connection, from the beginning, with the answers
// and the server's request state. It validates the answers first: every
// request answered, no extra keys, a known action, form content that
// matches the requested schema (defaults applied), no content for URL
// requests. Nothing is sent when they are invalid.
func (a *Adapter) Resume(ctx context.Context, in *Interrupt, answers map[string]Answer) (*Result, error) {
	if in == nil {
		return nil, errors.New("mcpadapter: nil interrupt")
	}
	responses, err := validateAnswers(in.Requests, answers)
	if err != nil {
		return nil, fmt.Errorf("mcpadapter: server %q: tool %q: %w", in.Server, in.Tool, err)
	}
	c, err := a.connect(ctx, in.Server)
	if err != nil {
		return nil, err
	}
	return a.callRounds(ctx, c, in.Tool, in.mcpName, in.args, responses, in.state, in.round)
}

// callRounds calls a tool and drives its input rounds: answered inline by
// [Config.ElicitationHandler], or returned as an *Interrupt.
func (a *Adapter) callRounds(ctx context.Context, c *conn, tool, mcpName string, args map[string]any, responses mcp.InputResponseMap, state string, round int) (*Result, error) {
	ctx, done := c.callContext(ctx, a.timeout(c))
	defer done()
	op := fmt.Sprintf("call tool %q", mcpName)
	delay := emptyRoundDelay
	for {
		raw, res, err := c.callOnce(ctx, op, mcpName, args, responses, state)
		if err != nil {
			return nil, err
		}
		if res != nil {
			return res, nil
		}
		// The legacy server shim leaks a second round with NeedsInput false.
		if !raw.NeedsInput() && len(raw.InputRequests) == 0 {
			return newResult(raw), nil
		}
		if round++; round > maxRounds {
			return nil, serverError(c.server, op, fmt.Errorf("more than %d input rounds", maxRounds))
		}
		responses, state = nil, raw.RequestState
		if len(raw.InputRequests) == 0 {
			// Load shedding: the server asks for nothing; retry later.
			if err := sleep(ctx, delay); err != nil {
				return nil, serverError(c.server, op, err)
			}
			delay = min(2*delay, maxEmptyRoundDelay)
			continue
		}
		reqs, err := elicitationRequests(raw.InputRequests)
		if err != nil {
			return nil, serverError(c.server, op, err)
		}
		if a.cfg.ElicitationHandler == nil {
			return nil, &Interrupt{Server: c.server, Tool: tool, Requests: reqs, a: a,
				mcpName: mcpName, args: args, state: raw.RequestState, round: round, requests: raw.InputRequests}
		}
		answers := make(map[string]Answer, len(reqs))
		for _, r := range reqs {
			ans, err := a.cfg.ElicitationHandler(ctx, r)
			if err != nil {
				return nil, fmt.Errorf("mcpadapter: server %q: tool %q: elicitation handler: %w", c.server, tool, err)
			}
			answers[r.Key] = ans
		}
		if responses, err = validateAnswers(reqs, answers); err != nil {
			return nil, fmt.Errorf("mcpadapter: server %q: tool %q: elicitation handler: %w", c.server, tool, err)
		}
	}
}

// elicitationRequests converts a server's input requests, sorted by key.
// Sampling and roots requests are refused.
func elicitationRequests(m mcp.InputRequestMap) ([]ElicitationRequest, error) {
	reqs := make([]ElicitationRequest, 0, len(m))
	for _, key := range slices.Sorted(maps.Keys(m)) {
		switch p := m[key].(type) {
		case *mcp.ElicitParams:
			reqs = append(reqs, elicitationRequest(key, p))
		case *mcp.CreateMessageParams, *mcp.CreateMessageWithToolsParams:
			return nil, fmt.Errorf("%w: %q asks for sampling/createMessage", ErrUnsupportedInputRequest, key)
		case *mcp.ListRootsParams:
			return nil, fmt.Errorf("%w: %q asks for roots/list", ErrUnsupportedInputRequest, key)
		default:
			return nil, fmt.Errorf("%w: %q asks for %T", ErrUnsupportedInputRequest, key, p)
		}
	}
	return reqs, nil
}

func elicitationRequest(key string, p *mcp.ElicitParams) ElicitationRequest {
	r := ElicitationRequest{Key: key, Mode: p.Mode, Message: p.Message, URL: p.URL, ElicitationID: p.ElicitationID}
	if r.Mode == "" {
		r.Mode = "form"
	}
	if p.RequestedSchema != nil {
		r.RequestedSchema = schemaMap(p.RequestedSchema)
	}
	return r
}

// validateAnswers checks answers against the requests and returns them as
// the server's input responses.
func validateAnswers(reqs []ElicitationRequest, answers map[string]Answer) (mcp.InputResponseMap, error) {
	responses := make(mcp.InputResponseMap, len(reqs))
	for _, r := range reqs {
		ans, ok := answers[r.Key]
		if !ok {
			return nil, fmt.Errorf("no answer for request %q", r.Key)
		}
		res, err := validateAnswer(r, ans)
		if err != nil {
			return nil, fmt.Errorf("answer %q: %w", r.Key, err)
		}
		responses[r.Key] = res
	}
	for key := range answers {
		if !slices.ContainsFunc(reqs, func(r ElicitationRequest) bool { return r.Key == key }) {
			return nil, fmt.Errorf("answer %q matches no request", key)
		}
	}
	return responses, nil
}

// validateAnswer checks one answer: a known action; for URL requests no
// content; for accepted forms content valid against the requested schema,
// with its defaults applied.
func validateAnswer(r ElicitationRequest, ans Answer) (*mcp.ElicitResult, error) {
	switch ans.Action {
	case Accept, Decline, Cancel:
	default:
		return nil, fmt.Errorf("unknown action %q (want accept, decline or cancel)", ans.Action)
	}
	if ans.Action != Accept || r.Mode == "url" {
		if len(ans.Content) > 0 {
			return nil, fmt.Errorf("content is only allowed when accepting a form request (action %q, mode %q)", ans.Action, r.Mode)
		}
		return &mcp.ElicitResult{Action: string(ans.Action)}, nil
	}
	content, err := checkContent(r.RequestedSchema, ans.Content)
	if err != nil {
		return nil, err
	}
	return &mcp.ElicitResult{Action: string(Accept), Content: content}, nil
}

// checkContent validates content against schema after a JSON round trip
// (so that Go ints compare as JSON numbers) and applies its defaults.
func checkContent(schema map[string]any, content map[string]any) (map[string]any, error) {
	b, err := json.Marshal(content)
	if err != nil {
		return nil, fmt.Errorf("content: %w", err)
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, fmt.Errorf("content: %w", err)
	}
	if v == nil {
		v = map[string]any{}
	}
	if schema == nil {
		return v, nil
	}
	sb, err := json.Marshal(schema)
	if err != nil {
		return nil, fmt.Errorf("requested schema: %w", err)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(sb, &s); err != nil {
		return nil, fmt.Errorf("requested schema: %w", err)
	}
	resolved, err := s.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("requested schema: %w", err)
	}
	if err := resolved.ApplyDefaults(&v); err != nil {
		return nil, fmt.Errorf("applying defaults: %w", err)
	}
	if err := resolved.Validate(v); err != nil {
		return nil, fmt.Errorf("content does not match the requested schema: %w", err)
	}
	return v, nil
}

// answerLive answers a legacy server's live elicitation/create request with
// [Config.ElicitationHandler], or declines it when there is none.
func (a *Adapter) answerLive(ctx context.Context, server string, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	if a.cfg.ElicitationHandler == nil {
		a.logger.Info("mcpadapter: declined live elicitation (no ElicitationHandler)", "server", server)
		return &mcp.ElicitResult{Action: string(Decline)}, nil
	}
	r := elicitationRequest("", req.Params)
	ans, err := a.cfg.ElicitationHandler(ctx, r)
	if err != nil {
		return nil, err
	}
	return validateAnswer(r, ans)
}

// interruptJSON is the wire form of an Interrupt. Version 1.
type interruptJSON struct {
	Version  int                 `json:"version"`
	Server   string              `json:"server"`
	Tool     string              `json:"tool"`
	MCPName  string              `json:"mcpName"`
	Args     map[string]any      `json:"arguments,omitempty"`
	State    string              `json:"requestState,omitempty"`
	Round    int                 `json:"round"`
	Requests mcp.InputRequestMap `json:"inputRequests"`
}

const interruptVersion = 1

// MarshalJSON implements json.Marshaler: the interrupt, with the call's
// arguments and the server's request state, so that it can be resumed in
// another process.
func (i *Interrupt) MarshalJSON() ([]byte, error) {
	return json.Marshal(interruptJSON{Version: interruptVersion, Server: i.Server, Tool: i.Tool, MCPName: i.mcpName,
		Args: i.args, State: i.state, Round: i.round, Requests: i.requests})
}

// UnmarshalJSON implements json.Unmarshaler. The decoded interrupt is
// resumed with [Adapter.Resume].
func (i *Interrupt) UnmarshalJSON(b []byte) error {
	var w interruptJSON
	if err := json.Unmarshal(b, &w); err != nil {
		return fmt.Errorf("mcpadapter: decoding interrupt: %w", err)
	}
	if w.Version != interruptVersion {
		return fmt.Errorf("mcpadapter: decoding interrupt: unsupported version %d", w.Version)
	}
	if w.Server == "" || w.MCPName == "" || len(w.Requests) == 0 {
		return errors.New("mcpadapter: decoding interrupt: missing server, tool or requests")
	}
	reqs, err := elicitationRequests(w.Requests)
	if err != nil {
		return fmt.Errorf("mcpadapter: decoding interrupt: %w", err)
	}
	*i = Interrupt{Server: w.Server, Tool: w.Tool, Requests: reqs, mcpName: w.MCPName,
		args: w.Args, state: w.State, round: w.Round, requests: w.Requests}
	return nil
}
