package stdio

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpadapter/mcpadapter/internal/wire"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// decodeSeeds are JSON-RPC lines, good and bad, that ReadLine must decode
// as jsonrpc.DecodeMessage does, whatever the screen passes on of them:
// with the members the screen tracks at the top level and elsewhere, under
// other names, twice, escaped, of every type.
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
	// Members twice: the last counts, but two error objects merge.
	`{"jsonrpc":"2.0","id":1,"id":2,"result":{}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"a":1},"result":{"b":2}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"a","data":5},"error":{"code":2}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"a"},"error":null,"result":{}}`,
	`{"jsonrpc":"2.0","method":"a","method":"b","params":{},"params":[1]}`,
	`{"jsonrpc":"1.0","jsonrpc":"2.0","id":1,"result":{}}`,
	`{"jsonrpc":"2.0","id":"x","id":null,"result":{}}`,
	`{"jsonrpc":"2.0","id":{"a":1},"id":2,"result":{}}`,
	`{"jsonrpc":"2.0","id":[1],"id":"x","method":"m"}`,
	`{"jsonrpc":"2.0","id":"` + strings.Repeat("i", 300) + `","id":3,"result":{}}`,
	`{"jsonrpc":"2.0","method":"m","id":1,"method":"n"}`,
	// Escaped keys and values.
	`{"jsonrpc":"2.0","\u0069d":4,"result":{}}`,
	`{"jsonrpc":"2\u002e0","id":4,"result":{}}`,
	`{"\u006a\u0073onrpc":"2.0","id":4,"r\u0065sult":{"x":"\u00e9"}}`,
	`{"jsonrpc":"2.0","id":"a\"b","result":{}}`,
	`{"jsonrpc":"2.0","id":"\u00e9\ud800","result":{}}`,
	`{"jsonrpc":"2.0","method":"tools\/call","id":1,"params":{}}`,
	`{"jsonrpc":"2.0","method":"not\u0000ify","params":{}}`,
	"{\"jsonrpc\":\"2.0\",\"method\":\"bad\xffutf8\",\"params\":{}}",
	"{\"jsonrpc\":\"2.0\",\"id\":\"bad\xff\",\"result\":{}}",
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"t\":\"bad\xff\"}}",
	// Members of those names inside others.
	`{"jsonrpc":"2.0","id":1,"result":{"id":2,"method":"x","params":{},"error":{"code":1}}}`,
	`{"jsonrpc":"2.0","method":"m","params":{"id":9,"method":"n","result":{},"jsonrpc":"1.0"}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"m","data":{"id":2,"error":null}}}`,
	// Ids of every type.
	`{"jsonrpc":"2.0","id":null,"result":{}}`,
	`{"jsonrpc":"2.0","id":null,"method":"m"}`,
	`{"jsonrpc":"2.0","id":0,"result":{}}`,
	`{"jsonrpc":"2.0","id":-0,"result":{}}`,
	`{"jsonrpc":"2.0","id":-7,"result":{}}`,
	`{"jsonrpc":"2.0","id":1e3,"result":{}}`,
	`{"jsonrpc":"2.0","id":1E-3,"result":{}}`,
	`{"jsonrpc":"2.0","id":-1.5,"result":{}}`,
	`{"jsonrpc":"2.0","id":9007199254740993,"result":{}}`,
	`{"jsonrpc":"2.0","id":1e300,"result":{}}`,
	`{"jsonrpc":"2.0","id":1e400,"result":{}}`,
	`{"jsonrpc":"2.0","id":false,"method":"m"}`,
	`{"jsonrpc":"2.0","id":{},"result":{}}`,
	`{"jsonrpc":"2.0","id":[1],"method":"m"}`,
	`{"jsonrpc":"2.0","id":"","result":{}}`,
	`{"jsonrpc":"2.0","id":"` + strings.Repeat("i", 300) + `","result":{}}`,
	`{"jsonrpc":"2.0","id":` + strings.Repeat("1", 300) + `,"result":{}}`,
	// Methods, results and errors of other types.
	`{"jsonrpc":"2.0","id":1,"method":null}`,
	`{"jsonrpc":"2.0","method":"m","params":null}`,
	`{"jsonrpc":"2.0","method":"m","params":"s"}`,
	`{"jsonrpc":"2.0","id":1,"result":null}`,
	`{"jsonrpc":"2.0","id":1,"result":[1,2]}`,
	`{"jsonrpc":"2.0","id":1,"result":"s","error":{"code":5,"message":"m","data":null}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":5,"message":"\u00e9\n","data":[1,"x"]}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":5.5,"message":"m"}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"Code":5,"MESSAGE":"m","Data":1}}`,
	`{"jsonrpc":"2.0","id":1,"error":{}}`,
	`{"jsonrpc":"2.0","id":1,"error":5}`,
	`{"jsonrpc":2,"id":1,"result":{}}`,
	`{"id":1,"result":{}}`,
	` {"jsonrpc" : "2.0" , "id" : 1 , "result" : { "a" : [ 1 ] } } `,
	`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"` + strings.Repeat("a\\n\\u00e9", 20000) + `"}]}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"video","uri":"u"}]}}`,
	`{"jsonrpc":"2.0","id":1,"unknown":{"x":[1,{"y":2}]},"result":{}}`,
}

