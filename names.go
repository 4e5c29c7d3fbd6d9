package mcpadapter

// Names the model sees.
//
// Providers accept tool names matching ^[a-zA-Z0-9_-]{1,64}$ (OpenAI and
// Anthropic state it; Google AI allows dots and colons too, but no more than
// 64 characters). MCP names are freer: "server__tool" may hold dots, slashes
// or spaces and grow past 64. The default policy makes every exposed name
// fit; [Config.ToolName] replaces it.

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// MaxToolNameLength is the longest tool name the default policy gives: the
// limit of OpenAI, Anthropic and Google AI.
const MaxToolNameLength = 64

// hashLen is the number of hex digits of the suffix of a shortened name.
const hashLen = 8

// SafeToolName returns name in the form providers accept: every character
// outside [A-Za-z0-9_-] is replaced by '_' (one '_' per character, however
// many bytes it takes), and a result longer than maxLen is cut and ends in '_'
// followed by the first 8 hex digits of the SHA-256 of the whole original
// name, so that the same name always gives the same result, in every
// process and version, and names that differ only past the cut stay
// distinct. A maxLen below 16 counts as 16. An empty name stays empty.
//
// It is the default policy of the adapter (with maxLen 64, applied to
// "server__tool" or, with [Config.RawToolNames], to the server's name), and
// a building block for [Config.ToolName]:
//
//	ToolName: func(server, tool string) string { return mcpadapter.SafeToolName(tool, 128) }
func SafeToolName(name string, maxLen int) string {
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

// validServerName reports whether every character of name may appear in a
// provider's tool name, so that prefixed names keep the server's name as
// written.
func validServerName(name string) bool {
	for _, r := range name {
		if !isNameChar(r) {
			return false
		}
	}
	return name != ""
}

// name returns the name the model sees for tool of server: the result of
// [Config.ToolName] when set, else [SafeToolName] of "server__tool" (or of
// tool with [Config.RawToolNames]) with [MaxToolNameLength].
func (p *toolPolicy) name(server, tool string) string {
	if p.cfg.ToolName != nil {
		return p.cfg.ToolName(server, tool)
	}
	if !p.cfg.RawToolNames {
		tool = server + nameSeparator + tool
	}
	return SafeToolName(tool, MaxToolNameLength)
}
