package agent

import (
	"encoding/json"
	"testing"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testing/testserver"
)

func TestMain(m *testing.M) { testserver.Main(m) }

// stateKey is the booking server's key for its request state.
const stateKey = "k1"

// newAdapter returns an Adapter of cfg, closed when the test ends.
func newAdapter(t testing.TB, cfg mcpadapter.Config) *mcpadapter.Adapter {
	t.Helper()
	a, err := mcpadapter.New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

// listTools returns the tools of a.
func listTools(t testing.TB, a *mcpadapter.Adapter) mcpadapter.Toolset {
	t.Helper()
	ts, err := a.ListTools(t.Context())
	if err != nil {
		t.Fatalf("ListTools: %v", err)
	}
	return ts
}

// memServer is an in-memory server entry for s.
func memServer(s *testserver.Server) mcpadapter.Server {
	return mcpadapter.Server{Transport: s.Transport()}
}

// stdioServer is a stdio server entry running the test binary as kind.
func stdioServer(t testing.TB, kind string) mcpadapter.Server {
	cmd, args, env := testserver.Command(t, kind)
	return mcpadapter.Server{Command: cmd, Args: args, Env: env}
}

// bookingServer is a server with the booking tool (input requests sealed
// with stateKey).
func bookingServer(legacy bool) *testserver.Server {
	return testserver.New(testserver.Options{Legacy: legacy, StateKey: stateKey}).AddBooking()
}

// destructiveCall is an approval policy: calls of tools marked destructive.
func destructiveCall(call mcpadapter.ToolCall) bool {
	ann := call.Metadata.Annotations()
	return ann != nil && ann.DestructiveHint != nil && *ann.DestructiveHint
}

// dateAnswer resolves the booking's date request with d.
func dateAnswer(d string) mcpadapter.Resolution {
	return mcpadapter.Answered(map[string]mcpadapter.Answer{"date": {Action: mcpadapter.Accept, Content: map[string]any{"date": d}}})
}

// serverRuns returns the run count of tool at ts's server "s" (its "runs"
// tool).
func serverRuns(t *testing.T, ts mcpadapter.Toolset, tool string) int {
	t.Helper()
	res, err := ts.Lookup("s__runs").Invoke(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var runs map[string]int
	if err := json.Unmarshal([]byte(res.Text()), &runs); err != nil {
		t.Fatalf("runs = %q: %v", res.Text(), err)
	}
	return runs[tool]
}
