package tokenstest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scorehub/scorehub/internal/image"
	"github.com/scorehub/scorehub/internal/image/imagetest"
	"github.com/scorehub/scorehub/tokens"
)

// RunKeyStore runs the suite of a [tokens.KeyStore]. open returns a new,
// empty store and arranges its closing at the end of the test.
func RunKeyStore(t *testing.T, open func(t *testing.T) tokens.KeyStore) {
	imagetest.Run(t, keyKit(open))

	t.Run("a key set opened over an empty store is stored, rotations too", func(t *testing.T) {
		s := open(t)
		keys := openKeySet(t, s, nil)
		if st := loadKeys(t, s); st.Seq != 1 || len(st.Data) == 0 {
			t.Fatalf("after the first open the store holds seq %d and %d bytes, want the set at seq 1", st.Seq, len(st.Data))
		}
		if again := openKeySet(t, s, nil); again.Signing().ID() != keys.Signing().ID() {
			t.Fatalf("opened again, the set signs with %s, want %s", again.Signing().ID(), keys.Signing().ID())
		}
		first := keys.Signing().ID()
		k, err := keys.Rotate()
		if err != nil {
			t.Fatal(err)
		}
		if st := loadKeys(t, s); st.Seq != 2 {
			t.Errorf("after a rotation the store is at seq %d, want 2", st.Seq)
		}
		again := openKeySet(t, s, nil)
		if got := kids(again); !slices.Equal(got, []string{k.ID(), first}) {
			t.Errorf("opened after a rotation, the set holds %v, want %s then %s", got, k.ID(), first)
		}
	})
}

// keyKit is the key set's part of the suite of every state image, on the
// stores open returns. A store keeps the set as it is given it, so the
// suite's sets need not be key files.
func keyKit(open func(t *testing.T) tokens.KeyStore) imagetest.Kit[tokens.StoredKeySet] {
	return imagetest.Kit[tokens.StoredKeySet]{
		Open: func(t *testing.T) image.Store[tokens.StoredKeySet] { return open(t) },
		New:  func() *tokens.StoredKeySet { return &tokens.StoredKeySet{} },
		Seq:  func(st *tokens.StoredKeySet) uint64 { return st.Seq },
		Next: func(_ *testing.T, base *tokens.StoredKeySet, i int) *tokens.StoredKeySet {
			return &tokens.StoredKeySet{Seq: base.Seq + 1, Data: fmt.Appendf(nil, `{"set": %d}`, i)}
		},
		Dump: func(st *tokens.StoredKeySet) string { return string(st.Data) },
	}
}

