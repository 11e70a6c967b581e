package tokens

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// checkSegments reads the header and payload of a compact JWS more strictly
// than the JWT parser does, before it does. That parser decodes with
// encoding/json, which lets the last of two members of one name win and
// matches claim names without regard to case, so {"sub":"a","SUB":"b"}
// would name a subject other than the one an auditor or another verifier
// reads first. It also ignores "crit" (RFC 7515 §4.1.11), which asks a
// verifier that does not understand the extensions it names to refuse the
// token; scorehub understands none. Any of these is [ErrMalformed].
func checkSegments(raw string) error {
	parts := strings.Split(raw, ".")
	if len(parts) != 3 {
		return fmt.Errorf("%w: %d segments, want 3", ErrMalformed, len(parts))
	}
	header, err := strictMembers("header", parts[0])
	if err != nil {
		return err
	}
	for _, name := range header {
		if name == "crit" {
			return fmt.Errorf("%w: the header has crit, naming extensions not understood here", ErrMalformed)
		}
	}
	_, err = strictMembers("claims", parts[1])
	return err
}

// strictMembers decodes seg, a base64url segment, as one JSON object under
// RFC 7493's rules (valid UTF-8, no member name twice at any depth) and
// returns its top-level member names. Two top-level names that differ only
// in case are refused too, since encoding/json reads both into one field.
func strictMembers(what, seg string) ([]string, error) {
	b, err := base64.RawURLEncoding.Strict().DecodeString(seg)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrMalformed, what, err)
	}
	d := jsontext.NewDecoder(bytes.NewReader(b))
	if tok, err := d.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil, fmt.Errorf("%w: %s is not a JSON object", ErrMalformed, what)
	}
	var names []string
	folded := map[string]bool{}
	for d.PeekKind() != '}' {
		tok, err := d.ReadToken()
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrMalformed, what, err)
		}
		name := tok.String()
		key := foldCase(name)
		if folded[key] {
			return nil, fmt.Errorf("%w: %s has member %q twice", ErrMalformed, what, truncate(name, 32))
		}
		folded[key] = true
		names = append(names, name)
		if _, err := d.ReadValue(); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrMalformed, what, err)
		}
	}
	if _, err := d.ReadToken(); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrMalformed, what, err)
	}
	if _, err := d.ReadToken(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: %s has data after its object", ErrMalformed, what)
	}
	return names, nil
}

// foldCase maps s to one representative of the strings equal to it under
// Unicode simple case folding, as bytes.EqualFold and encoding/json's
// matching of names compare them.
func foldCase(s string) string {
	return strings.Map(func(r rune) rune {
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		return least
	}, s)
}

// truncate cuts s to at most n bytes, on a rune boundary, for messages
// that quote what a client sent.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
