package payloads_test

import (
	"context"
	"sync"
	"testing"

	"github.com/scorehub/scorehub/registry/payloads"
	"github.com/scorehub/scorehub/registry/payloads/payloadstest"
	"github.com/scorehub/scorehub/registry/process"
)

func TestMemStore(t *testing.T) {
	payloadstest.Run(t, func(t *testing.T, opts payloads.Options) payloads.Store {
		s := payloads.NewMemStore(opts)
		t.Cleanup(func() { s.Close() })
		return s
	})
}

func TestFileStore(t *testing.T) {
	payloadstest.Run(t, func(t *testing.T, opts payloads.Options) payloads.Store {
		return openFile(t, t.TempDir(), opts)
	})
}

// TestFileStoreAcrossReopens runs the conformance suite on a file store
// that every Page opens afresh from its directory, so that it reads what a
// restarted process would.
func TestFileStoreAcrossReopens(t *testing.T) {
	payloadstest.Run(t, func(t *testing.T, opts payloads.Options) payloads.Store {
		dir := t.TempDir()
		r := &reopening{t: t, dir: dir, opts: opts, s: openFile(t, dir, opts)}
		t.Cleanup(func() { r.Close() })
		return r
	})
}

// openFile opens a FileStore in dir, closed when the test ends.
func openFile(t *testing.T, dir string, opts payloads.Options) *payloads.FileStore {
	t.Helper()
	s, err := payloads.OpenFileStore(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// reopening is a FileStore that is closed and opened again before every
// Page.
type reopening struct {
	t    *testing.T
	dir  string
	opts payloads.Options

	mu     sync.RWMutex
	s      *payloads.FileStore
	closed bool
}

func (r *reopening) reopen() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	if err := r.s.Close(); err != nil {
		r.t.Errorf("close before reopening: %v", err)
	}
	s, err := payloads.OpenFileStore(r.dir, r.opts)
	if err != nil {
		r.t.Errorf("reopen: %v", err)
		return
	}
	r.s = s
}

func (r *reopening) Append(ctx context.Context, rs []payloads.Record) error {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.s.Append(ctx, rs)
}

func (r *reopening) Page(ctx context.Context, ep process.EndpointRef, after int64, limit int) ([]payloads.Record, bool, error) {
	r.reopen()
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.s.Page(ctx, ep, after, limit)
}

func (r *reopening) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	return r.s.Close()
}
