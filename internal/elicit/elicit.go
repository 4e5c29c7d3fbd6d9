// Package elicit checks a user's answers to MCP elicitation requests: the
// answered keys against the requested ones, each answer's action and
// content, and the requested schemas servers send. It says which of a
// server's input requests can be answered ([Unsupported]), decodes them
// safely ([DecodeRequests]), and turns an accepted answer into the
// [mcp.ElicitResult] the server gets.
//
// It is pure: plain values in, results or errors out. It knows nothing of
// the adapter; the root package maps its ElicitationRequest and Answer
// onto these arguments.
package elicit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mcpadapter/mcpadapter/internal/jsonvalue"
	"github.com/mcpadapter/mcpadapter/internal/schemaguard"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The actions of an answer, as MCP spells them.
const (
	accept  = "accept"
	decline = "decline"
	cancel  = "cancel"
)

// maxSchemaDepth bounds the nesting of a requested schema, counting its
// objects and arrays. MCP asks for a flat object of primitive properties
// (a multi-select's items and their options reach depth 6); the validator's
// time grows with the square of the depth (9000 levels took 17.7 s).
const maxSchemaDepth = 10

// CheckSchema refuses a requested schema that is not a JSON object, nests
// deeper than maxSchemaDepth, or is refused by the schema guard
// (internal/schemaguard: references that cannot be followed, or that
// cycle, such as {"$ref":"#"}, which jsonschema-go follows until the stack
// overflows, a fatal error no recover can stop). A nil schema (URL mode) is
// fine.
func CheckSchema(schema any) error {
	if schema == nil {
		return nil
	}
	object := jsonvalue.Object(schema)
	if object == nil {
		return errors.New("the requested schema is not a JSON object")
	}
	if depth(object, maxSchemaDepth) > maxSchemaDepth {
		return fmt.Errorf("the requested schema nests deeper than %d levels (MCP asks for a flat object)", maxSchemaDepth)
	}
	if err := schemaguard.Check(object); err != nil {
		return fmt.Errorf("the requested schema cannot be checked safely: %w", err)
	}
	return nil
}

// depth returns the nesting depth of the decoded JSON value v, counting
// objects and arrays (a scalar is 0), or limit+1 as soon as it passes limit.
func depth(v any, limit int) int {
	var elems []any
	switch v := v.(type) {
	case map[string]any:
		for _, e := range v {
			elems = append(elems, e)
		}
	case []any:
		elems = v
	default:
		return 0
	}
	if limit <= 0 {
		return limit + 1
	}
	deepest := 0
	for _, e := range elems {
		if deepest = max(deepest, depth(e, limit-1)); deepest >= limit {
			return limit + 1
		}
	}
	return deepest + 1
}

// NullEnumOption reports whether the requested schema of an elicitation
// has null where go-sdk's client checks an enum option's schema without
// looking for nil: an entry of a property's oneOf (titled single-select)
// or of its items' anyOf (titled multi-select). The SDK dereferences it
// and panics (v1.8.0, validateTitledEnumEntry), for a live request and
// for an input request it fulfils itself (its multi-round-trip
// middleware) alike. The schema is read as the SDK reads it
// (validateElicitSchema: encoded, then decoded by jsonschema-go), whose
// keys match without regard to case: "ONEOF" is a oneOf.
func NullEnumOption(schema any) bool {
	b, err := json.Marshal(schema)
	if err != nil {
		return false
	}
	var s *jsonschema.Schema
	if json.Unmarshal(b, &s) != nil || s == nil {
		return false // the SDK fails the request instead
	}
	for _, p := range s.Properties {
		if p != nil && (slices.Contains(p.OneOf, nil) || p.Items != nil && slices.Contains(p.Items.AnyOf, nil)) {
			return true
		}
	}
	return false
}

// CheckKeys reports the requests without an answer and the answers
// without a request, by key, in one error; nil when they match. answered
// are the keys of the answers, in any order.
func CheckKeys(requested, answered []string) error {
	var missing, extra []string
	for _, key := range requested {
		if !slices.Contains(answered, key) {
			missing = append(missing, fmt.Sprintf("%q", key))
		}
	}
	for _, key := range slices.Sorted(slices.Values(answered)) {
		if !slices.Contains(requested, key) {
			extra = append(extra, fmt.Sprintf("%q", key))
		}
	}
	var errs []error
	if len(missing) > 0 {
		errs = append(errs, fmt.Errorf("no answer for request %s", strings.Join(missing, ", ")))
	}
	if len(extra) > 0 {
		keys := make([]string, len(requested))
		for i, key := range requested {
			keys[i] = fmt.Sprintf("%q", key)
		}
		errs = append(errs, fmt.Errorf("answer %s matches no request (requests: %s)", strings.Join(extra, ", "), strings.Join(keys, ", ")))
	}
	return errors.Join(errs...)
}

// Check checks one answer to a request in mode ("form" or "url") with the
// requested schema: a known action; no content unless accepting a form
// request; for an accepted form, content valid against the schema, with
// its defaults applied.
func Check(mode string, schema map[string]any, action string, content map[string]any) (*mcp.ElicitResult, error) {
	switch action {
	case accept, decline, cancel:
	default:
		return nil, fmt.Errorf("unknown action %q (want accept, decline or cancel)", action)
	}
	if action != accept || mode == "url" {
		if len(content) > 0 {
			return nil, fmt.Errorf("content is only allowed when accepting a form request (action %q, mode %q)", action, mode)
		}
		return &mcp.ElicitResult{Action: action}, nil
	}
	content, err := Content(schema, content)
	if err != nil {
		return nil, err
	}
	return &mcp.ElicitResult{Action: accept, Content: content}, nil
}

