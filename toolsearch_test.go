package mcpadapter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpadapter/mcpadapter/internal/testing/extserver"
	"github.com/mcpadapter/mcpadapter/internal/testing/testserver"
	"github.com/mcpadapter/mcpadapter/mcpadaptertest"
	"github.com/tmc/langchaingo/llms"
)

// catalogAdapter connects, in memory, one server per product of
// testserver's big catalog (100 tools each), named after its product.
func catalogAdapter(t *testing.T, cfg Config, domains ...string) (*Adapter, map[string]*testserver.Server) {
	t.Helper()
	servers := make(map[string]*testserver.Server)
	cfg.Servers = make(map[string]Server)
	for _, d := range domains {
		servers[d] = testserver.New(testserver.Options{Name: d}).AddCatalog(d)
		cfg.Servers[d] = memServer(servers[d], ModeAuto)
	}
	return newAdapter(t, cfg), servers
}

// catalogSearch is catalogAdapter's tools and a ToolSearch over them with
// opts.
func catalogSearch(t *testing.T, cfg Config, opts *ToolSearchOptions, domains ...string) (Toolset, *ToolSearch, map[string]*testserver.Server) {
	t.Helper()
	a, servers := catalogAdapter(t, cfg, domains...)
	ts, search := listSearch(t, a, opts)
	return ts, search, servers
}

// listSearch returns the tools of a and a ToolSearch over them with opts.
func listSearch(t *testing.T, a *Adapter, opts *ToolSearchOptions) (Toolset, *ToolSearch) {
	t.Helper()
	ts, err := a.ListTools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	search, err := NewToolSearch(ts, opts)
	if err != nil {
		t.Fatal(err)
	}
	return ts, search
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

// toolNamesOf returns the names of tools.
func toolNamesOf(tools []llms.Tool) []string {
	names := make([]string, len(tools))
	for i, tool := range tools {
		names[i] = tool.Function.Name
	}
	return names
}

// runSearchLoop is the native loop of an app with tool search: it asks
// model until it answers, offering search.LLMTools of the history, and
// returns the history.
func runSearchLoop(t *testing.T, ctx context.Context, search *ToolSearch, model llms.Model, task string) []llms.MessageContent {
	t.Helper()
	history := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, task)}
	for range 10 {
		resp, err := model.GenerateContent(ctx, history, llms.WithTools(search.LLMTools(history)))
		if err != nil {
			t.Fatalf("GenerateContent: %v", err)
		}
		choice := resp.Choices[0]
		if len(choice.ToolCalls) == 0 {
			return history
		}
		msgs, err := search.HandleToolCalls(ctx, history, choice)
		if err != nil {
			t.Fatalf("HandleToolCalls: %v", err)
		}
		history = append(history, msgs...)
	}
	t.Fatal("the model did not answer in 10 turns")
	return nil
}

// searchTask is a task given to a model, and the tool of the big catalog
// that does it.
type searchTask struct {
	task                 string
	domain, verb, entity string
	args                 string
}

