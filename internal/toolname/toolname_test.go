package toolname

import (
	"strings"
	"testing"
)

func TestSafe(t *testing.T) {
	long := strings.Repeat("a", 70)
	tests := []struct {
		name   string
		maxLen int
		want   string
	}{
		{"srv__get_forecast", 64, "srv__get_forecast"},
		{"srv__get.forecast/v2 é", 64, "srv__get_forecast_v2__"},
		{"", 64, ""},
		{long, 64, strings.Repeat("a", 55) + "_" + Safe(long, 64)[56:]},
		{long, 4, Safe(long, 16)}, // below 16 counts as 16
	}
	for _, tt := range tests {
		if got := Safe(tt.name, tt.maxLen); got != tt.want || len(got) > max(tt.maxLen, 16) {
			t.Errorf("Safe(%q, %d) = %q, want %q", tt.name, tt.maxLen, got, tt.want)
		}
	}
	if Safe(long, 64) == Safe(long+"b", 64) {
		t.Errorf("Safe() of names that differ past the cut are equal")
	}
}

func TestValid(t *testing.T) {
	for name, want := range map[string]bool{"weather": true, "my-srv_2": true, "": false, "a.b": false, "é": false} {
		if got := Valid(name); got != want {
			t.Errorf("Valid(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestPatterns(t *testing.T) {
	if err := CheckPatterns([]string{"get_*", "[a-", "x"}); err == nil || !strings.Contains(err.Error(), `pattern "[a-"`) {
		t.Errorf("CheckPatterns() = %v, want the malformed pattern named", err)
	}
	tests := []struct {
		name        string
		allow, deny []string
		want        bool
	}{
		{"get_x", nil, nil, true},
		{"get_x", []string{"get_*"}, nil, true},
		{"set_x", []string{"get_*"}, nil, false},
		{"get_x", []string{"get_*"}, []string{"*_x"}, false}, // deny wins
	}
	for _, tt := range tests {
		if got := Allowed(tt.name, tt.allow, tt.deny); got != tt.want {
			t.Errorf("Allowed(%q, %q, %q) = %v, want %v", tt.name, tt.allow, tt.deny, got, tt.want)
		}
	}
}
