package tokens

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"slices"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/scorehub/scorehub/internal/image"
)

// Algorithm is a JWS signing algorithm, as named in a token's "alg" header.
type Algorithm string

// The algorithms scorehub signs and verifies with.
const (
	// EdDSA is Ed25519, the default: small keys, fast, deterministic.
	EdDSA Algorithm = "EdDSA"
	// ES256 is ECDSA on P-256 with SHA-256.
	ES256 Algorithm = "ES256"
	// RS256 is RSASSA-PKCS1-v1_5 with SHA-256; keys have at least 2048 bits.
	RS256 Algorithm = "RS256"
	// HS256 is HMAC with SHA-256 over a shared secret of at least
	// [MinHMACSecret] bytes. Its keys are never published in a JWKS, so only
	// this process can verify what it signs.
	HS256 Algorithm = "HS256"
)

// MinHMACSecret is the shortest HS256 secret a [Key] accepts, in bytes.
const MinHMACSecret = 32

// minRSABits is the smallest RSA modulus accepted, here and from providers.
const minRSABits = 2048

// allAlgorithms lists every algorithm the package knows.
func allAlgorithms() []Algorithm { return []Algorithm{EdDSA, ES256, RS256, HS256} }

// method is the signing method golang-jwt implements alg with.
func (a Algorithm) method() (jwt.SigningMethod, error) {
	switch a {
	case EdDSA:
		return jwt.SigningMethodEdDSA, nil
	case ES256:
		return jwt.SigningMethodES256, nil
	case RS256:
		return jwt.SigningMethodRS256, nil
	case HS256:
		return jwt.SigningMethodHS256, nil
	}
	return nil, fmt.Errorf("tokens: unsupported algorithm %q", string(a))
}

// Key is one signing key: a private key (or an HS256 secret) with its key ID
// and algorithm. Its ID is the key's RFC 7638 JWK thumbprint, so the same key
// always has the same ID. A Key is immutable and safe for concurrent use.
type Key struct {
	id     string
	alg    Algorithm
	signer crypto.Signer    // nil for HS256
	public crypto.PublicKey // nil for HS256
	secret []byte           // HS256 only
}

// GenerateKey makes a new key for alg. Randomness comes from random (nil
// means crypto/rand). Ed25519 keys and HS256 secrets are derived from random
// alone, so a fixed reader yields a fixed key; for ES256 and RS256 the
// standard library may draw from its own secure source instead (Go 1.26 and
// later ignore the reader unless GODEBUG=cryptocustomrand=1).
func GenerateKey(alg Algorithm, random io.Reader) (*Key, error) {
	if random == nil {
		random = rand.Reader
	}
	switch alg {
	case EdDSA:
		seed := make([]byte, ed25519.SeedSize)
		if _, err := io.ReadFull(random, seed); err != nil {
			return nil, fmt.Errorf("tokens: generate EdDSA key: %w", err)
		}
		return NewKey(ed25519.NewKeyFromSeed(seed))
	case ES256:
		priv, err := ecdsa.GenerateKey(elliptic.P256(), random)
		if err != nil {
			return nil, fmt.Errorf("tokens: generate ES256 key: %w", err)
		}
		return NewKey(priv)
	case RS256:
		priv, err := rsa.GenerateKey(random, minRSABits)
		if err != nil {
			return nil, fmt.Errorf("tokens: generate RS256 key: %w", err)
		}
		return NewKey(priv)
	case HS256:
		secret := make([]byte, MinHMACSecret)
		if _, err := io.ReadFull(random, secret); err != nil {
			return nil, fmt.Errorf("tokens: generate HS256 secret: %w", err)
		}
		return NewHMACKey(secret)
	}
	return nil, fmt.Errorf("tokens: unsupported algorithm %q", string(alg))
}

