package sqlclaims_test

import (
	"bufio"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lib/pq"
	"modernc.org/sqlite"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testing/extserver"
	"github.com/mcpadapter/mcpadapter/sqlclaims"
)

// claimerEnv makes the test binary a claimer process: "driver table id",
// the DSN in dsnEnv. It opens the store, prints "ready", waits for the end
// of its stdin, claims id from claimers goroutines at once and prints one line
// per claim: "nil", "claimed" or "error: ...".
const (
	claimerEnv = "SQLCLAIMS_TEST_CLAIMER"
	dsnEnv     = "SQLCLAIMS_TEST_DSN"
	claimers   = 8
)

// Drivers that hide their package, so that Detect must ask the database.
func init() {
	sql.Register("plain-sqlite", plainDriver{&sqlite.Driver{}})
	sql.Register("plain-postgres", plainDriver{&pq.Driver{}})
}

// plainDriver is a driver of this package's, wrapping another.
type plainDriver struct{ driver.Driver }

func TestMain(m *testing.M) {
	if role := os.Getenv(claimerEnv); role != "" {
		if err := claimer(role, os.Getenv(dsnEnv)); err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// claimer is the claimer process's work.
func claimer(role, dsn string) error {
	f := strings.Fields(role)
	if len(f) != 3 {
		return fmt.Errorf("%s=%q: want driver table id", claimerEnv, role)
	}
	db, err := sql.Open(f[0], dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(claimers)
	ctx := context.Background()
	store, err := sqlclaims.New(ctx, db, sqlclaims.Options{Table: f[1]})
	if err != nil {
		return err
	}
	if err := db.PingContext(ctx); err != nil {
		return err
	}
	fmt.Println("ready")
	if _, err := io.Copy(io.Discard, os.Stdin); err != nil {
		return err
	}
	results := make(chan error, claimers)
	start := make(chan struct{})
	for range claimers {
		go func() {
			<-start
			results <- store.Claim(ctx, f[2], time.Now().Add(time.Hour))
		}()
	}
	close(start)
	for range claimers {
		switch err := <-results; {
		case err == nil:
			fmt.Println("nil")
		case errors.Is(err, mcpadapter.ErrClaimedState):
			fmt.Println("claimed")
		default:
			fmt.Println("error:", err)
		}
	}
	return nil
}

// A database under test: its driver and DSN.
type database struct {
	driver, dsn string
	dialect     sqlclaims.Dialect
}

func (d database) open(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open(d.driver, d.dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// newStore returns a store over a table of its own (and its name), created,
// dropped when the test ends.
func (d database) newStore(t *testing.T, db *sql.DB, opts sqlclaims.Options) (*sqlclaims.Store, string) {
	t.Helper()
	ctx := t.Context()
	if opts.Table == "" {
		opts.Table = fmt.Sprintf("claims_%08x", rand.Uint32())
	}
	s, err := sqlclaims.New(ctx, db, opts)
	if err != nil {
		t.Fatal(err)
	}
	if s.Dialect() != d.dialect {
		t.Fatalf("dialect %q, want %q", s.Dialect(), d.dialect)
	}
	if err := s.CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateTable(ctx); err != nil {
		t.Fatalf("CreateTable again: %v", err)
	}
	t.Cleanup(func() { _, _ = db.Exec("DROP TABLE " + opts.Table) })
	return s, opts.Table
}

// count returns the rows of table.
func count(t *testing.T, db *sql.DB, table string) int {
	t.Helper()
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM " + table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func wantClaimed(t *testing.T, err error) {
	t.Helper()
	if !errors.Is(err, mcpadapter.ErrClaimedState) {
		t.Fatalf("Claim = %v, want ErrClaimedState", err)
	}
}

func wantNil(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("Claim = %v, want nil", err)
	}
}

// claimExpired makes n records that have expired.
func claimExpired(t *testing.T, s *sqlclaims.Store, n int) {
	t.Helper()
	for i := range n {
		wantNil(t, s.Claim(t.Context(), fmt.Sprint("old", i), time.Now().Add(-time.Second)))
	}
}

// contract runs the claim store's contract against d.
func contract(t *testing.T, d database) {
	hour := time.Now().Add(time.Hour)
	past := time.Now().Add(-time.Second)

	t.Run("once", func(t *testing.T) {
		s, _ := d.newStore(t, d.open(t), sqlclaims.Options{})
		ctx := t.Context()
		wantNil(t, s.Claim(ctx, "a1", hour))
		wantClaimed(t, s.Claim(ctx, "a1", hour))
		wantNil(t, s.Claim(ctx, "a2", hour))
		wantNil(t, s.Claim(ctx, "forever", time.Time{}))
		wantClaimed(t, s.Claim(ctx, "forever", time.Time{}))
		wantClaimed(t, s.Claim(ctx, "forever", hour))
	})

	t.Run("expired", func(t *testing.T) {
		s, _ := d.newStore(t, d.open(t), sqlclaims.Options{})
		ctx := t.Context()
		wantNil(t, s.Claim(ctx, "e1", past))
		wantNil(t, s.Claim(ctx, "e1", hour)) // expired: claimable again
		wantClaimed(t, s.Claim(ctx, "e1", hour))
	})

	t.Run("purge", func(t *testing.T) {
		db := d.open(t)
		s, table := d.newStore(t, db, sqlclaims.Options{PurgeInterval: -1})
		ctx := t.Context()
		claimExpired(t, s, 3)
		wantNil(t, s.Claim(ctx, "new", hour))
		wantNil(t, s.Claim(ctx, "forever", time.Time{}))
		if n := count(t, db, table); n != 5 {
			t.Fatalf("%d rows, want 5: PurgeInterval -1 removes nothing", n)
		}
		n, err := s.Purge(ctx)
		if err != nil || n != 3 {
			t.Fatalf("Purge = %d, %v; want 3 expired removed", n, err)
		}
		wantClaimed(t, s.Claim(ctx, "new", hour))
		wantClaimed(t, s.Claim(ctx, "forever", hour))
		if n := count(t, db, table); n != 2 {
			t.Fatalf("%d rows after Purge, want 2", n)
		}
	})

	t.Run("purge on claim", func(t *testing.T) {
		db := d.open(t)
		keep, table := d.newStore(t, db, sqlclaims.Options{PurgeInterval: -1})
		ctx := t.Context()
		claimExpired(t, keep, 150)
		s, err := sqlclaims.New(ctx, db, sqlclaims.Options{Table: table, PurgeInterval: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		wantNil(t, s.Claim(ctx, "new", hour)) // removes 100 expired first
		wantNil(t, s.Claim(ctx, "new2", hour))
		if n := count(t, db, table); n != 52 {
			t.Fatalf("%d rows, want 52: one batch of 100 of the 150 expired removed, once an interval", n)
		}
	})

	t.Run("store down", func(t *testing.T) {
		db := d.open(t)
		s, _ := d.newStore(t, db, sqlclaims.Options{})
		ctx := t.Context()
		wantNil(t, s.Claim(ctx, "c1", hour))
		missing, err := sqlclaims.New(ctx, db, sqlclaims.Options{Dialect: d.dialect, Table: "no_such_table"})
		if err != nil {
			t.Fatal(err)
		}
		if err := missing.Claim(ctx, "c1", hour); err == nil || errors.Is(err, mcpadapter.ErrClaimedState) {
			t.Errorf("Claim in a missing table = %v, want an error other than ErrClaimedState", err)
		}
		db.Close()
		for _, id := range []string{"c1", "c2"} {
			if err := s.Claim(ctx, id, hour); err == nil || errors.Is(err, mcpadapter.ErrClaimedState) {
				t.Errorf("Claim(%s) on a closed database = %v, want an error other than ErrClaimedState", id, err)
			}
		}
		if _, err := s.Purge(ctx); err == nil {
			t.Error("Purge on a closed database = nil, want an error")
		}
	})

	t.Run("processes", func(t *testing.T) {
		_, table := d.newStore(t, d.open(t), sqlclaims.Options{})
		role := fmt.Sprintf("%s %s %s", d.driver, table, "contended")
		// Both claimers read their stdin from one pipe: closing it starts
		// them at once.
		start, starter, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer starter.Close()
		var procs []*exec.Cmd
		var outs []*bufio.Scanner
		for range 2 {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), claimerEnv+"="+role, dsnEnv+"="+d.dsn)
			cmd.Stdin, cmd.Stderr = start, os.Stderr
			stdout, err := cmd.StdoutPipe()
			if err == nil {
				err = cmd.Start()
			}
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
			sc := bufio.NewScanner(stdout)
			if !sc.Scan() || sc.Text() != "ready" {
				t.Fatalf("claimer process: %q, want ready (%v)", sc.Text(), sc.Err())
			}
			procs, outs = append(procs, cmd), append(outs, sc)
		}
		start.Close()
		starter.Close()
		results := map[string]int{}
		var mu sync.Mutex
		var wg sync.WaitGroup
		for _, sc := range outs {
			wg.Go(func() {
				for sc.Scan() {
					mu.Lock()
					results[sc.Text()]++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		for _, cmd := range procs {
			if err := cmd.Wait(); err != nil {
				t.Errorf("claimer process: %v", err)
			}
		}
		if results["nil"] != 1 || results["claimed"] != 2*claimers-1 || len(results) != 2 {
			t.Fatalf("%d claims from 2 processes × %d goroutines: %v; want exactly one nil, the rest ErrClaimedState", 2*claimers, claimers, results)
		}
	})
}

// sqliteDSN is a SQLite database file for t, shared by processes: they
// wait for each other's writes rather than fail.
func sqliteDSN(t *testing.T) string {
	return "file:" + filepath.Join(t.TempDir(), "claims.db") + "?_pragma=busy_timeout(20000)&_pragma=journal_mode(WAL)"
}

func TestSQLite(t *testing.T) {
	contract(t, database{driver: "sqlite", dsn: sqliteDSN(t), dialect: sqlclaims.SQLite})
}

func TestPostgres(t *testing.T) {
	dsn := extserver.Postgres(t)
	contract(t, database{driver: "postgres", dsn: dsn, dialect: sqlclaims.Postgres})
	t.Run("detect by query", func(t *testing.T) {
		testDetect(t, database{driver: "plain-postgres", dsn: dsn, dialect: sqlclaims.Postgres})
	})
}

func TestDetect(t *testing.T) {
	testDetect(t, database{driver: "plain-sqlite", dsn: sqliteDSN(t), dialect: sqlclaims.SQLite})
}

// testDetect checks that a store over d's database (whose driver does not
// tell) detects its dialect by asking it, and that a closed one fails.
func testDetect(t *testing.T, d database) {
	db := d.open(t)
	s, _ := d.newStore(t, db, sqlclaims.Options{})
	wantNil(t, s.Claim(t.Context(), "d1", time.Time{}))
	db.Close()
	if _, err := sqlclaims.Detect(t.Context(), db); err == nil {
		t.Error("Detect on a closed database = nil error")
	}
}

func TestNewRefuses(t *testing.T) {
	db, err := sql.Open("sqlite", sqliteDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, opts := range []sqlclaims.Options{
		{Table: "claims; DROP TABLE x"},
		{Table: "a.b.c"},
		{Dialect: "oracle"},
	} {
		if _, err := sqlclaims.New(t.Context(), db, opts); err == nil {
			t.Errorf("New(%+v) = nil error", opts)
		}
	}
	if _, err := sqlclaims.New(t.Context(), nil, sqlclaims.Options{}); err == nil {
		t.Error("New(nil db) = nil error")
	}
	s, err := sqlclaims.New(t.Context(), db, sqlclaims.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"", strings.Repeat("x", 65)} {
		if err := s.Claim(t.Context(), id, time.Time{}); err == nil || errors.Is(err, mcpadapter.ErrClaimedState) {
			t.Errorf("Claim(%d bytes) = %v, want an error other than ErrClaimedState", len(id), err)
		}
	}
}
