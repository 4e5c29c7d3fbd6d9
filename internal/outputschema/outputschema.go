// Package outputschema prepares a tool's outputSchema for validating its
// results' structured content: it resolves the schemas the validator can
// take safely (those the schema guard, internal/schemaguard, passes) and
// refuses the others, and it turns the validator's error
// into the schema location the content broke and a bounded reason. It is
// pure and knows nothing of the adapter, whose result.go decides what is
// validated and reports the mismatch as an OutputSchemaError.
package outputschema

import (
	"encoding/json"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mcpadapter/mcpadapter/internal/jsonvalue"
	"github.com/mcpadapter/mcpadapter/internal/schemaguard"
)

// MaxReason bounds the reason [Explain] gives, in bytes: the validator
// quotes the content, which may be large.
const MaxReason = 256

// Resolve resolves schema, or returns nil and why it cannot be validated
// against safely: it is not a JSON object, the schema guard refuses it
// (internal/schemaguard: too deep or large, references that cannot be
// followed, or a reference cycle such as {"$ref":"#"}, which jsonschema-go
// follows until the stack overflows, a crash no recover stops), it names
// a draft other than 2020-12 or draft-07, or it does not resolve.
func Resolve(schema any) (*jsonschema.Resolved, string) {
	m := jsonvalue.Object(schema)
	if m == nil {
		return nil, "not a JSON object"
	}
	if err := schemaguard.Check(m); err != nil {
		return nil, err.Error()
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err.Error()
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, err.Error()
	}
	switch s.Schema {
	case "", "https://json-schema.org/draft/2020-12/schema", "http://json-schema.org/draft-07/schema#", "https://json-schema.org/draft-07/schema#":
	default:
		return nil, "unsupported $schema"
	}
	resolved, err := s.Resolve(nil)
	if err != nil {
		return nil, err.Error()
	}
	return resolved, ""
}

// Lazy is a tool's outputSchema, resolved on first use. The zero value is
// ready; a Lazy is safe for concurrent use and must not be copied.
type Lazy struct {
	once     sync.Once
	resolved *jsonschema.Resolved // nil: nothing to validate against
}

// Validate validates content against schema, resolved on the first call
// ([Resolve]): it returns the validator's error, or nil. A schema that
// cannot be validated against safely passes every content, and skipped
// is called with the reason, once.
func (l *Lazy) Validate(schema, content any, skipped func(why string)) error {
	l.once.Do(func() {
		var why string
		if l.resolved, why = Resolve(schema); l.resolved == nil {
			skipped(why)
		}
	})
	if l.resolved == nil {
		return nil
	}
	return l.resolved.Validate(content)
}

// Explain splits a validation error of jsonschema-go ("validating root:
// validating /properties/sky: type: ...") into the deepest schema location
// it names ("" for the root) and the validator's message, cut to
// [MaxReason] bytes.
func Explain(err error) (path, reason string) {
	reason = err.Error()
	for {
		rest, ok := strings.CutPrefix(reason, "validating ")
		if !ok {
			break
		}
		loc, tail, ok := strings.Cut(rest, ": ")
		if !ok {
			break
		}
		if loc != "root" {
			path = loc
		}
		reason = tail
	}
	if len(reason) > MaxReason {
		reason = strings.ToValidUTF8(reason[:MaxReason], "") + "…"
	}
	return path, reason
}
