package mcpadapter

// Secrets in server URLs: a password in the userinfo, tokens in the query.
// Neither goes into an error or a log line of the adapter: URLs are shown
// as redactURL gives them, and dial errors, whose text may quote the URL,
// go through hideURLs (internal/redact).

import (
	"net/url"

	"github.com/mcpadapter/mcpadapter/internal/redact"
)

// redactURL returns rawURL with its password and the values of its query
// parameters replaced by "xxxxx".
func redactURL(rawURL string) string { return redact.URL(rawURL) }

// redacted is redactURL of a parsed URL.
func redacted(u *url.URL) string { return redact.Parsed(u) }

// hideURLs returns err with every spelling of the given URLs in its text
// redacted; errors.Is and errors.As see through it.
func hideURLs(err error, rawURLs ...string) error { return redact.Error(err, rawURLs...) }
