package elicit

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestCheckKeys(t *testing.T) {
	tests := []struct {
		requested []string
		answered  map[string]bool
		want      string // "" for no error, else substrings separated by "|"
	}{
		{[]string{"a", "b"}, map[string]bool{"a": true, "b": true}, ""},
		{[]string{"a", "b"}, map[string]bool{"a": true}, `no answer for request "b"`},
		{[]string{"a"}, map[string]bool{"a": true, "z": true, "y": true}, `answer "y", "z" matches no request (requests: "a")`},
		{[]string{"a"}, map[string]bool{"b": true}, `no answer for request "a"|answer "b" matches no request`},
	}
	for _, tt := range tests {
		err := CheckKeys(tt.requested, slices.Collect(maps.Keys(tt.answered)))
		if tt.want == "" {
			if err != nil {
				t.Errorf("CheckKeys(%v, %v) = %v, want nil", tt.requested, tt.answered, err)
			}
			continue
		}
		for _, want := range strings.Split(tt.want, "|") {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("CheckKeys(%v, %v) = %v, want it to say %q", tt.requested, tt.answered, err, want)
			}
		}
	}
}

func TestCheckSchemaDepth(t *testing.T) {
	nested := func(depth int) any {
		var v any = map[string]any{"type": "string"}
		for range depth - 1 {
			v = map[string]any{"items": v}
		}
		return v
	}
	if err := CheckSchema(nested(maxSchemaDepth)); err != nil {
		t.Errorf("CheckSchema(depth %d) = %v, want nil", maxSchemaDepth, err)
	}
	if err := CheckSchema(nested(maxSchemaDepth + 1)); err == nil {
		t.Errorf("CheckSchema(depth %d) = nil, want an error", maxSchemaDepth+1)
	}
	if err := CheckSchema([]any{1}); err == nil {
		t.Error("CheckSchema(array) = nil, want an error")
	}
	if err := CheckSchema(nil); err != nil {
		t.Errorf("CheckSchema(nil) = %v, want nil", err)
	}
	if got := depth(nested(1000), 5); got != 6 {
		t.Errorf("depth(1000 levels, limit 5) = %d, want 6", got)
	}
}

func TestMode(t *testing.T) {
	tests := []struct {
		p    mcp.ElicitParams
		want string
	}{
		{mcp.ElicitParams{Message: "name?"}, "form"},
		{mcp.ElicitParams{URL: "https://x/auth"}, "url"},
		{mcp.ElicitParams{ElicitationID: "e1"}, "url"},
		{mcp.ElicitParams{Mode: "form", URL: "https://x"}, "form"},
		{mcp.ElicitParams{Mode: "voice"}, "voice"},
	}
	for _, tt := range tests {
		if got := Mode(&tt.p); got != tt.want {
			t.Errorf("Mode(%+v) = %q, want %q", tt.p, got, tt.want)
		}
	}
}

func TestUnsupported(t *testing.T) {
	deep := map[string]any{"type": "object"}
	for range maxSchemaDepth + 1 {
		deep = map[string]any{"type": "object", "properties": map[string]any{"x": deep}}
	}
	tests := []struct {
		name string
		req  mcp.InputRequest
		want string // "" when supported
	}{
		{"form", &mcp.ElicitParams{Message: "m", RequestedSchema: map[string]any{"type": "object"}}, ""},
		{"url", &mcp.ElicitParams{URL: "https://x", ElicitationID: "e"}, ""},
		{"empty", (*mcp.ElicitParams)(nil), `"k" is empty`},
		{"mode", &mcp.ElicitParams{Mode: "voice"}, `"k" asks for elicitation/create in mode "voice"`},
		{"not an object", &mcp.ElicitParams{RequestedSchema: []any{1}}, `"k": the requested schema is not a JSON object`},
		{"deep", &mcp.ElicitParams{RequestedSchema: deep}, `"k": the requested schema nests deeper than`},
		{"sampling", &mcp.CreateMessageParams{}, `"k" asks for sampling/createMessage`},
		{"sampling with tools", &mcp.CreateMessageWithToolsParams{}, `"k" asks for sampling/createMessage`},
		{"roots", &mcp.ListRootsParams{}, `"k" asks for roots/list`},
		{"nil", nil, `"k" asks for <nil>`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Unsupported("k", tt.req)
			if tt.want == "" && got != "" || !strings.HasPrefix(got, tt.want) {
				t.Errorf("Unsupported() = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestDecodeRequests: null or non-object entries (on which go-sdk's
// decoder panics) and too many requests are refused; elicitations decode.
func TestDecodeRequests(t *testing.T) {
	m, err := DecodeRequests(json.RawMessage(`{"q":{"method":"elicitation/create","params":{"message":"?","requestedSchema":{"type":"object"}}}}`))
	if err != nil || len(m) != 1 {
		t.Fatalf("DecodeRequests = %v, %v", m, err)
	}
	many := make([]string, maxRequests+1)
	for i := range many {
		many[i] = fmt.Sprintf(`"k%d":{}`, i)
	}
	for _, bad := range []string{`{"q":null}`, `{"q":1}`, `[]`, `{` + strings.Join(many, ",") + `}`} {
		if _, err := DecodeRequests(json.RawMessage(bad)); err == nil {
			t.Errorf("DecodeRequests(%.40s) accepted", bad)
		}
	}
}

// TestContentNamesPropertiesAnySpelling: the properties content breaks are
// named whatever the spelling of the keyword that holds them
// (jsonschema-go reads "PROPERTIES" as properties), and each property's
// schema passes the guard as a root before it is resolved alone. Looked up
// by the exact key, {"$ref":"#"} under "PROPERTIES" was resolved alone
// unguarded, and the validator recursed until the stack overflowed.
func TestContentNamesPropertiesAnySpelling(t *testing.T) {
	tests := []struct{ schema, want string }{
		{`{"type":"object","PROPERTIES":{"p":{"$ref":"#"}}}`, `(invalid "p")`},
		{`{"type":"object","Properties":{"p":{"type":"string","$ref":"#"}}}`, `(invalid "p")`},
		{`{"type":"object","PROPERTIES":{"p":{"type":"string"},"q":{"$REF":"#"}}}`, `(invalid "p", "q")`},
		{`{"type":"object","Properties":{"p":{"type":"string"},"q":{"type":"integer"}}}`, `(invalid "p")`},
	}
	for _, tt := range tests {
		var schema map[string]any
		if err := json.Unmarshal([]byte(tt.schema), &schema); err != nil {
			t.Fatal(err)
		}
		_, err := Content(schema, map[string]any{"p": 5, "q": 1})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Content(%s) = %v; want an error naming %s", tt.schema, err, tt.want)
		}
	}
}
