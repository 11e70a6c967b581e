package image_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/scorehub/scorehub/internal/image"
	"github.com/scorehub/scorehub/internal/image/imagetest"
)

// list is the state of these tests: names, one more a write.
type list struct {
	Seq   uint64   `json:"seq"`
	Names []string `json:"names"`
}

func seq(l *list) uint64 { return l.Seq }

// with returns l with name added, at the next seq.
func (l *list) with(name string) *list {
	return &list{Seq: l.Seq + 1, Names: append(slices.Clone(l.Names), name)}
}

var errClosed = errors.New("test: store closed")

func memConfig() image.MemConfig[list] { return image.MemConfig[list]{Seq: seq, Closed: errClosed} }

func fileConfig(path string) image.FileConfig[list] {
	return image.FileConfig[list]{
		MemConfig: memConfig(), Path: path, TempPrefix: "list.json.tmp-", Lock: "list.lock", Locked: errors.New("test: in use"),
		Empty: func() *list { return &list{} }, WriteEmpty: true,
		Encode: func(l *list) ([]byte, error) { return json.Marshal(l) },
		Decode: func(b []byte) (*list, error) {
			var l list
			return &l, json.Unmarshal(b, &l)
		},
		Prefix: "test", What: "list file",
	}
}

func kit(open func(t *testing.T) image.Store[list]) imagetest.Kit[list] {
	return imagetest.Kit[list]{
		Open: open,
		New:  func() *list { return &list{} },
		Seq:  seq,
		Next: func(_ *testing.T, base *list, i int) *list { return base.with(fmt.Sprint("name", i)) },
		Dump: func(l *list) string { return strings.Join(l.Names, ",") },
		// A closed Mem or File fails with its MemConfig.Closed.
		Closed: errClosed,
	}
}

func TestMemConformance(t *testing.T) {
	imagetest.Run(t, kit(func(t *testing.T) image.Store[list] { return image.NewMem(&list{}, memConfig()) }))
}

func TestFileConformance(t *testing.T) {
	paths := map[image.Store[list]]string{}
	open := func(t *testing.T, path string) image.Store[list] {
		f, err := image.OpenFile(fileConfig(path))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		paths[f] = path
		return f
	}
	k := kit(func(t *testing.T) image.Store[list] { return open(t, filepath.Join(t.TempDir(), "list.json")) })
	k.Reopen = func(t *testing.T, s image.Store[list]) image.Store[list] {
		if err := s.(*image.File[list]).Close(); err != nil {
			t.Fatal(err)
		}
		return open(t, paths[s])
	}
	imagetest.Run(t, k)
}

func TestSharedConformance(t *testing.T) {
	k := kit(func(t *testing.T) image.Store[list] {
		return imagetest.NewShared(&list{}, memConfig()).Handle()
	})
	imagetest.Run(t, k)
	imagetest.RunShared(t, k, func(t *testing.T) (a, b image.Notifier[list]) {
		s := imagetest.NewShared(&list{}, memConfig())
		return s.Handle(), s.Handle()
	})
}

func TestFileOpen(t *testing.T) {
	t.Run("a second open of the directory fails while the first holds it", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "list.json")
		f, err := image.OpenFile(fileConfig(path))
		if err != nil {
			t.Fatal(err)
		}
		cfg := fileConfig(path)
		if _, err := image.OpenFile(cfg); !errors.Is(err, cfg.Locked) {
			t.Errorf("second open: %v, want %v", err, cfg.Locked)
		}
		f.Close()
		again, err := image.OpenFile(cfg)
		if err != nil {
			t.Fatalf("open after Close: %v", err)
		}
		again.Close()
	})

	t.Run("without a lock nothing is written until the first commit", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "sub", "list.json")
		cfg := fileConfig(path)
		cfg.Lock, cfg.WriteEmpty = "", false
		f, err := image.OpenFile(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Dir(path)); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("open wrote something: %v", err)
		}
		if err := f.Commit(context.Background(), 0, (&list{}).with("a")); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Stat(filepath.Dir(path)); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("the first commit made the directory %v, %v; want mode 0700", fi, err)
		}
	})

	t.Run("a secret file open to others is refused", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "list.json")
		if err := os.WriteFile(path, []byte(`{"seq": 1, "names": ["a"]}`), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg := fileConfig(path)
		cfg.Secret = "names"
		_, err := image.OpenFile(cfg)
		if err == nil || !strings.Contains(err.Error(), "chmod 600 "+path) {
			t.Errorf("open of a file of mode 0644: %v, want a refusal asking for chmod 600", err)
		}
	})

	t.Run("a file too large is refused", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "list.json")
		if err := os.WriteFile(path, []byte(`{"seq": 1, "names": ["a"]}`), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg := fileConfig(path)
		cfg.MaxSize = 8
		if _, err := image.OpenFile(cfg); err == nil || !strings.Contains(err.Error(), "larger than 8 bytes") {
			t.Errorf("open of a file past MaxSize: %v", err)
		}
	})
}

// views counts the views a writer built.
type views struct{ n atomic.Int32 }

func (v *views) config(s image.Store[list]) image.WriterConfig[list, string] {
	return image.WriterConfig[list, string]{
		Store: s, Seq: seq, ReadFailed: "test: read",
		View: func(st *list, _ string) (string, error) {
			v.n.Add(1)
			return strings.Join(st.Names, ","), nil
		},
	}
}

