package mcpadapter

import (
	"encoding/json"
	"runtime"
	"testing"

	"github.com/mcpadapter/mcpadapter/internal/schemapass"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestCachedListToolsBytes checks what a cached ListTools of a big catalog
// allocates: the copies of the list it hands out (the cache's and
// ListTools' own), not a map of every name for the duplicate check, which
// is done once per set (checkDistinct).
func TestCachedListToolsBytes(t *testing.T) {
	const tools = 2000
	s := bigCatalog(tools, 60000)
	a := newAdapter(t, Config{Servers: map[string]Server{"big": memServer(s, ModeAuto)}})
	list := func() {
		ts, err := a.ListTools(t.Context())
		if err != nil || len(ts) != tools {
			t.Fatalf("ListTools = %d tools, %v", len(ts), err)
		}
	}
	list()
	list() // the first cached ListTools checks the set once
	const runs = 20
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range runs {
		list()
	}
	runtime.ReadMemStats(&after)
	perList := (after.TotalAlloc - before.TotalAlloc) / runs
	// Two copies of the list: 2 × 8 bytes a tool, rounded up to size
	// classes; the name map alone took 30 bytes a tool and more.
	if limit := uint64(3 * 8 * tools); perList > limit {
		t.Errorf("cached ListTools of %d tools allocated %d bytes, want at most %d", tools, perList, limit)
	}
}

// TestWrapperKey: a descriptor's wrapper key is its name and the JSON
// encoding/json gives it, byte for byte, built in a few allocations
// whatever its schemas hold: 4 for this one, where encoding/json takes 38
// (more of each under -race).
func TestWrapperKey(t *testing.T) {
	var d mcp.Tool
	if err := json.Unmarshal([]byte(`{"name":"get_weather","description":"Weather <now> & later.","inputSchema":{"type":"object","properties":{"city":{"type":"string","description":"City name"},"units":{"type":"string","enum":["c","f"]},"days":{"type":"integer","minimum":1.5e3}},"required":["city"]},"annotations":{"readOnlyHint":true,"idempotentHint":false},"_meta":{"z":1,"a":[null,"\u2028"]}}`), &d); err != nil {
		t.Fatal(err)
	}
	want, err := json.Marshal(&d)
	if err != nil {
		t.Fatal(err)
	}
	if got := wrapperKey(&d); got != d.Name+"\x00"+string(want) {
		t.Errorf("wrapperKey = %q, want the name and %s", got, want)
	}
	key := testing.AllocsPerRun(20, func() { wrapperKey(&d) })
	std := testing.AllocsPerRun(20, func() {
		b, _ := json.Marshal(&d)
		_ = d.Name + "\x00" + string(b)
	})
	if key > std/4 {
		t.Errorf("wrapperKey: %.0f allocations, want at most a quarter of encoding/json's %.0f", key, std)
	}
}

// TestDescribeAllocs: the argument hint of a tool costs a few allocations
// beyond its property entries' own: 9 for this schema (the sorted names,
// the entry buffer, the text, the enum's values), where sorting through
// an iterator and concatenating each entry took 13. (Not counted under
// -race.)
func TestDescribeAllocs(t *testing.T) {
	params := schemapass.Normalize(map[string]any{"type": "object", "properties": map[string]any{
		"city":  map[string]any{"type": "string"},
		"units": map[string]any{"type": "string", "enum": []any{"c", "f"}},
	}, "required": []any{"city"}})
	const want = `Weather. Input: JSON object {"city": string (required), "units": "c"|"f"}`
	if got := schemapass.Describe("Weather.", params); got != want {
		t.Fatalf("describe() = %q, want %q", got, want)
	}
	if n := testing.AllocsPerRun(20, func() { schemapass.Describe("Weather.", params) }); n > 9 && !raceEnabled {
		t.Errorf("describe: %.0f allocations, want at most 9", n)
	}
}
