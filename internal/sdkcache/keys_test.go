package sdkcache

import "testing"

func TestRoundTrip(t *testing.T) {
	for _, key := range []string{"", "cursor-1", "file:///a\x00b", Lookup(3, "nested")} {
		for _, n := range []int{0, 7, 123} {
			slot, got, purge, ok := parseKey(Lookup(n, key))
			if !ok || purge || got != key {
				t.Errorf("parseKey(Lookup(%d, %q)) = %q, %q, %v, %v; want the key back", n, key, slot, got, purge, ok)
			}
			pslot, _, purge, ok := parseKey(Purge(n))
			if !ok || !purge || pslot != slot {
				t.Errorf("parseKey(Purge(%d)) = %q, %v, %v; want slot %q, a purge", n, pslot, purge, ok, slot)
			}
		}
	}
	s0, _, _, _ := parseKey(Lookup(0, "a"))
	s1, _, _, _ := parseKey(Lookup(1, "a"))
	s10, _, _, _ := parseKey(Lookup(10, "a"))
	if s0 == s1 || s1 == s10 {
		t.Errorf("slots %q, %q, %q are not distinct", s0, s1, s10)
	}
}

func TestParseOthers(t *testing.T) {
	for _, s := range []string{"", "cursor", prefix, prefix + "x\x00k", prefix + "3", prefix + "3\x02", "\x00mcpadapter-uncached"} {
		if slot, key, purge, ok := parseKey(s); ok || slot != "" || key != "" || purge {
			t.Errorf("parseKey(%q) = %q, %q, %v, %v; want nothing", s, slot, key, purge, ok)
		}
	}
}
