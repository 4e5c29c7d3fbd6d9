package configcheck

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestCheckServer(t *testing.T) {
	negative := -time.Second
	tests := []struct {
		name, server string
		s            Server
		field        string // "-" for no problem
		want         string
	}{
		{"stdio", "files", Server{Command: "x", KnownMode: true}, "-", ""},
		{"empty name", " ", Server{}, "", "empty server name"},
		{"name chars", "a.b", Server{Command: "x", KnownMode: true}, "", "ASCII letters"},
		{"separator", "a__b", Server{Command: "x", KnownMode: true}, "", `"__"`},
		{"filter first", "s", Server{Filter: errors.New("bad pattern")}, "Filter", "bad pattern"},
		{"two targets", "s", Server{URL: "https://h", Command: "x", KnownMode: true}, "", "(2 are)"},
		{"mode", "s", Server{Command: "x", Mode: "new"}, "Mode", `unknown mode "new"`},
		{"url", "s", Server{URL: "ftp://h", KnownMode: true}, "URL", ""},
		{"delay", "s", Server{Command: "x", KnownMode: true, Restart: &negative}, "Restart", "negative Delay"},
		{"stdio field", "s", Server{URL: "https://h", KnownMode: true, Stdio: map[string]bool{"Env": true, "Args": true}}, "Args", "stdio servers"},
		{"http field", "s", Server{Command: "x", KnownMode: true, HTTP: map[string]bool{"Headers": true}}, "Headers", "HTTP servers"},
		{"log level", "s", Server{Command: "x", KnownMode: true, LogLevel: "loud"}, "LogLevel", `unknown level "loud"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := CheckServer(tt.server, tt.s)
			if tt.field == "-" {
				if p != nil {
					t.Fatalf("CheckServer() = %v, want nil", p.Err)
				}
				return
			}
			if p == nil || p.Field != tt.field || !strings.Contains(p.Err.Error(), tt.want) {
				t.Fatalf("CheckServer() = %+v, want field %q and %q", p, tt.field, tt.want)
			}
		})
	}
}

func TestCheckAndSort(t *testing.T) {
	problems := Check(Config{
		Amounts:      map[string]int64{"DialTimeout": -1, "CatalogTTL": -1, "MaxCatalogBytes": 0},
		OldStateKeys: [][]byte{nil},
	})
	problems = append([]Problem{{Server: "b"}, {Server: "a"}}, problems...)
	Sort(problems)
	var got []string
	for _, p := range problems {
		got = append(got, p.Server+"/"+p.Field)
	}
	want := "/CatalogTTL /DialTimeout /OldStateKeys /OldStateKeys a/ b/"
	if strings.Join(got, " ") != want {
		t.Errorf("Sort(Check()) = %v, want %s", got, want)
	}
}
