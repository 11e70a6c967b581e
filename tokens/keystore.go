package tokens

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// KeyStore keeps the keys of a [KeySet] so that they survive a restart
// and, in a store several processes share, so that every replica signs
// and verifies with one set. It applies no rule of its own: the KeySet
// decides every rotation and prune on the set it holds and asks the store
// to commit the result, conditionally on the set it decided on, so that
// one replica at a time changes the set; a replica whose commit meets
// another's loads the store again and decides afresh.
//
// The set travels as the key file of [LoadOrCreateKeySet] encodes it. It
// holds the private keys: a store must keep it where only the service can
// read it, and must never log it or put it in an error.
//
// Implementations must be safe for concurrent use. Commit returns only
// once the set is committed (durable, for a durable store); a failed
// Commit leaves the stored set as it was.
type KeyStore interface {
	// Load returns the set as last committed, or a StoredKeySet of Seq 0
	// and no Data when the store holds none yet.
	Load(ctx context.Context) (*StoredKeySet, error)

	// Commit makes c.Set the stored set if the stored set's Seq is still
	// c.Base, and fails with [ErrKeysStale] otherwise.
	Commit(ctx context.Context, c KeyCommit) error
}

// KeyNotifier is a [KeyStore] that several processes share. A [KeySet]
// over a KeyNotifier subscribes to it and installs every newer set it is
// given, so that a rotation by any replica reaches every replica: each
// verifies what the others sign and serves the same JWKS.
type KeyNotifier interface {
	KeyStore
	// Subscribe calls fn with the stored set after changes committed by
	// other writers. fn must be quick and must not call the store. A set
	// whose Seq is no newer than the one installed is ignored, so a store
	// may also report its own writers' commits, or one change twice.
	// cancel stops the calls.
	Subscribe(fn func(*StoredKeySet)) (cancel func())
}

// StoredKeySet is a key set as a [KeyStore] keeps it.
type StoredKeySet struct {
	// Seq counts the commits that made the set; 0 when there is none.
	Seq uint64
	// Data is the set in the format of the key file: JSON, with the
	// private keys in PKCS #8 PEM. It is secret.
	Data []byte
}

// KeyCommit is one change of a key set, as a [KeySet] decided it, for a
// [KeyStore] to make durable.
type KeyCommit struct {
	// Base is the Seq of the set the change was decided on; 0 when the
	// KeySet creates the first set.
	Base uint64
	// Set is the set after the change, its Seq Base+1.
	Set *StoredKeySet
}

// ErrKeysStale reports a [KeyCommit] whose Base is no longer the stored
// set's Seq: another replica changed the set first. A [KeySet] meets it
// only when the store keeps changing under it.
var ErrKeysStale = errors.New("tokens: key set changed by another writer")

// Bounds of a KeySet's work with its store.
const (
	// keyStoreTimeout bounds one load or commit of a rotation or prune,
	// which take no context: a store that does not answer (a database
	// unreachable) fails the change, and the current key keeps signing.
	keyStoreTimeout = 30 * time.Second
	// maxKeyAttempts bounds how often a change whose commit met another
	// replica's is decided afresh before it fails with ErrKeysStale.
	maxKeyAttempts = 8
	// KeyHandover is, in a set shared through a [KeyNotifier], how long
	// a rotated-in key is published before any replica signs with it, so
	// that every replica knows it first: replicas hear of a rotation
	// within milliseconds, a minute also covers a listener that
	// reconnects. The replaced key signs meanwhile, and once retired it
	// still verifies tokens issued up to KeyHandover after its retirement,
	// and stays published that much longer, for a replica that heard late
	// or whose clock lags.
	KeyHandover = time.Minute
)

// OpenKeySet returns the key set store keeps, committing a new set
// (cfg.Signing, or a generated key of cfg.Algorithm) when it holds none.
// Every later [KeySet.Rotate], [KeySet.RotateTo], [KeySet.RotateIfOlder]
// and [KeySet.Prune] commits to the store before the change takes effect.
// Over a [KeyNotifier] the set follows what other replicas commit until
// [KeySet.Close]; of several replicas opening an empty store at once, one
// creates the set and the others load it. A stored set whose signing key
// is not cfg.Signing, when that is set, is an error.
func OpenKeySet(ctx context.Context, store KeyStore, cfg KeySetConfig) (*KeySet, error) {
	if store == nil {
		return nil, errors.New("tokens: OpenKeySet needs a store")
	}
	return openKeySet(ctx, store, cfg, "key store")
}