// Content validates content against schema after a JSON round trip (so
// that Go values compare as JSON values) and applies its defaults. Its
// errors name properties, never the values the user gave.
func Content(schema, content map[string]any) (map[string]any, error) {
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
	if err := CheckSchema(schema); err != nil {
		// A live request reaches here unscreened (go-sdk checks only
		// that its properties are primitive).
		return nil, fmt.Errorf("requested schema: %w", err)
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
		return nil, errors.New("applying the requested schema's defaults failed")
	}
	if resolved.Validate(v) != nil {
		// The validator's message quotes the user's answer: name the
		// properties instead.
		return nil, fmt.Errorf("content does not match the requested schema%s", mismatches(&s, v))
	}
	return v, nil
}

// mismatches names the properties of content that schema refuses, and the
// required ones missing, without their values. Each property's schema is
// resolved on its own, as a root: it passes the schema guard as one first
// ({"$ref":"#"} in a property refers to the property then).
func mismatches(schema *jsonschema.Schema, content map[string]any) string {
	var bad, missing []string
	for _, name := range slices.Sorted(maps.Keys(schema.Properties)) {
		val, ok := content[name]
		if !ok {
			continue
		}
		if !validProperty(schema.Properties[name], val) {
			bad = append(bad, fmt.Sprintf("%q", name))
		}
	}
	for _, name := range schema.Required {
		if _, ok := content[name]; !ok {
			missing = append(missing, fmt.Sprintf("%q", name))
		}
	}
	var parts []string
	if len(bad) > 0 {
		parts = append(parts, "invalid "+strings.Join(bad, ", "))
	}
	if len(missing) > 0 {
		parts = append(parts, "missing "+strings.Join(missing, ", "))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, "; ") + ")"
}

// validProperty reports whether val is valid against the property schema
// s, resolved on its own. The guard checks s as it is encoded, which is
// what resolves: the requested schema's JSON may spell the keyword that
// holds it otherwise ("PROPERTIES"), as jsonschema-go reads keys without
// regard to case. A schema the guard refuses as a root, or that does not
// resolve, counts as refusing val.
func validProperty(s *jsonschema.Schema, val any) bool {
	b, err := json.Marshal(s)
	if err != nil {
		return false
	}
	var m map[string]any
	if json.Unmarshal(b, &m) != nil || schemaguard.Check(m) != nil {
		return false
	}
	r, err := s.Resolve(nil)
	return err == nil && r.Validate(val) == nil
}

// Mode is the mode of the elicitation p: its own, or else as go-sdk infers
// it (and writes it when the request is stored): "url" for a request with
// a URL or an elicitation id, "form" otherwise.
func Mode(p *mcp.ElicitParams) string {
	switch {
	case p.Mode != "":
		return p.Mode
	case p.URL != "" || p.ElicitationID != "":
		return "url"
	}
	return "form"
}

// Unsupported says why the input request req, under key, cannot be
// answered as an elicitation, or returns "" when it can: a form or URL
// elicitation whose requested schema passes [CheckSchema]. Sampling, roots
// and unknown requests are named by their method.
func Unsupported(key string, req mcp.InputRequest) string {
	switch p := req.(type) {
	case *mcp.ElicitParams:
		if p == nil {
			return fmt.Sprintf("%q is empty", key)
		}
		if mode := Mode(p); mode != "form" && mode != "url" {
			return fmt.Sprintf("%q asks for elicitation/create in mode %q", key, mode)
		}
		if err := CheckSchema(p.RequestedSchema); err != nil {
			return fmt.Sprintf("%q: %v", key, err)
		}
		return ""
	case *mcp.CreateMessageParams, *mcp.CreateMessageWithToolsParams:
		return fmt.Sprintf("%q asks for sampling/createMessage", key)
	case *mcp.ListRootsParams:
		return fmt.Sprintf("%q asks for roots/list", key)
	}
	return fmt.Sprintf("%q asks for %T", key, req)
}

// maxRequests bounds the input requests of one round: a stored
// interrupt's, a task's.
const maxRequests = 256

// DecodeRequests decodes input requests, stored or as a server sent them.
// go-sdk's decoder panics on a null entry ({"k": null}); entries are
// checked first, and their number is bounded.
func DecodeRequests(b json.RawMessage) (mcp.InputRequestMap, error) {
	var entries map[string]json.RawMessage
	if err := json.Unmarshal(b, &entries); err != nil {
		return nil, fmt.Errorf("input requests: %w", err)
	}
	if len(entries) > maxRequests {
		return nil, fmt.Errorf("input requests: %d, more than %d", len(entries), maxRequests)
	}
	for key, e := range entries {
		if t := bytes.TrimSpace(e); len(t) == 0 || t[0] != '{' {
			return nil, fmt.Errorf("input request %q is not an object", key)
		}
	}
	var m mcp.InputRequestMap
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("input requests: %w", err)
	}
	return m, nil
}
