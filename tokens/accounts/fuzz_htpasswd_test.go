package accounts

import (
	"bytes"
	"github.com/scorehub/scorehub/tokens"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// bcryptHash is the shape of a bcrypt hash, written independently of
// bcryptCost: version, two-digit cost, 53 characters of bcrypt's base64.
var bcryptHash = regexp.MustCompile(`^\$2[aby]\$(0[4-9]|[12][0-9]|3[01])\$[./A-Za-z0-9]{53}$`)

// htpasswdCost finds the cost fields of bcrypt-looking hashes in a file,
// as bcrypt reads them: any two bytes, which strconv.Atoi may take for a
// number ("+9" is 9).
var htpasswdCost = regexp.MustCompile(`\$2[aby]\$(..)`)

// lineError is how a refusal names the line at fault.
var lineError = regexp.MustCompile(`^tokens: fuzz:([0-9]+): `)

// FuzzParseHTPasswd checks that ParseHTPasswd never panics; that every user
// it accepts has a well-formed bcrypt hash, a valid name and valid groups,
// one user per line that is neither blank nor a comment; and that every
// refusal names a line of the input (or says the file has no users) without
// repeating a password hash; and that no user it accepts has a bcrypt cost
// below 10. Inputs with a bcrypt cost above 10 are skipped: the loader
// hashes a dummy password at a cost its users have, which would make each
// run take seconds (TestParseHTPasswdRefuses covers the cost limits). The
// seed corpus is in testdata/fuzz/FuzzParseHTPasswd.
func FuzzParseHTPasswd(f *testing.F) {
	f.Fuzz(func(t *testing.T, file []byte) {
		for _, m := range htpasswdCost.FindAllSubmatch(file, -1) {
			if cost, err := strconv.Atoi(string(m[1])); err == nil && cost > minHTPasswdCost {
				t.Skip("bcrypt cost above 10")
			}
		}
		lines := strings.Split(string(file), "\n")
		var entries []string // the lines that define users
		for _, l := range lines {
			if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "#") {
				entries = append(entries, l)
			}
		}

		s, err := ParseHTPasswd(bytes.NewReader(file), "fuzz")
		if err != nil {
			msg := err.Error()
			if m := lineError.FindStringSubmatch(msg); m != nil {
				n, _ := strconv.Atoi(m[1])
				if n < 1 || n > len(lines) {
					t.Fatalf("refusal %q names line %d of %d", msg, n, len(lines))
				}
				if f := strings.Split(lines[n-1], ":"); len(f) >= 2 && len(f[1]) >= 16 &&
					!strings.Contains(f[0], f[1]) && !strings.Contains(strings.Join(f[2:], ":"), f[1]) &&
					strings.Contains(msg, f[1]) {
					t.Fatalf("refusal %q repeats the hash %q", msg, f[1])
				}
				return
			}
			if msg == "tokens: fuzz: no users" && len(entries) == 0 {
				return
			}
			t.Fatalf("refusal %q names no line", msg)
		}

		if s.Len() != len(entries) {
			t.Fatalf("%d users from %d lines that define users", s.Len(), len(entries))
		}
		for name, u := range s.users {
			if name != u.Name || checkUserName(name) != nil {
				t.Fatalf("accepted the user name %q", name)
			}
			if strings.ContainsAny(name, ":\n") {
				t.Fatalf("accepted the user name %q", name)
			}
			if !bcryptHash.Match(u.PasswordHash) {
				t.Fatalf("user %q has the hash %q, which is not bcrypt", name, u.PasswordHash)
			}
			if cost, _ := strconv.Atoi(string(u.PasswordHash[4:6])); cost < minHTPasswdCost {
				t.Fatalf("user %q has the hash %q, of a cost below %d", name, u.PasswordHash, minHTPasswdCost)
			}
			for _, g := range u.Groups {
				if tokens.CheckName("group", g) != nil || g != strings.TrimSpace(g) {
					t.Fatalf("user %q has the group %q", name, g)
				}
			}
			if u.Admin != slices.Contains(u.Groups, AdminGroup) {
				t.Fatalf("user %q: admin %v with groups %q", name, u.Admin, u.Groups)
			}
		}
		if !bcryptHash.Match(s.dummy) {
			t.Fatalf("the dummy hash %q is not bcrypt", s.dummy)
		}
	})
}
