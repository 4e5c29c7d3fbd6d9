package mcpadapter

import (
	"fmt"
	"testing"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// bigCatalog returns an in-memory server with n tools whose list results
// carry ttlMs.
func bigCatalog(n, ttlMs int) *testserver.Server {
	s := testserver.New(testserver.Options{TTLMs: ttlMs})
	for i := range n {
		s.AddTool(fmt.Sprintf("tool_%04d", i))
	}
	return s
}

// BenchmarkListTools measures ListTools of one server with a 1000-tool
// catalog (ttlMs 60000, modern era, in memory): served from the cache
// (CacheUse) against asked for every time (CacheBypass: tools/list, then the
// wrappers of the unchanged descriptors are found again).
func BenchmarkListTools(b *testing.B) {
	const tools = 1000
	s := bigCatalog(tools, 60000)
	a := newAdapter(b, Config{Servers: map[string]Server{"big": memServer(s, ModeAuto)}})
	if _, err := a.ListTools(b.Context()); err != nil {
		b.Fatal(err)
	}
	for _, bm := range []struct {
		name string
		mode CacheMode
	}{{"cached", CacheUse}, {"bypass", CacheBypass}} {
		b.Run(bm.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				ts, err := a.ListTools(b.Context(), WithCacheMode(bm.mode))
				if err != nil || len(ts) != tools {
					b.Fatalf("ListTools(%q) = %d tools, %v", bm.mode, len(ts), err)
				}
			}
		})
	}
}