// searchTasks are tasks as a user writes them: the words of the task, not
// of the tool.
var searchTasks = []searchTask{
	{"Refund the payment Acme was charged twice", "billing", "create", "refund", `{"payment_id":"pay_1"}`},
	{"File a bug in the MOB project: the app crashes at login", "tracker", "create", "issue", `{"project_key":"MOB"}`},
	{"Post a message in the #release channel that the build is green", "chat", "create", "message", `{"channel":"release"}`},
	{"Put an event in the calendar: design review with Dana on Friday at 10am", "calendar", "create", "event", `{"summary":"Design review"}`},
	{"Give the client a link to view the Q3 report document", "drive", "create", "share_link", `{"document_id":"doc_3"}`},
	{"Run this SQL statement against the warehouse: select count(*) from orders", "warehouse", "create", "query", `{"sql":"select count(*) from orders"}`},
	{"Open an incident: checkout is down for all customers", "monitoring", "create", "incident", `{"title":"Checkout down"}`},
	{"Send an email to the board with the subject Q3 results", "mail", "create", "email", `{"to":["board@example.com"]}`},
	{"Request two weeks of vacation for Maria starting July 1st", "hr", "create", "time_off", `{"employee_id":"emp_7"}`},
	{"Move the Globex deal to the negotiation stage", "crm", "update", "deal", `{"deal_id":"deal_9","stage":"negotiation"}`},
	{"Add Jane Doe, jane@example.com, as a new contact", "crm", "create", "contact", `{"full_name":"Jane Doe"}`},
	{"Make a 20% discount code for Black Friday", "billing", "create", "coupon", `{"code":"BF20"}`},
	{"Publish release 2.4.0 with its release notes", "tracker", "create", "release", `{"version":"2.4.0"}`},
	{"Remind me tomorrow at 9am to call the bank", "chat", "create", "reminder", `{"text":"Call the bank"}`},
	{"Export all employees to a CSV file for the auditors", "hr", "export", "employee", `{"format":"csv"}`},
	{"Mute the disk alerts during tonight's maintenance", "monitoring", "create", "silence", `{"matcher":"disk"}`},
	{"Make a backup of the orders table before the migration", "warehouse", "create", "backup", `{"table":"orders"}`},
	{"Forward all incoming mail from our vendor to accounting automatically", "mail", "create", "filter_rule", `{"from":"vendor"}`},
	{"Claim back 42 euros of taxi receipts from the client visit", "hr", "create", "expense_report", `{"employee_id":"emp_7"}`},
	{"Restore the budget spreadsheet I deleted: it is in the trash", "drive", "restore", "trash_item", `{"trash_item_id":"t_1"}`},
}

// TestToolSearchCatalog: over 1,000 tools (10 servers × 100), a scripted
// model told a task searches with the task's words, then calls the tool
// that does it: the tool is offered and runs on the second turn, for
// every task, and no request carries more than 5% of the bytes of the
// whole catalog's tools.
func TestToolSearchCatalog(t *testing.T) {
	ts, search, servers := catalogSearch(t, Config{}, nil, testserver.CatalogDomains()...)
	if len(ts) != 1000 {
		t.Fatalf("ListTools() = %d tools, want 1000", len(ts))
	}
	all := toolsBytes(t, ts.LLMTools())
	var most, first int
	ranks := make(map[int]int) // rank of the task's tool in its search: tasks
	for i, task := range searchTasks {
		t.Run(task.entity, func(t *testing.T) {
			want := task.domain + nameSeparator + testserver.CatalogToolName(task.domain, task.verb, task.entity)
			query, _ := json.Marshal(searchArgs{Query: task.task}) // the model's query: the task's words
			model := mcpadaptertest.NewModel(
				mcpadaptertest.ToolCalls(mcpadaptertest.ToolCall("s1", defaultSearchToolName, string(query))),
				mcpadaptertest.ToolCalls(mcpadaptertest.ToolCall("c1", want, task.args)),
				mcpadaptertest.FinalAnswer("Done."),
			)
			runSearchLoop(t, t.Context(), search, model, task.task)

			opts := model.Options()
			if got := toolNamesOf(opts[0].Tools); !slices.Equal(got, []string{defaultSearchToolName}) {
				t.Errorf("first request offers %v, want the search tool alone", got)
			}
			if got := toolNamesOf(opts[1].Tools); !slices.Contains(got, want) {
				t.Errorf("the search for %q offers %v, not %s", task.task, got, want)
			}
			if got, found := toolNamesOf(opts[2].Tools), toolNamesOf(opts[1].Tools); !slices.Equal(got, found) {
				t.Errorf("after the call the model is offered %v, want what it found: %v", got, found)
			}
			ranks[slices.IndexFunc(search.Search(task.task), func(tool *Tool) bool { return tool.Name() == want })+1]++
			if runs := servers[task.domain].Runs(testserver.CatalogToolName(task.domain, task.verb, task.entity)); runs != 1 {
				t.Errorf("%s ran %d times, want 1", want, runs)
			}
			for _, o := range opts {
				n := toolsBytes(t, o.Tools)
				most = max(most, n)
				if n*20 > all {
					t.Errorf("a request carries %d bytes of tools, more than 5%% of the catalog's %d", n, all)
				}
			}
			if i == 0 {
				first = toolsBytes(t, opts[0].Tools)
			}
		})
	}
	t.Logf("1,000 tools: %d bytes of tools offered without search; with search %d on the first request, at most %d (%.2f%%); ranks of the tasks' tools (rank: tasks): %v",
		all, first, most, 100*float64(most)/float64(all), ranks)
}

