package tokens_test

import (
	"bytes"
	"context"
	"path/filepath"
	"sync"
	"testing"

	"github.com/scorehub/scorehub/tokens"
	"github.com/scorehub/scorehub/tokens/tokenstest"
)

// sharedKeys is one key set in memory that several handles share, each
// telling its subscribers what any handle commits, as a database store
// does for the replicas on it.
type sharedKeys struct {
	mu   sync.Mutex // serialises commits, so that notifications keep their order
	set  tokens.StoredKeySet
	next int
	subs map[int]func(*tokens.StoredKeySet)
}

var _ tokens.KeyNotifier = (*sharedKeys)(nil)

func (s *sharedKeys) Load(ctx context.Context) (*tokens.StoredKeySet, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return &tokens.StoredKeySet{Seq: s.set.Seq, Data: bytes.Clone(s.set.Data)}, nil
}

func (s *sharedKeys) Commit(ctx context.Context, c tokens.KeyCommit) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.Set == nil || c.Base != s.set.Seq || c.Set.Seq != c.Base+1 {
		return tokens.ErrKeysStale
	}
	s.set = tokens.StoredKeySet{Seq: c.Set.Seq, Data: bytes.Clone(c.Set.Data)}
	for _, fn := range s.subs {
		fn(&tokens.StoredKeySet{Seq: s.set.Seq, Data: bytes.Clone(s.set.Data)})
	}
	return nil
}

func (s *sharedKeys) Subscribe(fn func(*tokens.StoredKeySet)) (cancel func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.subs == nil {
		s.subs = map[int]func(*tokens.StoredKeySet){}
	}
	id := s.next
	s.next++
	s.subs[id] = fn
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.subs, id)
	}
}

func TestFileKeyStoreConformance(t *testing.T) {
	tokenstest.RunKeyStore(t, func(t *testing.T) tokens.KeyStore {
		return tokens.NewFileKeyStore(filepath.Join(t.TempDir(), "keys", "keys.json"))
	})
}

func TestKeyNotifierConformance(t *testing.T) {
	tokenstest.RunKeyStore(t, func(t *testing.T) tokens.KeyStore { return &sharedKeys{} })
	tokenstest.RunKeyNotifier(t, func(t *testing.T) (a, b tokens.KeyNotifier) {
		s := &sharedKeys{}
		return s, s
	})
}
