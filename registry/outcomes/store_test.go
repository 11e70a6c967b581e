package outcomes_test

import (
	"testing"

	"github.com/scorehub/scorehub/registry/outcomes"
	"github.com/scorehub/scorehub/registry/outcomes/outcomestest"
)

func TestMemStore(t *testing.T) {
	outcomestest.Run(t, func(t *testing.T, opts outcomes.Options) outcomes.Store {
		s := outcomes.NewMemStore(opts)
		t.Cleanup(func() { s.Close() })
		return s
	})
}

func TestFileStore(t *testing.T) {
	outcomestest.Run(t, func(t *testing.T, opts outcomes.Options) outcomes.Store {
		return openFile(t, t.TempDir(), opts)
	})
}

// openFile opens a FileStore in dir, closed when the test ends.
func openFile(t *testing.T, dir string, opts outcomes.Options) *outcomes.FileStore {
	t.Helper()
	s, err := outcomes.OpenFileStore(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
