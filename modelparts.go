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
func (o partOptions) appendPart(parts []llms.ContentPart, b *Block) []llms.ContentPart {
	if p, ok := o.mediaPart(b); ok {
		return append(parts, p)
	}
	if text := b.line(); strings.TrimSpace(text) != "" {
		return append(parts, llms.TextPart(text))
	}
	return parts
}

// mediaPart returns the media part for b, or false when b has no media the
// selected provider style accepts (b is then shown as text).
func (o partOptions) mediaPart(b *Block) (llms.ContentPart, bool) {
	switch b.Type {
	case BlockImage:
		if len(b.Data) > 0 {
			mt := modeltext.MediaType(b.MIMEType, b.Data)
			if o.imageDataURL {
				return llms.ImageURLPart("data:" + mt + ";base64," + base64.StdEncoding.EncodeToString(b.Data)), true
			}
			return llms.BinaryPart(mt, b.Data), true
		}
		if o.imageDataURL && modeltext.Fetchable(b.URI) {
			return llms.ImageURLPart(b.URI), true
		}
	case BlockAudio, BlockFile:
		if len(b.Data) > 0 && !o.imageDataURL {
			return llms.BinaryPart(modeltext.MediaType(b.MIMEType, b.Data), b.Data), true
		}
	}
	return nil, false
}
