package accounts

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/scorehub/scorehub/tokens"
)

// AdminGroup is the group that makes a user of an htpasswd file an admin.
const AdminGroup = "admin"

// minHTPasswdCost is the lowest bcrypt cost accepted from an htpasswd
// file: bcrypt's default (htpasswd -B writes 5 unless given -C). A cheaper
// hash lets a stolen file be guessed quickly, and makes the user's logins
// faster than an unknown name's, which tells the two apart.
const minHTPasswdCost = 10

// maxHTPasswdLine bounds a line of an htpasswd file, in bytes: room for a
// name, a hash and a few hundred groups.
const maxHTPasswdLine = 64 << 10

// LoadHTPasswd reads users from an htpasswd-style file; see [ParseHTPasswd]
// for the format.
func LoadHTPasswd(path string) (*StaticUsers, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("tokens: open htpasswd file: %w", err)
	}
	defer f.Close()
	return ParseHTPasswd(f, path)
}

// ParseHTPasswd reads users from r in the htpasswd format, one user a line:
//
//	name:bcrypt-hash[:group,group,…]
//
// The hash must be bcrypt, as `htpasswd -B` writes it, of a cost of at least
// 10 (bcrypt's default); other formats (Apache MD5, SHA-1, crypt, plain
// text) and cheaper hashes are refused with an error naming the line. Give
// every user the same cost: see [StaticUsers] for why.
// The optional third field lists the user's groups; a user in [AdminGroup]
// is an admin. Blank lines and lines starting with # are ignored. name names
// the source in errors. The passwords behind the hashes cannot be checked
// against the rules of [CheckNewPassword]: choose them by those rules.
func ParseHTPasswd(r io.Reader, name string) (*StaticUsers, error) {
	var users []User
	seen := map[string]int{}
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, maxHTPasswdLine)
	n := 1
	for ; sc.Scan(); n++ {
		line := strings.TrimRight(sc.Text(), " \t\r")
		if n == 1 {
			// Editors on Windows start UTF-8 files with a byte order mark,
			// which would otherwise become part of the first user's name.
			line = strings.TrimPrefix(line, "\ufeff")
		}
		if t := strings.TrimSpace(line); t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		u, err := parseHTPasswdLine(line)
		if err != nil {
			return nil, fmt.Errorf("tokens: %s:%d: %w", name, n, err)
		}
		if first, dup := seen[u.Name]; dup {
			return nil, fmt.Errorf("tokens: %s:%d: user %q already defined on line %d", name, n, u.Name, first)
		}
		seen[u.Name] = n
		users = append(users, u)
	}
	if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
		return nil, fmt.Errorf("tokens: %s:%d: the line is longer than %d bytes", name, n, maxHTPasswdLine)
	} else if err != nil {
		return nil, fmt.Errorf("tokens: read %s: %w", name, err)
	}
	if len(users) == 0 {
		return nil, fmt.Errorf("tokens: %s: no users", name)
	}
	s, err := NewStaticUsers(users...)
	if err != nil {
		return nil, fmt.Errorf("tokens: %s: %w", name, err)
	}
	return s, nil
}

func parseHTPasswdLine(line string) (User, error) {
	fields := strings.Split(line, ":")
	if len(fields) < 2 || len(fields) > 3 {
		return User{}, errors.New("want name:hash or name:hash:groups")
	}
	u := User{Name: fields[0], PasswordHash: []byte(fields[1])}
	if err := checkUserName(u.Name); err != nil {
		return User{}, err
	}
	cost, err := bcryptCost(u.PasswordHash)
	if err != nil {
		if len(fields[1]) == 60 && strings.HasPrefix(fields[1], "$2") {
			// bcrypt in form: say what is wrong with it. No reason
			// repeats more than two characters of the hash.
			return User{}, fmt.Errorf("user %q: %w", u.Name, err)
		}
		return User{}, fmt.Errorf("user %q: password hash is %s; only bcrypt is accepted (create it with htpasswd -B -C 10)", u.Name, hashFormat(fields[1]))
	}
	if cost < minHTPasswdCost {
		return User{}, fmt.Errorf("user %q: bcrypt cost %d is below %d; hash the password again with htpasswd -B -C %d", u.Name, cost, minHTPasswdCost, minHTPasswdCost)
	}
	if len(fields) == 3 && fields[2] != "" {
		for _, g := range strings.Split(fields[2], ",") {
			g = strings.TrimSpace(g)
			if err := tokens.CheckName("group", g); err != nil {
				return User{}, fmt.Errorf("user %q: %w", u.Name, err)
			}
			if g == AdminGroup {
				u.Admin = true
			}
			u.Groups = append(u.Groups, g)
		}
	}
	return u, nil
}

// hashFormat names the format of a password hash that is not bcrypt,
// without repeating the hash.
func hashFormat(h string) string {
	switch {
	case strings.HasPrefix(h, "$apr1$"):
		return "Apache MD5 ($apr1$)"
	case strings.HasPrefix(h, "{SHA}"):
		return "SHA-1 ({SHA})"
	case strings.HasPrefix(h, "$1$"):
		return "MD5-crypt ($1$)"
	case strings.HasPrefix(h, "$5$"):
		return "SHA-256-crypt ($5$)"
	case strings.HasPrefix(h, "$6$"):
		return "SHA-512-crypt ($6$)"
	case strings.HasPrefix(h, "$argon2"):
		return "Argon2"
	case strings.HasPrefix(h, "$2"):
		return "a malformed bcrypt hash"
	case h == "":
		return "empty"
	}
	return "crypt or plain text"
}