// TestToolSearchRefuses: a tool that no search found is refused with a
// tool message that says to search, and runs nothing, even when it
// exists; one that a search earlier in the same batch found runs.
func TestToolSearchRefuses(t *testing.T) {
	_, search, servers := catalogSearch(t, Config{}, &ToolSearchOptions{Name: "find_tools", MaxResults: 3}, "crm")
	choice := &llms.ContentChoice{ToolCalls: []llms.ToolCall{
		mcpadaptertest.ToolCall("c1", "crm__create_deal", `{"title":"Globex"}`),
		mcpadaptertest.ToolCall("c2", "crm__no_such_tool", `{}`),
		mcpadaptertest.ToolCall("c3", "find_tools", `{"query":"new sales opportunity in the pipeline"}`),
		mcpadaptertest.ToolCall("c4", "CRM__CREATE_DEAL", `{"title":"Globex"}`),
		mcpadaptertest.ToolCall("c5", "find_tools", `{"q":"deal"}`),
		mcpadaptertest.ToolCall("c6", "find_tools", `{"query":"zebra"}`),
	}}
	msgs, err := search.HandleToolCalls(t.Context(), nil, choice)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range msgs {
		if resp, ok := m.Parts[0].(llms.ToolCallResponse); ok {
			got = append(got, resp.Content)
		}
	}
	want := []string{
		"crm__create_deal is not available yet: call find_tools first",
		"crm__no_such_tool is not available yet: call find_tools first",
		"3 tools found for \"new sales opportunity in the pipeline\"; you can call them now:\ncrm__create_deal: Create a new deal in the CRM.",
		"ok: create_deal",
		`Error: find_tools takes {"query": "what you need, in a few words"}`,
		`No tool matches "zebra"`,
	}
	if len(got) != len(want) {
		t.Fatalf("HandleToolCalls() = %d tool messages, want %d: %q", len(got), len(want), got)
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("tool message %d = %q, want it to start with %q", i, got[i], want[i])
		}
	}
	if runs := servers["crm"].Runs("create_deal"); runs != 1 {
		t.Errorf("create_deal ran %d times, want once (after the search)", runs)
	}
	if got := toolNamesOf(search.LLMTools(msgs)); !slices.Equal(got[:2], []string{"find_tools", "crm__create_deal"}) || len(got) != 4 {
		t.Errorf("LLMTools() after the batch = %v, want find_tools and the 3 tools found, create_deal first", got)
	}
}

