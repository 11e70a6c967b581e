package process

import (
	"fmt"

	"github.com/scorehub/scorehub/problem"
)

// ResultLimits bound the result a process may return for a request, as the
// host configured them for the scoring handler or the jobs runner. The
// scoring engine checks a process's declared result columns
// ([ProcessInfo].Output) against them before it runs, and every result
// before the answer is encoded; one past them is answered 413 and never
// encoded. A process that cannot declare its result columns, as they
// depend on its input, can call [ResultLimits.Check] once it knows them
// and return its error, so that a result past the limits is never built.
// Zero fields are no bound.
type ResultLimits struct {
	// Rows is the rows of the whole answer. A process scored in row
	// ranges ([ProcessInfo].RowWise) sees fewer in its table.
	Rows int
	// MaxCells bounds Rows × result columns.
	MaxCells int
	// MaxBytes bounds the answer's bytes, judged by [MinResultBytes].
	MaxBytes int64
}

// Check returns nil when a result of cols columns whose names take
// nameBytes bytes in all fits l. Otherwise it returns the answer the
// scoring handler sends, a [*problem.Error] of code
// [problem.TooManyResultCells] or [problem.ResponseTooLarge] (413) naming
// the rows, the result columns and the limit.
func (l ResultLimits) Check(cols, nameBytes int) error {
	if l.MaxCells > 0 && cols > 0 && l.Rows > l.MaxCells/cols {
		return &problem.Error{Code: problem.TooManyResultCells, Message: fmt.Sprintf(
			"the answer would hold %d rows × %d result columns, more than the limit of %d result cells", l.Rows, cols, l.MaxCells)}
	}
	if n := MinResultBytes(l.Rows, cols, nameBytes); l.MaxBytes > 0 && n > l.MaxBytes {
		return &problem.Error{Code: problem.ResponseTooLarge, Message: fmt.Sprintf(
			"the answer would be at least %d bytes (%d rows × %d result columns, whose names take %d bytes), more than the limit of %d bytes",
			n, l.Rows, cols, nameBytes, l.MaxBytes)}
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
