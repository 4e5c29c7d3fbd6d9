package mcpadapter

// New's checks of a configuration: every problem at once, before anything
// is opened.

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"

	"github.com/mcpadapter/mcpadapter/internal/redact"
)

// minStateKey is the shortest StateKey that RequireStateKey accepts.
const minStateKey = 32

// checkConfig returns every problem of cfg at once, joined, or cfg's
// servers, each valid and with its own copies of the slices, maps and
// policies the caller may change later.
func checkConfig(cfg Config) (map[string]Server, error) {
	var errs []error
	if cfg.DefaultToolTimeout < 0 {
		errs = append(errs, errors.New("mcpadapter: negative DefaultToolTimeout"))
	}
	if cfg.MaxMessageBytes < 0 {
		errs = append(errs, errors.New("mcpadapter: negative MaxMessageBytes"))
	}
	if cfg.ToolName != nil && cfg.RawToolNames {
		errs = append(errs, errors.New("mcpadapter: ToolName and RawToolNames are both set (ToolName decides every name)"))
	}
	if err := cfg.Filter.validate(); err != nil {
		errs = append(errs, fmt.Errorf("mcpadapter: Filter: %w", err))
	}
	if cfg.MaxCatalogBytes < 0 {
		errs = append(errs, errors.New("mcpadapter: negative MaxCatalogBytes"))
	}
	if cfg.DialTimeout < 0 {
		errs = append(errs, errors.New("mcpadapter: negative DialTimeout"))
	}
	if cfg.CatalogTTL < 0 {
		errs = append(errs, errors.New("mcpadapter: negative CatalogTTL"))
	}
	if cfg.RequireStateKey && len(cfg.StateKey) < minStateKey {
		errs = append(errs, fmt.Errorf("mcpadapter: StateKey has %d bytes; RequireStateKey wants at least %d (the same random key on every replica)", len(cfg.StateKey), minStateKey))
	}
	if cfg.PrincipalIdleTimeout < 0 || cfg.MaxPrincipalConns < 0 {
		errs = append(errs, errors.New("mcpadapter: negative PrincipalIdleTimeout or MaxPrincipalConns"))
	}
	if len(cfg.OldStateKeys) > 0 && len(cfg.StateKey) == 0 {
		errs = append(errs, errors.New("mcpadapter: OldStateKeys without a StateKey (the current key seals; old keys only open)"))
	}
	if slices.ContainsFunc(cfg.OldStateKeys, func(k []byte) bool { return len(k) == 0 }) {
		errs = append(errs, errors.New("mcpadapter: an empty key in OldStateKeys"))
	}
	if cfg.StateMaxAge < 0 {
		errs = append(errs, errors.New("mcpadapter: negative StateMaxAge"))
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
	return servers, errors.Join(errs...)
}

// validateServer returns the first problem of the configuration s of the
// server name, or nil.
func validateServer(name string, s Server) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("mcpadapter: server %q: %s", name, fmt.Sprintf(format, args...))
	}
	switch {
	case strings.TrimSpace(name) == "":
		return errors.New("mcpadapter: empty server name")
	case !validServerName(name):
		return bad("name may hold only ASCII letters, digits, '_' and '-' (it prefixes tool names, which providers restrict to these)")
	case strings.Contains(name, "__"):
		return bad(`name must not contain "__" (the tool name separator)`)
	}
	if err := s.Filter.validate(); err != nil {
		return bad("Filter: %s", err)
	}
	targets := 0
	for _, set := range []bool{s.URL != "", s.Command != "", s.Transport != nil} {
		if set {
			targets++
		}
	}
	if targets != 1 {
		return bad("exactly one of URL, Command or Transport must be set (%d are)", targets)
	}
	switch s.Mode {
	case ModeAuto, ModeModern, ModeLegacy:
	default:
		return bad("unknown Mode %q", s.Mode)
	}
	if s.URL != "" {
		u, err := url.Parse(s.URL)
		if err != nil {
			var ue *url.Error
			if errors.As(err, &ue) {
				err = ue.Err // without the URL, which may hold a secret
			}
			return bad("invalid URL: %s", err)
		}
		if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
			return bad("URL %q is not an http(s) URL", redact.Parsed(u))
		}
	}
	if s.DefaultToolTimeout < 0 {
		return bad("negative DefaultToolTimeout")
	}
	for _, p := range []*RetryPolicy{s.Restart, s.Reconnect} {
		if p != nil && p.Delay < 0 {
			return bad("negative retry Delay")
		}
	}
	if s.Restart != nil && s.URL != "" {
		return bad("Restart applies to stdio servers (Command) and custom transports; use Reconnect")
	}
	if s.Reconnect != nil && s.Command != "" {
		return bad("Reconnect applies to HTTP servers and custom transports; use Restart for Command")
	}
	if s.Command == "" && (len(s.Args) > 0 || len(s.Env) > 0 || s.Dir != "") {
		return bad("Args, Env and Dir apply to stdio servers (Command)")
	}
	if s.Command == "" && s.InheritEnv {
		return bad("InheritEnv applies to stdio servers (Command)")
	}
	if s.URL == "" && (len(s.Headers) > 0 || s.HTTPClient != nil || s.OAuth != nil || s.DisableSSEFallback || s.perPrincipal()) {
		return bad("Headers, HTTPClient, OAuth and DisableSSEFallback apply to HTTP servers (URL), and so do HeadersFor and OAuthFor")
	}
	if s.OAuth != nil && s.OAuthFor != nil {
		return bad("OAuth and OAuthFor are both set (OAuthFor gives every principal's handler)")
	}
	switch s.LogLevel {
	case "", "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency":
	default:
		return bad("unknown LogLevel %q (want an MCP level: debug, info, notice, warning, error, critical, alert or emergency)", s.LogLevel)
	}
	return nil
}
