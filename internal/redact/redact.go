// Package redact hides the secrets of URLs: a password in the userinfo,
// tokens in the query. [URL] gives a URL as it may be shown, and [Error]
// redacts every spelling of given URLs in an error's text (net/http's
// errors strip the password, not the query); [Values] redacts other
// credentials, such as a session's id. It is pure and knows nothing of
// the adapter.
package redact

import (
	"net/url"
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
// stripped as url.Redacted and net/http do), and their query wherever it
// stands alone (a relative redirect that kept it: net/http's errors print
// a Location as the server wrote it). errors.Is and errors.As see
// through it.
func Error(err error, rawURLs ...string) error {
	if err == nil {
		return nil
	}
	var r *redactor
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
				if r == nil {
					r = &redactor{err: err}
				}
				r.pairs = append(r.pairs, form, safe)
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
	}
	if r == nil {
		return err
	}
	return r
}

// minValue is the shortest value [Values] redacts: a shorter one would
// garble the text around it, and guesses no better for being hidden.
const minValue = 4

// Values returns err with each of values (of at least 4 bytes) in its text
// replaced by "xxxxx". errors.Is and errors.As see through it.
func Values(err error, values ...string) error {
	var pairs []string
	for _, v := range values {
		if len(v) >= minValue {
			pairs = append(pairs, v, "xxxxx")
		}
	}
	if err == nil || pairs == nil {
		return err
	}
	return &redactor{err: err, pairs: pairs}
}

// A redactor is an error whose text has secrets redacted.
type redactor struct {
	err   error
	pairs []string // for strings.NewReplacer: form, redacted form, ...
}

func (e *redactor) Error() string { return strings.NewReplacer(e.pairs...).Replace(e.err.Error()) }
func (e *redactor) Unwrap() error { return e.err }
