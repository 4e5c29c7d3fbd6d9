package wire

import (
	"fmt"
	"io"
	"strings"
	"sync"
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

// answerOf returns a tools/call answer of id whose text is n bytes.
func answerOf(id, n int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"%s"}]}}`, id, strings.Repeat("x", n))
}

// chunks is a source that returns its chunks one a Read, then EOF.
type chunks []string

func (c *chunks) Read(p []byte) (int, error) {
	if len(*c) == 0 {
		return 0, io.EOF
	}
	n := copy(p, (*c)[0])
	if (*c)[0] = (*c)[0][n:]; (*c)[0] == "" {
		*c = (*c)[1:]
	}
	return n, nil
}

// TestLineStorageIdle: a line reader holds readChunk bytes between lines,
// whatever the longest line was: a longer line's storage goes back once
// it has been handed out and every byte read is used. While bytes of the
// next lines are left (they came in the long line's read), it keeps it.
func TestLineStorageIdle(t *testing.T) {
	long, short := answerOf(1, 64<<10)+"\n", answerOf(2, 10)+"\n"
	for _, tc := range []struct {
		name   string
		src    chunks
		lines  int // read before the storage is looked at
		retain bool
	}{
		{"after the long line", chunks{long, short}, 2, false},
		{"short lines in its read", chunks{long + short + short, short}, 2, true},
		{"after them", chunks{long + short + short, short}, 4, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := testScreen(16<<20, nil).Lines(&tc.src)
			for range tc.lines {
				if _, err := r.Next(); err != nil {
					t.Fatal(err)
				}
			}
			if held := cap(r.in); (held > readChunk) != tc.retain || r.long != nil != tc.retain {
				t.Errorf("the reader holds %d bytes of storage (borrowed: %v); want borrowed storage: %v (its own is %d bytes)", held, r.long != nil, tc.retain, readChunk)
			}
		})
	}
}

// TestLineStorageAfterHuge: a line of a few KiB after one of 4 MiB is read
// into storage of at most 2 MiB (maxHint, rounded up), not of the 8 MiB
// the long line took: the size of the last long line is a hint, bounded.
func TestLineStorageAfterHuge(t *testing.T) {
	src := chunks{answerOf(1, 4<<20) + "\n", answerOf(2, 4<<10) + "\n"}
	r := testScreen(16<<20, nil).Lines(&src)
	for _, want := range []int{8 << 20, 2 << 20} {
		if _, err := r.Next(); err != nil {
			t.Fatal(err)
		}
		if held := cap(r.in); held != want {
			t.Errorf("the line was read into %d bytes of storage, want %d", held, want)
		}
	}
}

// TestLineStorageReused: a stream of long lines, each read on its own
// (the storage goes back after each), reuses the same storage: a long line
// takes no more allocations than a short one (the screen's), as when the
// reader kept its buffer.
func TestLineStorageReused(t *testing.T) {
	allocs := func(n int) float64 {
		line := answerOf(1, n) + "\n"
		r := testScreen(16<<20, nil).Lines(&replay{stream: []byte(line)})
		next := func() {
			if msg, err := r.Next(); err != nil || len(msg) != len(line)-1 {
				t.Fatalf("Next = %d bytes, %v; want %d", len(msg), err, len(line)-1)
			}
		}
		next()
		return testing.AllocsPerRun(100, next)
	}
	if short, long := allocs(10), allocs(8<<10); long != short && !raceEnabled {
		t.Errorf("reading a line of 8 KiB took %v allocations, one of 10 bytes %v; want as many", long, short)
	}
}

// TestLineStorageChunks: the lines read are the lines sent whatever the
// source's reads (short lines, lines longer than the reader's own storage,
// reads that end within a line or at its end), by several readers at once,
// which share the storage of long lines.
func TestLineStorageChunks(t *testing.T) {
	var (
		want   []string
		stream strings.Builder
	)
	for i, n := range []int{10, 600, 5, 3000, 70000, 20, 1, 513, 100000, 40} {
		want = append(want, answerOf(i, n))
		stream.WriteString(want[i] + "\n")
	}
	var wg sync.WaitGroup
	for _, size := range []int{1, 7, 511, 512, 4096, 65536, 1 << 20} {
		wg.Go(func() {
			var src chunks
			for s := stream.String(); s != ""; s = s[min(size, len(s)):] {
				src = append(src, s[:min(size, len(s))])
			}
			r := testScreen(16<<20, nil).Lines(&src)
			for i, w := range want {
				if msg, err := r.Next(); err != nil || string(msg) != w {
					t.Errorf("reads of %d bytes: line %d = %.40q (%d bytes), %v; want %.40q (%d bytes)", size, i, msg, len(msg), err, w, len(w))
					return
				}
			}
			if msg, err := r.Next(); err != io.EOF {
				t.Errorf("reads of %d bytes: after the last line: %.40q, %v; want EOF", size, msg, err)
			}
		})
	}
	wg.Wait()
}
