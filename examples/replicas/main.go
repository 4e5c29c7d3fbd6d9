// Command replicas shows two replicas of a service that share one claim
// store, so that a paused agent run is resumed once, by whichever replica
// gets the user's answer, and never again:
//
//	go run ./examples/replicas                                # claims in a SQLite file
//	go run ./examples/replicas -postgres 'postgres://user@host/db?sslmode=disable'
//
// Replica A runs an agent whose booking tool needs the user's input: the
// run pauses with an [*mcpadapter.Interrupt], and A stores it as JSON,
// sealed with Config.State.Key (the same key on every replica). The user's
// answer reaches replica B, a second process (this program, started again
// with -resume): B resumes the run from the stored JSON, and its Adapter
// claims the state's ID in the shared store ([sqlclaims.Store], as
// Config.State.Claims) before it sends anything. When the same answer is
// sent again, to A this time (a retried request, a replay), A's claim
// finds the ID claimed and the resume fails with
// [mcpadapter.ErrClaimedState]: nothing is sent, no second table is booked.
//
// The claims live in a table of a database every replica reaches: a
// SQLite file here (both processes on one machine), PostgreSQL (or MySQL)
// in a real deployment.
package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	_ "github.com/lib/pq" // PostgreSQL, for -postgres
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms"
	_ "modernc.org/sqlite" // SQLite, the default

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/agent"
	"github.com/mcpadapter/mcpadapter/mcpadaptertest"
	"github.com/mcpadapter/mcpadapter/sqlclaims"
)

// stateKey seals the stored run; every replica has the same one.
var stateKey = []byte("a key of at least 32 random bytes, for every replica")

// answers are the user's answers to the booking's question.
var answers = mcpadapter.Answered(map[string]mcpadapter.Answer{
	"date": {Action: mcpadapter.Accept, Content: map[string]any{"date": "2026-09-19"}},
})

// A store names the shared claim store: a PostgreSQL URL, or else a
// SQLite file.
type store struct{ postgres, sqlite string }

func main() {
	var where store
	var resume string
	flag.StringVar(&where.postgres, "postgres", "", "keep the claims in this PostgreSQL database (a URL) instead of a SQLite file")
	flag.StringVar(&where.sqlite, "sqlite", "", "keep the claims in this SQLite file (default: a new one in a temporary directory)")
	flag.StringVar(&resume, "resume", "", "act as replica B: resume the paused run stored in this file")
	flag.Parse()

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run := func() error { return replicaA(ctx, os.Stdout, where) }
	if resume != "" {
		run = func() error { return replicaB(ctx, os.Stdout, where, resume) }
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "replicas:", err)
		os.Exit(1)
	}
}

// replicaA pauses the run, hands it to replica B (a second process), then
// tries to resume it again.
func replicaA(ctx context.Context, w io.Writer, where store) error {
	dir, err := os.MkdirTemp("", "replicas-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if where.postgres == "" && where.sqlite == "" {
		where.sqlite = filepath.Join(dir, "claims.db")
	}
	claims, err := where.open(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "replica A: claims in %s, table %s\n", claims.Dialect(), sqlclaims.DefaultTable)

	// The model of replica A's run: it books a table.
	llm := mcpadaptertest.NewModel(mcpadaptertest.ToolCalls(
		mcpadaptertest.ToolCall("call_1", "restaurant__book_table", `{"restaurant":"Chez Nous","party":2}`)))
	executor, err := newExecutor(ctx, w, claims, llm)
	if err != nil {
		return err
	}
	_, err = chains.Run(ctx, executor, "Book a table for 2 at Chez Nous.")
	var paused *agent.PausedRun
	var intr *mcpadapter.Interrupt
	if !errors.As(err, &paused) || !errors.As(err, &intr) {
		return fmt.Errorf("the run did not pause: %w", err)
	}
	fmt.Fprintf(w, "replica A: the run paused: %s asks %q\n", intr.Tool, intr.Requests[0].Message)
	b, err := json.Marshal(paused)
	if err != nil {
		return err
	}
	file := filepath.Join(dir, "paused.json")
	if err := os.WriteFile(file, b, 0o600); err != nil {
		return err
	}
	fmt.Fprintf(w, "replica A: stored the paused run (%d bytes of JSON, sealed with Config.State.Key)\n", len(b))

	// The user's answer reaches replica B.
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, exe, "-resume", file, "-postgres", where.postgres, "-sqlite", where.sqlite)
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("replica B: %w", err)
	}

	// The same answer, sent again, reaches replica A.
	var again agent.PausedRun
	if err := json.Unmarshal(b, &again); err != nil {
		return err
	}
	_, err = executor.Resume(ctx, &again, answers)
	if !errors.Is(err, mcpadapter.ErrClaimedState) {
		return fmt.Errorf("replaying the run on replica A: got %v, want ErrClaimedState", err)
	}
	fmt.Fprintf(w, "replica A: replaying the same run is refused, nothing sent: %v\n", err)
	return nil
}

