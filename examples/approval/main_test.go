package main

import (
	"strings"
	"testing"
)

// TestRun runs the example and checks its story.
func TestRun(t *testing.T) {
	var out strings.Builder
	if err := run(t.Context(), &out); err != nil {
		t.Fatalf("run() = %v; output:\n%s", err, out.String())
	}
	for _, want := range []string{
		"files__delete_file destructiveHint=true   needs approval",
		"files__list_files  readOnlyHint           runs freely",
		"files__write_file  (no annotations)       needs approval",
		"result: notes.txt, reports/q3.pdf, tmp/cache.db",
		`held for approval: mcpadapter: server "files": tool "files__delete_file" needs approval`,
		"result: deleted tmp/cache.db",
		"reviewer: reject (reports/q3.pdf must be kept for the auditors)",
		"result: The user rejected the call to tool files__delete_file; it was not run. Reason: reports/q3.pdf must be kept for the auditors",
		"result: wrote 12 bytes to notes.txt",
		"the model answers: I deleted tmp/cache.db",
		"Files left on the server: notes.txt, reports/q3.pdf",
		"delete_file calls the server received: 1",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q; output:\n%s", want, out.String())
		}
	}
}
