package mcpadapter

// New's checks of a configuration: every problem at once, before anything
// is opened, each a *ConfigError naming its server and field, in a stable
// order.

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"

	"github.com/mcpadapter/mcpadapter/internal/configfile"
	"github.com/mcpadapter/mcpadapter/internal/redact"
	"github.com/mcpadapter/mcpadapter/internal/toolname"
)

// minStateKey is the shortest State.Key that State.RequireKey accepts.
const minStateKey = 32

// checkConfig returns every problem of cfg at once, joined, or cfg's
// servers, each valid and with its own copies of the slices, maps and
// policies the caller may change later.
func checkConfig(cfg Config) (map[string]Server, error) {
	problems := cfg.problems()
	servers := make(map[string]Server, len(cfg.Servers))
	for _, name := range slices.Sorted(maps.Keys(cfg.Servers)) {
		s := cfg.Servers[name]
		if p := s.problem(name); p != nil {
			problems = append(problems, p)
			continue
		}
		s.Args = slices.Clone(s.Args)
		s.Env = maps.Clone(s.Env)
		s.Headers = maps.Clone(s.Headers)
		if s.Retry != nil {
			p := *s.Retry
			s.Retry = &p
		}
		servers[name] = s
	}
	sortProblems(problems)
	errs := make([]error, len(problems))
	for i, p := range problems {
		errs[i] = p
	}
	return servers, errors.Join(errs...)
}

// problems returns the problems of cfg's top level, in no particular
// order.
func (cfg *Config) problems() []*ConfigError {
	var problems []*ConfigError
	bad := func(field, format string, args ...any) {
		problems = append(problems, &ConfigError{Field: field, Err: fmt.Errorf(format, args...)})
	}
	// The numeric settings: none may be negative.
	negative := func(field string, v int64) {
		if v < 0 {
			bad(field, "negative")
		}
	}
	negative("DefaultToolTimeout", int64(cfg.DefaultToolTimeout))
	negative("MaxMessageBytes", cfg.MaxMessageBytes)
	negative("DialTimeout", int64(cfg.DialTimeout))
	negative("CatalogTTL", int64(cfg.CatalogTTL))
	negative("State.MaxAge", int64(cfg.State.MaxAge))
	negative("PrincipalIdleTimeout", int64(cfg.PrincipalIdleTimeout))
	negative("State.KeptSessionMaxAge", int64(cfg.State.KeptSessionMaxAge))
	negative("MaxPrincipalConns", int64(cfg.MaxPrincipalConns))
	if err := cfg.Filter.validate(); err != nil {
		bad("Filter", "%w", err)
	}
	if cfg.State.RequireKey && len(cfg.State.Key) < minStateKey {
		bad("State.Key", "%d bytes; State.RequireKey wants at least %d (the same random key on every replica)", len(cfg.State.Key), minStateKey)
	}
	if len(cfg.State.OldKeys) > 0 && len(cfg.State.Key) == 0 {
		bad("State.OldKeys", "set without a State.Key (the current key seals; old keys only open)")
	}
	if slices.ContainsFunc(cfg.State.OldKeys, func(k []byte) bool { return len(k) == 0 }) {
		bad("State.OldKeys", "an empty key")
	}
	return problems
}

// sortProblems puts problems in a stable order, as configurations are
// walked in map order: the top level's by field, then each server's by
// name.
func sortProblems(problems []*ConfigError) {
	key := func(p *ConfigError) string {
		if p.Server == "" {
			return "0" + p.Field
		}
		return "1" + p.Server
	}
	slices.SortStableFunc(problems, func(a, b *ConfigError) int { return strings.Compare(key(a), key(b)) })
}

// problem returns the first problem of s, the configuration of the server
// name, or nil.
func (s *Server) problem(name string) *ConfigError {
	bad := func(field, format string, args ...any) *ConfigError {
		return &ConfigError{Server: name, Field: field, Err: fmt.Errorf(format, args...)}
	}
	switch {
	case strings.TrimSpace(name) == "":
		return &ConfigError{Err: errors.New("empty server name")}
	case !toolname.Valid(name):
		return bad("", "name may hold only ASCII letters, digits, '_' and '-' (it prefixes tool names, which providers restrict to these)")
	case strings.Contains(name, "__"):
		return bad("", `name must not contain "__" (the tool name separator)`)
	}
	targets := 0
	for _, set := range []bool{s.URL != "", s.Command != "", s.Transport != nil} {
		if set {
			targets++
		}
	}
	if targets != 1 {
		return bad("", "exactly one of URL, Command or Transport must be set (%d are)", targets)
	}
	if !slices.Contains([]Mode{ModeAuto, ModeModern, ModeLegacy}, s.Mode) {
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
	case s.Retry != nil && s.Retry.Delay < 0:
		return bad("Retry", "negative Delay")
	}
	if s.Command == "" {
		if field := s.stdioOnly(); field != "" {
			return bad(field, "applies to stdio servers (Command)")
		}
	}
	if s.URL == "" {
		if field := s.httpOnly(); field != "" {
			return bad(field, "applies to HTTP servers (URL)")
		}
	}
	if s.OAuth != nil && s.OAuthFor != nil {
		return bad("OAuthFor", "OAuth is set too (OAuthFor gives every principal's handler)")
	}
	switch s.LogLevel {
	case "", "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency":
	default:
		return bad("LogLevel", "unknown level %q (want an MCP level: debug, info, notice, warning, error, critical, alert or emergency)", s.LogLevel)
	}
	return nil
}

// stdioOnly returns the first, by name, of the fields of s that apply only
// to stdio servers (Command) and are set, or "".
func (s *Server) stdioOnly() string {
	switch {
	case len(s.Args) > 0:
		return "Args"
	case s.Dir != "":
		return "Dir"
	case len(s.Env) > 0:
		return "Env"
	}
	return ""
}

// httpOnly returns the first, by name, of the fields of s that apply only
// to HTTP servers (URL) and are set, or "".
func (s *Server) httpOnly() string {
	switch {
	case s.DisableSSEFallback:
		return "DisableSSEFallback"
	case s.HTTPClient != nil:
		return "HTTPClient"
	case len(s.Headers) > 0:
		return "Headers"
	case s.HeadersFor != nil:
		return "HeadersFor"
	case s.OAuth != nil:
		return "OAuth"
	case s.OAuthFor != nil:
		return "OAuthFor"
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
