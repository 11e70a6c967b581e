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
	// [MinResultBytes].
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

// AdmitResult checks an answer of rows rows whose cols result columns
// have names of nameBytes bytes in all against maxCells, the limit of
// [Limits.MaxResultCells] (a 413 too_many_result_cells), and maxBytes,
// the limit of [Limits.MaxResponseBytes] (a 413 response_too_large), each
// naming the figures. The answer's bytes are judged by a lower bound,
// [MinResultBytes]. A limit of 0 is none.
func AdmitResult(rows, cols, nameBytes, maxCells int, maxBytes int64) error {
	if maxCells > 0 && cols > 0 && rows > maxCells/cols {
		return tooLarge(problem.TooManyResultCells,
			"the answer would hold %d rows × %d result columns, more than the limit of %d result cells", rows, cols, maxCells)
	}
	if n := MinResultBytes(rows, cols, nameBytes); maxBytes > 0 && n > maxBytes {
		return tooLarge(problem.ResponseTooLarge,
			"the answer would be at least %d bytes (%d rows × %d result columns, whose names take %d bytes), more than the limit of %d bytes",
			n, rows, cols, nameBytes, maxBytes)
	}
	return nil
}

// MinResultBytes is a lower bound of the bytes of an answer of rows rows
// with cols result columns whose names take nameBytes bytes in all: in
// every row, each name in quotes, a colon and a value of one byte, which
// the answer holds whatever it echoes (a result column that replaces an
// input column is written in its place). A name is never written shorter
// than it is.
func MinResultBytes(rows, cols, nameBytes int) int64 {
	return int64(rows) * (int64(nameBytes) + int64(cols)*int64(len(`"":0`)))
}