// TestToolSearchPauseResume: a batch that searches, then calls a tool
// that needs approval, pauses; stored as JSON and resumed by another
// ToolSearch (another process), it runs the found tool after it, and the
// history, stored as JSON too, still offers what was found.
func TestToolSearchPauseResume(t *testing.T) {
	ctx := t.Context()
	cfg := Config{Approval: func(call ToolCall) bool { return call.MCPName == "delete_deal" }}
	ts, search, servers := catalogSearch(t, cfg, nil, "crm")
	history := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "Remove the Globex deal and its note.")}
	choice := &llms.ContentChoice{ToolCalls: []llms.ToolCall{
		mcpadaptertest.ToolCall("c1", defaultSearchToolName, `{"query":"delete a deal"}`),
		mcpadaptertest.ToolCall("c2", "crm__delete_deal", `{"deal_id":"d1","confirm":true}`),
		mcpadaptertest.ToolCall("c3", defaultSearchToolName, `{"query":"delete a note"}`),
		mcpadaptertest.ToolCall("c4", "crm__delete_note", `{"note_id":"n1","confirm":true}`),
	}}
	msgs, err := search.HandleToolCalls(ctx, history, choice)
	var paused *PausedCalls
	if !errors.As(err, &paused) || paused.Next != 1 || len(msgs) != 2 {
		t.Fatalf("HandleToolCalls() = %d messages, %v; want the search's, paused at the deletion", len(msgs), err)
	}
	stored, err := json.Marshal(paused)
	if err != nil {
		t.Fatal(err)
	}
	storedHistory, err := json.Marshal(history)
	if err != nil {
		t.Fatal(err)
	}

	// Another process: the same catalog, a new ToolSearch, the stored state.
	var p *PausedCalls
	if err := json.Unmarshal(stored, &p); err != nil {
		t.Fatal(err)
	}
	var h []llms.MessageContent
	if err := json.Unmarshal(storedHistory, &h); err != nil {
		t.Fatal(err)
	}
	again, err := NewToolSearch(ts, nil)
	if err != nil {
		t.Fatal(err)
	}
	msgs, err = again.ResumeToolCalls(ctx, h, p, Approved())
	if err != nil || len(msgs) != 8 {
		t.Fatalf("ResumeToolCalls() = %d messages, %v; want the 4 pairs", len(msgs), err)
	}
	for _, tool := range []string{"delete_deal", "delete_note"} {
		if runs := servers["crm"].Runs(tool); runs != 1 {
			t.Errorf("%s ran %d times, want 1", tool, runs)
		}
	}
	h = append(h, msgs...)
	storedHistory, err = json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	h = nil
	if err := json.Unmarshal(storedHistory, &h); err != nil {
		t.Fatal(err)
	}
	offered := toolNamesOf(again.LLMTools(h))
	for _, want := range []string{defaultSearchToolName, "crm__delete_deal", "crm__delete_note"} {
		if !slices.Contains(offered, want) {
			t.Errorf("LLMTools() of the stored history = %v, missing %s", offered, want)
		}
	}
	if got, want := toolNamesOf(again.LLMTools(h)), toolNamesOf(search.LLMTools(h)); !slices.Equal(got, want) {
		t.Errorf("a new ToolSearch offers %v, the first one %v", got, want)
	}
}

// TestToolSearchLLMToolsFor: passes apply to the search tool and to the
// found tools; the search tool's schema is one strict mode takes.
func TestToolSearchLLMToolsFor(t *testing.T) {
	ts, search, _ := catalogSearch(t, Config{}, nil, "billing")
	msgs, err := search.HandleToolCalls(t.Context(), nil, &llms.ContentChoice{ToolCalls: []llms.ToolCall{
		mcpadaptertest.ToolCall("c1", defaultSearchToolName, `{"query":"refund a payment"}`),
	}})
	if err != nil {
		t.Fatal(err)
	}
	for _, pass := range []SchemaPass{ForOpenAIStrict(), ForGemini(), ForOpenAI()} {
		tools, err := search.LLMToolsFor(msgs, pass)
		if err != nil {
			t.Fatalf("LLMToolsFor() = %v", err)
		}
		if len(tools) != 1+defaultSearchResults || tools[0].Function.Name != defaultSearchToolName {
			t.Errorf("LLMToolsFor() = %v, want the search tool and %d found", toolNamesOf(tools), defaultSearchResults)
		}
		want, _ := ts.Lookup(tools[1].Function.Name).LLMToolFor(pass)
		if got := tools[1]; toolsBytes(t, []llms.Tool{got}) != toolsBytes(t, []llms.Tool{want}) || got.Function.Strict != want.Function.Strict {
			t.Errorf("LLMToolsFor()[1] = %+v, want %+v", got.Function, want.Function)
		}
	}
	strict, _ := search.LLMToolsFor(nil, ForOpenAIStrict())
	if !strict[0].Function.Strict {
		t.Error("ForOpenAIStrict: the search tool is not strict")
	}
}

