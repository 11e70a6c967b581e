package wire_test

import (
	"io"

	"github.com/scorehub/scorehub/registry/process"
	"github.com/scorehub/scorehub/scoring"
	"github.com/scorehub/scorehub/scoring/internal/wire"
)

// decode decodes the body r holds as scoring.Decode does: a zero limit
// means the scoring package's default.
func decode(r io.Reader, lim wire.Limits) (*wire.Request, error) {
	if lim.MaxBodyBytes == 0 {
		lim.MaxBodyBytes = scoring.DefaultMaxBodyBytes
	}
	if lim.MaxRows == 0 {
		lim.MaxRows = scoring.DefaultMaxRows
	}
	if lim.MaxColumns == 0 {
		lim.MaxColumns = scoring.DefaultMaxColumns
	}
	if lim.MaxCells == 0 {
		lim.MaxCells = scoring.DefaultMaxCells
	}
	return wire.Decode(r, lim)
}

// apiError is what a refusal tells the client.
type apiError struct {
	Status  int
	Type    string
	Message string
	Pointer string
}

// colView is a column as tests compare it: missing values are nil.
type colView struct {
	Name   string
	Kind   process.Kind
	Values []any
}

func viewTable(t *process.Table) []colView {
	out := []colView{}
	for i := range t.NumColumns() {
		c := t.Column(i)
		v := colView{Name: c.Name, Kind: c.Kind, Values: make([]any, c.Len())}
		for r := range v.Values {
			if c.IsMissing(r) {
				continue
			}
			if c.Kind == process.Number {
				v.Values[r] = c.Numbers[r]
			} else {
				v.Values[r] = c.Texts[r]
			}
		}
		out = append(out, v)
	}
	return out
}
