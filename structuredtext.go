package mcpadapter

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Bounds of the structured content shown to a model (see [Result.Text]).
const (
	// maxStructuredText is the longest structured content line, in bytes.
	maxStructuredText = 16 << 10
	// minBase64Run is the shortest string taken for base64 data: shorter
	// runs of base64 characters are ordinary words, ids and hashes.
	minBase64Run = 256
)

// structuredText returns the structured content as the compact JSON line
// Text and Parts show, when they should: only when no block for the model
// is text from the server (a placeholder for unknown content does not
// count) or carries media bytes. Base64 payloads become placeholders and the
// line is bounded (see [Result.Text]).
func (r *Result) structuredText() (string, bool) {
	if r.Artifact == nil || r.Artifact.StructuredContent == nil {
		return "", false
	}
	for i := range r.Content {
		b := &r.Content[i]
		if !b.forModel() {
			continue
		}
		if b.Type == BlockText && b.Raw == nil || len(b.Data) > 0 {
			return "", false
		}
	}
	out, err := json.Marshal(withoutBase64(r.Artifact.StructuredContent))
	if err != nil {
		return "[structured content]", true
	}
	if len(out) > maxStructuredText {
		// A rune cut in two is dropped.
		cut := strings.ToValidUTF8(string(out[:maxStructuredText]), "")
		return cut + fmt.Sprintf("… [structured content cut: %s in all]", formatSize(len(out))), true
	}
	return string(out), true
}

// withoutBase64 returns a copy of the JSON value v with every string that
// holds base64 data replaced by a placeholder. v is not changed. Values that
// are not decoded JSON (built in Go) go through JSON first.
func withoutBase64(v any) any { return mapJSON(v, base64Leaf) }

// base64Leaf is withoutBase64 of a value that is neither a map nor a slice.
func base64Leaf(v any) any {
	switch v := v.(type) {
	case nil, bool, float64, json.Number:
		return v
	case string:
		if n, ok := base64Size(v); ok {
			return "[base64 data, " + formatSize(n) + "]"
		}
		return v
	}
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var decoded any
	if json.Unmarshal(b, &decoded) != nil {
		return v
	}
	return withoutBase64(decoded)
}

// base64Size reports whether s holds base64 data, a data: URL with a
// base64 payload or a run of at least minBase64Run base64 characters
// (standard or URL alphabet, padded or not, possibly wrapped in lines), and
// the size of the data it decodes to.
func base64Size(s string) (int, bool) {
	if rest, ok := strings.CutPrefix(s, "data:"); ok {
		if _, payload, ok := strings.Cut(rest, ";base64,"); ok {
			return len(payload) * 3 / 4, true
		}
		return 0, false
	}
	if len(s) < minBase64Run {
		return 0, false
	}
	n, pad := 0, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '=':
			pad++
		case pad > 0:
			return 0, false // padding only at the end
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '+', c == '/', c == '-', c == '_':
			n++
		case c == '\n' || c == '\r':
		default:
			return 0, false
		}
	}
	if pad > 2 || n < minBase64Run {
		return 0, false
	}
	return n * 3 / 4, true
}
