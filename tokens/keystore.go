package tokens

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/scorehub/scorehub/internal/image"
)

// KeyStore keeps the keys of a [KeySet] so that they survive a restart
// and, in a store several processes share, so that every replica signs
// and verifies with one set. It applies no rule of its own: the KeySet
// decides every rotation and prune on the set it holds and asks the store
// to commit the result, conditionally on the set it decided on, so that
// one replica at a time changes the set; a replica whose commit meets
// another's loads the store again and decides afresh.
//
// It is the store of every state image (records, accounts, signing keys:
// the protocol of package internal/image) for the key set. Load returns
// the set as last committed, or a StoredKeySet of Seq 0 and no Data when
// the store holds none yet; Commit(ctx, base, next) makes next the stored
// set if the stored set's Seq is still base (0 when the KeySet creates
// the first set), and fails with [ErrStale] otherwise.
//
// The set travels as the key file of [LoadOrCreateKeySet] encodes it. It
// holds the private keys: a store must keep it where only the service can
// read it, and must never log it or put it in an error.
//
// Implementations must be safe for concurrent use. Commit returns only
// once the set is committed (durable, for a durable store); a failed
// Commit leaves the stored set as it was.
type KeyStore = image.Store[StoredKeySet]

// KeyNotifier is a [KeyStore] that several processes share. A [KeySet]
// over a KeyNotifier subscribes to it and installs every newer set it is
// given, so that a rotation by any replica reaches every replica: each
// verifies what the others sign and serves the same JWKS. Subscribe calls
// fn with the stored set after changes committed by other writers; fn
// must be quick and must not call the store. A set whose Seq is no newer
// than the one installed is ignored, so a store may also report its own
// writers' commits, or one change twice. cancel stops the calls.
type KeyNotifier = image.Notifier[StoredKeySet]

// StoredKeySet is a key set as a [KeyStore] keeps it.
type StoredKeySet struct {
	// Seq counts the commits that made the set; 0 when there is none.
	Seq uint64
	// Data is the set in the format of the key file: JSON, with the
	// private keys in PKCS #8 PEM. It is secret.
	Data []byte
}

// storedSeq is a stored set's Seq, stateSeq a decoded one's.
func storedSeq(st *StoredKeySet) uint64 { return st.Seq }
func stateSeq(st *keyState) uint64      { return st.seq }

// Bounds of a KeySet's work with its store.
const (
	// keyStoreTimeout bounds the work with the store of a rotation or a
	// prune, which take no context: a store that does not answer (a
	// database unreachable) fails the change, and the current key keeps
	// signing.
	keyStoreTimeout = 30 * time.Second
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
	s.where = where
	s.follow = cfg.Algorithm == ""
	var keys image.Store[keyState] = keyCodec{store, where}
	if n, ok := store.(KeyNotifier); ok {
		s.shared = true
		keys = keyNotifier{keyCodec{store, where}, n, s.logger}
	}
	if err := s.start(ctx, keys); err != nil {
		return nil, err
	}
	// Of several replicas opening an empty store at once, one commits the
	// first set; the others find it when their commits are refused.
	err = s.write(ctx, func(cur *keyState) (*keyState, error) {
		if len(cur.entries) > 0 {
			return nil, nil
		}
		signing := cfg.Signing
		if signing == nil {
			k, err := GenerateKey(s.alg, s.random)
			if err != nil {
				return nil, err
			}
			signing = k
		}
		return &keyState{entries: []*keyEntry{{key: signing, created: s.now().UTC()}}}, nil
	})
	if err != nil {
		s.Close()
		return nil, err
	}
	if cfg.Signing != nil && cfg.Signing.id != s.current().signing().key.id {
		s.Close()
		return nil, fmt.Errorf("tokens: %s holds another signing key than KeySetConfig.Signing", s.where)
	}
	return s, nil
}

// start has s publish what keys holds, through the writer of its changes.
func (s *KeySet) start(ctx context.Context, keys image.Store[keyState]) error {
	w, err := image.NewWriter(ctx, image.WriterConfig[keyState, *keyState]{
		Store:      keys,
		Seq:        stateSeq,
		View:       func(st, _ *keyState) (*keyState, error) { return st, nil },
		ReadFailed: "tokens: read " + s.where,
	})
	if err != nil {
		return err
	}
	s.w = w
	return nil
}

// keyCodec is a KeyStore as the writer of a KeySet sees it: the set
// decoded, every key checked, and encoded as the key file for a commit.
// where names the store in errors.
type keyCodec struct {
	store KeyStore
	where string
}

var (
	_ image.Store[keyState]    = keyCodec{}
	_ image.Notifier[keyState] = keyNotifier{}
)

// Load implements [image.Store]: a store that holds no set yet gives one
// of no keys at seq 0.
func (c keyCodec) Load(ctx context.Context) (*keyState, error) {
	stored, err := c.store.Load(ctx)
	if err != nil {
		return nil, err
	}
	return decodeStored(stored)
}

// Commit implements [image.Store].
func (c keyCodec) Commit(ctx context.Context, base uint64, next *keyState) error {
	data, err := encodeKeyFile(next)
	if err != nil {
		return err
	}
	err = c.store.Commit(ctx, base, &StoredKeySet{Seq: next.seq, Data: data})
	if err != nil && !errors.Is(err, ErrStale) {
		return fmt.Errorf("tokens: write %s: %w", c.where, err)
	}
	return err
}

// decodeStored turns a stored set into a state, checking every key.
func decodeStored(stored *StoredKeySet) (*keyState, error) {
	if stored.Seq == 0 {
		return &keyState{}, nil
	}
	st, err := decodeKeyFile(stored.Data)
	if err != nil {
		return nil, err
	}
	st.seq = stored.Seq
	return st, nil
}

// keyNotifier is the keyCodec of a KeyNotifier.
type keyNotifier struct {
	keyCodec
	n      KeyNotifier
	logger *slog.Logger
}

// Subscribe implements [image.Notifier]. A set that cannot be read is
// logged and not passed on: the KeySet keeps what it holds.
func (c keyNotifier) Subscribe(fn func(*keyState)) (cancel func()) {
	return c.n.Subscribe(func(stored *StoredKeySet) {
		if stored.Seq == 0 {
			return // a store without a set yet
		}
		st, err := decodeStored(stored)
		if err != nil {
			c.logger.Error("tokens: a key set the store reported cannot be used; the current keys stay", "seq", stored.Seq, "err", err.Error())
			return
		}
		fn(st)
	})
}

// Close stops following a [KeyNotifier]; the set keeps verifying and
// signing with what it holds, and may still change. It does nothing for
// other sets.
func (s *KeySet) Close() error {
	if s.w != nil {
		s.w.Close()
	}
	return nil
}