func newWriter(t *testing.T, cfg image.WriterConfig[list, string]) *image.Writer[list, string] {
	t.Helper()
	w, err := image.NewWriter(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	return w
}

func TestWriter(t *testing.T) {
	ctx := context.Background()
	write := func(w *image.Writer[list, string], name string) error {
		return w.Write(ctx, func(string) (*list, error) { return w.State().with(name), nil })
	}

	t.Run("writers sharing a store lose no write", func(t *testing.T) {
		s := image.NewMem(&list{}, memConfig())
		var v views
		ws := []*image.Writer[list, string]{newWriter(t, v.config(s)), newWriter(t, v.config(s))}
		var wg sync.WaitGroup
		for i, w := range ws {
			wg.Go(func() {
				for n := range 20 {
					if err := write(w, fmt.Sprintf("w%d-%d", i, n)); err != nil {
						t.Error(err)
					}
				}
			})
		}
		wg.Wait()
		st, _ := s.Load(ctx)
		if st.Seq != 40 || len(st.Names) != 40 {
			t.Errorf("after 40 writes the store is at seq %d with %d names", st.Seq, len(st.Names))
		}
	})

	t.Run("a store that keeps changing fails the write with ErrStale", func(t *testing.T) {
		s := &racing{Mem: image.NewMem(&list{}, memConfig())}
		var v views
		w := newWriter(t, v.config(s))
		err := write(w, "late")
		if !errors.Is(err, image.ErrStale) || s.commits.Load() != image.MaxAttempts {
			t.Errorf("a write that always meets another: %v after %d commits, want ErrStale after %d", err, s.commits.Load(), image.MaxAttempts)
		}
	})

	t.Run("a refusal over a shared store is decided again on what it holds", func(t *testing.T) {
		sh := imagetest.NewShared(&list{}, memConfig())
		here, there := sh.Handle(), sh.Handle()
		var v views
		w1, w2 := newWriter(t, v.config(here)), newWriter(t, v.config(there))
		here.Quiet(true)
		if err := write(w1, "a"); err != nil {
			t.Fatal(err)
		}
		// w2 has not been told of "a"; a write that needs it is refused
		// on what w2 published, and decided again on what the store holds.
		decided := 0
		err := w2.Write(ctx, func(cur string) (*list, error) {
			decided++
			if cur != "a" {
				return nil, errors.New("no a")
			}
			return w2.State().with("b"), nil
		})
		if err != nil || decided != 2 || w2.View() != "a,b" {
			t.Errorf("after %d decisions: %v, view %q; want 2, success, a,b", decided, err, w2.View())
		}
		// What is refused on the stored state stays refused, and is not
		// decided a third time.
		decided = 0
		err = w2.Write(ctx, func(string) (*list, error) { decided++; return nil, errors.New("never") })
		if err == nil || decided != 1 {
			t.Errorf("a refusal on the stored state: %v after %d decisions, want it after 1", err, decided)
		}
		// Nothing to do is final, unless the writer says otherwise.
		decided = 0
		if err := w2.Write(ctx, func(string) (*list, error) { decided++; return nil, nil }); err != nil || decided != 1 {
			t.Errorf("nothing to do: %v after %d decisions, want nil after 1", err, decided)
		}
	})

	t.Run("a notified state no newer than the published one is ignored", func(t *testing.T) {
		p := &pushed{Mem: image.NewMem(&list{}, memConfig())}
		var v views
		w := newWriter(t, v.config(p))
		for _, name := range []string{"a", "b"} {
			if err := write(w, name); err != nil {
				t.Fatal(err)
			}
		}
		// Late notifications, as a slow listener brings them.
		p.push(&list{Seq: 1, Names: []string{"old"}})
		p.push(&list{Seq: 2, Names: []string{"twice"}})
		if w.View() != "a,b" {
			t.Errorf("after old notifications the view is %q, want a,b", w.View())
		}
		// Notifications racing each other: the newest wins, whatever
		// their order.
		var wg sync.WaitGroup
		for i := range 50 {
			wg.Go(func() { p.push(&list{Seq: uint64(3 + i%25), Names: []string{fmt.Sprint(3 + i%25)}}) })
		}
		wg.Wait()
		if w.View() != "27" || w.State().Seq != 27 {
			t.Errorf("after racing notifications the view is %q at %d, want 27", w.View(), w.State().Seq)
		}
	})

	t.Run("after Close the writer no longer follows, and writes fail when Closed is set", func(t *testing.T) {
		sh := imagetest.NewShared(&list{}, memConfig())
		a, b := sh.Handle(), sh.Handle()
		var v views
		cfg := v.config(a)
		cfg.Closed = errClosed
		w := newWriter(t, cfg)
		other := newWriter(t, v.config(b))
		w.Close()
		if err := write(other, "x"); err != nil {
			t.Fatal(err)
		}
		if w.View() != "" {
			t.Errorf("a closed writer published %q", w.View())
		}
		if err := write(w, "y"); !errors.Is(err, errClosed) {
			t.Errorf("write after Close: %v, want %v", err, errClosed)
		}
		w.Close()
	})
}

// pushed is a Notifier whose test pushes notifications itself.
type pushed struct {
	*image.Mem[list]
	mu sync.Mutex
	fn func(*list)
}

func (p *pushed) Subscribe(fn func(*list)) (cancel func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.fn = fn
	return func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.fn = func(*list) {}
	}
}

func (p *pushed) push(st *list) {
	p.mu.Lock()
	fn := p.fn
	p.mu.Unlock()
	fn(st)
}

// racing is a store whose every commit meets another writer's.
type racing struct {
	*image.Mem[list]
	commits atomic.Int32
}

func (r *racing) Commit(ctx context.Context, base uint64, next *list) error {
	r.commits.Add(1)
	cur, _ := r.Mem.Load(ctx)
	if err := r.Mem.Commit(ctx, cur.Seq, cur.with("other")); err != nil {
		return err
	}
	return r.Mem.Commit(ctx, base, next)
}
