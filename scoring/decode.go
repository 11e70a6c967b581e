package scoring

import (
	"io"

	"github.com/scorehub/scorehub/registry/process"
	"github.com/scorehub/scorehub/scoring/internal/wire"
)

// Request is a scoring request's rows, decoded by [Decode] as the handler
// decodes a request's body, and what a job's result needs to echo every
// input value exactly as it was sent.
//
// A Request is not safe for concurrent use. Its Table is immutable and may
// be shared and kept; everything else belongs to the Request.
type Request struct {
	// Table holds one column per distinct key of the rows, in order of
	// first appearance. Numbers are float64, text (booleans included, as
	// "true" and "false") is string; null and absent keys are missing
	// values. A column whose every value is null is Text, unless the
	// schema of the process a job runs declares it a Number: [Jobs.Submit]
	// replaces Table with the table the process sees.
	Table *process.Table

	in *wire.Request
}

// Decode reads a scoring request body from r and decodes it in one pass:
// {"data":[{...},...]} with any other top-level keys ignored. It reads at
// most lim.MaxBodyBytes (+1, to tell a body that is too large).
//
// Every fault of the request is a [*problem.Error], answered as the
// handler answers it: malformed JSON (including trailing commas, comments,
// NaN, single quotes, invalid UTF-8 and data after the top-level object),
// a duplicate key, a missing or non-array "data", a row that is not an
// object, a nested object or array as a value, a column with both numbers
// and text, an exceeded limit. Invalid limits are a plain error.
func Decode(r io.Reader, lim Limits) (*Request, error) {
	lim, err := lim.resolve()
	if err != nil {
		return nil, err
	}
	in, err := wire.Decode(r, wire.Limits(lim))
	if err != nil {
		return nil, err
	}
	return &Request{Table: in.Table, in: in}, nil
}
