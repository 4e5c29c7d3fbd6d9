package wire

import (
	"io"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestScreenIO: an IOTransport is screened as a copy, its line cap lifted
// only when unset, and nil passes through.
func TestScreenIO(t *testing.T) {
	s := New(Options{MaxMessageBytes: 1 << 20})
	if got := s.IO(nil); got != nil {
		t.Errorf("IO(nil) = %v", got)
	}
	bare := &mcp.IOTransport{}
	if got := s.IO(bare); got != bare {
		t.Errorf("IO without a reader = %p, want the same %p", got, bare)
	}
	r := io.NopCloser(strings.NewReader("{\"jsonrpc\":\"2.0\",\"method\":\"x\"}\n"))
	in := &mcp.IOTransport{Reader: r}
	got := s.IO(in)
	if got == in || in.Reader != r || in.MaxLineLength != 0 {
		t.Fatalf("IO changed the caller's transport: %+v", in)
	}
	if got.MaxLineLength != -1 {
		t.Errorf("MaxLineLength = %d, want -1", got.MaxLineLength)
	}
	b, err := io.ReadAll(got.Reader)
	if err != nil || !strings.Contains(string(b), `"method":"x"`) {
		t.Errorf("read %q, %v", b, err)
	}
	if err := got.Reader.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if s.IO(&mcp.IOTransport{Reader: r, MaxLineLength: 7}).MaxLineLength != 7 {
		t.Error("a set MaxLineLength was changed")
	}
}