// NewKey wraps an existing private key: an ed25519.PrivateKey (EdDSA), an
// *ecdsa.PrivateKey on P-256 (ES256) or an *rsa.PrivateKey of at least 2048
// bits (RS256). Anything else is an error.
func NewKey(priv crypto.Signer) (*Key, error) {
	var alg Algorithm
	switch k := priv.(type) {
	case ed25519.PrivateKey:
		if len(k) != ed25519.PrivateKeySize {
			return nil, errors.New("tokens: Ed25519 private key has the wrong size")
		}
		alg = EdDSA
	case *ecdsa.PrivateKey:
		if k.Curve != elliptic.P256() {
			return nil, fmt.Errorf("tokens: ECDSA key on %s, want P-256 for ES256", k.Curve.Params().Name)
		}
		alg = ES256
	case *rsa.PrivateKey:
		if k.N.BitLen() < minRSABits {
			return nil, fmt.Errorf("tokens: RSA key has %d bits, want at least %d", k.N.BitLen(), minRSABits)
		}
		alg = RS256
	default:
		return nil, fmt.Errorf("tokens: unsupported private key type %T", priv)
	}
	pub := priv.Public()
	j, err := publicJWK(pub)
	if err != nil {
		return nil, err
	}
	return &Key{id: j.thumbprint(), alg: alg, signer: priv, public: pub}, nil
}

// NewHMACKey makes an HS256 key from secret, which must hold at least
// [MinHMACSecret] bytes from a cryptographic random source. The secret is
// copied.
func NewHMACKey(secret []byte) (*Key, error) {
	if len(secret) < MinHMACSecret {
		return nil, fmt.Errorf("tokens: HS256 secret has %d bytes, want at least %d", len(secret), MinHMACSecret)
	}
	s := slices.Clone(secret)
	b, _ := json.Marshal(struct {
		K   string `json:"k"`
		Kty string `json:"kty"`
	}{b64(s), "oct"})
	sum := sha256.Sum256(b)
	return &Key{id: b64(sum[:]), alg: HS256, secret: s}, nil
}

// ID is the key's "kid": its RFC 7638 JWK thumbprint (SHA-256, base64url).
func (k *Key) ID() string { return k.id }

// Algorithm is the one algorithm the key signs and verifies with.
func (k *Key) Algorithm() Algorithm { return k.alg }

// Public is the public key, or nil for an HS256 key, which has none.
func (k *Key) Public() crypto.PublicKey { return k.public }

// signingKey is what golang-jwt's signing method for k.alg takes.
func (k *Key) signingKey() any {
	if k.alg == HS256 {
		return k.secret
	}
	return k.signer
}

// verifyingKey is what golang-jwt's signing method for k.alg verifies with.
func (k *Key) verifyingKey() any {
	if k.alg == HS256 {
		return k.secret
	}
	return k.public
}

// publicJWK is the public half of a key as a JWK, without kid, alg or use.
func publicJWK(pub crypto.PublicKey) (JWK, error) {
	switch p := pub.(type) {
	case ed25519.PublicKey:
		return JWK{KeyType: "OKP", Curve: "Ed25519", X: b64(p)}, nil
	case *ecdsa.PublicKey:
		b, err := p.Bytes()
		if err != nil || p.Curve != elliptic.P256() {
			return JWK{}, errors.New("tokens: ECDSA public key is not a valid P-256 point")
		}
		return JWK{KeyType: "EC", Curve: "P-256", X: b64(b[1:33]), Y: b64(b[33:65])}, nil
	case *rsa.PublicKey:
		return JWK{KeyType: "RSA", N: b64(p.N.Bytes()), E: b64(big.NewInt(int64(p.E)).Bytes())}, nil
	}
	return JWK{}, fmt.Errorf("tokens: unsupported public key type %T", pub)
}

