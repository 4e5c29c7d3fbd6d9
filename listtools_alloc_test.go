package mcpadapter

import (
	"runtime"
	"testing"
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
