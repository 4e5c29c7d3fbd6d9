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
		"model calls restaurant__check_availability",
		"tool result: Chez Nous has tables for 4 on 2026-09-18 and 2026-09-19.",
		`the run stopped: server "restaurant", tool restaurant__book_table needs user input:`,
		"[date] Which date should I book at Chez Nous for 4? (form;",
		"steps completed before the interrupt: 1 (restaurant__check_availability)",
		"Saved the paused run (",
		"sealed with Config.State.Key",
		"refused, nothing sent:",
		"the same run resumes",
		"the model saw the tool result: Chez Nous has tables for 4 on 2026-09-18 and 2026-09-19.",
		"the model saw the tool result: Booked a table for 4 at Chez Nous on 2026-09-19.",
		"answer: Your table for 4 at Chez Nous is booked for 19 September 2026.",
		`handler asked (key "date")`,
		`handler asked (key "")`,
		"modern server: Booked a table for 2 at Chez Nous on 2026-09-18.",
		"legacy server: Booked a table for 2 at Chez Nous on 2026-09-18.",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q; output:\n%s", want, out.String())
		}
	}
}
