package mcpadapter

// New's checks of a configuration: every problem at once, before anything
// is opened, each a *ConfigError naming its server and field.

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"

	"github.com/mcpadapter/mcpadapter/internal/configfile"
	"github.com/mcpadapter/mcpadapter/internal/redact"
)

// minStateKey is the shortest StateKey that RequireStateKey accepts.
const minStateKey = 32

// checkConfig returns every problem of cfg at once, joined, or cfg's
// servers, each valid and with its own copies of the slices, maps and
// policies the caller may change later.
func checkConfig(cfg Config) (map[string]Server, error) {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, &ConfigError{Field: field, Err: fmt.Errorf(format, args...)})
	}
	for field, v := range map[string]int64{
		"DefaultToolTimeout":   int64(cfg.DefaultToolTimeout),
		"MaxMessageBytes":      cfg.MaxMessageBytes,
		"MaxCatalogBytes":      cfg.MaxCatalogBytes,
		"DialTimeout":          int64(cfg.DialTimeout),
		"CatalogTTL":           int64(cfg.CatalogTTL),
		"StateMaxAge":          int64(cfg.StateMaxAge),
		"PrincipalIdleTimeout": int64(cfg.PrincipalIdleTimeout),
		"MaxPrincipalConns":    int64(cfg.MaxPrincipalConns),
	} {
		if v < 0 {
			bad(field, "negative")
		}
	}
	if cfg.ToolName != nil && cfg.RawToolNames {
		bad("ToolName", "RawToolNames is set too (ToolName decides every name)")
	}
	if err := cfg.Filter.validate(); err != nil {
		bad("Filter", "%w", err)
	}
	if cfg.RequireStateKey && len(cfg.StateKey) < minStateKey {
		bad("StateKey", "%d bytes; RequireStateKey wants at least %d (the same random key on every replica)", len(cfg.StateKey), minStateKey)
	}
	if len(cfg.OldStateKeys) > 0 && len(cfg.StateKey) == 0 {
		bad("OldStateKeys", "set without a StateKey (the current key seals; old keys only open)")
	}
	if slices.ContainsFunc(cfg.OldStateKeys, func(k []byte) bool { return len(k) == 0 }) {
		bad("OldStateKeys", "an empty key")
	}
	servers := make(map[string]Server, len(cfg.Servers))
	for _, name := range slices.Sorted(maps.Keys(cfg.Servers)) {
		s := cfg.Servers[name]
		if err := validateServer(name, s); err != nil {
			errs = append(errs, err)
			continue
		}
		s.Args = slices.Clone(s.Args)
		s.Env = maps.Clone(s.Env)
		s.Headers = maps.Clone(s.Headers)
		s.Filter = s.Filter.clone()
		if s.Restart != nil {
			p := *s.Restart
			s.Restart = &p
		}
		if s.Reconnect != nil {
			p := *s.Reconnect
			s.Reconnect = &p
		}
		servers[name] = s
	}
	// The map above is walked in random order: report in a stable one.
	slices.SortStableFunc(errs, func(a, b error) int {
		return strings.Compare(sortKey(a), sortKey(b))
	})
	return servers, errors.Join(errs...)
}

// sortKey orders the problems of a configuration: the top level's by
// field, then each server's.
func sortKey(err error) string {
	var ce *ConfigError
	if !errors.As(err, &ce) {
		return ""
	}
	if ce.Server == "" {
		return "0" + ce.Field
	}
	return "1" + ce.Server
}

// validateServer returns the first problem of the configuration s of the
// server name, as a *ConfigError naming the field, or nil.
func validateServer(name string, s Server) error {
	bad := func(field, format string, args ...any) error {
		return &ConfigError{Server: name, Field: field, Err: fmt.Errorf(format, args...)}
	}
	switch {
	case strings.TrimSpace(name) == "":
		return &ConfigError{Err: errors.New("empty server name")}
	case !validServerName(name):
		return bad("", "name may hold only ASCII letters, digits, '_' and '-' (it prefixes tool names, which providers restrict to these)")
	case strings.Contains(name, "__"):
		return bad("", `name must not contain "__" (the tool name separator)`)
	}
	if err := s.Filter.validate(); err != nil {
		return bad("Filter", "%w", err)
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
	switch s.Mode {
	case ModeAuto, ModeModern, ModeLegacy:
	default:
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
	case s.Restart != nil && s.Restart.Delay < 0:
		return bad("Restart", "negative Delay")
	case s.Reconnect != nil && s.Reconnect.Delay < 0:
		return bad("Reconnect", "negative Delay")
	case s.Restart != nil && s.URL != "":
		return bad("Restart", "applies to stdio servers (Command) and custom transports; use Reconnect")
	case s.Reconnect != nil && s.Command != "":
		return bad("Reconnect", "applies to HTTP servers and custom transports; use Restart for Command")
	}
	if s.Command == "" {
		if field := firstSet(map[string]bool{"Args": len(s.Args) > 0, "Env": len(s.Env) > 0, "Dir": s.Dir != "", "InheritEnv": s.InheritEnv}); field != "" {
			return bad(field, "applies to stdio servers (Command)")
		}
	}
	if s.URL == "" {
		if field := firstSet(map[string]bool{
			"Headers": len(s.Headers) > 0, "HTTPClient": s.HTTPClient != nil, "OAuth": s.OAuth != nil,
			"DisableSSEFallback": s.DisableSSEFallback, "HeadersFor": s.HeadersFor != nil, "OAuthFor": s.OAuthFor != nil,
		}); field != "" {
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
