package accounts

import (
	"fmt"
	"slices"
	"strings"
	"unicode"

	"golang.org/x/text/secure/precis"
	"golang.org/x/text/unicode/norm"
)

// The rules of a new user name, beyond those of every name
// (checkUserName), so that a name cannot pass for another one: to a
// person reading a list of users, or in a log, "Ann", "ANN", "аdmin"
// (a Cyrillic а) or "ann" with a zero-width space are "ann" and "admin".
// [Book] applies them to the names it creates; names it already holds,
// and those of an htpasswd file, keep working as they are, and are only
// what a new name is compared with.
//
//   - No white space and no invisible character (format characters such
//     as U+200B ZERO WIDTH SPACE or U+00AD SOFT HYPHEN, and every other
//     default-ignorable code point), anywhere in the name.
//   - The name is one RFC 8265 allows: the PRECIS UsernameCaseMapped
//     profile accepts it (letters and digits of any script, ASCII
//     punctuation; no symbols, no compatibility forms such as "ﬁ").
//   - One script: letters of at most one script, but for the mixes of
//     Unicode TR39's Highly Restrictive level (Latin with Han and
//     Japanese kana, with Han and Bopomofo, or with Han and Hangul).
//     Digits and punctuation belong to none.
//   - No name of another user under the same key (nameKey): after NFKC
//     normalisation, with the Cyrillic and Greek letters that look Latin
//     read as those Latin letters, and lower-cased.

// confusable maps the Cyrillic and Greek letters that look like a Latin
// letter (in either case, as a name is compared case-folded) to it, the
// common ones of Unicode's confusables.txt, and a few Latin letters to
// the plain letter they show as. It is deliberately small: a new name
// must be of one script, so a look-alike of a Latin name is a whole
// Cyrillic or Greek word, and these letters make one.
var confusable = map[rune]rune{
	// Cyrillic capitals and small letters.
	'А': 'A', 'В': 'B', 'Е': 'E', 'К': 'K', 'М': 'M', 'Н': 'H', 'О': 'O', 'Р': 'P', 'С': 'C',
	'Т': 'T', 'У': 'Y', 'Х': 'X', 'Ѕ': 'S', 'І': 'I', 'Ј': 'J', 'Ԛ': 'Q', 'Ԝ': 'W', 'Ү': 'Y',
	'Һ': 'H', 'Ӏ': 'l',
	'а': 'a', 'в': 'b', 'г': 'r', 'е': 'e', 'к': 'k', 'м': 'm', 'н': 'h', 'о': 'o', 'п': 'n',
	'р': 'p', 'с': 'c', 'т': 't', 'у': 'y', 'х': 'x', 'ь': 'b', 'ѕ': 's', 'і': 'i', 'ј': 'j',
	'ԁ': 'd', 'һ': 'h', 'ԛ': 'q', 'ԝ': 'w', 'ӏ': 'l', 'ү': 'y',
	// Greek capitals and small letters.
	'Α': 'A', 'Β': 'B', 'Ε': 'E', 'Ζ': 'Z', 'Η': 'H', 'Ι': 'I', 'Κ': 'K', 'Μ': 'M', 'Ν': 'N',
	'Ο': 'O', 'Ρ': 'P', 'Τ': 'T', 'Υ': 'Y', 'Χ': 'X',
	'α': 'a', 'β': 'b', 'γ': 'y', 'ε': 'e', 'η': 'n', 'ι': 'i', 'κ': 'k', 'μ': 'u', 'ν': 'v',
	'ο': 'o', 'ρ': 'p', 'τ': 't', 'υ': 'u', 'χ': 'x', 'ω': 'w', 'ϲ': 'c', 'ϳ': 'j',
	// Latin letters that show as another.
	'ı': 'i', 'ȷ': 'j', 'ɑ': 'a', 'ɡ': 'g',
}

