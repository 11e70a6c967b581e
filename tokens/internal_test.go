package tokens

import (
	"testing"

	"golang.org/x/crypto/bcrypt"
)

// TestThumbprintRSA checks the RSA example of RFC 7638, section 3.1.
func TestThumbprintRSA(t *testing.T) {
	j := JWK{KeyType: "RSA", E: "AQAB",
		N: "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw"}
	pub, alg, err := j.publicKey()
	if err != nil {
		t.Fatal(err)
	}
	if alg != RS256 {
		t.Errorf("algorithm %s, want RS256", alg)
	}
	back, err := publicJWK(pub)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := back.thumbprint(), "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"; got != want {
		t.Errorf("thumbprint %s, want %s", got, want)
	}
}

func TestJWKPublicKeyRefuses(t *testing.T) {
	tests := []struct {
		name string
		jwk  JWK
	}{
		{"RSA too small", JWK{KeyType: "RSA", E: "AQAB", N: b64(make([]byte, 128))}},
		{"EC P-384", JWK{KeyType: "EC", Curve: "P-384", X: b64(make([]byte, 48)), Y: b64(make([]byte, 48))}},
		{"EC point off the curve", JWK{KeyType: "EC", Curve: "P-256", X: b64(make([]byte, 32)), Y: b64(make([]byte, 32))}},
		{"X25519", JWK{KeyType: "OKP", Curve: "X25519", X: b64(make([]byte, 32))}},
		{"oct", JWK{KeyType: "oct"}},
		{"Ed25519 marked RS256", JWK{KeyType: "OKP", Curve: "Ed25519", X: b64(make([]byte, 32)), Algorithm: "RS256"}},
		{"padded base64", JWK{KeyType: "OKP", Curve: "Ed25519", X: b64(make([]byte, 32)) + "="}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, _, err := tt.jwk.publicKey(); err == nil {
				t.Errorf("publicKey accepted %+v", tt.jwk)
			}
		})
	}
}

// TestUnknownUserCostsAsMuch: the dummy hash an unknown user is checked
// against has the cost of the costliest real hash, so the bcrypt work is
// the same as for a wrong password.
func TestUnknownUserCostsAsMuch(t *testing.T) {
	h5, _ := bcrypt.GenerateFromPassword([]byte("a"), 5)
	h6, _ := bcrypt.GenerateFromPassword([]byte("b"), 6)
	s, err := NewStaticUsers(User{Name: "a", PasswordHash: h5}, User{Name: "b", PasswordHash: h6})
	if err != nil {
		t.Fatal(err)
	}
	if cost, err := bcrypt.Cost(s.dummy); err != nil || cost != 6 {
		t.Errorf("dummy hash cost %d (%v), want 6", cost, err)
	}
}

// TestDummyHashCost: an unknown name is compared against a hash of the cost
// most users have, so that it answers in the time most real users do. With
// the costliest user's cost, as before, one user of a higher cost made
// every other user's name answer faster than an unknown one.
func TestDummyHashCost(t *testing.T) {
	tests := []struct {
		name  string
		costs []int // of the users
		want  int
	}{
		{"one user", []int{5}, 5},
		{"most users cheaper than one", []int{4, 4, 5}, 4},
		{"most users costlier", []int{4, 5, 5}, 5},
		{"a tie takes the higher", []int{4, 5}, 5},
	}
	hashes := map[int][]byte{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var users []User
			for i, c := range tt.costs {
				if hashes[c] == nil {
					h, err := bcrypt.GenerateFromPassword([]byte("pw"), c)
					if err != nil {
						t.Fatal(err)
					}
					hashes[c] = h
				}
				users = append(users, User{Name: string(rune('a' + i)), PasswordHash: hashes[c]})
			}
			s, err := NewStaticUsers(users...)
			if err != nil {
				t.Fatal(err)
			}
			if got, err := bcrypt.Cost(s.dummy); err != nil || got != tt.want {
				t.Errorf("the dummy hash has cost %d (%v), want %d", got, err, tt.want)
			}
		})
	}
}
