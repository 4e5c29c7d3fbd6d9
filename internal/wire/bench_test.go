package wire

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"testing"
)

// bigAnswer returns a tools/call answer of about size bytes whose text is
// escaped newlines ("\n\n\n...", the worst case of a scanner that looks for
// the closing quote again after each backslash) or plain words.
func bigAnswer(content string, size int) []byte {
	unit := `\n`
	if content == "plain" {
		unit = "lorem ipsum dolor sit amet "
	}
	head := `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"`
	tail := `"}]}}`
	text := strings.Repeat(unit, (size-len(head)-len(tail))/len(unit))
	return []byte(head + text + tail)
}

// frame returns msg as the stream of transport: a stdio line or a
// server-sent event.
func frame(transport string, msg []byte) []byte {
	if transport == "sse" {
		return append(append([]byte("event: message\ndata: "), msg...), "\n\n"...)
	}
	return append(msg, '\n')
}

// A replay reads its stream again and again: a connection that keeps
// sending the same message.
type replay struct {
	stream []byte
	off    int
}

func (r *replay) Read(p []byte) (int, error) {
	n := copy(p, r.stream[r.off:])
	r.off = (r.off + n) % len(r.stream)
	return n, nil
}

// reader returns the next-message function of a screen reading transport's
// stream over and over, as a long-lived connection does (its buffers grown
// once); each call returns one screened message (or event).
func reader(s *Screen, transport string, stream []byte) func() ([]byte, error) {
	src := &replay{stream: stream}
	if transport == "sse" {
		r := s.newEventReader(io.NopCloser(nil), bufio.NewReaderSize(src, eventBuffer), func() []byte { return nil })
		return func() ([]byte, error) {
			for len(r.out) == 0 && r.err == nil {
				r.fill()
			}
			out := r.out
			r.out = nil
			return out, r.err
		}
	}
	return s.Lines(src).Next
}

// BenchmarkScreen measures the screen's throughput (MB/s) over stdio and
// SSE on answers of 1, 4 and 16 MiB, of escaped newlines and of plain
// text; the time per MiB must not grow with the size. reject/... is an
// answer 2.4 times the bound of 16 MiB, refused as it streams by, against
// reading the same answer under a bound that lets it pass.
func BenchmarkScreen(b *testing.B) {
	for _, transport := range []string{"stdio", "sse"} {
		for _, content := range []string{"escaped", "plain"} {
			for _, mib := range []int{1, 4, 16} {
				stream := frame(transport, bigAnswer(content, mib<<20))
				s := New(Options{MaxMessageBytes: 32 << 20})
				b.Run(fmt.Sprintf("transport=%s/content=%s/size=%dMiB", transport, content, mib), func(b *testing.B) {
					next := reader(s, transport, stream)
					b.SetBytes(int64(len(stream)))
					for b.Loop() {
						out, err := next()
						if err != nil || len(out) < len(stream)*9/10 {
							b.Fatalf("read %d bytes, %v", len(out), err)
						}
					}
				})
			}
		}
	}
	stream := frame("stdio", bigAnswer("escaped", 16<<20*12/5))
	for _, bound := range []int{16 << 20, 64 << 20} {
		name := "reject"
		if bound > len(stream) {
			name = "pass"
		}
		s := New(Options{MaxMessageBytes: bound})
		b.Run(fmt.Sprintf("oversized=%s/transport=stdio/size=38.4MiB", name), func(b *testing.B) {
			next := reader(s, "stdio", stream)
			b.SetBytes(int64(len(stream)))
			for b.Loop() {
				out, err := next()
				if err != nil || name == "reject" && !isFault(out, TooLarge) {
					b.Fatalf("read %.80q, %v", out, err)
				}
			}
		})
	}
}

// BenchmarkScreenMessage measures the screen of one short answer to a
// call, which every message goes through.
func BenchmarkScreenMessage(b *testing.B) {
	msg := []byte(`{"jsonrpc":"2.0","id":12345,"result":{"content":[{"type":"text","text":"hello"}]}}`)
	s := New(Options{MaxMessageBytes: 16 << 20})
	b.ReportAllocs()
	for b.Loop() {
		if _, changed, err := s.message(msg, nil, new(record)); changed || err != nil {
			b.Fatal(changed, err)
		}
	}
}
