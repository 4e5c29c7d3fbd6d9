package content

// Blocks rendered for a model: the text of a result, its langchaingo parts
// and the messages answering a tool call, and a prompt's messages.

import (
	"cmp"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpadapter/mcpadapter/internal/modeltext"
	"github.com/tmc/langchaingo/llms"
)

// Placeholders used when a result has nothing else to say. Providers reject
// empty tool messages, so these stand in for empty text.
const (
	EmptyErrorText  = "tool returned an error with no message"
	EmptyResultText = "tool returned no content"
)

// Style is how blocks become parts and what bounds them.
type Style struct {
	// DataURL selects OpenAI-style parts: images as data URLs, and no
	// binary parts at all (OpenAI rejects them).
	DataURL bool
	// Limit bounds what one result gives the model, in characters
	// (internal/modeltext); negative: no bound.
	Limit int
}

// forAssistant reports whether b is meant for the model: it has no
// audience, or its audience includes "assistant".
func forAssistant[T ~string](b *Block[T]) bool {
	return b.Annotations == nil || len(b.Annotations.Audience) == 0 || slices.Contains(b.Annotations.Audience, "assistant")
}

// Text is the root package's Result.Text of a result with blocks, the
// structured content structured (nil: none) and the isError flag.
func Text[B ~Block[T], T ~string](blocks []B, structured any, isError bool) string {
	lines := make([]string, 0, len(blocks)+1)
	for i := range blocks {
		if b := Block[T](blocks[i]); forAssistant(&b) {
			lines = append(lines, line(&b))
		}
	}
	if s, ok := structuredLine(blocks, structured); ok {
		lines = append(lines, s)
	}
	text := strings.Join(lines, "\n")
	if isError && strings.TrimSpace(text) == "" {
		return EmptyErrorText
	}
	return text
}

// line is b's line in [Text]: its text, or a placeholder naming its type
// and what it says of itself.
func line[T ~string](b *Block[T]) string {
	typ := cmp.Or(string(b.Type), "content")
	switch b.Type {
	case kindText:
		return b.Text
	case kindLink:
		var uri string
		if b.URI != "" {
			uri = "<" + b.URI + ">"
		}
		return modeltext.Placeholder(typ, b.Name, b.MIMEType, uri)
	}
	var size string
	if b.Data != nil {
		size = modeltext.Size(len(b.Data))
	}
	return modeltext.Placeholder(typ, b.MIMEType, size, b.Name, b.URI)
}

// structuredLine returns the structured content as the compact JSON line
// Text and Parts show, when they should: only when no block for the model
// is text from the server (a placeholder for unknown content does not
// count) or carries media bytes. Base64 payloads become placeholders and the
// line is bounded (modeltext.Structured).
func structuredLine[B ~Block[T], T ~string](blocks []B, structured any) (string, bool) {
	if structured == nil {
		return "", false
	}
	for i := range blocks {
		b := Block[T](blocks[i])
		if !forAssistant(&b) {
			continue
		}
		if b.Type == kindText && b.Raw == nil || len(b.Data) > 0 {
			return "", false
		}
	}
	return modeltext.Structured(structured), true
}

// Parts is the root package's Result.Parts, as [Text] takes a result.
func Parts[B ~Block[T], T ~string](blocks []B, structured any, isError bool, s Style) []llms.ContentPart {
	var parts []llms.ContentPart
	for i := range blocks {
		if b := Block[T](blocks[i]); forAssistant(&b) {
			parts = appendPart(s, parts, &b)
		}
	}
	if line, ok := structuredLine(blocks, structured); ok {
		parts = append(parts, llms.TextPart(line))
	}
	if isError && len(parts) == 0 {
		parts = append(parts, llms.TextPart(EmptyErrorText))
	}
	return modeltext.Parts(parts, s.Limit)
}

// Messages is the root package's Result.Messages, as [Text] takes a
// result: the tool message answering call, and a human message with the
// media for the model when there are any.
func Messages[B ~Block[T], T ~string](call llms.ToolCall, blocks []B, structured any, isError bool, s Style) []llms.MessageContent {
	var name string
	if call.FunctionCall != nil {
		name = call.FunctionCall.Name
	}
	text := Text(blocks, structured, isError)
	if strings.TrimSpace(text) == "" {
		text = EmptyResultText
	}
	var media []llms.ContentPart
	for i := range blocks {
		if b := Block[T](blocks[i]); forAssistant(&b) {
			if p, ok := mediaPart(s, &b); ok {
				media = append(media, p)
			}
		}
	}
	text, media = modeltext.Message(text, media, s.Limit)
	msgs := []llms.MessageContent{{
		Role:  llms.ChatMessageTypeTool,
		Parts: []llms.ContentPart{llms.ToolCallResponse{ToolCallID: call.ID, Name: name, Content: text}},
	}}
	if len(media) == 0 {
		return msgs
	}
	intro := llms.TextPart(fmt.Sprintf("Media returned by tool call %s (%s):", call.ID, name))
	return append(msgs, llms.MessageContent{
		Role:  llms.ChatMessageTypeHuman,
		Parts: append([]llms.ContentPart{intro}, media...),
	})
}

// appendPart appends b to parts: its media part, or else its text (as in
// [Text]) unless blank, since providers reject blank text parts.
func appendPart[T ~string](s Style, parts []llms.ContentPart, b *Block[T]) []llms.ContentPart {
	if p, ok := mediaPart(s, b); ok {
		return append(parts, p)
	}
	if text := line(b); strings.TrimSpace(text) != "" {
		return append(parts, llms.TextPart(text))
	}
	return parts
}

// mediaPart returns the media part for b, or false when b has no media the
// selected provider style accepts (b is then shown as text).
func mediaPart[T ~string](s Style, b *Block[T]) (llms.ContentPart, bool) {
	switch b.Type {
	case kindImage:
		if len(b.Data) > 0 {
			mt := modeltext.MediaType(b.MIMEType, b.Data)
			if s.DataURL {
				return llms.ImageURLPart("data:" + mt + ";base64," + base64.StdEncoding.EncodeToString(b.Data)), true
			}
			return llms.BinaryPart(mt, b.Data), true
		}
		if s.DataURL && modeltext.Fetchable(b.URI) {
			return llms.ImageURLPart(b.URI), true
		}
	case kindAudio, kindFile:
		if len(b.Data) > 0 && !s.DataURL {
			return llms.BinaryPart(modeltext.MediaType(b.MIMEType, b.Data), b.Data), true
		}
	}
	return nil, false
}
