package elicit

import (
	"strings"
	"testing"
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
		err := CheckKeys(tt.requested, tt.answered)
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
