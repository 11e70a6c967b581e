package scoring

import (
	"errors"
	"fmt"

	"github.com/scorehub/scorehub/scoring/internal/wire"
)

// Default limits; see [Limits].
const (
	DefaultMaxBodyBytes = 32 << 20
	DefaultMaxRows      = 1_000_000
	DefaultMaxColumns   = 10_000
	DefaultMaxCells     = 10_000_000
	// DefaultMaxResultCells is the default of [Limits.MaxResultCells].
	DefaultMaxResultCells = 2_000_000
	// DefaultMaxResponseBytes is the default of [Limits.MaxResponseBytes].
	DefaultMaxResponseBytes = 128 << 20
)

// Limits bound what one scoring request may hold. A zero field means its
// default. Exceeding any of them is answered with 413.
type Limits struct {
	// MaxBodyBytes bounds the request body (default 32 MiB, at most
	// 4 GiB − 1).
	MaxBodyBytes int64
	// MaxRows bounds the rows in "data" (default 1,000,000, at most
	// 2³¹ − 1).
	MaxRows int
	// MaxColumns bounds the distinct keys over all rows (default 10,000).
	MaxColumns int
	// MaxCells bounds rows × columns (default 10,000,000). The process
	// sees a dense table, so rows that each bring new keys would otherwise
	// turn a small body into a large table.
	MaxCells int
	// MaxResultCells bounds rows × result columns, the values the process
	// adds to the answer (default 2,000,000). The other limits count what
	// a request brings; this one counts what it makes the server build:
	// a model with many classes answers one column per class, so that a
	// small request would otherwise make a huge answer. It counts the
	// result columns only: the echoed input values are bounded by
	// MaxCells and their bytes by the body's, as they are echoed as sent.
	// A result column that replaces an input column counts as a result
	// column.
	//
	// The check comes before the process runs, from the result columns
	// its catalog entry declares ([process.ProcessInfo].Output, which a
	// model's schema fills); a process that declares none is checked on
	// what it returns, before anything of the answer is encoded, and is
	// told the limits ([process.Input].Limits) so that it can refuse
	// before it builds a result past them. Either way the answer is 413
	// too_many_result_cells naming the rows, the result columns and the
	// limit.
	//
	// The default lets through 500,000 rows of a binary classifier
	// (3 result columns) or 20,000 rows of a 100-class one, and refuses
	// 2,000 rows of a 1,000-class one: a request of a few hundred KiB
	// that would make an answer of about 80 MB and hold some 16 bytes of
	// results a cell, times the requests at once.
	MaxResultCells int
	// MaxResponseBytes bounds the bytes of the answer (default 128 MiB).
	// MaxResultCells bounds the result values, but not the result
	// columns' names, which every row repeats: a model whose classes have
	// long names makes a long answer of few cells. The bytes are judged
	// when MaxResultCells is, by a lower bound: in every row, each result
	// column's name in quotes, a colon and a value of one byte, which the
	// answer holds whatever else it does. So no answer is refused that
	// would be within the limit, and one let through is longer only by
	// its echoed input (bounded by the body) and its values beyond one
	// byte (at most 24 more a number, and its text). The answer is 413
	// response_too_large naming the bound, the rows, the result columns
	// and the limit.
	//
	// The default is above the bound of the answers MaxResultCells lets
	// through when names are of ordinary length (2,000,000 cells of names
	// of 60 bytes), and refuses 1,000 rows to a model of 1,000 classes
	// named in 200 bytes each, which would otherwise answer some 220 MB.
	MaxResponseBytes int64
}

// resolve returns l with defaults filled in, or an error for a negative or
// oversized field.
func (l Limits) resolve() (Limits, error) {
	switch {
	case l.MaxBodyBytes < 0 || l.MaxBodyBytes > wire.MaxBodyLimit:
		return l, fmt.Errorf("scoring: Limits.MaxBodyBytes %d is out of range (0 to %d)", l.MaxBodyBytes, int64(wire.MaxBodyLimit))
	case l.MaxRows < 0, l.MaxColumns < 0, l.MaxCells < 0, l.MaxResultCells < 0, l.MaxResponseBytes < 0:
		return l, errors.New("scoring: Limits fields must not be negative")
	case l.MaxRows > wire.MaxRowsLimit:
		return l, fmt.Errorf("scoring: Limits.MaxRows %d is out of range (at most %d)", l.MaxRows, wire.MaxRowsLimit)
	}
	if l.MaxBodyBytes == 0 {
		l.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if l.MaxRows == 0 {
		l.MaxRows = DefaultMaxRows
	}
	if l.MaxColumns == 0 {
		l.MaxColumns = DefaultMaxColumns
	}
	if l.MaxCells == 0 {
		l.MaxCells = DefaultMaxCells
	}
	if l.MaxResultCells == 0 {
		l.MaxResultCells = DefaultMaxResultCells
	}
	if l.MaxResponseBytes == 0 {
		l.MaxResponseBytes = DefaultMaxResponseBytes
	}
	return l, nil
}
