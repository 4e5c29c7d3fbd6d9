package agent

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testing/testserver"
	"github.com/mcpadapter/mcpadapter/mcpadaptertest"
	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms"
)

// catalogToolset connects, in memory, one server per product of
// testserver's big catalog (100 tools each, named after its product), and
// with booking the booking server "s", and returns their tools and
// servers.
func catalogToolset(t *testing.T, booking bool) (mcpadapter.Toolset, map[string]*testserver.Server) {
	t.Helper()
	servers := make(map[string]*testserver.Server)
	if booking {
		servers["s"] = bookingServer(false)
	}
	for _, d := range testserver.CatalogDomains() {
		servers[d] = testserver.New(testserver.Options{Name: d}).AddCatalog(d)
	}
	cfg := mcpadapter.Config{Servers: make(map[string]mcpadapter.Server)}
	for name, s := range servers {
		cfg.Servers[name] = memServer(s)
	}
	return listTools(t, newAdapter(t, cfg)), servers
}

// toolsBytes is the size of tools as a request carries them.
func toolsBytes(t testing.TB, tools []llms.Tool) int {
	t.Helper()
	b, err := json.Marshal(tools)
	if err != nil {
		t.Fatal(err)
	}
	return len(b)
}

// toolNames returns the names of tools.
func toolNames(tools []llms.Tool) []string {
	names := make([]string, len(tools))
	for i, tool := range tools {
		names[i] = tool.Function.Name
	}
	return names
}

// TestAgentToolSearch: over 1,000 tools and a booking tool, the agent with
// tool search offers the search tool alone, then what the model found; it
// refuses a tool not found yet and runs nothing; a run paused at the
// booking's interrupt in the batch that found it is stored as JSON and
// resumed by a fresh agent and Executor, which still offer every tool
// found before the pause and run them. No request carries 5% of the bytes
// of offering every tool.
func TestAgentToolSearch(t *testing.T) {
	ts, servers := catalogToolset(t, true)
	expense := "hr__" + testserver.CatalogToolName("hr", "create", "expense_report")
	model := finalModel{Model: mcpadaptertest.NewModel(
		mcpadaptertest.ToolCalls(
			mcpadaptertest.ToolCall("c1", expense, `{"employee_id":"emp_7"}`),
			mcpadaptertest.ToolCall("c2", "search_tools", `{"query":"claim back taxi receipts"}`),
		),
		mcpadaptertest.ToolCalls(
			mcpadaptertest.ToolCall("c3", expense, `{"employee_id":"emp_7"}`),
			mcpadaptertest.ToolCall("c4", "search_tools", `{"query":"book a restaurant table"}`),
			mcpadaptertest.ToolCall("c5", "s__book_table", `{"party":4}`),
		),
		mcpadaptertest.ToolCalls(mcpadaptertest.ToolCall("c6", expense, `{"employee_id":"emp_8"}`)),
	)}
	newExecutor := func() *Executor {
		ag, err := New(model, ts, WithToolSearch(nil))
		if err != nil {
			t.Fatal(err)
		}
		return NewExecutor(ag)
	}
	_, err := chains.Call(t.Context(), newExecutor(), map[string]any{"input": "Claim my taxi receipts, then book a table for 4"})
	var paused *PausedRun
	var intr *mcpadapter.Interrupt
	if !errors.As(err, &paused) || !errors.As(err, &intr) {
		t.Fatalf("run error = %v, want a *PausedRun at the booking's *Interrupt", err)
	}
	b, err := json.Marshal(paused)
	if err != nil {
		t.Fatal(err)
	}
	var stored PausedRun
	if err := json.Unmarshal(b, &stored); err != nil {
		t.Fatal(err)
	}
	out, err := newExecutor().Resume(t.Context(), &stored, dateAnswer("2026-09-18"))
	if err != nil {
		t.Fatalf("Resume: %v", err)
	}
	if got := out["output"].(string); !strings.Contains(got, "emp_8") {
		t.Errorf("final answer %q, want the last expense report's result", got)
	}

	opts := model.Options()
	if len(opts) != 4 {
		t.Fatalf("the model was asked %d times, want 4", len(opts))
	}
	if got := toolNames(opts[0].Tools); !slices.Equal(got, []string{"search_tools"}) {
		t.Errorf("first request offers %v, want the search tool alone", got)
	}
	if got := toolNames(opts[1].Tools); !slices.Contains(got, expense) || slices.Contains(got, "s__book_table") {
		t.Errorf("after the first search the model is offered %v, want %s and not s__book_table", got, expense)
	}
	for _, i := range []int{2, 3} {
		if got := toolNames(opts[i].Tools); !slices.Contains(got, expense) || !slices.Contains(got, "s__book_table") || got[0] != "search_tools" {
			t.Errorf("request %d (after the resume) offers %v, want the search tool, %s and s__book_table", i+1, got, expense)
		}
	}
	if got := lastObservation(model.Requests()[1][:3]); !strings.Contains(got, "is not available yet") {
		t.Errorf("the call of a tool not found was answered %q, want the message to search", got)
	}
	if runs := servers["hr"].Runs(testserver.CatalogToolName("hr", "create", "expense_report")); runs != 2 {
		t.Errorf("%s ran %d times, want 2 (the call before any search is refused)", expense, runs)
	}
	if runs := servers["s"].Runs("book_table"); runs != 2 {
		t.Errorf("book_table ran %d times, want 2 (paused, then resumed)", runs)
	}
	all := toolsBytes(t, ts.LLMTools())
	for i, o := range opts {
		if n := toolsBytes(t, o.Tools); n*20 > all {
			t.Errorf("request %d carries %d bytes of tools, more than 5%% of the catalog's %d", i+1, n, all)
		}
	}
}

