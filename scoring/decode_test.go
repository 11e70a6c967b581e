package scoring_test

import (
	"strings"
	"testing"

	"github.com/scorehub/scorehub/scoring"
)

func TestDecodeRejectsBadLimits(t *testing.T) {
	for _, lim := range []scoring.Limits{{MaxBodyBytes: -1}, {MaxBodyBytes: 1 << 32}, {MaxRows: -1}, {MaxRows: 1 << 31}, {MaxColumns: -1}, {MaxCells: -1}, {MaxResultCells: -1}, {MaxResponseBytes: -1}} {
		if _, err := scoring.Decode(strings.NewReader(`{"data":[]}`), lim); err == nil {
			t.Errorf("Decode with %+v: no error", lim)
		}
	}
}
