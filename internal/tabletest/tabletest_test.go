package tabletest_test

import (
	"testing"

	"github.com/scorehub/scorehub/internal/tabletest"
	"github.com/scorehub/scorehub/registry/process"
)

func TestMustPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Must did not panic on a column of the wrong length")
		}
	}()
	tabletest.Must(2, process.NumberColumn("a", []float64{1}, nil))
}
