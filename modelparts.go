package mcpadapter

// Blocks as langchaingo parts: the provider style that PartOptions select
// and a block's part in it. Result.Parts and Messages (result.go) and
// PromptResult.LLMMessages (prompts.go) are built from them, bounded by
// internal/modeltext.

import (
	"encoding/base64"
	"strings"

	"github.com/mcpadapter/mcpadapter/internal/modeltext"
	"github.com/tmc/langchaingo/llms"
)

// partStyle is how blocks become parts and what bounds them: the
// PartOptions applied.
type partStyle struct {
	// dataURL selects OpenAI-style parts: images as data URLs, and no
	// binary parts at all (OpenAI rejects them).
	dataURL bool
	// limit bounds what one result gives the model, in characters
	// (internal/modeltext); negative: no bound.
	limit int
}

// style returns the content style that opts select.
func style(opts []PartOption) partStyle {
	o := applyParts(opts)
	return partStyle{dataURL: o.imageDataURL, limit: budgetLimit(o.budget)}
}

// applyParts applies opts, skipping nil ones.
func applyParts(opts []PartOption) partOptions {
	var o partOptions
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	return o
}

// appendPart appends b to parts: its media part, or else its text (as in
// [Result.Text]) unless blank, since providers reject blank text parts.
func (s partStyle) appendPart(parts []llms.ContentPart, b *Block) []llms.ContentPart {
	if p, ok := s.mediaPart(b); ok {
		return append(parts, p)
	}
	if text := b.line(); strings.TrimSpace(text) != "" {
		return append(parts, llms.TextPart(text))
	}
	return parts
}

// mediaPart returns the media part for b, or false when b has no media the
// selected provider style accepts (b is then shown as text).
func (s partStyle) mediaPart(b *Block) (llms.ContentPart, bool) {
	switch b.Type {
	case BlockImage:
		if len(b.Data) > 0 {
			mt := modeltext.MediaType(b.MIMEType, b.Data)
			if s.dataURL {
				return llms.ImageURLPart("data:" + mt + ";base64," + base64.StdEncoding.EncodeToString(b.Data)), true
			}
			return llms.BinaryPart(mt, b.Data), true
		}
		if s.dataURL && modeltext.Fetchable(b.URI) {
			return llms.ImageURLPart(b.URI), true
		}
	case BlockAudio, BlockFile:
		if len(b.Data) > 0 && !s.dataURL {
			return llms.BinaryPart(modeltext.MediaType(b.MIMEType, b.Data), b.Data), true
		}
	}
	return nil, false
}
