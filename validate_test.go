package mcpadapter

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestServerProblem(t *testing.T) {
	negative := &RetryPolicy{Delay: -time.Second}
	tests := []struct {
		name, server string
		s            Server
		field        string // "-" for no problem
		want         string
	}{
		{"stdio", "files", Server{Command: "x"}, "-", ""},
		{"empty name", " ", Server{}, "", "empty server name"},
		{"name chars", "a.b", Server{Command: "x"}, "", "ASCII letters"},
		{"separator", "a__b", Server{Command: "x"}, "", `"__"`},
		{"two targets", "s", Server{URL: "https://h", Command: "x"}, "", "(2 are)"},
		{"mode", "s", Server{Command: "x", Mode: "new"}, "Mode", `unknown mode "new"`},
		{"url", "s", Server{URL: "ftp://h"}, "URL", ""},
		{"delay", "s", Server{Command: "x", Retry: negative}, "Retry", "negative Delay"},
		{"stdio field", "s", Server{URL: "https://h", Env: map[string]string{"A": "b"}, Args: []string{"a"}}, "Args", "stdio servers"},
		{"http field", "s", Server{Command: "x", Headers: map[string]string{"A": "b"}}, "Headers", "HTTP servers"},
		{"log level", "s", Server{Command: "x", LogLevel: "loud"}, "LogLevel", `unknown level "loud"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.s.problem(tt.server)
			if tt.field == "-" {
				if p != nil {
					t.Fatalf("problem() = %v, want nil", p.Err)
				}
				return
			}
			if p == nil || p.Field != tt.field || !strings.Contains(p.Err.Error(), tt.want) {
				t.Fatalf("problem() = %+v, want field %q and %q", p, tt.field, tt.want)
			}
		})
	}
}

func TestProblemsSorted(t *testing.T) {
	problems := (&Config{DialTimeout: -1, CatalogTTL: -1, MaxMessageBytes: 0, State: StateOptions{OldKeys: [][]byte{nil}}}).problems()
	problems = append([]*ConfigError{{Server: "b", Err: errors.New("b")}, {Server: "a", Err: errors.New("a")}}, problems...)
	sortProblems(problems)
	var got []string
	for _, p := range problems {
		got = append(got, p.Server+"/"+p.Field)
	}
	want := "/CatalogTTL /DialTimeout /State.OldKeys /State.OldKeys a/ b/"
	if strings.Join(got, " ") != want {
		t.Errorf("sortProblems(problems()) = %v, want %s", got, want)
	}
}
