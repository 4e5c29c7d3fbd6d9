package mcpadapter

// Schema passes: what each provider accepts of a tool's JSON schema.
//
// [Tool.Parameters] is the server's schema, kept as written. Providers take
// less: Google AI a subset of OpenAPI 3.0 without $ref, OpenAI's strict
// mode a closed subset of JSON Schema. A SchemaPass rewrites a copy of one
// definition for one provider; [Toolset.LLMToolsFor] applies passes to every
// tool. Passes are pure functions of their input, never touch the tool, and
// refuse (with [ErrUnsupportedSchema]) what they cannot convert faithfully
// rather than send a schema the provider would reject or misread.

import (
	"errors"

	"github.com/mcpadapter/mcpadapter/internal/schemapass"
	"github.com/tmc/langchaingo/llms"
)

// A SchemaPass rewrites one tool definition for a provider. It gets a
// definition of its own: Parameters is a map[string]any deep copy of
// [Tool.Parameters] (or what the pass before it left), which it may change
// in place or replace. An error should wrap [ErrUnsupportedSchema].
// [ForGemini], [ForOpenAI] and [ForOpenAIStrict] are the ready-made passes.
type SchemaPass func(fn *llms.FunctionDefinition) error

// applyPasses applies passes to fd in order, skipping nil ones, and stops
// at the first error.
func applyPasses(fd *llms.FunctionDefinition, passes []SchemaPass) error {
	for _, pass := range passes {
		if pass == nil {
			continue
		}
		if err := pass(fd); err != nil {
			return err
		}
	}
	return nil
}

// LLMToolFor is [Tool.LLMTool] with passes applied in order, for one
// provider: t.LLMToolFor(mcpadapter.ForGemini()). Nil passes are ignored.
// An error names the server, the tool and where its schema failed.
func (t *Tool) LLMToolFor(passes ...SchemaPass) (llms.Tool, error) {
	tool := t.LLMTool()
	if err := applyPasses(tool.Function, passes); err != nil {
		return llms.Tool{}, errorf("mcpadapter: server %q: tool %q: %w", t.server, t.name, err)
	}
	return tool, nil
}

// LLMToolsFor is [Toolset.LLMTools] with passes applied to each tool (see
// [Tool.LLMToolFor]). When some tools cannot be converted it returns the
// others, in order, with an error joining one per failed tool: a caller may
// go on without them, or stop.
func (s Toolset) LLMToolsFor(passes ...SchemaPass) ([]llms.Tool, error) {
	s = visible(s, false, nil)
	out := make([]llms.Tool, 0, len(s))
	var errs []error
	for _, t := range s {
		tool, err := t.LLMToolFor(passes...)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, tool)
	}
	return out, errors.Join(errs...)
}

// ForOpenAI returns the [SchemaPass] for OpenAI's function calling without
// strict mode (langchaingo's openai provider, and providers that speak its
// API): the schema is kept, and each free-form object property (an object
// schema with no properties and no additionalProperties) gets
// "additionalProperties": true, which is what it means in JSON Schema, so
// that a conversion that closes objects without the keyword (OpenAI's
// Responses API, which is strict unless told otherwise; LangChain Python
// before langchain-core 1.4.1) keeps accepting any keys. Strict is set to
// false.
func ForOpenAI() SchemaPass { return schemapass.OpenAIDefinition(false, schemapass.OpenAI) }

// ForOpenAIStrict returns the [SchemaPass] for OpenAI's strict mode
// (Structured Outputs for function calls): it sets Strict and makes the
// schema one that strict mode accepts and that means the same thing, or
// fails with an error wrapping [ErrUnsupportedSchema]. The rules are in
// docs/reference.md, "ForOpenAIStrict".
func ForOpenAIStrict() SchemaPass { return schemapass.OpenAIDefinition(true, schemapass.OpenAIStrict) }

// ForGemini returns the [SchemaPass] for Google AI (Gemini), as reached
// through langchaingo's googleai provider or the REST API: references
// inlined, type lists, nullability, anyOf/oneOf/allOf and the keywords
// Gemini ignores rewritten to what it accepts, or an error wrapping
// [ErrUnsupportedSchema]. The rules are in docs/reference.md, "ForGemini".
func ForGemini() SchemaPass { return schemapass.Definition(schemapass.Gemini) }
