package modeltext

// What a provider is sent of media: their type, and whether it can load a
// link itself.

import (
	"net/http"
	"slices"
	"strings"
)

// maxShort bounds the strings [Short] keeps, in bytes.
const maxShort = 64

// Short cuts a server's string (a type name, a role) for a message or a
// placeholder: past 64 bytes it ends in "…", never in a broken rune.
func Short(s string) string {
	if len(s) <= maxShort {
		return s
	}
	return strings.ToValidUTF8(s[:maxShort], "") + "…"
}

// IsImage reports whether mt is an image media type.
func IsImage(mt string) bool {
	mt = strings.TrimSpace(mt)
	return len(mt) >= len("image/") && strings.EqualFold(mt[:len("image/")], "image/")
}

// MediaType is the type of a media part: declared, or else sniffed from
// data, since providers reject media parts without a type.
func MediaType(declared string, data []byte) string {
	if mt := strings.TrimSpace(declared); mt != "" {
		return mt
	}
	return http.DetectContentType(data)
}

// Fetchable reports whether a model provider can load uri itself: http,
// https and data URLs. Server-local schemes such as file:// are not.
func Fetchable(uri string) bool {
	scheme, _, ok := strings.Cut(uri, ":")
	if !ok {
		return false
	}
	switch strings.ToLower(scheme) {
	case "http", "https", "data":
		return true
	}
	return false
}

// Placeholder is the bracketed line that stands for media or a link in a
// model's text: the non-empty fields, space-separated, such as
// "[image image/png 14 KB]". Never the bytes.
func Placeholder(fields ...string) string {
	fields = slices.DeleteFunc(fields, func(s string) bool { return s == "" })
	return "[" + strings.Join(fields, " ") + "]"
}
