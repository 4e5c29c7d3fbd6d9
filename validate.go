package mcpadapter

// New's checks of a configuration: every problem at once, before anything
// is opened, each a *ConfigError naming its server and field. The checks
// are internal/configcheck's; this file says what they read.

import (
	"errors"
	"maps"
	"slices"

	"github.com/mcpadapter/mcpadapter/internal/configcheck"
)

// checkConfig returns every problem of cfg at once, joined, or cfg's
// servers, each valid and with its own copies of the slices, maps and
// policies the caller may change later.
func checkConfig(cfg Config) (map[string]Server, error) {
	problems := configcheck.Check(configcheck.Config{
		Amounts: map[string]int64{
			"DefaultToolTimeout":   int64(cfg.DefaultToolTimeout),
			"MaxMessageBytes":      cfg.MaxMessageBytes,
			"MaxCatalogBytes":      cfg.MaxCatalogBytes,
			"DialTimeout":          int64(cfg.DialTimeout),
			"CatalogTTL":           int64(cfg.CatalogTTL),
			"StateMaxAge":          int64(cfg.StateMaxAge),
			"PrincipalIdleTimeout": int64(cfg.PrincipalIdleTimeout),
			"MaxPrincipalConns":    int64(cfg.MaxPrincipalConns),
		},
		ToolName: cfg.ToolName != nil, RawToolNames: cfg.RawToolNames, Filter: cfg.Filter.validate(),
		RequireStateKey: cfg.RequireStateKey, StateKey: len(cfg.StateKey), OldStateKeys: cfg.OldStateKeys,
	})
	servers := make(map[string]Server, len(cfg.Servers))
	for _, name := range slices.Sorted(maps.Keys(cfg.Servers)) {
		s := cfg.Servers[name]
		if p := configcheck.CheckServer(name, s.checked(name)); p != nil {
			problems = append(problems, *p)
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
	configcheck.Sort(problems)
	errs := make([]error, len(problems))
	for i, p := range problems {
		errs[i] = &ConfigError{Server: p.Server, Field: p.Field, Err: p.Err}
	}
	return servers, errors.Join(errs...)
}

// checked is what configcheck.CheckServer reads of s, the server named
// name.
func (s *Server) checked(name string) configcheck.Server {
	c := configcheck.Server{
		URL: s.URL, Command: s.Command, Transport: s.Transport != nil,
		Filter: s.Filter.validate(), Mode: string(s.Mode), KnownMode: slices.Contains([]Mode{ModeAuto, ModeModern, ModeLegacy}, s.Mode),
		DefaultToolTimeout: s.DefaultToolTimeout, OAuth: s.OAuth != nil, OAuthFor: s.OAuthFor != nil, LogLevel: string(s.LogLevel),
		Stdio: map[string]bool{"Args": len(s.Args) > 0, "Env": len(s.Env) > 0, "Dir": s.Dir != "", "InheritEnv": s.InheritEnv},
		HTTP: map[string]bool{
			"Headers": len(s.Headers) > 0, "HTTPClient": s.HTTPClient != nil, "OAuth": s.OAuth != nil,
			"DisableSSEFallback": s.DisableSSEFallback, "HeadersFor": s.HeadersFor != nil, "OAuthFor": s.OAuthFor != nil,
		},
	}
	if s.Restart != nil {
		c.Restart = &s.Restart.Delay
	}
	if s.Reconnect != nil {
		c.Reconnect = &s.Reconnect.Delay
	}
	return c
}
