package tasks

import (
	"context"
	"strconv"
	"testing"
	"time"
)

// TestKept: a session is kept by its closing connection while tasks
// handed out on it are not settled, through whichever route; a kept
// session whose last task settles is returned to end, an open one is
// forgotten; the state ids find their session until the task settles;
// past Max the oldest kept session is ended, past MaxAge any; past
// maxHanded a session is kept until it ages.
func TestKept(t *testing.T) {
	end := func(context.Context) error { return nil }
	t0 := time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC)
	k := &Kept{Max: 2, MaxAge: time.Hour}

	k.HandOut("s1", "srv", "t1", "st1", end)
	k.HandOut("s1", "srv", "t2", "st2", end)
	if got := k.Session("st1", "srv", "t1"); got != "s1" {
		t.Errorf("Session(st1) = %q, want s1", got)
	}
	if got := k.Session("st1", "srv", "t2"); got != "" {
		t.Errorf("Session of st1 for another task = %q, want none", got)
	}
	if e := k.Settle("s1", "t1"); e != nil || k.Session("st1", "srv", "t1") != "" {
		t.Errorf("Settle of one task of an open session = %+v, its state still found: %v", e, k.Session("st1", "srv", "t1") != "")
	}
	if keep, ended := k.Keep("s1", t0); keep != "srv" || len(ended) != 0 {
		t.Fatalf("Keep(s1) = %v, %v; want kept, nothing ended", keep, ended)
	}
	if n := k.Counts()["srv"]; n != 1 {
		t.Errorf("Counts = %d, want 1", n)
	}
	if e := k.Settle("s1", "t2"); e == nil || e.Session != "s1" || e.Why != WhySettled {
		t.Fatalf("Settle of the last task of a kept session = %+v, want s1 to end", e)
	}
	if k.Counts() != nil {
		t.Errorf("Counts = %v after the end, want none", k.Counts())
	}

	// An open session whose tasks all settled is forgotten: its
	// connection ends it.
	k.HandOut("s2", "srv", "t3", "st3", end)
	if e := k.Settle("s2", "t3"); e != nil {
		t.Errorf("Settle on an open session = %+v, want nothing to end", e)
	}
	if keep, _ := k.Keep("s2", t0); keep != "" {
		t.Error("a session with nothing handed out is kept")
	}

	// The bound: the oldest kept session ends first.
	for i, s := range []string{"a", "b", "c"} {
		k.HandOut(s, "srv", "t-"+s, "st-"+s, end)
		keep, ended := k.Keep(s, t0.Add(time.Duration(i)*time.Minute))
		if keep != "srv" {
			t.Errorf("Keep(%s) = %q, want kept", s, keep)
		}
		if i < 2 && len(ended) != 0 || i == 2 && (len(ended) != 1 || ended[0].Session != "a" || ended[0].Why != WhyBound) {
			t.Errorf("Keep(%s) ended %+v", s, ended)
		}
	}
	if k.Session("st-a", "srv", "t-a") != "" {
		t.Error("the state of an ended session is still found")
	}

	// The age.
	if ended, next := k.Expired(t0.Add(30 * time.Minute)); len(ended) != 0 || !next.Equal(t0.Add(time.Hour+time.Minute)) {
		t.Errorf("Expired before the age = %+v, next %v", ended, next)
	}
	ended, next := k.Expired(t0.Add(time.Hour + time.Minute))
	if len(ended) != 1 || ended[0].Session != "b" || ended[0].Why != WhyAged || !next.Equal(t0.Add(time.Hour+2*time.Minute)) {
		t.Errorf("Expired = %+v, next %v; want b, then c's age", ended, next)
	}

	// Past maxHanded, a session is kept until it ages.
	for i := range maxHanded + 1 {
		k.HandOut("big", "srv", "t"+strconv.Itoa(i), "x"+strconv.Itoa(i), end)
	}
	k.Keep("big", t0)
	for i := range maxHanded + 1 {
		if e := k.Settle("big", "t"+strconv.Itoa(i)); e != nil {
			t.Fatalf("a session past the bound of its tasks ended on settling: %+v", e)
		}
	}
	if ended, _ := k.Expired(t0.Add(2 * time.Hour)); len(ended) != 2 {
		t.Errorf("Expired = %+v, want big and c", ended)
	}
}

// TestKeptAlso: a state handed out again on a session the record keeps
// joins it (found by Session, settled with it); a session it does not
// keep is not made.
func TestKeptAlso(t *testing.T) {
	end := func(context.Context) error { return nil }
	k := &Kept{Max: 2, MaxAge: time.Hour}
	k.HandOut("s1", "srv", "t1", "st1", end)
	if k.Also("nope", "t1", "st9") || k.Session("st9", "srv", "t1") != "" {
		t.Fatal("Also made a session the record did not keep")
	}
	if !k.Also("s1", "t1", "st2") || k.Session("st2", "srv", "t1") != "s1" {
		t.Fatal("Also did not add the state to its session")
	}
}
