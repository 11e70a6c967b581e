package tokens

import (
	"testing"
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
