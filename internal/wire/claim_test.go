package wire

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestClaimOversizedBody: the error response that stands for an answer
// over the bound to a request of the screen user's own (an HTTP POST whose
// id has the claim prefix) is claimed, from an application/json body as
// from an event stream; the JSON body's was not, and the request waited
// for an answer that never came.
func TestClaimOversizedBody(t *testing.T) {
	const request = `{"jsonrpc":"2.0","id":"own-1","method":"tasks/get","params":{"taskId":"t"}}`
	answer := `{"jsonrpc":"2.0","id":"own-1","result":{"pad":"` + strings.Repeat("x", 256) + `"}}`
	for contentType, body := range map[string]string{"application/json": answer, "text/event-stream": "data: " + answer + "\n\n"} {
		t.Run(contentType, func(t *testing.T) {
			var claimed [][]byte
			s := New(Options{MaxMessageBytes: 128, ClaimPrefix: "own-", Claim: func(msg []byte) { claimed = append(claimed, bytes.Clone(msg)) }})
			req, err := http.NewRequest(http.MethodPost, "http://server/mcp", strings.NewReader(request))
			if err != nil {
				t.Fatal(err)
			}
			resp := newHTTPResponse(contentType, strings.NewReader(body), len(body))
			s.Response(req, resp)
			got, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatalf("reading the body: %v", err)
			}
			got = bytes.TrimSpace(bytes.TrimPrefix(got, []byte("data: ")))
			if !isFault(got, TooLarge) || !bytes.Contains(got, []byte(`"id":"own-1"`)) {
				t.Fatalf("body = %q, want the fault response for id own-1", got)
			}
			if len(claimed) != 1 || !bytes.Equal(claimed[0], got) {
				t.Errorf("claimed %q, want the fault response once", claimed)
			}
		})
	}
}
