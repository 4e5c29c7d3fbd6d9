package elicit

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestDecodeRequests: null or non-object entries (on which go-sdk's
// decoder panics) and too many requests are refused; elicitations decode.
func TestDecodeRequests(t *testing.T) {
	m, err := DecodeRequests(json.RawMessage(`{"q":{"method":"elicitation/create","params":{"message":"?","requestedSchema":{"type":"object"}}}}`))
	if err != nil || len(m) != 1 {
		t.Fatalf("DecodeRequests = %v, %v", m, err)
	}
	many := make([]string, maxRequests+1)
	for i := range many {
		many[i] = fmt.Sprintf(`"k%d":{}`, i)
	}
	for _, bad := range []string{`{"q":null}`, `{"q":1}`, `[]`, `{` + strings.Join(many, ",") + `}`} {
		if _, err := DecodeRequests(json.RawMessage(bad)); err == nil {
			t.Errorf("DecodeRequests(%.40s) accepted", bad)
		}
	}
}
