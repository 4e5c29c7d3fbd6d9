package wire

import (
	"io"
	"strings"
	"testing"
)

// TestLineBoundAtEnd: the last line of a stream, which no newline ends, is
// held to the bound like any other: one byte over it, it becomes the error
// response for its id. Only a line's CR may take it past the bound.
func TestLineBoundAtEnd(t *testing.T) {
	msg := `{"jsonrpc":"2.0","id":7,"result":{"content":[]}}`
	for _, tc := range []struct {
		name, stream string
		bound        int
		fault        bool
	}{
		{"at the bound", msg, len(msg), false},
		{"one over", msg, len(msg) - 1, true},
		{"one over with a newline", msg + "\n", len(msg) - 1, true},
		{"at the bound with CRLF", msg + "\r\n", len(msg), false},
		{"at the bound with a last CR", msg + "\r", len(msg), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := io.ReadAll(testScreen(tc.bound, io.Discard).Lines(strings.NewReader(tc.stream)))
			if err != nil {
				t.Fatalf("read: %v", err)
			}
			line := strings.TrimSuffix(string(out), "\n")
			if got := isFault([]byte(line), TooLarge); got != tc.fault {
				t.Fatalf("passed %q under a bound of %d; want a fault: %v", line, tc.bound, tc.fault)
			}
			if !tc.fault && line != msg {
				t.Fatalf("passed %q, want %q", line, msg)
			}
			if tc.fault && !strings.Contains(line, `"id":7`) {
				t.Fatalf("fault %q does not answer id 7", line)
			}
		})
	}
}
