package tokens

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/golang-jwt/jwt/v5"
)

// DefaultValidity is how long an issued token is valid unless configured.
const DefaultValidity = 5 * time.Minute

// MaxValidity is the longest validity an [Issuer] accepts.
const MaxValidity = 24 * time.Hour

// maxName bounds a subject or group name, in bytes.
const maxName = 256

// IssuerConfig configures an [Issuer].
type IssuerConfig struct {
	// Keys signs the tokens with its current signing key. Required.
	Keys *KeySet

	// Issuer is the "iss" of every token, conventionally the server's base
	// URL. Required.
	Issuer string

	// Audience is the "aud" of every token: who the tokens are for.
	// Required, at least one non-empty name.
	Audience []string

	// Validity is how long a token is valid after it is issued. Zero means
	// [DefaultValidity]. It may not exceed [MaxValidity] nor the key set's
	// retention, so a rotated-out key outlives every token it signed.
	Validity time.Duration

	// Now is the clock; nil means time.Now.
	Now func() time.Time

	// Rand is the randomness for token IDs; nil means crypto/rand. Reads
	// are serialised, so it need not be safe for concurrent use.
	Rand io.Reader
}

// Issuer signs scorehub tokens for authenticated principals. An Issuer is
// safe for concurrent use.
type Issuer struct {
	keys     *KeySet
	issuer   string
	audience []string
	validity time.Duration
	now      func() time.Time
	random   io.Reader
}

// NewIssuer checks cfg and returns an Issuer.
func NewIssuer(cfg IssuerConfig) (*Issuer, error) {
	i := &Issuer{keys: cfg.Keys, issuer: cfg.Issuer, audience: slices.Clone(cfg.Audience),
		validity: cfg.Validity, now: cfg.Now, random: cfg.Rand}
	switch {
	case i.keys == nil:
		return nil, errors.New("tokens: IssuerConfig.Keys is required")
	case i.issuer == "":
		return nil, errors.New("tokens: IssuerConfig.Issuer is required")
	case len(i.audience) == 0 || slices.Contains(i.audience, ""):
		return nil, errors.New("tokens: IssuerConfig.Audience needs at least one name and no empty one")
	case i.validity < 0:
		return nil, fmt.Errorf("tokens: validity %v is negative", i.validity)
	}
	if i.validity == 0 {
		i.validity = DefaultValidity
	}
	if i.validity < time.Second {
		return nil, fmt.Errorf("tokens: validity %v is shorter than a second, the resolution of token times", i.validity)
	}
	if i.validity > MaxValidity {
		return nil, fmt.Errorf("tokens: validity %v is longer than %v", i.validity, MaxValidity)
	}
	if r := i.keys.retention; i.validity > r {
		return nil, fmt.Errorf("tokens: validity %v is longer than the key set's retention %v, so a rotation would cut tokens short; raise KeySetConfig.Retention", i.validity, r)
	}
	if i.now == nil {
		i.now = time.Now
	}
	i.random = randOrDefault(i.random)
	return i, nil
}

// wireClaims is the JSON payload of a scorehub token.
type wireClaims struct {
	jwt.RegisteredClaims
	Admin  bool     `json:"admin"`
	Groups []string `json:"grp"`
	// CredentialVersion is absent from tokens issued for no password.
	CredentialVersion string `json:"cv,omitempty"`
}

// Issue signs a token for p and returns it with the claims it carries.
// The subject and every group must be non-empty text of at most 256 bytes
// without control characters, and the token may not exceed
// [MaxTokenSize], which bounds the number of groups.
func (i *Issuer) Issue(p Principal) (string, *Claims, error) {
	if i.keys == nil {
		return "", nil, errors.New("tokens: Issuer not made by NewIssuer")
	}
	if err := CheckName("subject", p.Subject); err != nil {
		return "", nil, err
	}
	for _, g := range p.Groups {
		if err := CheckName("group", g); err != nil {
			return "", nil, err
		}
	}
	if len(p.CredentialVersion) > maxName || strings.IndexFunc(p.CredentialVersion, unicode.IsControl) >= 0 {
		return "", nil, errors.New("tokens: credential version longer than 256 bytes or with a control character")
	}
	var id [16]byte
	if _, err := io.ReadFull(i.random, id[:]); err != nil {
		return "", nil, fmt.Errorf("tokens: token id: %w", err)
	}
	// Token times have whole seconds; truncating here makes the claims
	// returned equal what a verifier reads back.
	now := i.now().UTC().Truncate(time.Second)
	c := &Claims{
		Subject:   p.Subject,
		Admin:     p.Admin,
		Groups:    slices.Clone(p.Groups),
		Issuer:    i.issuer,
		Audience:  slices.Clone(i.audience),
		ID:        b64(id[:]),
		IssuedAt:  now,
		ExpiresAt: now.Add(i.validity),

		CredentialVersion: p.CredentialVersion,
	}
	if c.Groups == nil {
		c.Groups = []string{}
	}
	key := i.keys.Signing()
	if key == nil {
		return "", nil, errZeroKeySet
	}
	method, err := key.alg.method()
	if err != nil {
		return "", nil, err
	}
	tok := jwt.NewWithClaims(method, wireClaims{
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer:    c.Issuer,
			Subject:   c.Subject,
			Audience:  jwt.ClaimStrings(c.Audience),
			ExpiresAt: jwt.NewNumericDate(c.ExpiresAt),
			IssuedAt:  jwt.NewNumericDate(c.IssuedAt),
			ID:        c.ID,
		},
		Admin:             c.Admin,
		Groups:            c.Groups,
		CredentialVersion: c.CredentialVersion,
	})
	tok.Header["kid"] = key.id
	raw, err := tok.SignedString(key.signingKey())
	if err != nil {
		return "", nil, fmt.Errorf("tokens: sign with key %s: %w", key.id, err)
	}
	if len(raw) > MaxTokenSize {
		// Verifiers would refuse it; most likely the user is in very many groups.
		return "", nil, fmt.Errorf("tokens: the token for %q would be %d bytes, more than the %d a verifier accepts (%d groups)",
			p.Subject, len(raw), MaxTokenSize, len(p.Groups))
	}
	return raw, c, nil
}

// CheckName refuses a name that would be ambiguous or unsafe in logs and
// headers, and that the Issuer therefore refuses as a subject or group:
// empty, longer than 256 bytes, not UTF-8, or with a control character.
// what names the kind of name in the error. A package that keeps users
// checks their names with it, so that every user it accepts can get a
// token.
func CheckName(what, s string) error {
	switch {
	case s == "":
		return fmt.Errorf("tokens: empty %s", what)
	case len(s) > maxName:
		return fmt.Errorf("tokens: %s longer than %d bytes", what, maxName)
	case !utf8.ValidString(s):
		return fmt.Errorf("tokens: %s is not UTF-8", what)
	case strings.IndexFunc(s, unicode.IsControl) >= 0:
		return fmt.Errorf("tokens: %s %q has a control character", what, s)
	}
	return nil
}
