// Package redact hides the secrets of URLs: a password in the userinfo,
// tokens in the query. [URL] gives a URL as it may be shown, and [Error]
// redacts every spelling of given URLs in an error's text (net/http's
// errors strip the password, not the query); [Values] redacts other
// credentials, such as a session's id. It is pure and knows nothing of
// the adapter.
package redact

import (
	"net/url"
	"slices"
	"strings"
)

// URL returns rawURL with its password and the values of its query
// parameters replaced by "xxxxx".
func URL(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "<invalid URL>"
	}
	return Parsed(u)
}

// Parsed is [URL] of a parsed URL.
func Parsed(u *url.URL) string {
	c := *u
	if c.RawQuery != "" {
		q := c.Query()
		for k := range q {
			q[k] = []string{"xxxxx"}
		}
		c.RawQuery = q.Encode()
	}
	return c.Redacted()
}

// Error returns err with every spelling of the given URLs in its text
// replaced by their redacted form (as given, as net/url prints them, with the password
// stripped as url.Redacted and net/http do), their query wherever it
// stands alone (a relative redirect that kept it: net/http's errors print
// a Location as the server wrote it), and the query values of any other
// URL on their hosts or path (an SSE message endpoint carries its
// session's id in its query). errors.Is and errors.As see through it.
func Error(err error, rawURLs ...string) error {
	if err == nil {
		return nil
	}
	var pairs, hosts []string
	for _, raw := range rawURLs {
		u, perr := url.Parse(raw)
		if raw == "" || perr != nil {
			continue
		}
		safe := Parsed(u)
		forms := []string{raw, u.String(), u.Redacted()}
		if _, ok := u.User.Password(); ok {
			// As net/http's errors print it.
			forms = append(forms, strings.Replace(u.String(), u.User.String()+"@", u.User.Username()+":***@", 1))
		}
		add := func(form, safe string) {
			if form != safe {
				pairs = append(pairs, form, safe)
			}
		}
		for _, form := range forms {
			add(form, safe)
		}
		if u.RawQuery != "" {
			// After the whole URL's forms, which take precedence.
			_, query, _ := strings.Cut(safe, "?")
			add("?"+u.RawQuery, "?"+query)
		}
		if u.Host != "" {
			hosts = append(hosts, u.Host)
		}
	}
	text := err.Error()
	out := strings.NewReplacer(pairs...).Replace(text)
	out = queries(out, hosts)
	return redacted(err, text, out)
}

// queries returns text with the query values of every URL on one of hosts
// redacted (with or without a userinfo, as net/http prints it), and those
// of every path with a query (net/http prints a redirect's Location as
// the server wrote it).
func queries(text string, hosts []string) string {
	const delims = "\"' \t\n<>`"
	var b strings.Builder
	done := 0 // text[:done] is in b
	for i := 0; i < len(text); {
		end := len(text)
		if n := strings.IndexAny(text[i:], delims); n >= 0 {
			end = i + n
		}
		if tok := text[i:end]; strings.Contains(tok, "?") {
			u, err := url.Parse(tok)
			if err == nil && u.RawQuery != "" && (slices.Contains(hosts, u.Host) || u.Host == "" && strings.HasPrefix(tok, "/")) {
				b.WriteString(text[done:i])
				b.WriteString(Parsed(u))
				done = end
			}
		}
		i = end + 1
	}
	if done == 0 {
		return text
	}
	b.WriteString(text[done:])
	return b.String()
}

// minValue is the shortest value [Values] redacts: a shorter one would
// garble the text around it, and guesses no better for being hidden.
const minValue = 4

// Values returns err with each of values (of at least 4 bytes) in its text
// replaced by "xxxxx". errors.Is and errors.As see through it.
func Values(err error, values ...string) error {
	if err == nil {
		return nil
	}
	var pairs []string
	for _, v := range values {
		if len(v) >= minValue {
			pairs = append(pairs, v, "xxxxx")
		}
	}
	text := err.Error()
	return redacted(err, text, strings.NewReplacer(pairs...).Replace(text))
}

// redacted returns err, whose text is text, under the redacted text out:
// err itself when nothing was redacted.
func redacted(err error, text, out string) error {
	if out == text {
		return err
	}
	return &redactor{err: err, text: out}
}

// A redactor is an error whose text has secrets redacted.
type redactor struct {
	err  error
	text string
}

func (e *redactor) Error() string { return e.text }
func (e *redactor) Unwrap() error { return e.err }
