package mcpadapter

import "github.com/mcpadapter/mcpadapter/internal/callinput"

// decodeCallInput turns the text input of [Tool.Call] into arguments for a
// tool whose input schema is schema: JSON, langchaingo's {"__arg1": …}
// wrapper, fenced JSON or a bare string (internal/callinput).
func decodeCallInput(input string, schema map[string]any) (map[string]any, error) {
	return callinput.Decode(input, schema)
}

// decodeObject decodes one JSON object, keeping numbers exact.
func decodeObject(s string) (map[string]any, error) { return callinput.Object(s) }
