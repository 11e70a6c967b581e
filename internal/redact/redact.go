package redact

import (
	"strings"
)

// Mark replaces each secret [Secrets] finds.
const Mark = "REDACTED"

// apiTokenPrefix is the prefix of an API token (accounts.APITokenPrefix,
// which this package, below tokens, cannot import).
const apiTokenPrefix = "scorehub_"

// minJWT is the shortest run starting with a JWT's "eyJ" that is taken for
// one: a base64url JSON header alone is longer, and a name such as "eyJack"
// is not.
const minJWT = 20

// Secrets returns s with every secret it recognises replaced by [Mark]:
// what follows "scorehub_", a run of base64url text starting with "eyJ"
// (a JWT or its header), the password of a scheme://user:password@ URL,
// and the value of a name=value pair whose name says it is a secret. Text
// without any of them, which is nearly all, is returned as it is without
// allocating. It is safe for concurrent use.
func Secrets(s string) string {
	if !suspect(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		if n := secretAt(s, i, &b); n > 0 {
			i += n
			continue
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}

// suspect reports whether s may hold a secret: it is cheap, and says no
// for nearly every path.
func suspect(s string) bool {
	return strings.Contains(s, apiTokenPrefix) || strings.Contains(s, "eyJ") ||
		strings.Contains(s, "://") || strings.IndexByte(s, '=') >= 0
}

// secretAt looks for a secret starting at s[i]. When there is one, it
// writes what replaces s[i:i+n] to b and returns n > 0.
func secretAt(s string, i int, b *strings.Builder) int {
	rest := s[i:]
	switch {
	case strings.HasPrefix(rest, apiTokenPrefix):
		n := len(apiTokenPrefix) + span(rest[len(apiTokenPrefix):], isBase64URL)
		if n == len(apiTokenPrefix) {
			return 0
		}
		b.WriteString(apiTokenPrefix)
		b.WriteString(Mark)
		return n
	case strings.HasPrefix(rest, "eyJ") && (i == 0 || !isBase64URL(s[i-1])):
		n := span(rest, func(c byte) bool { return isBase64URL(c) || c == '.' })
		if n < minJWT {
			return 0
		}
		b.WriteString(Mark)
		return n
	case strings.HasPrefix(rest, "://"):
		// scheme://user:password@host: the password goes, the user stays.
		auth := rest[3:]
		auth = auth[:span(auth, func(c byte) bool { return c != '/' && c != '?' && c != '#' && c > ' ' })]
		at := strings.LastIndexByte(auth, '@')
		if at < 0 {
			return 0
		}
		colon := strings.IndexByte(auth[:at], ':')
		if colon < 0 {
			return 0
		}
		b.WriteString("://")
		b.WriteString(auth[:colon+1])
		b.WriteString(Mark)
		return 3 + at
	case rest[0] == '=' && secretName(s[:i]):
		n := 1 + span(rest[1:], func(c byte) bool { return c != '&' && c != ';' && c != ',' && c != '"' && c > ' ' })
		if n == 1 {
			return 0
		}
		b.WriteString("=")
		b.WriteString(Mark)
		return n
	}
	return 0
}

// secretName reports whether the name that before ends with, a query
// parameter's or a key=value pair's, names a secret.
func secretName(before string) bool {
	start := len(before)
	for start > 0 && isNameByte(before[start-1]) {
		start--
	}
	name := strings.ToLower(before[start:])
	if name == "" {
		return false
	}
	for _, w := range secretWords {
		if strings.Contains(name, w) {
			return true
		}
	}
	return false
}

// secretWords are the parts of a name that make its value a secret:
// access_token, id_token, idToken, apitoken, password, passwd, pwd,
// client_secret, api_key, sslkey…, auth and code (OAuth's).
var secretWords = [...]string{"token", "pass", "pwd", "secret", "key", "auth", "code", "signature", "credential"}

func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.'
}

func isBase64URL(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// span is the length of the prefix of s whose bytes satisfy ok.
func span(s string, ok func(byte) bool) int {
	n := 0
	for n < len(s) && ok(s[n]) {
		n++
	}
	return n
}