// TestNewToolSearchName: the search tool's name may not be a tool's.
func TestNewToolSearchName(t *testing.T) {
	ts, search, _ := catalogSearch(t, Config{}, nil, "chat")
	_, err := NewToolSearch(ts, &ToolSearchOptions{Name: "Chat__Create_Message"})
	if !errors.Is(err, ErrDuplicateToolName) {
		t.Errorf("NewToolSearch(a tool's name) = %v, want ErrDuplicateToolName", err)
	}
	if search.Name() != defaultSearchToolName {
		t.Errorf("Name() = %q, want the default", search.Name())
	}
	if desc := search.LLMTool().Function.Description; !strings.Contains(desc, "among 100 tools (servers: chat)") {
		t.Errorf("the search tool's description = %q, want the catalog's size and servers", desc)
	}
}

// realCatalogs are the npm servers whose catalogs TestToolSearchRealCatalogs
// ranks, with their arguments (dir is a temporary directory) and the
// queries a model would send for tasks on them.
var realCatalogs = []struct {
	name    string
	server  extserver.NPMServer
	args    func(script, dir string) []string
	queries []string
}{
	{"everything", extserver.ServerEverything, func(script, _ string) []string { return []string{script, "stdio"} }, []string{
		"repeat my text back", "add two numbers", "show me an image", "compress a file with gzip",
		"environment variables of the server", "ask the user for input", "long task with progress updates",
		"structured output", "turn logging on",
	}},
	{"filesystem", extserver.ServerFilesystem, func(script, dir string) []string { return []string{script, dir} }, []string{
		"read a text file", "save text to a new file", "rename a file", "what files are in this folder",
		"find files matching a pattern", "file size and modification time", "change a few lines in a file",
		"make a new folder", "show a picture file", "which directories can I access",
	}},
	{"memory", extserver.ServerMemory, func(script, _ string) []string { return []string{script} }, []string{
		"remember a new person", "link two entities", "add facts about someone", "forget an entity",
		"look up what you know about Alice", "show the whole graph", "remove a relation",
	}},
}

// TestToolSearchRealCatalogs pins, in testdata/toolsearch, what the search
// finds in the catalogs of three reference servers, and logs the bytes of
// tools a request carries with and without search.
func TestToolSearchRealCatalogs(t *testing.T) {
	for _, c := range realCatalogs {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			node, script := extserver.NPM(t, c.server)
			dir := t.TempDir()
			a := newAdapter(t, Config{Servers: map[string]Server{c.name: {
				Command: node, Args: c.args(script, dir),
				Env: map[string]string{"MEMORY_FILE_PATH": filepath.Join(dir, "memory.jsonl")},
			}}})
			ts, err := a.ListTools(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			search, err := NewToolSearch(ts, nil)
			if err != nil {
				t.Fatal(err)
			}
			type ranked struct {
				Query string   `json:"query"`
				Found []string `json:"found"`
			}
			golden := struct {
				Server  string   `json:"server"`
				Tools   int      `json:"tools"`
				Queries []ranked `json:"queries"`
			}{Server: c.server.Name + "@" + c.server.Version, Tools: len(ts)}
			for _, q := range c.queries {
				golden.Queries = append(golden.Queries, ranked{q, toolNames(search.Search(q))})
			}
			b, err := json.MarshalIndent(golden, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, "toolsearch/"+c.name+".json", append(b, '\n'))

			msgs, err := search.HandleToolCalls(t.Context(), nil, &llms.ContentChoice{ToolCalls: []llms.ToolCall{
				mcpadaptertest.ToolCall("s1", defaultSearchToolName, fmt.Sprintf(`{"query":%q}`, c.queries[0])),
			}})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %d tools, %d bytes of tools offered without search; with search %d bytes before any search, %d after one",
				c.name, len(ts), toolsBytes(t, ts.LLMTools()), toolsBytes(t, search.LLMTools(nil)), toolsBytes(t, search.LLMTools(msgs)))
		})
	}
}

