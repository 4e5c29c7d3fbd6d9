// Package suggest finds the known name nearest to a misspelled one, for
// errors that say "did you mean ...?".
package suggest

import (
	"strings"
	"unicode/utf8"
)

// maxDistance bounds the edits between a name and its suggestion.
const maxDistance = 2

// Nearest returns the name of known closest to name, compared without
// case, or "" when none is close: at most two edits (insertions, deletions,
// substitutions of a character) and at most a third of the known name's
// length, so that short names are not suggested for unrelated ones. Ties go
// to the first in known.
func Nearest(name string, known []string) string {
	lower := strings.ToLower(name)
	best, bestDist := "", maxDistance+1
	for _, k := range known {
		limit := min(maxDistance, utf8.RuneCountInString(k)/3)
		if d := distance(lower, strings.ToLower(k), limit); d <= limit && d < bestDist {
			best, bestDist = k, d
		}
	}
	return best
}

// distance returns the Levenshtein distance between a and b counted in
// runes, or a number above limit as soon as it must exceed it.
func distance(a, b string, limit int) int {
	ra, rb := []rune(a), []rune(b)
	if abs(len(ra)-len(rb)) > limit {
		return limit + 1
	}
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		rowMin := cur[0]
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			rowMin = min(rowMin, cur[j])
		}
		if rowMin > limit {
			return limit + 1
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// abs returns the absolute value of n.
func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