// nameKey is what two user names must not share: name NFKC-normalised
// (full-width and other compatibility forms read as their plain letters),
// without invisible characters and white space, with confusable letters
// read as the Latin ones they look like, lower-cased. It is defined for
// any name, also one the rules of a new name refuse, so that a name
// stored before the rules can still be met.
func nameKey(name string) string {
	s := norm.NFKC.String(name)
	s = strings.Map(func(r rune) rune {
		if invisible(r) {
			return -1
		}
		if l, ok := confusable[r]; ok {
			return l
		}
		return r
	}, s)
	return norm.NFC.String(strings.ToLower(s))
}

// invisible reports whether r is white space or shows nothing: a format
// character, a default-ignorable code point or a variation selector.
func invisible(r rune) bool {
	return unicode.IsSpace(r) || unicode.In(r, unicode.Zs, unicode.Cf, unicode.Other_Default_Ignorable_Code_Point, unicode.Variation_Selector)
}

// checkNewUserName applies the rules of a new user name that need no
// other names, and returns the one broken as a sentence.
func checkNewUserName(name string) string {
	for i, r := range []rune(name) {
		if invisible(r) {
			return fmt.Sprintf("the user name has white space or an invisible character (U+%04X, character %d); a name must show every character it has", r, i+1)
		}
	}
	if _, err := precis.UsernameCaseMapped.String(name); err != nil {
		return fmt.Sprintf("the user name is not one RFC 8265 (PRECIS UsernameCaseMapped) allows: %s", strings.TrimPrefix(err.Error(), "precis: "))
	}
	if scripts := mixedScripts(name); scripts != nil {
		return fmt.Sprintf("the user name mixes the scripts %s; a name must be written in one, so that it cannot pass for another", strings.Join(scripts, " and "))
	}
	return ""
}

// tr39Mixes are the mixes of scripts Unicode TR39's Highly Restrictive
// level allows in one identifier.
var tr39Mixes = [][]string{
	{"Han", "Hiragana", "Katakana", "Latin"},
	{"Bopomofo", "Han", "Latin"},
	{"Han", "Hangul", "Latin"},
}

// mixedScripts returns the scripts of the letters of name, sorted, when
// they are more than one and not a mix of tr39Mixes; nil otherwise.
// Common and Inherited characters (digits, punctuation, combining marks)
// belong to no script here.
func mixedScripts(name string) []string {
	var scripts []string
	for _, r := range name {
		if s := scriptOf(r); s != "" && !slices.Contains(scripts, s) {
			scripts = append(scripts, s)
		}
	}
	if len(scripts) < 2 {
		return nil
	}
	slices.Sort(scripts)
	for _, mix := range tr39Mixes {
		if !slices.ContainsFunc(scripts, func(s string) bool { return !slices.Contains(mix, s) }) {
			return nil
		}
	}
	return scripts
}

// scriptOf returns the Unicode script of r, "" for Common, Inherited and
// an unassigned r.
func scriptOf(r rune) string {
	if r < 0x80 {
		if 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' {
			return "Latin"
		}
		return ""
	}
	for name, table := range unicode.Scripts {
		if unicode.Is(table, r) {
			if name == "Common" || name == "Inherited" {
				return ""
			}
			return name
		}
	}
	return ""
}

// lookalike returns a user of s or of the read-only users whose name has
// the key of name but is not name, and whether there is one. Of several,
// it returns the first by name, so that the answer does not change from
// one try to the next.
func (a *Book) lookalike(s *accountSnapshot, name string) (string, bool) {
	key := nameKey(name)
	var found []string
	for i := range s.state.Users {
		if other := s.state.Users[i].Name; other != name && nameKey(other) == key {
			found = append(found, other)
		}
	}
	if a.readOnly != nil {
		for _, p := range a.readOnly.Principals() {
			if p.Subject != name && nameKey(p.Subject) == key {
				found = append(found, p.Subject)
			}
		}
	}
	if len(found) == 0 {
		return "", false
	}
	return slices.Min(found), true
}