// replicaB resumes the run stored in file.
func replicaB(ctx context.Context, w io.Writer, where store, file string) error {
	claims, err := where.open(ctx)
	if err != nil {
		return err
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	var paused agent.PausedRun
	if err := json.Unmarshal(b, &paused); err != nil {
		return err
	}
	// The model of the resumed run: it sees the booking and answers.
	llm := mcpadaptertest.NewModel(mcpadaptertest.FinalAnswer("Your table for 2 at Chez Nous is booked for 19 September."))
	executor, err := newExecutor(ctx, w, claims, llm)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "replica B (pid %d): resuming the stored run with the user's answer\n", os.Getpid())
	out, err := executor.Resume(ctx, &paused, answers)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "replica B: answer: %s\n", out["output"])
	return nil
}

// open opens the shared claim store and creates its table if needed.
func (where store) open(ctx context.Context) (*sqlclaims.Store, error) {
	driver, dsn := "postgres", where.postgres
	if dsn == "" {
		// Both processes write to the file: each waits for the other's
		// writes instead of failing with "database is locked".
		driver, dsn = "sqlite", "file:"+where.sqlite+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)"
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		return nil, err
	}
	claims, err := sqlclaims.New(ctx, db, sqlclaims.Options{})
	if err != nil {
		return nil, err
	}
	return claims, claims.CreateTable(ctx)
}

// newExecutor returns an agent over the restaurant's tools, on an Adapter
// (closed when ctx ends) whose stored state is sealed with stateKey and
// claimed in claims.
func newExecutor(ctx context.Context, w io.Writer, claims *sqlclaims.Store, llm llms.Model) (*agent.Executor, error) {
	a, err := mcpadapter.New(mcpadapter.Service(mcpadapter.Config{
		Servers: map[string]mcpadapter.Server{"restaurant": mcpadapter.InMemory(newRestaurantServer(w))},
		State:   mcpadapter.StateOptions{Key: stateKey, Claims: claims},
	}))
	if err != nil {
		return nil, err
	}
	context.AfterFunc(ctx, func() { a.Close() })
	ts, err := a.ListTools(ctx)
	if err != nil {
		return nil, err
	}
	return agent.NewExecutor(agents.NewOpenAIFunctionsAgent(llm, ts.Tools()), agents.WithMaxIterations(3)), nil
}

type bookingIn struct {
	Restaurant string `json:"restaurant" jsonschema:"the restaurant's name"`
	Party      int    `json:"party" jsonschema:"number of guests"`
}

// newRestaurantServer returns an MCP server whose book_table tool asks the
// user for the date with an input-required result (the modern protocol).
// Each replica runs its own copy; the question's requestState, which the
// client sends back with the answer, holds what was asked (a real server
// seals it, see examples/elicitation). It writes each booking to w.
func newRestaurantServer(w io.Writer) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "restaurant-service", Version: "1.0.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "book_table", Description: "Book a table at a restaurant. Asks the user for the date."},
		func(_ context.Context, req *mcp.CallToolRequest, in bookingIn) (*mcp.CallToolResult, any, error) {
			answer, ok := req.Params.InputResponses["date"].(*mcp.ElicitResult)
			if req.Params.RequestState == "" || !ok {
				asked, _ := json.Marshal(in)
				return &mcp.CallToolResult{
					InputRequests: mcp.InputRequestMap{"date": &mcp.ElicitParams{
						Message: fmt.Sprintf("Which date should I book at %s for %d?", in.Restaurant, in.Party),
						RequestedSchema: &jsonschema.Schema{
							Type:       "object",
							Properties: map[string]*jsonschema.Schema{"date": {Type: "string", Format: "date"}},
							Required:   []string{"date"},
						},
					}},
					RequestState: string(asked),
				}, nil, nil
			}
			if answer.Action != "accept" {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "No table booked: no date."}}}, nil, nil
			}
			text := fmt.Sprintf("Booked a table for %d at %s on %v.", in.Party, in.Restaurant, answer.Content["date"])
			fmt.Fprintf(w, "restaurant server of process %d: %s\n", os.Getpid(), text)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
		})
	return s
}