// RunKeyNotifier runs the suite of a [tokens.KeyNotifier] that several
// replicas share. open returns two handles on one new, empty store (two
// connection pools, as two replicas have) and arranges their closing at
// the end of the test. It proves that the replicas keep one key set: a
// rotation by either is served in the other's JWKS and the other verifies
// what it signs within [Propagation]; no replica signs with the new key
// before [tokens.KeyHandover] has passed, so a replica that has not heard
// of it yet verifies every token; and rotations racing from both end in
// one set.
func RunKeyNotifier(t *testing.T, open func(t *testing.T) (a, b tokens.KeyNotifier)) {
	imagetest.RunShared(t, keyKit(func(t *testing.T) tokens.KeyStore { a, _ := open(t); return a }), open)

	t.Run("a key rotated through one replica is published by every replica before any signs with it", func(t *testing.T) {
		sa, sb := open(t)
		var now atomic.Int64
		now.Store(epoch.UnixNano())
		clock := func() time.Time { return time.Unix(0, now.Load()).UTC() }
		here, there := openKeySet(t, sa, clock), openKeySet(t, sb, clock)
		if here.Signing().ID() != there.Signing().ID() {
			t.Fatalf("two replicas opening one store sign with %s and %s", here.Signing().ID(), there.Signing().ID())
		}
		// A replica that does not hear of the rotation, as none has until
		// the store's notification reaches it.
		late := openKeySet(t, sb, clock)
		late.Close()

		old := here.Signing().ID()
		start := time.Now()
		k, err := here.Rotate()
		if err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the other replica to publish the rotated key", func() bool { return slices.Contains(kids(there), k.ID()) })
		t.Logf("a rotation through one replica reached the other after %v", time.Since(start))
		if got := kids(there); !slices.Equal(got, []string{k.ID(), old}) {
			t.Errorf("the other replica holds %v, want %s then %s", got, k.ID(), old)
		}
		a, b := jwks(t, here), jwks(t, there)
		if a != b {
			t.Errorf("the replicas serve different JWKS:\n%s\n%s", a, b)
		}
		for _, kid := range []string{k.ID(), old} {
			if !strings.Contains(a, `"kid":"`+kid+`"`) {
				t.Errorf("during the handover the JWKS lacks key %s:\n%s", kid, a)
			}
		}
		reopened := openKeySet(t, sa, clock) // decides from the stored set alone
		if again, err := here.RotateIfOlder(time.Nanosecond); err != nil || again != nil {
			t.Errorf("RotateIfOlder during the handover: %v, %v; want no rotation", again, err)
		}

		check := func(when string, signs string) {
			t.Helper()
			for name, keys := range map[string]*tokens.KeySet{"rotating": here, "notified": there, "reopened": reopened} {
				if got := keys.Signing().ID(); got != signs {
					t.Errorf("%s, the %s replica signs with %s, want %s", when, name, got, signs)
				}
			}
			for _, c := range []struct {
				name           string
				signer, verify *tokens.KeySet
			}{
				{"signed by the rotating replica, verified by one not yet notified", here, late},
				{"signed by the rotating replica, verified by the notified one", here, there},
				{"signed by the notified replica, verified by the rotating one", there, here},
				{"signed by one not notified, verified by the rotating one", late, here},
			} {
				if c.verify == late && signs == k.ID() {
					continue // after the handover a replica must have heard
				}
				raw := issue(t, c.signer, clock)
				if _, err := verifier(t, c.verify, clock).Verify(context.Background(), raw); err != nil {
					t.Errorf("%s, %s: %v", when, c.name, err)
				}
			}
		}
		check("right after the rotation", old)
		now.Add(int64(tokens.KeyHandover - time.Second))
		check("just before the handover ends", old)
		now.Add(int64(time.Second))
		check("when the handover ends", k.ID())
		if a, b := jwks(t, here), jwks(t, there); a != b || !strings.Contains(a, `"kid":"`+old+`"`) {
			t.Errorf("after the handover the replicas serve, without the replaced key or unlike each other:\n%s\n%s", a, b)
		}
	})

	t.Run("rotations racing from both replicas end in one key set", func(t *testing.T) {
		sa, sb := open(t)
		var now atomic.Int64
		now.Store(epoch.UnixNano())
		clock := func() time.Time { return time.Unix(0, now.Load()).UTC() }
		here, there := openKeySet(t, sa, clock), openKeySet(t, sb, clock)
		now.Add(int64(48 * time.Hour))

		// Both find the signing key old: one rotates, the other finds it
		// rotated when its commit is refused, and does not rotate again.
		const rounds = 5
		var rotated atomic.Int32
		var wg sync.WaitGroup
		for _, keys := range []*tokens.KeySet{here, there} {
			wg.Go(func() {
				k, err := keys.RotateIfOlder(24 * time.Hour)
				if err != nil {
					t.Errorf("RotateIfOlder: %v", err)
				}
				if k != nil {
					rotated.Add(1)
				}
			})
		}
		wg.Wait()
		if n := rotated.Load(); n != 1 {
			t.Errorf("two replicas finding the key old rotated %d times, want once", n)
		}
		// Explicit rotations from both all take effect, one after another.
		var made sync.Map
		for _, keys := range []*tokens.KeySet{here, there} {
			wg.Go(func() {
				for range rounds {
					k, err := keys.Rotate()
					if err != nil {
						t.Errorf("Rotate: %v", err)
						return
					}
					made.Store(k.ID(), true)
				}
			})
		}
		wg.Wait()
		waitFor(t, "both replicas to hold one key set", func() bool {
			return slices.Equal(kids(here), kids(there))
		})
		got := kids(here)
		if len(got) != 2+2*rounds {
			t.Errorf("after %d rotations the set holds %d keys, want %d", 1+2*rounds, len(got), 2+2*rounds)
		}
		made.Range(func(kid, _ any) bool {
			if !slices.Contains(got, kid.(string)) {
				t.Errorf("key %s that a rotation returned is not in the set %v", kid, got)
			}
			return true
		})
		if a, b := jwks(t, here), jwks(t, there); a != b {
			t.Errorf("the replicas serve different JWKS:\n%s\n%s", a, b)
		}
		if again := openKeySet(t, sa, clock); !slices.Equal(kids(again), got) {
			t.Errorf("the store holds %v, the replicas %v", kids(again), got)
		}
	})
}

// openKeySet opens a key set over s, closed at the end of the test; clock
// nil means time.Now.
func openKeySet(t *testing.T, s tokens.KeyStore, clock func() time.Time) *tokens.KeySet {
	t.Helper()
	keys, err := tokens.OpenKeySet(context.Background(), s, tokens.KeySetConfig{Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { keys.Close() })
	return keys
}

func loadKeys(t *testing.T, s tokens.KeyStore) *tokens.StoredKeySet {
	t.Helper()
	st, err := s.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// kids are the IDs of keys' keys, the signing key first.
func kids(keys *tokens.KeySet) []string {
	var out []string
	for _, k := range keys.Keys() {
		out = append(out, k.ID)
	}
	return out
}

func jwks(t *testing.T, keys *tokens.KeySet) string {
	t.Helper()
	b, err := json.Marshal(keys.JWKS())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// issue signs a token for alice with keys, at clock's time.
func issue(t *testing.T, keys *tokens.KeySet, clock func() time.Time) string {
	t.Helper()
	iss, err := tokens.NewIssuer(tokens.IssuerConfig{Keys: keys, Issuer: "https://scorehub.test", Audience: []string{"scorehub"}, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	raw, _, err := iss.Issue(tokens.Principal{Subject: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func verifier(t *testing.T, keys *tokens.KeySet, clock func() time.Time) *tokens.Verifier {
	t.Helper()
	v, err := tokens.NewVerifier(tokens.VerifierConfig{Keys: keys, Issuer: "https://scorehub.test", Audience: "scorehub", Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	return v
}
