package wire

import (
	"math"

	"github.com/scorehub/scorehub/problem"
)

// The largest limits the decoder can keep to: it holds the body's byte
// offsets as uint32 and row numbers as int32, which keeps its cells small.
const (
	MaxBodyLimit = math.MaxUint32
	MaxRowsLimit = math.MaxInt32
)

// Limits bound what one request may hold; exceeding any of them is a 413.
// Every field is a bound as it is, zero included: the scoring package
// fills in its defaults before the codec sees them. Its fields are those
// of scoring.Limits, so that one converts to the other.
type Limits struct {
	// MaxBodyBytes bounds the body, at most MaxBodyLimit.
	MaxBodyBytes int64
	// MaxRows bounds the rows in "data", at most MaxRowsLimit.
	MaxRows int
	// MaxColumns bounds the distinct keys over all rows.
	MaxColumns int
	// MaxCells bounds rows × columns.
	MaxCells int
	// MaxResultCells bounds rows × result columns of the answer.
	MaxResultCells int
	// MaxResponseBytes bounds the bytes of the answer, judged by
	// [process.MinResultBytes].
	MaxResponseBytes int64
}

// Admit checks r, perhaps decoded under other limits, against lim, with
// the answers decoding under lim would have given.
func (r *Request) Admit(lim Limits) error {
	rows, cols := r.Table.Rows(), r.Table.NumColumns()
	switch {
	case int64(len(r.st.data)) > lim.MaxBodyBytes:
		return errBodyTooLarge(lim.MaxBodyBytes)
	case rows > lim.MaxRows:
		return tooLarge(problem.TooManyRows, "the request has more than %d rows", lim.MaxRows)
	case cols > lim.MaxColumns:
		return tooLarge(problem.TooManyColumns, "the request has more than %d columns", lim.MaxColumns)
	case cols > 0 && rows > lim.MaxCells/cols:
		return tooLarge(problem.TooManyCells, "the request has more than %d cells (rows × columns)", lim.MaxCells)
	}
	return nil
}
