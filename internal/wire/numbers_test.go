package wire

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestToolSchemaNumbersOutOfRange: a tool whose schema holds a number no
// float64 holds is dropped from its tools/list page: go-sdk decodes the
// schemas into interface values, and such a number fails the whole page.
// Numbers in range, in strings and keys, and literals pass.
func TestToolSchemaNumbersOutOfRange(t *testing.T) {
	tests := []struct {
		schemas string // of tool "a"
		keep    bool
	}{
		{`"inputSchema":{"type":"object","maximum":1e400}`, false},
		{`"inputSchema":{"type":"object"},"outputSchema":{"x":[1,-1E+999]}`, false},
		{`"inputSchema":{"x":-0.5e-3,"y":10}`, true},
		{`"inputSchema":{"type":"object","maximum":1e308,"minimum":-2.5E-400,"default":[true,false,null,"1e400"],"1e400":0}`, true},
		{`"inputSchema":{"d":"\"1e400\\"}`, true},
	}
	for _, tt := range tests {
		msg := `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a",` + tt.schemas + `},{"name":"b","inputSchema":{}}]}}`
		var out []byte
		if err := testScreen(1<<20, nil).each([]byte(msg), nil, nil, func(m []byte, _ bool, _ *record) { out = m }); err != nil {
			t.Fatal(err)
		}
		got, err := jsonrpc.DecodeMessage(out)
		if err != nil {
			t.Fatalf("the SDK cannot decode %s: %v", out, err)
		}
		var res mcp.ListToolsResult
		if err := json.Unmarshal(got.(*jsonrpc.Response).Result, &res); err != nil {
			t.Errorf("screened %s: the SDK fails the page: %v", msg, err)
			continue
		}
		var names []string
		for _, tool := range res.Tools {
			names = append(names, tool.Name)
		}
		if want := []string{"b"}; tt.keep && !slices.Equal(names, []string{"a", "b"}) || !tt.keep && !slices.Equal(names, want) {
			t.Errorf("screened %s: tools %v (keep a: %v)", msg, names, tt.keep)
		}
	}
}
