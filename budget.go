package mcpadapter

// Result budget: what one tool result may put into the model's context.
//
// A server can answer with a whole file, a database dump or a page of logs;
// sent as is, one result fills the model's context window and the next
// request fails (or costs a fortune). The budget bounds the model-visible
// form of a result: [Tool.Call]'s text, and the messages of
// [Result.Messages], [Result.Parts] and [Toolset.HandleToolCalls]. The
// [Result] itself, from [Tool.Invoke], is never cut.

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/tmc/langchaingo/llms"
)

// DefaultResultBudget is the budget of a tool result's model-visible form
// when none is set, in characters: about 25,000 tokens, a quarter of a
// small context window and far above what a tool that answers a question
// needs; a 1 MB text file goes past it.
const DefaultResultBudget = 100_000

// MediaBudgetCost is what one image, audio clip or file sent to the model as
// a media part counts against the budget, in characters: about 1,000
// tokens, what providers charge for an image of about a megapixel.
// Placeholders ("[image image/png 14 KB]") count as the text they are.
const MediaBudgetCost = 4_000

// ResultBudget returns a [PartOption] that bounds what one result gives the
// model to chars characters (see [Config.ResultBudget]): 0 means
// [DefaultResultBudget], a negative value no bound.
func ResultBudget(chars int) PartOption {
	return func(o *partOptions) { o.budget = chars }
}

// budgetLimit is the effective bound of a budget setting, or -1 for none.
func budgetLimit(budget int) int {
	switch {
	case budget == 0:
		return DefaultResultBudget
	case budget < 0:
		return -1
	}
	return budget
}

// resultBudget is the budget of t's adapter.
func (t *Tool) resultBudget() int {
	if t == nil || t.a == nil {
		return 0
	}
	return t.a.cfg.ResultBudget
}

// modelText is [Result.Text] within budget.
func (r *Result) modelText(budget int) string {
	return cutText(r.Text(), budgetLimit(budget))
}

// partOptions returns opts preceded by the budget of the tool that tc
// calls, so that the caller's options win.
func (s Toolset) partOptions(tc llms.ToolCall, opts []PartOption) []PartOption {
	var t *Tool
	if tc.FunctionCall != nil {
		t = s.Lookup(tc.FunctionCall.Name)
	}
	return append([]PartOption{ResultBudget(t.resultBudget())}, opts...)
}

// fitMedia returns how many of n media parts fit in limit, and the limit
// left for text. Media take the budget first, in order, but leave text at
// least a tenth of it.
func fitMedia(n, limit int) (kept, textLimit int) {
	if limit < 0 {
		return n, -1
	}
	kept = min(n, (limit-limit/10)/MediaBudgetCost)
	return kept, limit - kept*MediaBudgetCost
}

// mediaNote says that dropped media parts were left out.
func mediaNote(dropped int) string {
	return fmt.Sprintf("[… %d media part(s) left out: the result is larger than the model is given]", dropped)
}

// cutText returns s if it has at most limit characters (or limit is
// negative), else s cut to limit characters: most of its head and a little
// of its tail, each ending at a line break when one is near, around a note
// that says how much was left out.
func cutText(s string, limit int) string {
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

// budgetMessage bounds a tool message's text and the media that follow it.
func budgetMessage(text string, media []llms.ContentPart, limit int) (string, []llms.ContentPart) {
	kept, textLimit := fitMedia(len(media), limit)
	if kept == len(media) {
		return cutText(text, textLimit), media
	}
	note := "\n" + mediaNote(len(media)-kept)
	return cutText(text, max(textLimit-utf8.RuneCountInString(note), 0)) + note, media[:kept]
}

// budgetParts bounds the parts of one result: media past the budget are
// left out (with a note), and text parts over what is left become one text
// part, cut, where the first of them was.
func budgetParts(parts []llms.ContentPart, limit int) []llms.ContentPart {
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
		text = cutText(text, max(textLimit-utf8.RuneCountInString(note)-1, 0)) + "\n" + note
	} else {
		text = cutText(text, textLimit)
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
		if !b.forAssistant() {
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
