package wire

import (
	"fmt"
	"strings"
	"testing"
)

// TestToolListAllocs: the check that the SDK can decode each descriptor of
// a tools/list page builds nothing of its schemas (skipJSON), so that
// screening a page costs a few allocations per tool whatever its schemas
// hold: 13 for these descriptors (the Tool, its strings and annotations),
// whose two schemas of four properties took 82 more when decoded.
func TestToolListAllocs(t *testing.T) {
	const tools = 100
	descs := make([]string, tools)
	for i := range descs {
		descs[i] = fmt.Sprintf(`{"name":"tool_%03d","description":"Tool %d.","inputSchema":{"type":"object","properties":{"city":{"type":"string","description":"City"},"units":{"type":"string","enum":["c","f"]},"days":{"type":"integer","minimum":1},"detail":{"type":"boolean"}},"required":["city"]},"outputSchema":{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"number"},"c":{"type":"array","items":{"type":"string"}},"d":{"type":"object"}}},"annotations":{"readOnlyHint":true}}`, i, i)
	}
	msg := []byte(`{"jsonrpc":"2.0","id":7,"result":{"tools":[` + strings.Join(descs, ",") + `]}}`)
	s := New(Options{MaxMessageBytes: 16 << 20})
	allocs := testing.AllocsPerRun(20, func() {
		if _, changed, err := s.message(msg, nil, new(record)); changed || err != nil {
			t.Fatal(changed, err)
		}
	})
	if perTool := allocs / tools; perTool > 16 {
		t.Errorf("screening a page of %d tools: %.1f allocations per tool, want at most 16", tools, perTool)
	}
}

// TestLongKeyNotDecoded: a key too long to be one the screen looks for is
// not decoded, however many escapes it holds: screening a message with a
// 1 MiB escaped key in its result allocates no more than one without it.
func TestLongKeyNotDecoded(t *testing.T) {
	s := New(Options{MaxMessageBytes: 16 << 20})
	plain := []byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`)
	long := []byte(`{"jsonrpc":"2.0","id":1,"result":{"` + strings.Repeat(`\u0041`, 1<<20/6) + `":1,"content":[]}}`)
	want := testing.AllocsPerRun(5, func() { s.message(plain, nil, new(record)) })
	if got := testing.AllocsPerRun(5, func() { s.message(long, nil, new(record)) }); got > want {
		t.Errorf("screening a message with a long escaped key: %v allocations, want at most %v (as without it)", got, want)
	}
}
