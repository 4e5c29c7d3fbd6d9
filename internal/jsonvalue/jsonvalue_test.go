package jsonvalue

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"
)

// TestCopy: changing the copy leaves the original as it was.
func TestCopy(t *testing.T) {
	orig := map[string]any{"a": []any{map[string]any{"b": 1.0}}, "s": "x"}
	c := Copy(orig)
	if !reflect.DeepEqual(c, orig) {
		t.Fatalf("Copy() = %v, want %v", c, orig)
	}
	c["a"].([]any)[0].(map[string]any)["b"] = 2.0
	if orig["a"].([]any)[0].(map[string]any)["b"] != 1.0 {
		t.Error("changing the copy changed the original")
	}
}

func TestMap(t *testing.T) {
	got := Map(map[string]any{"a": []any{"x", 1.0}}, func(v any) any {
		if s, ok := v.(string); ok {
			return s + "!"
		}
		return v
	})
	if want := map[string]any{"a": []any{"x!", 1.0}}; !reflect.DeepEqual(got, want) {
		t.Errorf("Map() = %v, want %v", got, want)
	}
}

func TestObject(t *testing.T) {
	type schema struct {
		Type string `json:"type"`
	}
	tests := []struct {
		in   any
		want map[string]any
	}{
		{map[string]any{"type": "object"}, map[string]any{"type": "object"}},
		{json.RawMessage(`{"type":"object"}`), map[string]any{"type": "object"}},
		{schema{Type: "object"}, map[string]any{"type": "object"}},
		{[]any{1.0}, nil},
		{nil, nil},
		{func() {}, nil},
	}
	for _, tt := range tests {
		if got := Object(tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Object(%#v) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestSortedKeys(t *testing.T) {
	if got := SortedKeys(map[string]int{"b": 1, "a": 2, "c": 3}); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("SortedKeys() = %v", got)
	}
}

func TestCompact(t *testing.T) {
	type meta map[string]any
	big := make(meta, 64)
	big["a"], big["b"] = 1, map[string]any{"c": 2}
	got := Compact(big)
	if !reflect.DeepEqual(got, big) {
		t.Errorf("Compact() = %v, want %v", got, big)
	}
	got["a"] = 9
	if big["a"] != 1 {
		t.Error("Compact() shares its map with its input")
	}
	if Compact(meta(nil)) != nil {
		t.Error("Compact(nil) is not nil")
	}
}

// TestPointerToken: "~" and "/" are escaped, in that order, so that "~1"
// in a name stays a name ("~01") and does not read back as "/".
func TestPointerToken(t *testing.T) {
	for in, want := range map[string]string{"a": "a", "a/b": "a~1b", "a~b": "a~0b", "~1": "~01", "": ""} {
		if got := PointerToken(in); got != want {
			t.Errorf("PointerToken(%q) = %q, want %q", in, got, want)
		}
	}
}