// sameDecoding fails t unless ReadLine decodes each line the screen makes
// of data as jsonrpc.DecodeMessage does: the same message, or errors with
// the same text. The line is overwritten before the comparison: what
// ReadLine keeps must be copied.
func sameDecoding(t *testing.T, data []byte) {
	lines := wire.New(wire.Options{MaxMessageBytes: 1 << 20}).Lines(bytes.NewReader(append(data, '\n')))
	for {
		line, err := lines.Next()
		if err != nil {
			return
		}
		want, wantErr := jsonrpc.DecodeMessage(line)
		env, known := lines.Envelope()
		got, err := decodeMessage(line, env, known)
		for i := range line {
			line[i] = ' '
		}
		if (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() {
			t.Fatalf("decodeMessage of %q: error = %v, want %v", data, err, wantErr)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("decodeMessage of %q = %#v, want %#v", data, got, want)
		}
	}
}

// fuzzCorpora returns the inputs of the stored fuzz corpora of this
// package and of internal/wire (their first argument).
func fuzzCorpora(t testing.TB) [][]byte {
	files, err := filepath.Glob(filepath.Join("..", "wire", "testdata", "fuzz", "*", "*"))
	if err != nil {
		t.Fatal(err)
	}
	own, _ := filepath.Glob(filepath.Join("testdata", "fuzz", "*", "*"))
	var inputs [][]byte
	for _, name := range append(files, own...) {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "[]byte("); ok {
				s, err := strconv.Unquote(strings.TrimSuffix(v, ")"))
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				inputs = append(inputs, []byte(s))
				break
			}
		}
		f.Close()
	}
	if len(files) == 0 {
		t.Fatal("no fuzz corpus of internal/wire found")
	}
	return inputs
}

func TestDecodeMessageAsSDK(t *testing.T) {
	for _, line := range decodeSeeds {
		sameDecoding(t, []byte(line))
	}
	for _, data := range fuzzCorpora(t) {
		sameDecoding(t, data)
	}
}

// TestDecodeMessageCopies checks that a decoded message keeps nothing of
// the line, which the stdio connection reuses.
func TestDecodeMessageCopies(t *testing.T) {
	lines := wire.New(wire.Options{MaxMessageBytes: 1 << 20}).Lines(strings.NewReader(`{"jsonrpc":"2.0","id":1,"result":{"a":"b"}}` + "\n"))
	line, err := lines.Next()
	if err != nil {
		t.Fatal(err)
	}
	env, known := lines.Envelope()
	msg, err := decodeMessage(line, env, known)
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
// garbage that dominated the client's CPU per call over stdio): the
// screen's envelope serves, without a parse.
func TestDecodeMessageBytes(t *testing.T) {
	lines := wire.New(wire.Options{MaxMessageBytes: 1 << 20}).Lines(strings.NewReader(`{"jsonrpc":"2.0","id":12,"result":{"content":[{"type":"text","text":"Echo: hello"}]}}` + "\n"))
	line, err := lines.Next()
	if err != nil {
		t.Fatal(err)
	}
	env, known := lines.Envelope()
	if !known {
		t.Fatal("the screen knows no envelope of a plain answer")
	}
	const runs = 100
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range runs {
		if _, err := decodeMessage(line, env, known); err != nil {
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
	for _, data := range fuzzCorpora(f) {
		f.Add(data)
	}
	f.Fuzz(sameDecoding)
}
