package wire

import (
	"bufio"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestResponseAnswered: on an event stream, answered is called once, as
// the first response (or the error response standing for one over the
// bound) is passed on, and not for the server's notifications and
// requests before it.
func TestResponseAnswered(t *testing.T) {
	notification := `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}`
	request := `{"jsonrpc":"2.0","id":"s1","method":"elicitation/create","params":{"message":"?","requestedSchema":{"type":"object"}}}`
	response := `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`
	big := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"` + strings.Repeat("x", 1<<10) + `"}]}}`
	for name, answer := range map[string]string{"response": response, "over the bound": big} {
		t.Run(name, func(t *testing.T) {
			stream := "data: " + notification + "\n\ndata: " + request + "\n\ndata: " + answer + "\n\ndata: " + response + "\n\n"
			resp := &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: io.NopCloser(strings.NewReader(stream))}
			answered := 0
			testScreen(512, nil).ResponseAnswered(nil, resp, func() { answered++ })
			br := bufio.NewReader(resp.Body)
			for i := 0; ; i++ {
				line, err := br.ReadString('\n')
				if strings.HasPrefix(line, "data: ") {
					want := 0
					if i >= 4 { // the notification and the request: two lines each
						want = 1
					}
					if answered != want {
						t.Errorf("answered %d times when event %q was read, want %d", answered, line[:min(len(line), 60)], want)
					}
				}
				if err != nil {
					break
				}
			}
			if answered != 1 {
				t.Errorf("answered %d times, want 1", answered)
			}
		})
	}
}
