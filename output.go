package mcpadapter

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mcpadapter/mcpadapter/internal/elicit"
	"github.com/mcpadapter/mcpadapter/internal/jsonvalue"
)

// Output validation: a tool that declares an outputSchema promises
// structured content that matches it. The MCP spec says clients SHOULD
// validate; the TypeScript SDK does, go-sdk v1.8.0's client does not. The
// adapter validates the structuredContent of every result without isError
// against the tool's schema, resolved once per tool, and fails the call with
// an [*OutputSchemaError] when it does not match. Not validated:
//
//   - isError results (their structured content describes the failure);
//   - results without structured content (their content stands alone);
//   - schemas the validator cannot take safely: ones that do not resolve,
//     that name a draft other than 2020-12 or draft-07, or that hold
//     references ($ref and the like: jsonschema-go follows a reference
//     cycle such as {"$ref":"#"} until the stack overflows, a crash no
//     recover stops). These are skipped with a debug log.

// An OutputSchemaError reports structured content that does not match the
// tool's declared outputSchema. It is the cause of a [*ServerError] (find it
// with [errors.As]).
type OutputSchemaError struct {
	Tool string // the server's name of the tool
	// Path is the location in the output schema that the content broke,
	// such as "/properties/sky"; "" for the schema's root.
	Path string
	// Reason is the validator's message, at most a few hundred bytes.
	Reason string
}

// Error implements error.
func (e *OutputSchemaError) Error() string {
	at := "the schema's root"
	if e.Path != "" {
		at = e.Path
	}
	return fmt.Sprintf("structured content does not match the output schema of tool %q at %s: %s", e.Tool, at, e.Reason)
}

// maxReason bounds an OutputSchemaError's Reason: the validator quotes the
// content, which may be large.
const maxReason = 256

// outputSchema is the resolved outputSchema of a tool, made on first use.
type outputSchema struct {
	once     sync.Once
	resolved *jsonschema.Resolved // nil: nothing to validate against
}

// checkOutput validates the structured content of res, the result of a call
// of t, against t's outputSchema (see above).
func (t *Tool) checkOutput(ctx context.Context, res *Result, err error) (*Result, error) {
	if !validatable(res, err) || t.desc.OutputSchema == nil {
		return res, err
	}
	t.output.once.Do(func() { t.output.resolved = t.a.policy.resolveOutput(ctx, t) })
	if t.output.resolved == nil {
		return res, nil
	}
	if verr := t.output.resolved.Validate(res.Artifact.StructuredContent); verr != nil {
		return nil, serverError(t.server, callToolOp(t.desc.Name), outputError(t.desc.Name, verr))
	}
	return res, nil
}

// validatable reports whether a call's outcome is one output validation
// checks: a result without isError, with structured content.
func validatable(res *Result, err error) bool {
	return err == nil && res != nil && !res.IsError && res.Artifact != nil && res.Artifact.StructuredContent != nil
}

// resolveOutput resolves t's outputSchema, or returns nil when it cannot be
// validated against safely.
func (p *toolPolicy) resolveOutput(ctx context.Context, t *Tool) *jsonschema.Resolved {
	skip := func(why string) *jsonschema.Resolved {
		p.logger.DebugContext(ctx, "mcpadapter: not validating results against the output schema", "server", t.server, "tool", t.desc.Name, "reason", why)
		return nil
	}
	m := jsonvalue.Object(t.desc.OutputSchema)
	if m == nil {
		return skip("not a JSON object")
	}
	if key, ok := elicit.SchemaRef(m); ok {
		return skip("it holds " + key)
	}
	b, err := json.Marshal(m)
	if err != nil {
		return skip(err.Error())
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		return skip(err.Error())
	}
	switch s.Schema {
	case "", "https://json-schema.org/draft/2020-12/schema", "http://json-schema.org/draft-07/schema#", "https://json-schema.org/draft-07/schema#":
	default:
		return skip("unsupported $schema")
	}
	resolved, err := s.Resolve(nil)
	if err != nil {
		return skip(err.Error())
	}
	return resolved
}

// outputError turns a validation error of jsonschema-go ("validating root:
// validating /properties/sky: type: ...") into an OutputSchemaError naming
// the deepest schema location.
func outputError(tool string, err error) *OutputSchemaError {
	msg := err.Error()
	path := ""
	for {
		rest, ok := strings.CutPrefix(msg, "validating ")
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
		msg = tail
	}
	if len(msg) > maxReason {
		msg = strings.ToValidUTF8(msg[:maxReason], "") + "…"
	}
	return &OutputSchemaError{Tool: tool, Path: path, Reason: msg}
}
