package cachekey

import "testing"

func TestRoundTrip(t *testing.T) {
	for _, key := range []string{"", "cursor-1", "file:///a\x00b", Lookup(3, "nested")} {
		for _, n := range []int{0, 7, 123} {
			slot, got, purge, ok := Parse(Lookup(n, key))
			if !ok || purge || got != key {
				t.Errorf("Parse(Lookup(%d, %q)) = %q, %q, %v, %v; want the key back", n, key, slot, got, purge, ok)
			}
			pslot, _, purge, ok := Parse(Purge(n))
			if !ok || !purge || pslot != slot {
				t.Errorf("Parse(Purge(%d)) = %q, %v, %v; want slot %q, a purge", n, pslot, purge, ok, slot)
			}
		}
	}
	s0, _, _, _ := Parse(Lookup(0, "a"))
	s1, _, _, _ := Parse(Lookup(1, "a"))
	s10, _, _, _ := Parse(Lookup(10, "a"))
	if s0 == s1 || s1 == s10 {
		t.Errorf("slots %q, %q, %q are not distinct", s0, s1, s10)
	}
}

func TestParseOthers(t *testing.T) {
	for _, s := range []string{"", "cursor", prefix, prefix + "x\x00k", prefix + "3", prefix + "3\x02", "\x00mcpadapter-uncached"} {
		if slot, key, purge, ok := Parse(s); ok || slot != "" || key != "" || purge {
			t.Errorf("Parse(%q) = %q, %q, %v, %v; want nothing", s, slot, key, purge, ok)
		}
	}
}