// TestToolSearchFloorReal: over server-everything and server-filesystem
// together (29 tools), a search offers what matched and nothing else: "add
// two numbers" offers get-sum alone (the next tool scores 0.44 of it, under
// the relative floor), which then runs; "delete a file", which no tool
// does, offers none (14 tools say "file", at 0.21 of the absolute floor's
// yardstick), the model is told so, and a tool it names anyway is refused.
// It logs the scores of the best hits.
func TestToolSearchFloorReal(t *testing.T) {
	everything, filesystem := realCatalogs[0], realCatalogs[1]
	node, everythingScript := extserver.NPM(t, everything.server)
	_, fsScript := extserver.NPM(t, filesystem.server)
	dir := t.TempDir()
	a := newAdapter(t, Config{Servers: map[string]Server{
		"everything": {Command: node, Args: everything.args(everythingScript, dir)},
		"fs":         {Command: node, Args: filesystem.args(fsScript, dir)},
	}})
	ts, search := listSearch(t, a, nil)
	tests := []struct {
		query   string
		call    llms.ToolCall // the model's call after the search
		offered []string      // on the request after the search
		search  string        // the search's answer starts so
		result  string        // the call's answer holds it
	}{
		{"add two numbers", mcpadaptertest.ToolCall("c1", "everything__get-sum", `{"a":2,"b":3}`),
			[]string{defaultSearchToolName, "everything__get-sum"}, "1 tool found for \"add two numbers\"; you can call it now:\neverything__get-sum: ", "5"},
		{"delete a file", mcpadaptertest.ToolCall("c1", "fs__write_file", `{"path":"x","content":""}`),
			[]string{defaultSearchToolName}, `No tool matches "delete a file": search again with other words.`, "is not available yet"},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			var scores []string
			hits := search.index.Rank(tt.query)
			for _, h := range hits[:min(6, len(hits))] {
				scores = append(scores, fmt.Sprintf("%s %.3f", search.model[h.Doc].Name(), h.Score))
			}
			t.Logf("%q over %d tools (absolute floor's yardstick %.3f): %s", tt.query, len(ts), search.index.RareScore(), strings.Join(scores, ", "))

			query, _ := json.Marshal(searchArgs{Query: tt.query})
			model := mcpadaptertest.NewModel(
				mcpadaptertest.ToolCalls(mcpadaptertest.ToolCall("s1", defaultSearchToolName, string(query))),
				mcpadaptertest.ToolCalls(tt.call),
				mcpadaptertest.FinalAnswer("Done."),
			)
			history := runSearchLoop(t, t.Context(), search, model, tt.query)
			if got := toolNamesOf(model.Options()[1].Tools); !slices.Equal(got, tt.offered) {
				t.Errorf("after the search the model is offered %v, want %v", got, tt.offered)
			}
			if got := lastToolText(history[:3]); !strings.HasPrefix(got, tt.search) {
				t.Errorf("the search answered %q, want it to start with %q", got, tt.search)
			}
			if got := lastToolText(history); !strings.Contains(got, tt.result) {
				t.Errorf("%s answered %q, want it to hold %q", tt.call.FunctionCall.Name, got, tt.result)
			}
		})
	}
}

// lastToolText returns the text of the last tool message of msgs.
func lastToolText(msgs []llms.MessageContent) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		for _, part := range msgs[i].Parts {
			if resp, ok := part.(llms.ToolCallResponse); ok {
				return resp.Content
			}
		}
	}
	return ""
}
