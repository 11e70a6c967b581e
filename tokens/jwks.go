package tokens

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"strings"
)

// JWK is a public key as a JSON Web Key (RFC 7517), with the members
// scorehub writes and reads for OKP (Ed25519), EC (P-256) and RSA keys.
type JWK struct {
	KeyType   string `json:"kty"`
	KeyID     string `json:"kid,omitempty"`
	Algorithm string `json:"alg,omitempty"`
	Use       string `json:"use,omitempty"`
	Curve     string `json:"crv,omitempty"`
	X         string `json:"x,omitempty"`
	Y         string `json:"y,omitempty"`
	N         string `json:"n,omitempty"`
	E         string `json:"e,omitempty"`
}

// JWKS is a JSON Web Key Set.
type JWKS struct {
	Keys []JWK `json:"keys"`
}

// JWKS returns the set's public keys: the signing key first, then retired
// keys that still verify, newest first. HS256 keys have no public half and
// are never included. A zero KeySet publishes none.
func (s *KeySet) JWKS() JWKS {
	set := JWKS{Keys: []JWK{}}
	st := s.current()
	if st == nil {
		return set
	}
	now := s.now()
	for _, e := range st.entries {
		if e.key.alg == HS256 || e.expired(now) {
			continue
		}
		j, err := publicJWK(e.key.public)
		if err != nil {
			continue // NewKey checked the key: unreachable
		}
		j.KeyID, j.Algorithm, j.Use = e.key.id, string(e.key.alg), "sig"
		set.Keys = append(set.Keys, j)
	}
	return set
}

// jwksCacheControl is the Cache-Control of the JWKS response. Five minutes
// keeps verifiers elsewhere from asking on every token, and is short next to
// a retired key's retention; a verifier that meets an unknown kid should
// fetch the set again rather than wait for the cache to expire.
const jwksCacheControl = "public, max-age=300"

// JWKSHandler serves keys' public keys as a JWKS (application/jwk-set+json)
// with a Cache-Control of five minutes and an ETag, answering a matching If-None-Match
// with 304. It is what [Service] serves at [PathJWKS]; use it on its own to
// publish the keys elsewhere. keys must not be nil. The handler is safe for
// concurrent use.
func JWKSHandler(keys *KeySet) http.Handler {
	if keys == nil {
		panic("tokens: JWKSHandler with a nil KeySet")
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := json.Marshal(keys.JWKS()) // strings only: cannot fail
		body = append(body, '\n')
		sum := sha256.Sum256(body)
		etag := `"` + base64.RawURLEncoding.EncodeToString(sum[:16]) + `"`
		h := w.Header()
		h.Set("Cache-Control", jwksCacheControl)
		h.Set("ETag", etag)
		h.Set("X-Content-Type-Options", "nosniff")
		if etagMatch(r.Header.Get("If-None-Match"), etag) {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		h.Set("Content-Type", "application/jwk-set+json")
		w.Write(body)
	})
}

// etagMatch reports whether an If-None-Match header names etag, weakly
// compared as RFC 9110 asks for If-None-Match.
func etagMatch(header, etag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == "*" || t == etag {
			return true
		}
	}
	return false
}

// publicKey turns a JWK from a provider into a key golang-jwt verifies with,
// and tells which algorithm the key type implies. A JWK naming an "alg" is
// held to it; one that names none is good for the one algorithm its type
// allows among those scorehub accepts.
func (j JWK) publicKey() (crypto.PublicKey, Algorithm, error) {
	var (
		pub crypto.PublicKey
		alg Algorithm
	)
	switch j.KeyType {
	case "OKP":
		if j.Curve != "Ed25519" {
			return nil, "", fmt.Errorf("OKP curve %q not supported", j.Curve)
		}
		x, err := decodeB64(j.X)
		if err != nil || len(x) != ed25519.PublicKeySize {
			return nil, "", errors.New("bad Ed25519 x")
		}
		pub, alg = ed25519.PublicKey(x), EdDSA
	case "EC":
		if j.Curve != "P-256" {
			return nil, "", fmt.Errorf("EC curve %q not supported", j.Curve)
		}
		x, errX := decodeB64(j.X)
		y, errY := decodeB64(j.Y)
		if errX != nil || errY != nil || len(x) != 32 || len(y) != 32 {
			return nil, "", errors.New("bad P-256 coordinates")
		}
		point := append(append([]byte{4}, x...), y...)
		k, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), point)
		if err != nil {
			return nil, "", fmt.Errorf("bad P-256 point: %w", err)
		}
		pub, alg = k, ES256
	case "RSA":
		n, errN := decodeB64(j.N)
		e, errE := decodeB64(j.E)
		if errN != nil || errE != nil || len(e) == 0 || len(e) > 4 {
			return nil, "", errors.New("bad RSA n or e")
		}
		k := &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}
		if k.N.BitLen() < minRSABits {
			return nil, "", fmt.Errorf("RSA key has %d bits, want at least %d", k.N.BitLen(), minRSABits)
		}
		if k.E < 3 || k.E%2 == 0 {
			return nil, "", errors.New("bad RSA exponent")
		}
		pub, alg = k, RS256
	default:
		return nil, "", fmt.Errorf("key type %q not supported", j.KeyType)
	}
	if j.Algorithm != "" && j.Algorithm != string(alg) {
		return nil, "", fmt.Errorf("%s key with alg %q not supported", j.KeyType, j.Algorithm)
	}
	return pub, alg, nil
}

// decodeB64 decodes base64url without padding, strictly, as JWK asks.
func decodeB64(s string) ([]byte, error) {
	return base64.RawURLEncoding.Strict().DecodeString(s)
}