// openKeySet is OpenKeySet; where names the store in errors.
func openKeySet(ctx context.Context, store KeyStore, cfg KeySetConfig, where string) (*KeySet, error) {
	s, err := newKeySet(cfg)
	if err != nil {
		return nil, err
	}
	s.store, s.where = store, where
	s.follow = cfg.Algorithm == ""
	if n, ok := store.(KeyNotifier); ok {
		s.shared = true
		// Subscribe first so that no commit between the load and the
		// subscription is missed; a newer set always wins.
		s.cancel = n.Subscribe(s.followStore)
	}
	st, err := s.load(ctx)
	if err == nil && st == nil {
		st, err = s.create(ctx, cfg.Signing)
	}
	if err != nil {
		s.Close()
		return nil, err
	}
	if cfg.Signing != nil && cfg.Signing.id != st.signing().key.id {
		s.Close()
		return nil, fmt.Errorf("tokens: %s holds another signing key than KeySetConfig.Signing", s.where)
	}
	s.installNewer(st)
	return s, nil
}

// create commits a first set to an empty store, or loads the set another
// replica committed first.
func (s *KeySet) create(ctx context.Context, signing *Key) (*keyState, error) {
	var err error
	if signing == nil {
		if signing, err = GenerateKey(s.alg, s.random); err != nil {
			return nil, err
		}
	}
	st := &keyState{entries: []*keyEntry{{key: signing, created: s.now().UTC()}}}
	st.index()
	err = s.commit(ctx, 0, st)
	if errors.Is(err, ErrKeysStale) {
		loaded, err := s.load(ctx)
		if err == nil && loaded == nil {
			err = fmt.Errorf("tokens: %s refused the first key set but holds none", s.where)
		}
		return loaded, err
	}
	if err != nil {
		return nil, err
	}
	return st, nil
}

// load reads the store's set; nil when it holds none.
func (s *KeySet) load(ctx context.Context) (*keyState, error) {
	stored, err := s.store.Load(ctx)
	if err != nil {
		return nil, fmt.Errorf("tokens: read %s: %w", s.where, err)
	}
	if stored.Seq == 0 {
		return nil, nil
	}
	return s.decode(stored)
}

// decode turns a stored set into a state, checking every key.
func (s *KeySet) decode(stored *StoredKeySet) (*keyState, error) {
	st, err := decodeKeyFile(stored.Data)
	if err != nil {
		return nil, fmt.Errorf("tokens: %s: %w", s.where, err)
	}
	st.seq = stored.Seq
	return st, nil
}

// commit makes next, decided on the set at base, the stored set, at
// base+1.
func (s *KeySet) commit(ctx context.Context, base uint64, next *keyState) error {
	data, err := encodeKeyFile(next)
	if err != nil {
		return err
	}
	next.seq = base + 1
	if err := s.store.Commit(ctx, KeyCommit{Base: base, Set: &StoredKeySet{Seq: next.seq, Data: data}}); err != nil {
		if errors.Is(err, ErrKeysStale) {
			return err
		}
		return fmt.Errorf("tokens: write %s: %w", s.where, err)
	}
	return nil
}

// followStore installs a set a KeyNotifier reports. One that cannot be
// read is logged and left uninstalled: the set keeps what it held.
func (s *KeySet) followStore(stored *StoredKeySet) {
	if cur := s.current(); stored.Seq == 0 || cur != nil && stored.Seq <= cur.seq {
		return // a store without a set yet, or a set installed already
	}
	st, err := s.decode(stored)
	if err != nil {
		s.logger.Error("tokens: a key set the store reported cannot be used; the current keys stay", "seq", stored.Seq, "err", err.Error())
		return
	}
	s.installNewer(st)
}

// installNewer makes st current unless the current state is as new.
func (s *KeySet) installNewer(st *keyState) {
	for {
		cur := s.current()
		if cur != nil && st.seq <= cur.seq {
			return
		}
		if s.state.CompareAndSwap(cur, st) {
			return
		}
	}
}

// Close stops following a [KeyNotifier]; the set keeps verifying and
// signing with what it holds. It does nothing for other sets.
func (s *KeySet) Close() error {
	if s.cancel != nil {
		s.closing.Do(s.cancel)
	}
	return nil
}
