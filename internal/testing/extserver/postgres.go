package extserver

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// PostgresEnv names a PostgreSQL connection string (a URL,
// "postgres://user@host:port/db?sslmode=disable") that [Postgres] returns
// instead of starting a server of its own.
const PostgresEnv = "MCPADAPTER_POSTGRES_DSN"

// postgresReady is the line a PostgreSQL server logs when it accepts
// connections.
const postgresReady = "database system is ready to accept connections"

// Postgres returns the connection string (a URL) of a PostgreSQL database
// for the test: $MCPADAPTER_POSTGRES_DSN when set, or else a throwaway
// server it starts (initdb into a temporary directory, postgres listening
// on a free loopback port, trust authentication as user postgres), which
// the test's cleanup shuts down and removes. The server programs come from
// PATH or /usr/lib/postgresql/<version>/bin (Debian's postgresql package);
// as root, they run as the user postgres (or nobody), since PostgreSQL
// refuses root. Under go test -short it skips t ([Quick]); missing programs
// are reported with [Missing].
func Postgres(t testing.TB) string {
	t.Helper()
	Quick(t)
	if dsn := os.Getenv(PostgresEnv); dsn != "" {
		return dsn
	}
	bin, err := postgresBin()
	if err != nil {
		Missing(t, "PostgreSQL (apt-get install postgresql), or a server's URL in %s: %v", PostgresEnv, err)
	}
	start := time.Now()
	dir, asUser := postgresDir(t)
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", dir, "-U", "postgres", "-A", "trust", "--no-sync", "--no-instructions", "-E", "UTF8", "--locale=C")
	if err := asUser(initdb); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if out, err := Run(ctx, initdb); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	host, port, _ := net.SplitHostPort(FreeAddr(t))
	server := exec.Command(filepath.Join(bin, "postgres"), "-D", dir,
		"-c", "listen_addresses="+host, "-p", port, "-c", "unix_socket_directories=",
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
	if err := asUser(server); err != nil {
		t.Fatal(err)
	}
	p := Start(t, server)
	// Runs before Start's cleanup, which kills what is left: a fast
	// shutdown, so that the server removes its shared memory.
	t.Cleanup(func() {
		_ = server.Process.Signal(os.Interrupt)
		select {
		case <-p.exited:
		case <-time.After(30 * time.Second):
		}
	})
	p.waitOutput(t, postgresReady, time.Minute)
	t.Logf("PostgreSQL (%s) started in %v", bin, time.Since(start).Round(time.Millisecond))
	return fmt.Sprintf("postgres://postgres@%s/postgres?sslmode=disable", net.JoinHostPort(host, port))
}

// postgresBin returns the directory of initdb and postgres: PATH's, or
// the newest /usr/lib/postgresql/<version>/bin.
func postgresBin() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int { return pgVersion(a) - pgVersion(b) })
	for _, dir := range slices.Backward(dirs) {
		if _, err := os.Stat(filepath.Join(dir, "initdb")); err == nil {
			return dir, nil
		}
	}
	return "", fmt.Errorf("initdb is neither on PATH nor in /usr/lib/postgresql/*/bin")
}

// pgVersion returns the major version in a path /usr/lib/postgresql/<v>/bin.
func pgVersion(bin string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(bin)))
	return v
}

// postgresDir returns an empty data directory for a server and a func that
// makes a command run as the user who owns it: the test's user, or, as
// root, postgres (nobody where there is none), for whom a directory is
// made under the system's temporary directory.
func postgresDir(t testing.TB) (string, func(*exec.Cmd) error) {
	t.Helper()
	if os.Geteuid() != 0 {
		return t.TempDir(), func(*exec.Cmd) error { return nil }
	}
	var u *user.User
	var err error
	for _, name := range []string{"postgres", "nobody"} {
		if u, err = user.Lookup(name); err == nil {
			break
		}
	}
	if err != nil {
		Missing(t, "a user other than root to run PostgreSQL as (postgres or nobody): %v", err)
	}
	uid, _ := strconv.ParseUint(u.Uid, 10, 32)
	gid, _ := strconv.ParseUint(u.Gid, 10, 32)
	dir, err := os.MkdirTemp("", "mcpadapter-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chown(dir, int(uid), int(gid)); err != nil {
		t.Fatal(err)
	}
	return dir, func(cmd *exec.Cmd) error {
		cmd.Dir = dir // root's working directory may be closed to the user
		return runAs(cmd, uint32(uid), uint32(gid))
	}
}

// waitOutput waits until the process has written text. It fails t when
// the process exits first or when the timeout passes.
func (p *Process) waitOutput(t testing.TB, text string, timeout time.Duration) {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !strings.Contains(p.out.String(), text) {
		select {
		case <-p.exited:
			t.Fatalf("%s exited before writing %q: %v\n%s", p.cmd.Path, text, p.err, p.out.String())
		case <-deadline.C:
			t.Fatalf("%s did not write %q within %v:\n%s", p.cmd.Path, text, timeout, p.out.String())
		case <-tick.C:
		}
	}
}
