package accounts

import (
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"fmt"
	"github.com/scorehub/scorehub/tokens"
	"hash/crc32"
	"io"
)

// An API token is APITokenPrefix, then apiTokenRandom base62 characters
// drawn at random (256 bits), then apiTokenCheck base62 characters of the
// CRC-32 of the random part. The check lets a typo or a truncated paste be
// refused without a lookup, and lets secret scanners tell a token from
// lookalike text, as GitHub's tokens do.
const (
	apiTokenRandom = 43 // 62^43 > 2^256
	apiTokenCheck  = 6  // 62^6 > 2^32
	apiTokenLen    = len(APITokenPrefix) + apiTokenRandom + apiTokenCheck
)

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// apiTokenIDLen is the length of an API token's public ID: 10 random bytes
// in lower-case base32.
const apiTokenIDLen = 16

var idEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// newAPITokenSecret returns a new API token read from random.
func newAPITokenSecret(random io.Reader) (string, error) {
	b := make([]byte, apiTokenLen)
	n := copy(b, APITokenPrefix)
	var buf [64]byte
	for i := n; i < n+apiTokenRandom; {
		if _, err := io.ReadFull(random, buf[:]); err != nil {
			return "", fmt.Errorf("tokens: API token: %w", err)
		}
		for _, c := range buf {
			// 248 = 4×62: taking only bytes below it keeps every
			// character equally likely.
			if c >= 248 || i == n+apiTokenRandom {
				continue
			}
			b[i] = base62[c%62]
			i++
		}
	}
	appendCheck(b[n+apiTokenRandom:], crc32.ChecksumIEEE(b[n:n+apiTokenRandom]))
	return string(b), nil
}

// appendCheck writes sum in base62 into dst, most significant digit first.
func appendCheck(dst []byte, sum uint32) {
	v := uint64(sum)
	for i := len(dst) - 1; i >= 0; i-- {
		dst[i] = base62[v%62]
		v /= 62
	}
}

// apiTokenWellFormed reports whether token has the prefix, length, alphabet
// and check of an API token. It does not allocate.
func apiTokenWellFormed(token string) bool {
	if len(token) != apiTokenLen || token[:len(APITokenPrefix)] != APITokenPrefix {
		return false
	}
	body := token[len(APITokenPrefix):]
	var sum uint64
	for i := 0; i < len(body); i++ {
		d := base62Digit(body[i])
		if d < 0 {
			return false
		}
		if i >= apiTokenRandom {
			sum = sum*62 + uint64(d)
		}
	}
	return sum == uint64(crc32String(body[:apiTokenRandom]))
}

// crc32String is crc32.ChecksumIEEE of s, which would need s as a slice
// that escapes to the heap.
func crc32String(s string) uint32 {
	crc := ^uint32(0)
	for i := 0; i < len(s); i++ {
		crc = crc32.IEEETable[byte(crc)^s[i]] ^ crc>>8
	}
	return ^crc
}

// base62Digit returns the value of the base62 character c, or -1.
func base62Digit(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'A' <= c && c <= 'Z':
		return int(c-'A') + 10
	case 'a' <= c && c <= 'z':
		return int(c-'a') + 36
	}
	return -1
}

// apiTokenHash is what identifies an API token in memory: the SHA-256 of
// the whole token.
type apiTokenHash [sha256.Size]byte

// hashAPIToken returns the SHA-256 of token, which must be well formed.
// It does not allocate.
func hashAPIToken(token string) apiTokenHash {
	var b [apiTokenLen]byte // on the stack, where []byte(token) would allocate
	copy(b[:], token)
	return sha256.Sum256(b[:])
}

// String is the hash in lower-case hex, as StoredAPIToken.Hash keeps it.
func (h apiTokenHash) String() string { return hex.EncodeToString(h[:]) }

// parseAPITokenHash reads StoredAPIToken.Hash.
func parseAPITokenHash(s string) (apiTokenHash, error) {
	var h apiTokenHash
	if len(s) != hex.EncodedLen(len(h)) {
		return h, fmt.Errorf("hash %q is not %d hex digits", s, hex.EncodedLen(len(h)))
	}
	if _, err := hex.Decode(h[:], []byte(s)); err != nil || hex.EncodeToString(h[:]) != s {
		return h, fmt.Errorf("hash %q is not lower-case hex", s)
	}
	return h, nil
}

// newAPITokenID returns a new public token ID read from random.
func newAPITokenID(random io.Reader) (string, error) {
	var b [10]byte
	if _, err := io.ReadFull(random, b[:]); err != nil {
		return "", fmt.Errorf("tokens: API token ID: %w", err)
	}
	return idEncoding.EncodeToString(b[:]), nil
}

// versionRandom is how many random bytes a stored user's credential
// version is made of: as many as a credential version keeps of a hash.
const versionRandom = 16

// newCredentialVersion returns a random credential version for a stored
// user, of the form [tokens.CredentialVersion] gives.
func newCredentialVersion(random io.Reader) (string, error) {
	var b [versionRandom]byte
	if _, err := io.ReadFull(random, b[:]); err != nil {
		return "", fmt.Errorf("tokens: credential version: %w", err)
	}
	return tokens.CredentialVersion(b[:]), nil
}
