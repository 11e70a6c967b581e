package accounts

import (
	_ "embed"
	"fmt"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// The rules of a new password, as NIST SP 800-63B (5.1.1.2) asks of a
// verifier: long enough, not longer than bcrypt reads, and not one an
// attacker tries first: a common password, a repetition or a run of
// consecutive characters, or white space alone. They apply to every
// password set in plain text, through [Book] or a host's configuration;
// a password given as a hash (an htpasswd file) cannot be checked.

//go:embed commonpasswords.txt
var commonPasswordsFile string

// commonPasswords is the set of commonpasswords.txt, read on first use.
var commonPasswords = sync.OnceValue(func() map[string]struct{} {
	set := make(map[string]struct{}, 4096)
	for line := range strings.Lines(commonPasswordsFile) {
		if p := strings.TrimRight(line, "\n"); p != "" && !strings.HasPrefix(p, "#") {
			set[p] = struct{}{}
		}
	}
	return set
})

// minDistinctPasswordChars is the fewest different characters a password
// must use: fewer make it a repetition whatever its length.
const minDistinctPasswordChars = 3

// consecutive are the sequences along which a password of consecutive
// characters runs, either way: digits, the alphabet (both round the end,
// so 7890123 and xyzabc count), and a QWERTY keyboard read row by row.
var consecutive = []string{
	"0123456789",
	"abcdefghijklmnopqrstuvwxyz",
	"qwertyuiopasdfghjklzxcvbnm",
}

// CheckNewPassword applies the rules of a new password with the shortest
// length minLength, in characters (zero means [DefaultMinPasswordLength]):
// at least minLength characters and at most 72 bytes, which bcrypt reads;
// not white space alone; and, compared case-folded, NFKC-normalised and
// trimmed of white space, not one of a few thousand common passwords, not
// repetitive (a short unit repeated, such as aaaaaaaaaaaa or
// abcabcabcabc, or fewer than three different characters) and not a run
// of consecutive characters (digits, the alphabet or a keyboard row,
// either way, such as 123456789012 or qwertyuiopas). The error matches [ErrInvalid], points at "/password"
// and names the rule broken; it never quotes the password. [Book] applies
// it to every password it is given; a host applies it to a password it is
// configured with.
func CheckNewPassword(password string, minLength int) error {
	if minLength == 0 {
		minLength = DefaultMinPasswordLength
	}
	if n := utf8.RuneCountInString(password); n < minLength {
		return invalidField("/password", "the password has %d characters; at least %d are required", n, minLength)
	}
	if len(password) > maxPassword {
		return invalidField("/password", "the password is longer than %d bytes, the most bcrypt reads", maxPassword)
	}
	if rule := weakPassword(password); rule != "" {
		return invalidField("/password", "%s", rule)
	}
	return nil
}

// weakPassword returns the rule that password breaks as a sentence, or ""
// when it breaks none.
func weakPassword(password string) string {
	if strings.TrimFunc(password, unicode.IsSpace) == "" {
		return "the password is only white space"
	}
	folded := []rune(foldPassword(password))
	if _, common := commonPasswords()[string(folded)]; common {
		return "the password is one of the most common passwords"
	}
	if repetitive(folded) {
		return fmt.Sprintf("the password is repetitive: it repeats a shorter part, or uses fewer than %d different characters", minDistinctPasswordChars)
	}
	if sequential(folded) {
		return "the password is a run of consecutive characters (digits, the alphabet or a keyboard row)"
	}
	return ""
}

// foldPassword returns password as the rules compare it: NFKC-normalised,
// so that full-width and other compatibility forms read as their plain
// letters, lower-cased, and without leading and trailing white space,
// which a trivial password does not hide behind.
func foldPassword(password string) string {
	return strings.TrimSpace(strings.ToLower(norm.NFKC.String(password)))
}

// repetitive reports whether p repeats a part of at most half its length
// (abcabcabcab repeats abc), or uses fewer than minDistinctPasswordChars
// different characters.
func repetitive(p []rune) bool {
	distinct := map[rune]bool{}
	for _, r := range p {
		distinct[r] = true
	}
	if len(distinct) < minDistinctPasswordChars {
		return true
	}
	for period := 1; period <= len(p)/2; period++ {
		if periodic(p, period) {
			return true
		}
	}
	return false
}

// periodic reports whether every rune of p is the one period runes before.
func periodic(p []rune, period int) bool {
	for i := period; i < len(p); i++ {
		if p[i] != p[i-period] {
			return false
		}
	}
	return true
}

// sequential reports whether each rune of p is next to the one before it,
// either way, in one of the consecutive sequences.
func sequential(p []rune) bool {
	for i := 1; i < len(p); i++ {
		if !adjacent(p[i-1], p[i]) {
			return false
		}
	}
	return len(p) > 1
}

// adjacent reports whether a and b stand next to each other in a
// sequence of consecutive, counting the last and the first as neighbours.
func adjacent(a, b rune) bool {
	for _, seq := range consecutive {
		i, j := strings.IndexRune(seq, a), strings.IndexRune(seq, b)
		if i < 0 || j < 0 {
			continue
		}
		if d := (j - i + len(seq)) % len(seq); d == 1 || d == len(seq)-1 {
			return true
		}
	}
	return false
}
