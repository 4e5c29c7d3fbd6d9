package stdio

import (
	"reflect"
	"runtime"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// decodeSeeds are JSON-RPC lines, good and bad, that decodeMessage must
// decode as jsonrpc.DecodeMessage does.
var decodeSeeds = []string{
	`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"hi"}]}}`,
	`{"jsonrpc":"2.0","id":"abc","result":{}}`,
	`{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"no such method","data":{"x":1}}}`,
	`{"jsonrpc":"2.0","id":3,"error":null,"result":1}`,
	`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}`,
	`{"jsonrpc":"2.0","id":9,"method":"elicitation/create","params":{}}`,
	`{"jsonrpc":"2.0","id":9,"method":""}`,
	`{"jsonrpc":"2.0","ID":9,"Result":{}}`,
	`{"jsonrpc":"2.0","id":9,"METHOD":"x"}`,
	`{"jsonrpc":"1.0","id":1,"result":{}}`,
	`{"jsonrpc":"2.0","id":true,"result":{}}`,
	`{"jsonrpc":"2.0","result":{}}`,
	`{"jsonrpc":"2.0","id":1,"method":7}`,
	`{"jsonrpc":"2.0","id":1.5,"result":{}} `,
	`[{"jsonrpc":"2.0","id":1,"result":{}}]`,
	`{"jsonrpc":"2.0","id":1,"result":{}`,
	`not json`,
	``,
}

// sameDecoding fails t unless decodeMessage and jsonrpc.DecodeMessage
// agree on line: the same message, or errors with the same text.
func sameDecoding(t *testing.T, line []byte) {
	want, wantErr := jsonrpc.DecodeMessage(line)
	got, err := decodeMessage(line)
	if (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() {
		t.Fatalf("decodeMessage(%q) error = %v, want %v", line, err, wantErr)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("decodeMessage(%q) = %#v, want %#v", line, got, want)
	}
}

func TestDecodeMessageAsSDK(t *testing.T) {
	for _, line := range decodeSeeds {
		sameDecoding(t, []byte(line))
	}
}

// TestDecodeMessageCopies checks that a decoded message keeps nothing of
// the line, which the stdio connection reuses.
func TestDecodeMessageCopies(t *testing.T) {
	line := []byte(`{"jsonrpc":"2.0","id":1,"result":{"a":"b"}}`)
	msg, err := decodeMessage(line)
	if err != nil {
		t.Fatal(err)
	}
	for i := range line {
		line[i] = ' '
	}
	if got := string(msg.(*jsonrpc.Response).Result); got != `{"a":"b"}` {
		t.Fatalf("Result after the line was reused = %q", got)
	}
}

// TestDecodeMessageBytes checks that decoding a small answer allocates
// about its size, not the 32 KiB read buffer of the SDK's decoder (the
// garbage that dominated the client's CPU per call over stdio).
func TestDecodeMessageBytes(t *testing.T) {
	line := []byte(`{"jsonrpc":"2.0","id":12,"result":{"content":[{"type":"text","text":"Echo: hello"}]}}`)
	const runs = 100
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range runs {
		if _, err := decodeMessage(line); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	if perDecode := (after.TotalAlloc - before.TotalAlloc) / runs; perDecode > 2<<10 {
		t.Errorf("decodeMessage allocated %d bytes per small answer, want under 2 KiB", perDecode)
	}
}

func FuzzDecodeMessage(f *testing.F) {
	for _, line := range decodeSeeds {
		f.Add([]byte(line))
	}
	f.Fuzz(func(t *testing.T, line []byte) { sameDecoding(t, line) })
}
