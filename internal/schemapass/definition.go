package schemapass

// The passes applied to a langchaingo tool definition: the root package's
// SchemaPass is a func of this shape.

import (
	"fmt"

	"github.com/tmc/langchaingo/llms"
)

// Definition adapts pass to a tool definition: it rewrites the
// definition's Parameters, which must be a JSON object (map[string]any).
func Definition(pass func(params map[string]any) (map[string]any, error)) func(fn *llms.FunctionDefinition) error {
	return func(fn *llms.FunctionDefinition) error {
		params, ok := fn.Parameters.(map[string]any)
		if !ok {
			return fmt.Errorf("%w: parameters are a %T, not a JSON object", ErrUnsupported, fn.Parameters)
		}
		out, err := pass(params)
		if err != nil {
			return err
		}
		fn.Parameters = out
		return nil
	}
}

// OpenAIDefinition is [Definition] of pass for OpenAI: it also sets the
// definition's Strict.
func OpenAIDefinition(strict bool, pass func(params map[string]any) (map[string]any, error)) func(fn *llms.FunctionDefinition) error {
	inner := Definition(pass)
	return func(fn *llms.FunctionDefinition) error {
		fn.Strict = strict
		return inner(fn)
	}
}
