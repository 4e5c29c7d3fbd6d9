package wire

// Fuzz targets of the screen. Their seeds (f.Add and testdata/fuzz/<Name>)
// run in every go test; .ci/run fuzzes each briefly.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
)

// FuzzScanValid holds the scanner to encoding/json: on any input it says
// valid exactly when json.Valid does, and on a valid message the id it
// records is the one a decoder sees (exact keys, the last duplicate
// winning, as the SDK's decoder reads them).
func FuzzScanValid(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{}}`, `{"id":"a\"b","id":-0.5e+3}`, `[1,2,{"a":[true,false,null]}]`,
		`"\u00e9\n"`, `-`, `01`, `1.`, `1e`, `{"a":1,}`, `[1,]`, `{"a" 1}`, `"\x"`, "\"\x01\"", ` 7 `, `{}x`, ``,
		`{"i\u0064":5}`, `{"id":1e400}`, `nul`, `[[[[]]]]`, `{"a":{"b":{"c":"` + strings.Repeat(`\\`, 50) + `"}}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var rec record
		var sc scanner
		sc.init(&rec, 0)
		sc.feed(data)
		sc.finish()
		if got, want := sc.complete(), json.Valid(data); got != want {
			t.Fatalf("scanner says valid=%v, json.Valid says %v, for %q (%s)", got, want, data, sc.err)
		}
		// In two pieces (a stream): a split anywhere changes nothing.
		pieces := record{streaming: true}
		var ps scanner
		ps.init(&pieces, 0)
		cut := len(data) / 3
		ps.feed(data[:cut])
		ps.feed(data[cut:])
		ps.finish()
		if ps.complete() != sc.complete() || !bytes.Equal(pieces.id, rec.id) || pieces.idKind != rec.idKind {
			t.Fatalf("in two pieces, valid=%v id=%q; whole, valid=%v id=%q, for %q", ps.complete(), pieces.id, sc.complete(), rec.id, data)
		}
		var msg map[string]json.RawMessage
		if !sc.complete() || json.Unmarshal(data, &msg) != nil {
			return
		}
		id, ok := msg["id"]
		switch {
		case !ok || id[0] == '{' || id[0] == '[' || len(id) > maxCapture:
			if ok && len(id) <= maxCapture && rec.id != nil && rec.idKind != id[0] {
				t.Fatalf("recorded id %s of kind %c, decoder sees %s", rec.id, rec.idKind, id)
			}
		case !bytes.Equal(rec.id, id):
			t.Fatalf("recorded id %q, decoder sees %q in %q", rec.id, id, data)
		}
	})
}

// FuzzScreenMessage feeds arbitrary server output through the screen: a
// complete message, and the same bytes as a stdio stream and an event
// stream. Nothing panics; what passes is the message itself or valid JSON;
// no line longer than the bound reaches the SDK.
func FuzzScreenMessage(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"ok"}]}}`,
		`{"jsonrpc":"2.0","id":"a\"b","result":{"tools":[{"name":"x","inputSchema":{}},{"name":5},{"name":"y","annotations":"z"}]}}`,
		`{"jsonrpc":"2.0","result":{},"id":7}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse"}}`,
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"` + strings.Repeat("x", 300) + `"}}`,
		`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"broken`,
		`{"jsonrpc":"2.0","id":4,"result":` + strings.Repeat(`[`, 1100) + strings.Repeat(`]`, 1100) + `}`,
		`{"i\u0064":5,"jsonrpc":"2.0","result":{}}`,
		`[{"jsonrpc":"2.0","id":1,"result":{}}]`,
		`{"jsonrpc":"2.0","id":1e400,"result":{}}`,
		`{"jsonrpc":"2.0","id":2,"result":{"inputRequests":{"k":null},"resultType":"input_required"}}`,
		`{"jsonrpc":"2.0","id":2,"result":{"resultType":"unknown","content":[]}}`,
		`{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"t","inputSchema":{},"execution":{"taskSupport":"required"}}]}}`,
		"banner line\n{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n",
		"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n: comment\ndata:\n\n",
		"event: message\nid: 7\ndata: [{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}},{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}]\n\n",
	} {
		f.Add([]byte(seed), 256)
	}
	f.Fuzz(func(t *testing.T, data []byte, limit int) {
		limit = 16 + abs(limit)%4096
		s := testScreen(limit, io.Discard)
		if len(data) <= limit {
			err := s.each(data, nil, nil, func(out []byte, changed bool, _ *record) {
				if changed && !json.Valid(out) {
					t.Fatalf("each(%q) passed %q, not JSON", data, out)
				}
				if !changed && !bytes.Equal(out, data) {
					t.Fatalf("each(%q) changed it without saying so: %q", data, out)
				}
			})
			_ = err
		}
		lines, err := io.ReadAll(s.Lines(bytes.NewReader(data)))
		if err == nil {
			for line := range bytes.Lines(lines) {
				if len(bytes.TrimRight(line, "\n")) > limit && !isFault(line, "") {
					t.Fatalf("a line of %d bytes passed a bound of %d: %q", len(line), limit, line)
				}
			}
		}
		events := s.newEventReader(io.NopCloser(nil), bufio.NewReaderSize(bytes.NewReader(data), 16), func() []byte { return []byte("1") })
		_, _ = io.ReadAll(events)
	})
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
