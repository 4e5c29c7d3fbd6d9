// Package modeltext bounds what a model is given of a tool result: text
// cut to a budget of characters around a note of what was left out, media
// parts that fit the budget, and structured content as one compact JSON
// line whose base64 payloads become placeholders; and what a provider is
// sent of media (media.go): their type, and which links it loads itself.
// It is pure and knows nothing of the adapter: the root package's Result
// and Config.ResultBudget decide what goes in and with which
// limit.
package modeltext

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/mcpadapter/mcpadapter/internal/jsonvalue"
	"github.com/tmc/langchaingo/llms"
)

// MediaCost is what one media part counts against a budget, in characters
// (the root package counts it as mediaBudgetCost).
const MediaCost = 4_000

// fitMedia returns how many of n media parts fit in limit, and the limit
// left for text. Media take the budget first, in order, but leave text at
// least a tenth of it.
func fitMedia(n, limit int) (kept, textLimit int) {
	if limit < 0 {
		return n, -1
	}
	kept = min(n, (limit-limit/10)/MediaCost)
	return kept, limit - kept*MediaCost
}

// mediaNote says that dropped media parts were left out.
func mediaNote(dropped int) string {
	return fmt.Sprintf("[… %d media part(s) left out: the result is larger than the model is given]", dropped)
}

// Cut returns s if it has at most limit characters (or limit is
// negative), else s cut to limit characters: most of its head and a little
// of its tail, each ending at a line break when one is near, around a note
// that says how much was left out.
func Cut(s string, limit int) string {
	if limit < 0 || len(s) <= limit {
		return s // no more bytes than characters allowed
	}
	n := utf8.RuneCountInString(s)
	if n <= limit {
		return s
	}
	// Room for the note, with as many digits as n has.
	reserve := utf8.RuneCountInString(omittedNote(n, n))
	keep := max(limit-reserve, 0)
	tail := keep / 5
	head := keep - tail
	headEnd := runeOffset(s, head)
	if i := strings.LastIndexByte(s[:headEnd], '\n'); i >= 0 && headEnd-i <= head/4 {
		headEnd = i + 1
	}
	tailStart := runeOffset(s, n-tail)
	if tail > 0 {
		if i := strings.IndexByte(s[tailStart:], '\n'); i >= 0 && i < len(s)-tailStart-1 && i <= tail/2 {
			tailStart += i + 1
		}
	}
	omitted := n - utf8.RuneCountInString(s[:headEnd]) - utf8.RuneCountInString(s[tailStart:])
	return s[:headEnd] + omittedNote(omitted, n) + s[tailStart:]
}

// omittedNote is the note in place of the omitted characters of a text of
// total characters.
func omittedNote(omitted, total int) string {
	return fmt.Sprintf("\n[… %d of %d characters left out: the result is longer than the model is given …]\n", omitted, total)
}

// runeOffset is the byte offset of the i-th rune of s (len(s) past the end).
func runeOffset(s string, i int) int {
	for off := range s {
		if i == 0 {
			return off
		}
		i--
	}
	return len(s)
}

// Message bounds a tool message's text and the media parts (no text part)
// that follow it, as [Parts] bounds the text part and the media.
func Message(text string, media []llms.ContentPart, limit int) (string, []llms.ContentPart) {
	parts := Parts(append([]llms.ContentPart{llms.TextPart(text)}, media...), limit)
	return parts[0].(llms.TextContent).Text, parts[1:]
}

// Parts bounds the parts of one result: media past the budget are
// left out (with a note), and text parts over what is left become one text
// part, cut, where the first of them was.
func Parts(parts []llms.ContentPart, limit int) []llms.ContentPart {
	if limit < 0 {
		return parts
	}
	var texts []string
	media := 0
	for _, p := range parts {
		if t, ok := p.(llms.TextContent); ok {
			texts = append(texts, t.Text)
		} else {
			media++
		}
	}
	kept, textLimit := fitMedia(media, limit)
	chars := 0
	for _, t := range texts {
		chars += utf8.RuneCountInString(t)
	}
	if kept == media && chars <= textLimit {
		return parts
	}
	text := strings.Join(texts, "\n")
	if kept < media {
		note := mediaNote(media - kept)
		text = Cut(text, max(textLimit-utf8.RuneCountInString(note)-1, 0)) + "\n" + note
	} else {
		text = Cut(text, textLimit)
	}
	out := make([]llms.ContentPart, 0, kept+1)
	placed := false
	for _, p := range parts {
		if _, ok := p.(llms.TextContent); ok {
			if !placed {
				out = append(out, llms.TextPart(text))
				placed = true
			}
			continue
		}
		if kept > 0 {
			out = append(out, p)
			kept--
		}
	}
	if !placed {
		out = append(out, llms.TextPart(text))
	}
	return out
}

// Bounds of the structured content shown to a model.
const (
	// MaxStructured is the longest structured content line, in bytes.
	MaxStructured = 16 << 10
	// minBase64Run is the shortest string taken for base64 data: shorter
	// runs of base64 characters are ordinary words, ids and hashes.
	minBase64Run = 256
)

// Structured returns the structured content v as the compact JSON line a
// model is shown: base64 payloads become placeholders, and a line longer
// than MaxStructured bytes is cut, ending in a note of its full size.
func Structured(v any) string {
	out, err := json.Marshal(withoutBase64(v))
	if err != nil {
		return "[structured content]"
	}
	if len(out) > MaxStructured {
		// A rune cut in two is dropped.
		cut := strings.ToValidUTF8(string(out[:MaxStructured]), "")
		return cut + fmt.Sprintf("… [structured content cut: %s in all]", Size(len(out)))
	}
	return string(out)
}

// withoutBase64 returns a copy of the JSON value v with every string that
// holds base64 data replaced by a placeholder. v is not changed. Values that
// are not decoded JSON (built in Go) go through JSON first.
func withoutBase64(v any) any { return jsonvalue.Map(v, base64Leaf) }

// base64Leaf is withoutBase64 of a value that is neither a map nor a slice.
func base64Leaf(v any) any {
	switch v := v.(type) {
	case nil, bool, float64, json.Number:
		return v
	case string:
		if n, ok := base64Size(v); ok {
			return "[base64 data, " + Size(n) + "]"
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

// Size renders a byte count for a placeholder: "512 B", "14 KB", "2.5 MB".
func Size(n int) string {
	const kb, mb = 1024, 1024 * 1024
	switch {
	case n < kb:
		return fmt.Sprintf("%d B", n)
	case n < mb:
		return fmt.Sprintf("%d KB", (n+kb/2)/kb)
	default:
		return fmt.Sprintf("%.1f MB", float64(n)/mb)
	}
}
