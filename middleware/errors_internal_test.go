package middleware

import (
	"strings"
	"testing"
)

// TestDescriptionsAreSendable holds every client sentence to the RFC 6750
// error_description syntax (%x20-21 / %x23-5B / %x5D-7E), since each is
// sent in a challenge as well as in the JSON body.
func TestDescriptionsAreSendable(t *testing.T) {
	for _, msg := range []string{msgMissing, msgScheme, msgQuery, msgForm, msgMultiple, msgMalformed,
		msgBodyRead, msgExpired, msgNotYet, msgInvalid, msgRevoked, msgAdmin, msgGroup} {
		for i := 0; i < len(msg); i++ {
			if c := msg[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
				t.Errorf("%q: byte %q at %d is not allowed in error_description", msg, c, i)
			}
		}
	}
}

func TestHasAccessToken(t *testing.T) {
	tests := []struct {
		q        string
		complete bool
		want     bool
	}{
		{"", true, false},
		{"access_token=x", true, true},
		{"a=1&access_token=", true, true},
		{"access_token", true, true},
		{"access%5Ftoken=x", true, true},
		{"access_tokens=x", true, false},
		{"x=access_token", true, false},
		{"my_access_token=x", true, false},
		{"a=1&access_token", false, false}, // may be cut short: access_tokens…
		{"access_token=x&a", false, true},
		{"access_token=x", false, false},
		{"%zz=1&access_token=1", true, true},
	}
	for _, tt := range tests {
		if got := hasAccessToken(tt.q, tt.complete); got != tt.want {
			t.Errorf("hasAccessToken(%q, %v) = %v, want %v", tt.q, tt.complete, got, tt.want)
		}
	}
}

func TestIsB64Token(t *testing.T) {
	for c := 0; c < 256; c++ {
		want := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.ContainsRune("-._~+/", rune(c))
		if got := isB64Token("a" + string([]byte{byte(c)}) + "b"); got != want {
			t.Errorf("isB64Token with %q = %v, want %v", c, got, want)
		}
	}
	for s, want := range map[string]bool{"": false, "=": false, "a=": true, "a==": true, "a=b": false, "eyJ.eyJ.sig": true} {
		if got := isB64Token(s); got != want {
			t.Errorf("isB64Token(%q) = %v, want %v", s, got, want)
		}
	}
}
