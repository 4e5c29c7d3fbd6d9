// Package configcheck checks a configuration before anything is opened:
// every problem at once, each naming its server and field, in a stable
// order. It is pure and knows nothing of the adapter: the root package's
// validate.go maps its Config and Server onto [Config] and [Server], what
// the checks read of them, and each [Problem] onto a ConfigError.
package configcheck

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/configfile"
	"github.com/mcpadapter/mcpadapter/internal/redact"
	"github.com/mcpadapter/mcpadapter/internal/toolname"
)

// MinStateKey is the shortest StateKey that RequireStateKey accepts.
const MinStateKey = 32

// A Problem is one problem of a configuration.
type Problem struct {
	Server string // "" for the top level
	Field  string // "" for the whole server
	Err    error
}

// Config is what the checks read of a configuration's top level.
type Config struct {
	Amounts         map[string]int64 // the numeric settings, by field: none may be negative
	ToolName        bool             // ToolName is set
	RawToolNames    bool
	Filter          error // the top-level Filter's problem, or nil
	RequireStateKey bool
	StateKey        int // its length
	OldStateKeys    [][]byte
}

// Check returns the problems of c's top level, in no particular order.
func Check(c Config) []Problem {
	var problems []Problem
	bad := func(field, format string, args ...any) {
		problems = append(problems, Problem{Field: field, Err: fmt.Errorf(format, args...)})
	}
	for field, v := range c.Amounts {
		if v < 0 {
			bad(field, "negative")
		}
	}
	if c.ToolName && c.RawToolNames {
		bad("ToolName", "RawToolNames is set too (ToolName decides every name)")
	}
	if c.Filter != nil {
		bad("Filter", "%w", c.Filter)
	}
	if c.RequireStateKey && c.StateKey < MinStateKey {
		bad("StateKey", "%d bytes; RequireStateKey wants at least %d (the same random key on every replica)", c.StateKey, MinStateKey)
	}
	if len(c.OldStateKeys) > 0 && c.StateKey == 0 {
		bad("OldStateKeys", "set without a StateKey (the current key seals; old keys only open)")
	}
	if slices.ContainsFunc(c.OldStateKeys, func(k []byte) bool { return len(k) == 0 }) {
		bad("OldStateKeys", "an empty key")
	}
	return problems
}

// Sort puts problems in a stable order, as configurations are walked in
// map order: the top level's by field, then each server's by name.
func Sort(problems []Problem) {
	key := func(p Problem) string {
		if p.Server == "" {
			return "0" + p.Field
		}
		return "1" + p.Server
	}
	slices.SortStableFunc(problems, func(a, b Problem) int { return strings.Compare(key(a), key(b)) })
}

// Server is what the checks read of one server's configuration.
type Server struct {
	URL, Command       string
	Transport          bool  // a custom transport is set
	Filter             error // its Filter's problem, or nil
	Mode               string
	KnownMode          bool
	DefaultToolTimeout time.Duration
	Restart, Reconnect *time.Duration // the policy's Delay; nil without a policy
	// Stdio and HTTP tell, by field, whether each field that applies only
	// to stdio servers (Command), or only to HTTP servers (URL), is set.
	Stdio, HTTP     map[string]bool
	OAuth, OAuthFor bool // each is set
	LogLevel        string
}

// CheckServer returns the first problem of s, the configuration of the
// server name, or nil.
func CheckServer(name string, s Server) *Problem {
	bad := func(field, format string, args ...any) *Problem {
		return &Problem{Server: name, Field: field, Err: fmt.Errorf(format, args...)}
	}
	switch {
	case strings.TrimSpace(name) == "":
		return &Problem{Err: errors.New("empty server name")}
	case !toolname.Valid(name):
		return bad("", "name may hold only ASCII letters, digits, '_' and '-' (it prefixes tool names, which providers restrict to these)")
	case strings.Contains(name, "__"):
		return bad("", `name must not contain "__" (the tool name separator)`)
	}
	if s.Filter != nil {
		return bad("Filter", "%w", s.Filter)
	}
	targets := 0
	for _, set := range []bool{s.URL != "", s.Command != "", s.Transport} {
		if set {
			targets++
		}
	}
	if targets != 1 {
		return bad("", "exactly one of URL, Command or Transport must be set (%d are)", targets)
	}
	if !s.KnownMode {
		return bad("Mode", "unknown mode %q (want ModeAuto, ModeModern or ModeLegacy)", s.Mode)
	}
	if s.URL != "" {
		if err := checkURL(s.URL); err != nil {
			return bad("URL", "%w", err)
		}
	}
	if s.DefaultToolTimeout < 0 {
		return bad("DefaultToolTimeout", "negative")
	}
	switch {
	case s.Restart != nil && *s.Restart < 0:
		return bad("Restart", "negative Delay")
	case s.Reconnect != nil && *s.Reconnect < 0:
		return bad("Reconnect", "negative Delay")
	case s.Restart != nil && s.URL != "":
		return bad("Restart", "applies to stdio servers (Command) and custom transports; use Reconnect")
	case s.Reconnect != nil && s.Command != "":
		return bad("Reconnect", "applies to HTTP servers and custom transports; use Restart for Command")
	}
	if s.Command == "" {
		if field := firstSet(s.Stdio); field != "" {
			return bad(field, "applies to stdio servers (Command)")
		}
	}
	if s.URL == "" {
		if field := firstSet(s.HTTP); field != "" {
			return bad(field, "applies to HTTP servers (URL)")
		}
	}
	if s.OAuth && s.OAuthFor {
		return bad("OAuthFor", "OAuth is set too (OAuthFor gives every principal's handler)")
	}
	switch s.LogLevel {
	case "", "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency":
	default:
		return bad("LogLevel", "unknown level %q (want an MCP level: debug, info, notice, warning, error, critical, alert or emergency)", s.LogLevel)
	}
	return nil
}

// firstSet returns the first, by name, of the fields set, or "".
func firstSet(fields map[string]bool) string {
	for _, name := range slices.Sorted(maps.Keys(fields)) {
		if fields[name] {
			return name
		}
	}
	return ""
}

// checkURL refuses a URL that is not an absolute http or https one,
// without quoting a secret it may hold.
func checkURL(rawURL string) error {
	if err := configfile.CheckScheme(rawURL); err != nil {
		return err
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // without the URL, which may hold a secret
		}
		return err
	}
	if u.Host == "" {
		return fmt.Errorf("%q has no host", redact.Parsed(u))
	}
	return nil
}
