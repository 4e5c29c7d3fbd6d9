package mcpadapter

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpadapter/mcpadapter/internal/testing/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sdkCachedTools returns how many tool descriptors go-sdk v1.8.0 holds in
// the (unexported) list cache of cs, over all its pages. Reading through
// reflect is allowed on unexported fields; this pins the SDK's internals.
func sdkCachedTools(t *testing.T, cs *mcp.ClientSession) int {
	t.Helper()
	v := reflect.ValueOf(cs).Elem().FieldByName("toolsCache").FieldByName("cachedValues")
	if !v.IsValid() {
		t.Fatal("go-sdk's ClientSession has no toolsCache.cachedValues any more: update sdkcache.go and sdkcompat.go (entry 4)")
	}
	n := 0
	for it := v.MapRange(); it.Next(); {
		tools := it.Value().Elem().FieldByName("result").Elem().FieldByName("Tools")
		if !tools.IsValid() {
			t.Fatal("go-sdk's cache entries changed: update sdkcache.go and sdkcompat.go (entry 4)")
		}
		n += tools.Len()
	}
	return n
}

// rotatingCursors makes s hand out cursors that change with every listing
// (as signed or timestamped cursors do), and end its listings after one
// page once short is set, without list_changed.
func rotatingCursors(s *testserver.Server, short *atomic.Bool) {
	var listing atomic.Int64
	s.Server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			p, ok := req.GetParams().(*mcp.ListToolsParams)
			if method != "tools/list" || !ok {
				return next(ctx, method, req)
			}
			n := listing.Load()
			if p.Cursor == "" {
				n = listing.Add(1)
			} else if _, real, ok := strings.Cut(p.Cursor, ":"); ok {
				p.Cursor = real
			}
			res, err := next(ctx, method, req)
			if lr, ok := res.(*mcp.ListToolsResult); ok && lr.NextCursor != "" {
				lr.NextCursor = fmt.Sprintf("L%d:%s", n, lr.NextCursor)
				if short.Load() {
					lr.NextCursor = ""
				}
			}
			return res, err
		}
	})
}

// TestSDKCacheBounded: refreshing a modern server whose cursors change
// with every listing leaves go-sdk's list cache holding the current
// catalog only (it used to keep every page of every listing, under its
// cursor, and to search them all at every call), also after a listing
// that shrank. Legacy sessions have no SDK cache; the catalog is the
// same in both eras.
func TestSDKCacheBounded(t *testing.T) {
	for _, legacy := range []bool{false, true} {
		t.Run(eraName(legacy), func(t *testing.T) {
			s := testserver.New(testserver.Options{Legacy: legacy, PageSize: 2, TTLMs: 3600_000}).AddFeatures()
			var short atomic.Bool
			rotatingCursors(s, &short)
			a := newAdapter(t, Config{Servers: map[string]Server{"srv": memServer(s, ModeAuto)}})
			first, names := mustList(t, a, CacheRefresh)
			cs, err := a.Session(t.Context(), "srv")
			if err != nil {
				t.Fatal(err)
			}
			want := func(n int) {
				t.Helper()
				if legacy {
					n = 0
				}
				if got := sdkCachedTools(t, cs); got != n {
					t.Fatalf("the SDK holds %d tools, want %d", got, n)
				}
			}
			for range 20 {
				if _, got := mustList(t, a, CacheRefresh); got != names {
					t.Fatalf("refreshed catalog = %s, want %s", got, names)
				}
				mustList(t, a, CacheBypass)
			}
			want(len(first))
			short.Store(true)
			mustList(t, a, CacheRefresh)
			want(2) // one page

			must(t).result(lookup(t, first, "srv__echo").Invoke(t.Context(), map[string]any{"text": "hi"}))
		})
	}
}

// TestListingMetaSize: a tool's _meta costs what it holds in the catalog
// and the SDK's cache, not the 4.75 KiB map the SDK's decoder makes for
// every _meta (room for 64 entries), nor does the _meta of each page the
// SDK keeps on a modern session: a tool with a one-entry _meta holds under
// 1 KiB more than one without, in either era (compactMeta).
func TestListingMetaSize(t *testing.T) {
	const tools = 200
	held := func(legacy, meta bool) float64 {
		s := testserver.Lean(testserver.Options{Legacy: legacy})
		for i := range tools {
			d := &mcp.Tool{Name: fmt.Sprintf("tool_%03d", i), InputSchema: map[string]any{"type": "object"}}
			if meta {
				d.Meta = mcp.Meta{"acme/owner": "team"}
			}
			s.Server.AddTool(d, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			})
		}
		before := heapInUse()
		a, err := New(Config{Servers: map[string]Server{"s": memServer(s, ModeAuto)}})
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		ts, err := a.ListTools(t.Context())
		if err != nil || len(ts) != tools+1 {
			t.Fatalf("ListTools = %d tools, %v; want %d", len(ts), err, tools+1)
		}
		if got := ts.Lookup("s__tool_000").Descriptor().Meta; meta && !reflect.DeepEqual(got, map[string]any{"acme/owner": "team"}) {
			t.Fatalf("the descriptor's _meta is %v", got)
		}
		return float64(heapInUse()-before) / tools
	}
	held(false, true) // the decoders' type caches, made once
	for _, legacy := range []bool{false, true} {
		if extra := held(legacy, true) - held(legacy, false); extra > 1<<10 {
			t.Errorf("legacy %v: a tool's one-entry _meta holds %.0f bytes, want under 1 KiB", legacy, extra)
		}
	}
}
