// Package callinput decodes the text a model gives a tool through
// langchaingo's tools.Tool.Call into the tool's arguments: a JSON object,
// langchaingo's {"__arg1": …} wrapper, JSON in a Markdown fence or
// backticks, or a bare string for a tool with one string property; and it
// copies a call's arguments as JSON sees them ([Snapshot]). It is pure and
// knows nothing of the adapter.
package callinput

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/mcpadapter/mcpadapter/internal/jsonvalue"
)

// argWrapper is the key of langchaingo's single-string tool schema: the
// OpenAIFunctionsAgent advertises every tool as {"__arg1": string} and
// passes through whatever the model put there.
const argWrapper = "__arg1"

// Decode turns the text input of a Call into arguments for a tool whose
// input schema is schema.
func Decode(input string, schema map[string]any) (map[string]any, error) {
	props, _ := schema["properties"].(map[string]any)
	required, _ := schema["required"].([]any)
	s := unfence(strings.TrimSpace(input))
	if strings.HasPrefix(s, "{") {
		obj, err := Object(s)
		if err != nil {
			return nil, err
		}
		if _, declared := props[argWrapper]; len(obj) == 1 && !declared {
			switch inner := obj[argWrapper].(type) { // nil when obj holds another key
			case string:
				return Decode(inner, schema)
			case map[string]any:
				return inner, nil
			}
		}
		return obj, nil
	}
	if strings.HasPrefix(s, `"`) {
		var str string
		if err := json.Unmarshal([]byte(s), &str); err == nil {
			s = str
		}
	}
	if len(props) == 0 && len(required) == 0 {
		return map[string]any{}, nil // nothing to fill in: the input says nothing
	}
	if s == "" {
		return nil, errors.New("empty input")
	}
	if name, ok := bareStringProperty(props, required); ok {
		return map[string]any{name: s}, nil
	}
	return nil, errors.New("input is not a JSON object")
}

// bareStringProperty returns the property a bare string fills, of the
// properties and required names of a schema: the only property of type
// string or, when there are several, the only required property if it is
// of type string.
func bareStringProperty(props map[string]any, required []any) (string, bool) {
	isString := func(name string) bool {
		p, ok := props[name].(map[string]any)
		return ok && p["type"] == "string"
	}
	var strs []string
	for name := range props {
		if isString(name) {
			strs = append(strs, name)
		}
	}
	if len(strs) == 1 {
		return strs[0], true
	}
	if len(required) == 1 {
		if name, ok := required[0].(string); ok && isString(name) {
			return name, true
		}
	}
	return "", false
}

// unfence strips a Markdown code fence (```json ... ```) or backticks
// around s.
func unfence(s string) string {
	if rest, ok := strings.CutPrefix(s, "```"); ok {
		if i := strings.IndexByte(rest, '\n'); i >= 0 && !strings.HasPrefix(strings.TrimSpace(rest[:i]), "{") {
			rest = rest[i+1:] // drop the language tag
		}
		rest, _ = strings.CutSuffix(strings.TrimSpace(rest), "```")
		return strings.TrimSpace(rest)
	}
	if len(s) >= 2 && s[0] == '`' && s[len(s)-1] == '`' {
		return strings.TrimSpace(s[1 : len(s)-1])
	}
	return s
}

// Object decodes s as one JSON object, keeping numbers exact
// (json.Number), and refuses anything after it.
func Object(s string) (map[string]any, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	// dec.More misses a stray '}' or ']' after the object: look at the rest.
	if strings.TrimLeft(s[dec.InputOffset():], " \t\r\n") != "" {
		return nil, errors.New("invalid JSON: data after the object")
	}
	if obj == nil {
		return nil, errors.New("not a JSON object")
	}
	return obj, nil
}

// Snapshot returns a deep copy of args as JSON sees them (numbers exact,
// through [Object]), so that the caller's later changes do not reach what
// keeps it.
func Snapshot(args map[string]any) map[string]any {
	if args == nil {
		return nil
	}
	b, err := json.Marshal(args)
	if err != nil {
		return jsonvalue.Copy(args) // not reached: the call marshalled them
	}
	m, err := Object(string(b))
	if err != nil {
		return jsonvalue.Copy(args)
	}
	return m
}
