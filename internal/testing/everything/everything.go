// Package everything builds go-sdk's own conformance server
// (conformance/everything-server, "every feature": content types, logging,
// progress, elicitation, and the SEP-2322 input-required tools) for
// mcpadapter's integration tests. The server comes from the module cache, at
// the go-sdk version this module requires, built with go build: nothing is
// downloaded that the module's go.sum does not already pin.
//
// The binary serves over stdio when run without flags, so a test uses it as
//
//	path := everything.Build(t)
//	cfg := mcpadapter.Config{Servers: map[string]mcpadapter.Server{"everything": {Command: path}}}
//
// Builds are cached across test processes in a directory under
// [os.TempDir], keyed by the exact module versions and Go toolchain that go
// into the binary, and published atomically (built in a private directory,
// then renamed), so that concurrent test binaries (go test ./...) never see
// a partial file.
package everything

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/mcpadapter/mcpadapter/internal/testing/extserver"
)

// Package is the import path of the server's main package.
const Package = "github.com/modelcontextprotocol/go-sdk/conformance/everything-server"

// Dir is the name of the cache directory under [os.TempDir].
const Dir = "mcpadapter-everything-server"

var (
	once     sync.Once
	path     string
	buildErr error
)

// Build returns the path of the everything-server binary, building it on
// the first call in a test process (later calls return the same path, or
// the same failure). A failure to build fails t: the go-sdk module must be
// in the module cache, as it is for any build of this module. The binary
// outlives the test process; do not remove it.
func Build(t testing.TB) string {
	t.Helper()
	once.Do(func() { path, buildErr = build() })
	if buildErr != nil {
		t.Fatalf("everything.Build: %v", buildErr)
	}
	return path
}

// build returns the cached binary for the current module graph, building
// and publishing it first when absent.
func build() (string, error) {
	goTool, err := extserver.GoTool()
	if err != nil {
		return "", err
	}
	name, cacheable, err := binaryName(goTool)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(os.TempDir(), Dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	final := filepath.Join(dir, name)
	if cacheable {
		if fi, err := os.Stat(final); err == nil && fi.Mode().IsRegular() {
			return final, nil
		}
	}
	tmp, err := os.MkdirTemp(dir, "build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	out := filepath.Join(tmp, name)
	if _, err := run(goTool, "build", "-o", out, Package); err != nil {
		return "", err
	}
	if err := os.Rename(out, final); err != nil {
		// Another process may have published it meanwhile (and, on
		// Windows, be running it).
		if fi, statErr := os.Stat(final); statErr == nil && fi.Mode().IsRegular() {
			return final, nil
		}
		return "", err
	}
	return final, nil
}

// binaryName names the binary after what goes into it: the go-sdk version
// and a hash of every module (path, version, replacement) the server's
// packages come from, the Go version and the target platform. A module
// replaced by a local directory has no version to key on: such builds are
// not cacheable, and are rebuilt by every test process.
func binaryName(goTool string) (name string, cacheable bool, err error) {
	mods, err := run(goTool, "list", "-deps", "-f",
		`{{with .Module}}{{.Path}} {{.Version}}{{with .Replace}} => {{.Path}} {{.Version}}{{end}}{{end}}`, Package)
	if err != nil {
		return "", false, err
	}
	env, err := run(goTool, "env", "GOVERSION", "GOOS", "GOARCH", "CGO_ENABLED")
	if err != nil {
		return "", false, err
	}
	h := sha256.New()
	h.Write(env)
	cacheable = true
	sdkVersion := "unknown"
	seen := map[string]bool{}
	for line := range strings.Lines(string(mods)) {
		line = strings.TrimSpace(line)
		if line == "" || seen[line] {
			continue
		}
		seen[line] = true
		h.Write([]byte(line + "\n"))
		switch fields := strings.Fields(line); {
		case len(fields) == 2: // path version
			if fields[0] == "github.com/modelcontextprotocol/go-sdk" {
				sdkVersion = fields[1]
			}
		case len(fields) == 5 && fields[2] == "=>": // replaced by another module version
		default:
			cacheable = false // a local replacement, or a module without a version
		}
	}
	exe := ""
	if runtime.GOOS == "windows" {
		exe = ".exe"
	}
	sum := hex.EncodeToString(h.Sum(nil))[:16]
	return fmt.Sprintf("everything-server-%s-%s%s", sanitize(sdkVersion), sum, exe), cacheable, nil
}

// sanitize keeps a version usable in a file name.
func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-':
			return r
		}
		return '_'
	}, s)
}

// run runs the go command and returns its standard output; its standard
// error is in the error.
func run(goTool string, args ...string) ([]byte, error) {
	cmd := exec.Command(goTool, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return out, nil
}
