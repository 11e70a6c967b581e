package process

import "fmt"

// ValidName reports whether s may name a group, deployment path, endpoint
// alias, queue or process: ^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$. No valid name
// is "." or "..", contains a slash, or needs escaping in a URL path.
func ValidName(s string) bool {
	if len(s) == 0 || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case i > 0 && (c == '.' || c == '_' || c == '-'):
		default:
			return false
		}
	}
	return true
}

// checkName fails with [ErrInvalid] at pointer when s is not a valid name.
// It reads and answers as a record's invalid name does, but is a plain
// [*problem.Error]: the record's error type stays with the records.
func checkName(pointer, s string) error {
	if !ValidName(s) {
		msg := fmt.Sprintf("%q is not a valid name (letters, digits, '.', '_', '-'; starting with a letter or digit; at most 128)", s)
		return ErrInvalid.Detail(fmt.Sprintf("registry: %s: %s", pointer, msg), msg).At(pointer)
	}
	return nil
}
