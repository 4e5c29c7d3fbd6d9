// Package toolname puts names in the form model providers accept for tool
// names (^[a-zA-Z0-9_-]{1,64}$ for OpenAI and Anthropic), and matches tool
// names against a filter's patterns. It is pure and knows nothing of the
// adapter: the root package's SafeToolName, its name policy and its
// Filter are built on it.
package toolname

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
)

// hashLen is the number of hex digits of the suffix of a shortened name.
const hashLen = 8

// Safe is the root package's SafeToolName, whose documentation it follows:
// every character outside [A-Za-z0-9_-] replaced by '_', and a result
// longer than maxLen (at least 16) cut and ended in '_' and the first 8
// hex digits of the SHA-256 of name.
func Safe(name string, maxLen int) string {
	maxLen = max(maxLen, 16)
	if len(name) <= maxLen && !strings.ContainsFunc(name, func(r rune) bool { return !isNameChar(r) }) {
		return name // the common case, without a copy
	}
	var b strings.Builder
	b.Grow(len(name))
	n := 0
	for _, r := range name {
		if isNameChar(r) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
		n++
	}
	safe := b.String() // ASCII only: one byte per character
	if n <= maxLen {
		return safe
	}
	sum := sha256.Sum256([]byte(name))
	return safe[:maxLen-hashLen-1] + "_" + hex.EncodeToString(sum[:])[:hashLen]
}

// isNameChar reports whether r may appear in a provider's tool name.
func isNameChar(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-'
}

// Valid reports whether name is not empty and every character of it may
// appear in a provider's tool name, so that prefixed names keep a
// server's name as written.
func Valid(name string) bool {
	for _, r := range name {
		if !isNameChar(r) {
			return false
		}
	}
	return name != ""
}

// CheckPatterns refuses malformed patterns ([path.Match] syntax), all of
// them in one error.
func CheckPatterns(patterns []string) error {
	var errs []error
	for _, p := range patterns {
		if _, err := path.Match(p, ""); err != nil {
			errs = append(errs, fmt.Errorf("pattern %q: %w", p, err))
		}
	}
	return errors.Join(errs...)
}

// Allowed reports whether the patterns allow and deny keep name: no deny
// pattern matches it, and allow is empty or one of its patterns matches.
// The patterns are checked ones ([CheckPatterns]).
func Allowed(name string, allow, deny []string) bool {
	matches := func(p string) bool {
		ok, _ := path.Match(p, name)
		return ok
	}
	if slices.ContainsFunc(deny, matches) {
		return false
	}
	return len(allow) == 0 || slices.ContainsFunc(allow, matches)
}
