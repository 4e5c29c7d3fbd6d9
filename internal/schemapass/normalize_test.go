package schemapass

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestDescribe pins the argument hint that text agents see.
func TestDescribe(t *testing.T) {
	obj := func(props map[string]any, required ...any) map[string]any {
		return map[string]any{"type": "object", "properties": props, "required": required}
	}
	many := make([]any, maxEnumHint+2)
	for i := range many {
		many[i] = i
	}
	tests := []struct {
		name   string
		text   string
		params map[string]any
		want   string
	}{
		{"no properties", "Does it.", obj(map[string]any{}), "Does it."},
		{"no text", "", obj(map[string]any{"q": map[string]any{"type": "string"}}), `Input: JSON object {"q": string}`},
		{"required and enum", "Weather.", obj(map[string]any{
			"city": map[string]any{"type": "string"},
			"unit": map[string]any{"type": "string", "enum": []any{"c", "f"}},
		}, "city"), `Weather. Input: JSON object {"city": string (required), "unit": "c"|"f"}`},
		{"types", "T.", obj(map[string]any{
			"a": map[string]any{"type": "array", "items": map[string]any{"type": "integer"}},
			"b": map[string]any{"type": []any{"string", "null"}},
			"c": map[string]any{"$ref": "#/$defs/c"},
			"d": true,
			"e": map[string]any{"type": "array"},
			"f": map[string]any{"enum": many},
		}), `T. Input: JSON object {"a": array of integer, "b": string|null, "c": any, "d": any, "e": array, "f": 0|1|2|3|4|5|6|7|…}`},
		{"quoted names", "Q.", obj(map[string]any{`we"ird`: map[string]any{"type": "number"}}), `Q. Input: JSON object {"we\"ird": number}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Describe(tt.text, tt.params); got != tt.want {
				t.Errorf("Describe() = %q\nwant %q", got, tt.want)
			}
		})
	}
}

// TestDescriptionHintBounded: the argument hint of a tool with a huge
// number of properties stops after a bound, and says how many it left
// out; Parameters keeps them all.
func TestDescriptionHintBounded(t *testing.T) {
	props := map[string]any{}
	for i := range 150_000 {
		props[fmt.Sprintf("p%06d", i)] = map[string]any{"type": "string"}
	}
	d := Describe("Wide.", map[string]any{"type": "object", "properties": props})
	if len(d) > maxHintBytes+100 || !strings.Contains(d, "more properties") || !strings.HasPrefix(d, `Wide. Input: JSON object {"p000000": string`) {
		t.Errorf("Describe() = %d bytes (%.80q…), want at most %d, ending with the count left out", len(d), d, maxHintBytes+100)
	}
}

// TestJSONString checks the argument hint's quoting against json.Marshal.
func TestJSONString(t *testing.T) {
	for _, s := range []string{"", "city", "a b", `q"uote`, `back\slash`, "<tag>&", "tab\t", "é", "\x7f", "日本", "\xff"} {
		want, _ := json.Marshal(s)
		if got := string(appendJSONString(nil, s)); got != string(want) {
			t.Errorf("appendJSONString(%q) = %s, want %s", s, got, want)
		}
	}
}