// thumbprint is the RFC 7638 thumbprint of j: SHA-256 over the required
// members in lexicographic order, without whitespace, base64url-encoded.
func (j JWK) thumbprint() string {
	var members any
	switch j.KeyType {
	case "OKP":
		members = struct {
			Crv string `json:"crv"`
			Kty string `json:"kty"`
			X   string `json:"x"`
		}{j.Curve, j.KeyType, j.X}
	case "EC":
		members = struct {
			Crv string `json:"crv"`
			Kty string `json:"kty"`
			X   string `json:"x"`
			Y   string `json:"y"`
		}{j.Curve, j.KeyType, j.X, j.Y}
	case "RSA":
		members = struct {
			E   string `json:"e"`
			Kty string `json:"kty"`
			N   string `json:"n"`
		}{j.E, j.KeyType, j.N}
	default:
		return ""
	}
	// Base64url strings and fixed names: Marshal cannot fail and escapes
	// nothing.
	b, _ := json.Marshal(members)
	sum := sha256.Sum256(b)
	return b64(sum[:])
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// KeySetConfig configures a [KeySet].
type KeySetConfig struct {
	// Algorithm is the algorithm of the keys the set generates: its first
	// signing key when Signing is nil, and every key [KeySet.Rotate] makes.
	// Zero means the algorithm of the signing key (Signing's, or the key
	// file's), and EdDSA for a new set.
	Algorithm Algorithm

	// Signing is the first signing key. Nil means a new key of Algorithm is
	// generated. [LoadOrCreateKeySet] uses it only when it creates the file.
	Signing *Key

	// Retention is how long a key that a rotation replaced keeps verifying,
	// and stays published, after the rotation. It must cover the validity of
	// every token the key may have signed: [NewIssuer] refuses a validity
	// longer than Retention. Zero means [DefaultValidity].
	Retention time.Duration

	// Now is the clock; nil means time.Now.
	Now func() time.Time

	// Rand is the randomness for new keys; nil means crypto/rand. Reads
	// are serialised, so it need not be safe for concurrent use.
	Rand io.Reader

	// Logger receives what a shared [KeyNotifier] reports that cannot be
	// used. Nil means slog.Default(). Keys are never logged.
	Logger *slog.Logger
}

// KeySet holds one signing key and the retired keys that still verify tokens
// they signed before a rotation. In a set shared through a [KeyNotifier] it
// may also hold, for [KeyHandover] after a rotation, the new key that is
// published and verifies but does not sign yet. Readers ([Verifier], the JWKS handler) see
// an immutable snapshot without taking a lock; changes are serialised.
// A KeySet is safe for concurrent use.
type KeySet struct {
	alg       Algorithm // of new keys, unless follow
	follow    bool      // new keys take the signing key's algorithm
	retention time.Duration
	now       func() time.Time
	random    io.Reader
	logger    *slog.Logger
	where     string // names the store in errors
	shared    bool   // the store is a KeyNotifier: other replicas sign too
	// w holds the set and serialises Rotate, RotateTo, RotateIfOlder and
	// Prune, committing each to the store before the change takes
	// effect; nil for a zero KeySet.
	w *image.Writer[keyState, *keyState]
}

// keyState is one immutable version of a KeySet: the newest key first
// (the signing key, or in a shared set a key published but not signing
// yet), then retired keys, newest first.
type keyState struct {
	seq     uint64 // the store's Seq of the state
	entries []*keyEntry
	byID    map[string]*keyEntry
}

type keyEntry struct {
	key       *Key
	created   time.Time
	signsFrom time.Time // zero: signs from its creation; else when a key rotated into a shared set starts signing
	retired   time.Time // zero for the newest key; when it stops (or stopped) signing
	notAfter  time.Time // zero for the newest key; when a retired key stops verifying
}

// signing is the newest key: the one the next rotation replaces.
func (st *keyState) signing() *keyEntry { return st.entries[0] }

// signer is the key that signs at now: the newest whose signing has begun
// and not ended. Every replica of a shared set decides it from the stored
// times alone, so all switch to a rotated-in key at the same moment (up to
// their clocks' skew, which KeyHandover's leeway in verification covers).
func (st *keyState) signer(now time.Time) *keyEntry {
	for _, e := range st.entries {
		if now.Before(e.signsFrom) || !e.retired.IsZero() && !now.Before(e.retired) {
			continue
		}
		return e
	}
	return st.entries[0] // only when a clock went back past a switch
}

// signingSince is when e signs from.
func (e *keyEntry) signingSince() time.Time {
	if e.signsFrom.After(e.created) {
		return e.signsFrom
	}
	return e.created
}

// KeyInfo describes one key of a [KeySet].
type KeyInfo struct {
	ID        string
	Algorithm Algorithm
	Created   time.Time
	// SignsFrom is when a key rotated into a shared set starts signing:
	// until then it is published and verifies, and the key it replaces
	// signs. Zero for a key that signed from its creation.
	SignsFrom time.Time
	// Retired is when the key stops signing because a rotation replaced
	// it: the rotation's time, or in a shared set the new key's SignsFrom,
	// which may be ahead. Zero for the newest key.
	Retired time.Time
	// NotAfter is when a retired key stops verifying and leaves the JWKS;
	// zero for the newest key.
	NotAfter time.Time
}

// NewKeySet makes an in-memory key set whose signing key is cfg.Signing or
// a newly generated one. Keys made this way do not survive a restart; see
// [LoadOrCreateKeySet] for a set kept in a file.
func NewKeySet(cfg KeySetConfig) (*KeySet, error) {
	s, err := newKeySet(cfg)
	if err != nil {
		return nil, err
	}
	signing := cfg.Signing
	if signing == nil {
		if signing, err = GenerateKey(s.alg, s.random); err != nil {
			return nil, err
		}
	}
	st := &keyState{entries: []*keyEntry{{key: signing, created: s.now().UTC()}}}
	st.index()
	s.follow = cfg.Algorithm == ""
	s.where = "key set"
	mem := image.NewMem(st, image.MemConfig[keyState]{Seq: stateSeq, Closed: errKeyStoreClosed})
	if err := s.start(context.Background(), mem); err != nil {
		return nil, err
	}
	return s, nil
}

// newKeySet checks cfg and fills in its defaults, without keys.
func newKeySet(cfg KeySetConfig) (*KeySet, error) {
	s := &KeySet{alg: cfg.Algorithm, retention: cfg.Retention, now: cfg.Now, random: cfg.Rand, logger: cfg.Logger}
	if s.alg == "" {
		s.alg = EdDSA
	}
	if _, err := s.alg.method(); err != nil {
		return nil, err
	}
	if s.retention < 0 {
		return nil, fmt.Errorf("tokens: key retention %v is negative", s.retention)
	}
	if s.retention == 0 {
		s.retention = DefaultValidity
	}
	if s.now == nil {
		s.now = time.Now
	}
	s.random = randOrDefault(s.random)
	if s.logger == nil {
		s.logger = slog.Default()
	}
	return s, nil
}

// algorithm is the algorithm of the keys a rotation of st makes: the
// signing key's when the set follows it, so that rotations keep it.
func (s *KeySet) algorithm(st *keyState) Algorithm {
	if s.follow {
		return st.signing().key.alg
	}
	return s.alg
}

func (st *keyState) index() {
	st.byID = make(map[string]*keyEntry, len(st.entries))
	for _, e := range st.entries {
		st.byID[e.key.id] = e
	}
}

// current is the set's state; nil for a zero KeySet, which holds no keys.
func (s *KeySet) current() *keyState {
	if s.w == nil {
		return nil
	}
	return s.w.View()
}

// errZeroKeySet refuses changes to a KeySet not made by NewKeySet or
// LoadOrCreateKeySet.
var errZeroKeySet = errors.New("tokens: KeySet not made by NewKeySet or LoadOrCreateKeySet")

// Signing is the key new tokens are signed with; nil for a zero KeySet.
// In a shared set it is, for [KeyHandover] after a rotation, still the
// replaced key, while the new one is published (see [KeySet.Rotate]).
func (s *KeySet) Signing() *Key {
	st := s.current()
	if st == nil {
		return nil
	}
	return st.signer(s.now()).key
}

// Keys describes the keys in the set, the newest key first (the signing
// key, or during a shared set's handover the key about to sign), then
// retired keys newest first. Retired keys past their NotAfter are left out. A zero
// KeySet has none.
func (s *KeySet) Keys() []KeyInfo {
	st := s.current()
	if st == nil {
		return nil
	}
	now := s.now()
	var out []KeyInfo
	for _, e := range st.entries {
		if e.expired(now) {
			continue
		}
		out = append(out, KeyInfo{ID: e.key.id, Algorithm: e.key.alg, Created: e.created,
			SignsFrom: e.signsFrom, Retired: e.retired, NotAfter: e.notAfter})
	}
	return out
}

func (e *keyEntry) expired(now time.Time) bool {
	return !e.notAfter.IsZero() && now.After(e.notAfter)
}

// Rotate generates a new key of the set's algorithm and makes it the signing
// key. The key it replaces keeps verifying for the set's retention. A set
// kept in a store ([LoadOrCreateKeySet], [OpenKeySet]) commits to it
// before the new key signs anything; if that fails the set is unchanged.
// When another replica sharing the store changed the set first, the set
// loads the store and rotates what it holds.
//
// In a set shared through a [KeyNotifier] the new key is published first:
// it verifies and is in the JWKS of every replica as soon as each hears of
// the rotation, while every replica goes on signing with the replaced key
// until [KeyHandover] after the rotation (the new key's SignsFrom, stored
// with the set), and then all sign with the new one. So no replica signs
// with a key another replica does not know yet, which would refuse the
// token. A rotation during a handover retires the key that was waiting to
// sign, unused, and the replaced key signs until the newest key's
// handover ends.
func (s *KeySet) Rotate() (*Key, error) {
	st := s.current()
	if st == nil {
		return nil, errZeroKeySet
	}
	k, err := GenerateKey(s.algorithm(st), s.random)
	if err != nil {
		return nil, err
	}
	if err := s.RotateTo(k); err != nil {
		return nil, err
	}
	return k, nil
}

// RotateTo makes k the signing key, as [KeySet.Rotate] does with a new key.
// A key already in the set is refused.
func (s *KeySet) RotateTo(k *Key) error {
	if k == nil || k.alg == "" {
		return errors.New("tokens: rotate to a nil or zero key")
	}
	return s.change(func(old *keyState) (*keyState, error) { return s.rotated(old, k) })
}

// RotateIfOlder rotates, as [KeySet.Rotate] does, when the signing key was
// created maxAge or longer ago, and otherwise drops retired keys past their
// NotAfter, as [KeySet.Prune] does. It returns the new key, or nil when
// the newest one is younger than maxAge. The age counts from when the key
// began signing (its creation, or its SignsFrom in a shared set), which
// the key file keeps, so a restart neither resets the clock nor rotates
// early, and a key still waiting out its handover is never replaced; calling it often (on a ticker) costs
// a clock read unless there is something to do. Concurrent calls rotate
// once; over a shared store, so do calls of several replicas: a replica
// that finds the set rotated by another since it looked does not rotate it
// again.
func (s *KeySet) RotateIfOlder(maxAge time.Duration) (*Key, error) {
	if maxAge <= 0 {
		return nil, fmt.Errorf("tokens: key age %v is not positive", maxAge)
	}
	var k *Key
	err := s.change(func(old *keyState) (*keyState, error) {
		k = nil
		if s.now().Before(old.signing().signingSince().Add(maxAge)) {
			next, _ := s.pruned(old)
			return next, nil
		}
		var err error
		if k, err = GenerateKey(s.algorithm(old), s.random); err != nil {
			return nil, err
		}
		return s.rotated(old, k)
	})
	if err != nil {
		return nil, err
	}
	return k, nil
}

// rotated returns old with k as its newest key. The key signing now is
// retired when k starts signing: at once, or in a shared set after
// KeyHandover; a key of old still waiting to sign is retired unused.
func (s *KeySet) rotated(old *keyState, k *Key) (*keyState, error) {
	if _, ok := old.byID[k.id]; ok {
		return nil, fmt.Errorf("tokens: key %s is already in the set", k.id)
	}
	now := s.now().UTC()
	added := &keyEntry{key: k, created: now}
	from := now
	if s.shared {
		from = now.Add(KeyHandover)
		added.signsFrom = from
	}
	next := &keyState{entries: []*keyEntry{added}}
	signer := old.signer(now)
	for _, e := range old.entries {
		switch {
		case e == signer:
			e = s.retire(e, from)
		case e.retired.IsZero() || e.retired.After(now):
			e = s.retire(e, now)
		}
		if !e.expired(now) {
			next.entries = append(next.entries, e)
		}
	}
	return next, nil
}

// retire returns a copy of e that stops signing at at.
func (s *KeySet) retire(e *keyEntry, at time.Time) *keyEntry {
	r := *e
	r.retired, r.notAfter = at, at.Add(s.retention)
	if s.shared {
		// A replica that has not heard of the rotation may sign with it
		// up to KeyHandover later, as verifyingKey allows.
		r.notAfter = r.notAfter.Add(KeyHandover)
	}
	return &r
}

// Prune drops retired keys past their NotAfter and reports how many it
// dropped. Such keys already verify nothing and are not published; Prune
// frees them and, for a set kept in a store, removes them from it.
func (s *KeySet) Prune() (int, error) {
	dropped := 0
	err := s.change(func(old *keyState) (*keyState, error) {
		var next *keyState
		next, dropped = s.pruned(old)
		return next, nil
	})
	return dropped, err
}

// pruned returns old without the retired keys past their NotAfter, and
// how many it dropped; nil when there are none.
func (s *KeySet) pruned(old *keyState) (*keyState, int) {
	now := s.now()
	next := &keyState{}
	for _, e := range old.entries {
		if !e.expired(now) {
			next.entries = append(next.entries, e)
		}
	}
	dropped := len(old.entries) - len(next.entries)
	if dropped == 0 {
		return nil, 0
	}
	return next, dropped
}

// change decides a change on the current state with decide, which returns
// nil for no change, and commits it to the store, if the set has one,
// before it becomes current. When another replica committed first, it
// loads the store and decides again.
func (s *KeySet) change(decide func(old *keyState) (*keyState, error)) error {
	if s.w == nil {
		return errZeroKeySet
	}
	ctx, cancel := context.WithTimeout(context.Background(), keyStoreTimeout)
	defer cancel()
	return s.write(ctx, decide)
}

// write is change under ctx: it runs decide through the set's writer,
// giving the state it decides the next Seq and its index.
func (s *KeySet) write(ctx context.Context, decide func(old *keyState) (*keyState, error)) error {
	return s.w.Write(ctx, func(old *keyState) (*keyState, error) {
		next, err := decide(old)
		if next != nil {
			next.seq = old.seq + 1
			next.index()
		}
		return next, err
	})
}

// verifyingKey finds the key a token names. A retired key verifies only
// tokens issued before its retirement, and nothing after its NotAfter;
// leeway widens both bounds as it does the token's own times.
func (s *KeySet) verifyingKey(kid string, alg string, issuedAt time.Time, now time.Time, leeway time.Duration) (*Key, error) {
	st := s.current()
	if st == nil {
		return nil, errZeroKeySet
	}
	e, ok := st.byID[kid]
	if !ok {
		return nil, fmt.Errorf("%w: no key %q", ErrUnknownKey, kid)
	}
	if string(e.key.alg) != alg {
		return nil, fmt.Errorf("%w: key %s is for %s, token says %s", ErrAlgorithm, kid, e.key.alg, alg)
	}
	if !e.retired.IsZero() {
		if now.After(e.notAfter.Add(leeway)) {
			return nil, fmt.Errorf("%w: key %s was retired and stopped verifying at %s", ErrUnknownKey, kid, e.notAfter.Format(time.RFC3339))
		}
		if s.shared {
			// Replicas that have not yet heard of the rotation sign
			// with the key a little longer.
			leeway += KeyHandover
		}
		if issuedAt.After(e.retired.Add(leeway)) {
			return nil, fmt.Errorf("%w: key %s was retired at %s, before the token was issued", ErrUnknownKey, kid, e.retired.Format(time.RFC3339))
		}
	}
	return e.key, nil
}

// lockedReader serialises reads of an injected randomness source, which
// need not be safe for concurrent use (a seeded test generator is not).
type lockedReader struct {
	mu sync.Mutex
	r  io.Reader
}

func (l *lockedReader) Read(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.r.Read(p)
}

// randOrDefault is r made safe for concurrent use, or crypto/rand.
func randOrDefault(r io.Reader) io.Reader {
	if r == nil {
		return rand.Reader
	}
	return &lockedReader{r: r}
}
