package tokens_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/scorehub/scorehub/internal/image"
	"github.com/scorehub/scorehub/internal/image/imagetest"
	"github.com/scorehub/scorehub/tokens"
	"github.com/scorehub/scorehub/tokens/tokenstest"
)

// sharedKeys is one key set in memory that several handles share, each
// telling its subscribers what any handle commits, as a database store
// does for the replicas on it.
func sharedKeys() *imagetest.Shared[tokens.StoredKeySet] {
	return imagetest.NewShared(&tokens.StoredKeySet{}, image.MemConfig[tokens.StoredKeySet]{
		Seq: func(st *tokens.StoredKeySet) uint64 { return st.Seq }, Closed: errors.New("closed")})
}

func TestFileKeyStoreConformance(t *testing.T) {
	tokenstest.RunKeyStore(t, func(t *testing.T) tokens.KeyStore {
		return tokens.NewFileKeyStore(filepath.Join(t.TempDir(), "keys", "keys.json"))
	})
}

func TestKeyNotifierConformance(t *testing.T) {
	tokenstest.RunKeyStore(t, func(t *testing.T) tokens.KeyStore { return sharedKeys().Handle() })
	tokenstest.RunKeyNotifier(t, func(t *testing.T) (a, b tokens.KeyNotifier) {
		s := sharedKeys()
		return s.Handle(), s.Handle()
	})
}

// TestSharedRotationDuringHandover: a rotation while a rotated-in key still
// waits to sign retires that key unused, and the key signing before both
// goes on signing until the newest key's handover ends; the set a replica
// reopens from the store decides alike.
func TestSharedRotationDuringHandover(t *testing.T) {
	c := newClock()
	store := sharedKeys().Handle()
	keys, err := tokens.OpenKeySet(context.Background(), store, tokens.KeySetConfig{Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer keys.Close()
	first := keys.Signing().ID()
	pending, err := keys.Rotate()
	if err != nil {
		t.Fatal(err)
	}
	c.Advance(tokens.KeyHandover / 2)
	newest, err := keys.Rotate()
	if err != nil {
		t.Fatal(err)
	}
	reopened, err := tokens.OpenKeySet(context.Background(), store, tokens.KeySetConfig{Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer reopened.Close()

	signs := func(when, want string) {
		t.Helper()
		for _, k := range []*tokens.KeySet{keys, reopened} {
			if got := k.Signing().ID(); got != want {
				t.Errorf("%s the set signs with %s, want %s", when, got, want)
			}
		}
	}
	c.Advance(tokens.KeyHandover/2 + time.Second) // past the first rotation's handover
	signs("after the first handover", first)
	c.Advance(tokens.KeyHandover / 2) // at the second rotation's handover end
	signs("after the second handover", newest.ID())

	infos := reopened.Keys()
	if len(infos) != 3 || infos[0].ID != newest.ID() || infos[1].ID != pending.ID() || infos[2].ID != first {
		t.Fatalf("the set holds %+v, want %s, %s, %s", infos, newest.ID(), pending.ID(), first)
	}
	rotatedAt := t0.Add(tokens.KeyHandover / 2)
	if !infos[0].SignsFrom.Equal(rotatedAt.Add(tokens.KeyHandover)) {
		t.Errorf("the newest key signs from %v, want %v", infos[0].SignsFrom, rotatedAt.Add(tokens.KeyHandover))
	}
	if !infos[1].Retired.Equal(rotatedAt) {
		t.Errorf("the key replaced before it signed was retired at %v, want %v", infos[1].Retired, rotatedAt)
	}
	if !infos[2].Retired.Equal(infos[0].SignsFrom) {
		t.Errorf("the first key stopped signing at %v, want when the newest began, %v", infos[2].Retired, infos[0].SignsFrom)
	}
}

// TestFileRotationSwitchesAtOnce: a set only one process uses signs with
// a rotated-in key at once, and its key file keeps no signsFrom.
func TestFileRotationSwitchesAtOnce(t *testing.T) {
	c := newClock()
	path := filepath.Join(t.TempDir(), "keys.json")
	keys, err := tokens.LoadOrCreateKeySet(path, tokens.KeySetConfig{Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	k, err := keys.Rotate()
	if err != nil {
		t.Fatal(err)
	}
	if got := keys.Signing().ID(); got != k.ID() {
		t.Errorf("after a rotation the file set signs with %s, want the new key %s", got, k.ID())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte("signsFrom")) {
		t.Errorf("the key file of one process holds a signsFrom:\n%s", data)
	}
}
