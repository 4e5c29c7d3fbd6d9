package agent

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testing/extserver"
	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms/openai"
)

// sentRequests runs ag once, through our Executor, with langchaingo's
// OpenAI client against a fake OpenAI whose replies are replies, and
// returns the request bodies.
func sentRequests(t *testing.T, newAgent func(llm *openai.LLM) agents.Agent, replies ...func(map[string]any) any) []map[string]any {
	t.Helper()
	provider := newFakeProvider(t, "/chat/completions", replies...)
	llm, err := openai.New(openai.WithBaseURL(provider.URL), openai.WithToken("test"), openai.WithModel("gpt-4o-mini"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := chains.Run(t.Context(), NewExecutor(newAgent(llm)), "the task"); err != nil {
		t.Fatalf("run: %v", err)
	}
	return provider.requests()
}

// sentToolsBytes is sentRequests' bytes of tools per request: its "tools"
// and "functions", re-encoded compactly.
func sentToolsBytes(t *testing.T, newAgent func(llm *openai.LLM) agents.Agent, replies ...func(map[string]any) any) []int {
	t.Helper()
	return requestsToolsBytes(t, sentRequests(t, newAgent, replies...))
}

// requestsToolsBytes is the bytes of tools of each of reqs.
func requestsToolsBytes(t *testing.T, reqs []map[string]any) []int {
	t.Helper()
	var sizes []int
	for _, req := range reqs {
		n := 0
		for _, field := range []string{"tools", "functions"} {
			if v, ok := req[field]; ok {
				b, err := json.Marshal(v)
				if err != nil {
					t.Fatal(err)
				}
				n += len(b)
			}
		}
		sizes = append(sizes, n)
	}
	return sizes
}

// answer is a fake OpenAI's reply that ends a run.
func answer(map[string]any) any { return openAIReply("Done.") }

// TestModelBytes measures, on the wire of langchaingo's OpenAI client, the
// bytes of tools a request carries, for the catalogs of three reference
// servers and the 1,000-tool catalog: the tool-calling agent offering
// every tool (as LLMTools, and after ForOpenAIStrict), with tool search
// (the first request, and the next after one search), and langchaingo's
// OpenAIFunctionsAgent over ts.Tools(). It logs a Markdown table
// (BENCHMARKS.md), without the rows of npm servers that are not installed;
// run it with
//
//	go test -run TestModelBytes -v ./agent
func TestModelBytes(t *testing.T) {
	catalogs := []struct {
		name  string
		query string // the model's one search
		tools func(t *testing.T) mcpadapter.Toolset
	}{
		{"server-everything", "add two numbers", func(t *testing.T) mcpadapter.Toolset {
			return npmToolset(t, extserver.ServerEverything, "stdio")
		}},
		{"server-filesystem", "read a text file", func(t *testing.T) mcpadapter.Toolset {
			return npmToolset(t, extserver.ServerFilesystem, t.TempDir())
		}},
		{"server-memory", "remember a new person", func(t *testing.T) mcpadapter.Toolset {
			return npmToolset(t, extserver.ServerMemory)
		}},
		{"1,000-tool catalog", "Refund the payment Acme was charged twice", func(t *testing.T) mcpadapter.Toolset {
			ts, _ := catalogToolset(t, false)
			return ts
		}},
	}
	rows := make([]string, len(catalogs))
	for i, c := range catalogs {
		t.Run(strings.ReplaceAll(c.name, ",", ""), func(t *testing.T) {
			ts := c.tools(t)
			all := sentToolsBytes(t, func(llm *openai.LLM) agents.Agent {
				ag, err := New(llm, ts)
				if err != nil {
					t.Fatal(err)
				}
				return ag
			}, answer)[0]

			strictSafe := strictTools(ts)
			strict := sentToolsBytes(t, func(llm *openai.LLM) agents.Agent {
				ag, err := New(llm, strictSafe, WithSchemaPasses(mcpadapter.ForOpenAIStrict()))
				if err != nil {
					t.Fatal(err)
				}
				return ag
			}, answer)[0]
			strictCell := fmt.Sprint(strict)
			if len(strictSafe) < len(ts) {
				strictCell += fmt.Sprintf(" (%d of %d tools)", len(strictSafe), len(ts))
			}

			query, err := json.Marshal(map[string]string{"query": c.query})
			if err != nil {
				t.Fatal(err)
			}
			search := sentToolsBytes(t, func(llm *openai.LLM) agents.Agent {
				ag, err := New(llm, ts, WithToolSearch(nil))
				if err != nil {
					t.Fatal(err)
				}
				return ag
			}, func(map[string]any) any {
				return openAIReply("", [3]string{"call_s", "search_tools", string(query)})
			}, answer)

			functionsReqs := sentRequests(t, func(llm *openai.LLM) agents.Agent {
				return agents.NewOpenAIFunctionsAgent(llm, ts.Tools())
			}, answer)
			functions := requestsToolsBytes(t, functionsReqs)[0]
			sent := wireTools(functionsReqs[0])
			if len(sent) != len(ts) || !strings.Contains(fmt.Sprint(sent[0][2]), "__arg1") {
				t.Errorf("OpenAIFunctionsAgent sent %d tools (the first with parameters %v), want %d, each {__arg1: string}", len(sent), sent[0][2], len(ts))
			}

			if search[1]*20 > all && len(ts) >= 1000 {
				t.Errorf("after one search a request carries %d bytes of tools, more than 5%% of the catalog's %d", search[1], all)
			}
			rows[i] = fmt.Sprintf("| %s | %d | %d | %s | %d | %d (%.1f%%) | %d |", c.name, len(ts), all, strictCell,
				search[0], search[1], 100*float64(search[1])/float64(all), functions)
		})
	}
	t.Logf("bytes of tools per request (OpenAI wire):\n"+
		"| catalog | tools | tool-calling agent, all tools | all, ForOpenAIStrict | tool search, first request | tool search, after one search (of all) | OpenAIFunctionsAgent |\n"+
		"|---|---:|---:|---:|---:|---:|---:|\n%s", strings.Join(slices.DeleteFunc(rows, func(r string) bool { return r == "" }), "\n"))
}