// TestAgentToolSearchInAgentsExecutor: in langchaingo's agents.Executor
// the search tool is one of the agent's tools, and what a search found,
// read from the step's observation, is offered on the next plan and runs.
func TestAgentToolSearchInAgentsExecutor(t *testing.T) {
	ts, servers := catalogToolset(t, true)
	refund := "billing__" + testserver.CatalogToolName("billing", "create", "refund")
	model := finalModel{Model: mcpadaptertest.NewModel(
		mcpadaptertest.ToolCalls(mcpadaptertest.ToolCall("c1", "find", `{"query":"refund a payment charged twice"}`)),
		mcpadaptertest.ToolCalls(mcpadaptertest.ToolCall("c2", refund, `{"payment_id":"pay_1"}`)),
	)}
	ag, err := New(model, ts, WithToolSearch(&mcpadapter.ToolSearchOptions{Name: "find"}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := chains.Run(t.Context(), agents.NewExecutor(ag), "Refund Acme's double charge"); err != nil {
		t.Fatal(err)
	}
	opts := model.Options()
	if got := toolNames(opts[0].Tools); !slices.Equal(got, []string{"find"}) {
		t.Errorf("first request offers %v, want the search tool alone", got)
	}
	if got := toolNames(opts[1].Tools); len(got) < 2 || got[0] != "find" || !slices.Contains(got, refund) {
		t.Errorf("after the search the model is offered %v, want find and %s", got, refund)
	}
	if runs := servers["billing"].Runs(testserver.CatalogToolName("billing", "create", "refund")); runs != 1 {
		t.Errorf("%s ran %d times, want 1", refund, runs)
	}
}

// TestAgentToolSearchName: a search tool named like a tool of the set is
// refused.
func TestAgentToolSearchName(t *testing.T) {
	ts, _ := fullToolset(t)
	_, err := New(mcpadaptertest.NewModel(), ts, WithToolSearch(&mcpadapter.ToolSearchOptions{Name: "s__get_weather"}))
	if !errors.Is(err, mcpadapter.ErrDuplicateToolName) {
		t.Errorf("New with a search tool named s__get_weather: %v, want ErrDuplicateToolName", err)
	}
}
