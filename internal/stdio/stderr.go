package stdio

import (
	"bytes"
	"io"
	"log/slog"
	"strings"
	"sync"
)

// Bounds on the stderr lines a stdio server's exit error quotes.
const (
	stderrTailLines = 20
	stderrTailBytes = 4 << 10
)

// A stderrLogger turns a stdio server's stderr into log records, one per
// line, and keeps its last lines (stderrTailLines, stderrTailBytes) for
// the error that reports the server's exit.
type stderrLogger struct {
	logger *slog.Logger
	server string

	mu        sync.Mutex
	buf       []byte   // an incomplete last line
	last      []string // the last lines, oldest first
	lastBytes int      // their total length
}

// Write implements [io.Writer]: it logs each complete line of p, once
// w.mu is released: the Logger is user code.
func (w *stderrLogger) Write(p []byte) (int, error) {
	w.mu.Lock()
	w.buf = append(w.buf, p...)
	var lines []string
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		lines = append(lines, w.keepLocked(strings.TrimRight(string(w.buf[:i]), "\r")))
		w.buf = w.buf[i+1:]
	}
	if len(w.buf) > 64<<10 { // a very long line without newline: log it as is
		lines = append(lines, w.restLocked()...)
	}
	w.mu.Unlock()
	w.log(lines)
	return len(p), nil
}

// ReadFrom implements io.ReaderFrom, which os/exec's copy of the server's
// stderr uses, reading through a buffer of stderrReadBytes rather than the
// 32 KiB of io.Copy, kept for the connection's life.
func (w *stderrLogger) ReadFrom(r io.Reader) (int64, error) {
	buf := make([]byte, stderrReadBytes)
	var total int64
	for {
		n, err := r.Read(buf)
		if n > 0 {
			w.Write(buf[:n])
			total += int64(n)
		}
		if err == io.EOF {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
}

// stderrReadBytes is the size of a stderrLogger's read buffer.
const stderrReadBytes = 2 << 10

// flush logs an incomplete last line, once the process is gone.
func (w *stderrLogger) flush() {
	w.mu.Lock()
	lines := w.restLocked()
	w.mu.Unlock()
	w.log(lines)
}

// restLocked keeps the buffered text as a line, and returns it to log (none
// when nothing is buffered); w.mu must be held.
func (w *stderrLogger) restLocked() []string {
	if len(w.buf) == 0 {
		return nil
	}
	line := w.keepLocked(string(w.buf))
	w.buf = w.buf[:0]
	return []string{line}
}

// keepLocked keeps line among the last, and returns it; w.mu must be held.
func (w *stderrLogger) keepLocked(line string) string {
	kept := line
	if len(kept) > stderrTailBytes {
		kept = strings.ToValidUTF8(kept[:stderrTailBytes-len("…")], "") + "…"
	}
	w.last = append(w.last, kept)
	w.lastBytes += len(kept)
	for len(w.last) > stderrTailLines || w.lastBytes > stderrTailBytes {
		w.lastBytes -= len(w.last[0])
		w.last = w.last[1:]
	}
	return line
}

// log logs lines, one record each. w.mu must not be held.
func (w *stderrLogger) log(lines []string) {
	for _, line := range lines {
		w.logger.Info("mcpadapter: server stderr", "server", w.server, "line", line)
	}
}

// tail returns the last lines, newline separated.
func (w *stderrLogger) tail() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.Join(w.last, "\n")
}
