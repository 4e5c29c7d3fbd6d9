package wire

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// progressMessages are what a server sends in TestProgress: progress
// notifications 1 to 4 (2 and 3 in a batch), each in its own line or
// event, among a log notification, a request that has the progress
// method, a progress notification without params and the answer, last.
var progressMessages = []string{
	progressNote(1),
	`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`,
	`{"jsonrpc":"2.0","id":"s1","method":"notifications/progress","params":{"progressToken":"t","progress":9}}`,
	"[" + progressNote(2) + "," + progressNote(3) + "]",
	`{"jsonrpc":"2.0","method":"notifications/progress"}`,
	progressNote(4),
	`{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`,
}

// progressNote is a progress notification of token "t" at n.
func progressNote(n int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":%d}}`, n)
}

// TestProgress: the screen hands the params of each progress notification
// to Options.Progress, in order, before it passes on what follows, the
// answer among it: from lines (a batch's members one by one), from an
// event stream, from decoded messages. Other notifications, requests and
// a notification without params are not handed on.
func TestProgress(t *testing.T) {
	var want []string
	for n := range 4 {
		want = append(want, fmt.Sprintf(`{"progressToken":"t","progress":%d}`, n+1))
	}
	screen := func(got *[]string) *Screen {
		return New(Options{MaxMessageBytes: 1 << 20, Progress: func(params []byte) { *got = append(*got, string(params)) }})
	}
	// check fails t unless got is want when the answer, msg, is read.
	check := func(t *testing.T, msg string, got []string) bool {
		t.Helper()
		if !strings.Contains(msg, `"id":1`) {
			return false
		}
		if !slices.Equal(got, want) {
			t.Errorf("progress handed on before the answer: %q, want %q", got, want)
		}
		return true
	}
	t.Run("lines", func(t *testing.T) {
		var got []string
		r := screen(&got).Lines(strings.NewReader(strings.Join(progressMessages, "\n") + "\n"))
		for {
			msg, err := r.Next()
			if err != nil {
				t.Fatalf("the answer was not read: %v", err)
			}
			if check(t, string(msg), got) {
				return
			}
		}
	})
	t.Run("events", func(t *testing.T) {
		var got []string
		stream := "data: " + strings.Join(progressMessages, "\n\ndata: ") + "\n\n"
		resp := &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: io.NopCloser(strings.NewReader(stream))}
		screen(&got).Response(nil, resp)
		br := bufio.NewReader(resp.Body)
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				t.Fatalf("the answer was not read: %v", err)
			}
			if check(t, line, got) {
				return
			}
		}
	})
	t.Run("decoded", func(t *testing.T) {
		var got []string
		var msgs []jsonrpc.Message
		for _, m := range progressMessages {
			if m[0] == '[' {
				continue // the SDK decodes no batch: 2 and 3 come alone
			}
			if m == progressNote(4) {
				msgs = append(msgs, decode(t, progressNote(2)), decode(t, progressNote(3)))
			}
			msgs = append(msgs, decode(t, m))
		}
		c := screen(&got).Conn(&listConn{msgs: msgs})
		for {
			msg, err := c.Read(t.Context())
			if err != nil {
				t.Fatalf("the answer was not read: %v", err)
			}
			b, _ := jsonrpc.EncodeMessage(msg)
			if check(t, string(b), got) {
				return
			}
		}
	})
}

// decode decodes msg, a JSON-RPC message.
func decode(t *testing.T, msg string) jsonrpc.Message {
	t.Helper()
	m, err := jsonrpc.DecodeMessage([]byte(msg))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// A listConn is a connection that reads msgs, then io.EOF.
type listConn struct{ msgs []jsonrpc.Message }

func (c *listConn) Read(context.Context) (jsonrpc.Message, error) {
	if len(c.msgs) == 0 {
		return nil, io.EOF
	}
	m := c.msgs[0]
	c.msgs = c.msgs[1:]
	return m, nil
}

func (c *listConn) Write(context.Context, jsonrpc.Message) error { return nil }
func (c *listConn) Close() error                                 { return nil }
func (c *listConn) SessionID() string                            { return "" }
