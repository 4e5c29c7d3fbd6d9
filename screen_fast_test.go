package mcpadapter

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// plainSeeds are messages of every shape plainResponse must tell apart.
var plainSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"ok"}]}}`,
	` {"id":"a\"b","jsonrpc":"2.0","error":{"code":-32602,"message":"bad"}} `,
	`{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"x","inputSchema":{}}]}}`,
	`{"jsonrpc":"2.0","id":2,"result":{"tools":null}}`,
	`{"jsonrpc":"2.0","method":"notifications/message","params":{}}`,
	`{"jsonrpc":"2.0","id":3,"method":"elicitation/create","params":{}}`,
	`{"jsonrpc":"2.0","id":null,"result":{}}`,
	`{"jsonrpc":"2.0","id":1,"id":{},"result":{}}`,
	`{"jsonrpc":"2.0","jsonrpc":{},"id":1,"result":{}}`,
	`{"jsonrpc":"1.0","id":1,"result":{}}`,
	`{"i\u0064":5,"jsonrpc":"2.0","result":{}}`,
	`{"jsonrpc":"2.0","id":` + `"` + strings.Repeat("x", maxIDBytes) + `"` + `,"result":{}}`,
	`{"jsonrpc":"2.0","id":4,"result":` + strings.Repeat(`[`, 1100) + strings.Repeat(`]`, 1100) + `}`,
	`{"jsonrpc":"2.0","id":3,"result":{"content":[`,
	`{"jsonrpc":"2.0","id":1,"result":{}}x`,
	`[{"jsonrpc":"2.0","id":1,"result":{}}]`,
	``,
}

// TestPlainResponse checks the fast path of screen.message on the shapes
// it must accept and refuse.
func TestPlainResponse(t *testing.T) {
	want := map[int]bool{0: true, 1: true, 3: true, 10: true}
	for i, msg := range plainSeeds {
		if got := plainResponse([]byte(msg)); got != want[i] {
			t.Errorf("plainResponse(%.80q) = %v, want %v", msg, got, want[i])
		}
	}
}

// FuzzPlainResponse checks that the fast path of screen.message only
// accepts messages that the full checks pass unchanged.
func FuzzPlainResponse(f *testing.F) {
	for _, seed := range plainSeeds {
		f.Add([]byte(seed))
	}
	s := &screen{server: "fuzz", limit: 1 << 20, logger: slog.New(slog.DiscardHandler)}
	f.Fuzz(func(t *testing.T, msg []byte) {
		if !plainResponse(msg) {
			return
		}
		out, changed, err := s.screenMessage(msg, nil)
		if err != nil || changed || !bytes.Equal(out, msg) {
			t.Fatalf("plainResponse(%q) = true, but screenMessage = %q, %v, %v", msg, out, changed, err)
		}
	})
}

// BenchmarkScreenMessage measures the screen of one short answer to a
// call, which every stdio message goes through: the fast path, and the
// full checks it saves.
func BenchmarkScreenMessage(b *testing.B) {
	msg := []byte(`{"jsonrpc":"2.0","id":12345,"result":{"content":[{"type":"text","text":"hello"}]}}`)
	s := &screen{server: "s", limit: 16 << 20, logger: slog.New(slog.DiscardHandler)}
	b.Run("path=fast", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			s.message(msg, nil)
		}
	})
	b.Run("path=full", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			s.screenMessage(msg, nil)
		}
	})
}
