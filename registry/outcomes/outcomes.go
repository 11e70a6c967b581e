package outcomes

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/scorehub/scorehub/registry/process"
)

// Prediction is what one model answered for one row that carries an ID:
// the champion's answer, or a challenger's, of an endpoint that names a
// row-ID column ([registry.Endpoint.RowID]).
type Prediction struct {
	Endpoint process.EndpointRef `json:"endpoint"`
	// RowID is the row's value of the endpoint's row-ID column, as text
	// (a number in its shortest form).
	RowID string `json:"rowId"`
	// Model is the version that answered, "churn@3"; Role says how:
	// "champion", "shadow" or "split".
	Model string `json:"model"`
	Role  string `json:"role"`
	// Label and Confidences are a classifier's answer: the predicted
	// class and the confidence of each of Classes, in order. Value is a
	// regressor's prediction. A missing answer is a Label "" and no
	// Confidences, or a NaN Value.
	Label       string    `json:"label,omitempty"`
	Classes     []string  `json:"classes,omitempty"`
	Confidences []float64 `json:"confidences,omitempty"`
	Value       float64   `json:"value,omitempty"`
	// At is when the row was scored.
	At time.Time `json:"at"`
}

// NumberID returns the row ID of a row whose ID column holds the number
// v: its shortest form, so that 7 and 7.0 name one row, whether it comes
// from a scored row or a feedback batch.
func NumberID(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// Outcome is the actual outcome of a row, fed back after the fact: a
// class (Label) for a classifier, a number (Value) for a regressor.
type Outcome struct {
	RowID string `json:"rowId"`
	// IsLabel says which of Label and Value holds the outcome.
	IsLabel bool    `json:"isLabel"`
	Label   string  `json:"label,omitempty"`
	Value   float64 `json:"value,omitempty"`
}

// Joined is a prediction whose row has an outcome.
type Joined struct {
	Prediction
	Actual Outcome `json:"actual"`
	// FedAt is when the outcome was fed back.
	FedAt time.Time `json:"fedAt"`
}

// Applied is what a feedback batch did: of its outcomes, how many
// matched rows the log holds predictions for, how many named rows it
// holds none for (never scored with an ID, or dropped as the log
// filled), and how many named rows that had an outcome already, which
// is kept. Every outcome of the batch is counted once, so the three add
// up to its length.
type Applied struct {
	Matched    int `json:"matched"`
	Unknown    int `json:"unknown"`
	Duplicates int `json:"duplicates"`
	// UnknownIDs are the first of the unknown row IDs, each once, in
	// batch order; at most MaxListedUnknown.
	UnknownIDs []string `json:"unknownIds,omitempty"`
}

// MaxListedUnknown bounds Applied.UnknownIDs.
const MaxListedUnknown = 20

// Store keeps the predictions of rows with IDs and their outcomes, in
// bounded space: a store drops its oldest records first, once they are
// older than its retention or once it holds more than its size limit.
// It is safe for concurrent use, and several replicas may share one
// store of a database.
//
// A row is an endpoint's row ID. Its outcome belongs to the row: it is
// joined with every prediction of the row the store holds, those
// appended after the outcome included, and leaves with the last of them;
// a prediction of the row ID appended after that starts a new row,
// waiting for an outcome again.
type Store interface {
	// Append adds predictions. A prediction of a row ID and model the
	// store holds already replaces nothing: the first is kept.
	Append(ctx context.Context, ps []Prediction) error
	// Feedback records the outcomes of endpoint's rows, all of them or,
	// on an error, none. The first outcome of a row ID is kept; a later
	// one counts as a duplicate and changes nothing, so a batch sent
	// twice counts once. An outcome of a row the store holds no
	// prediction of is counted as unknown and not kept.
	Feedback(ctx context.Context, endpoint process.EndpointRef, outs []Outcome, at time.Time) (Applied, error)
	// Joined returns endpoint's predictions whose row has an outcome fed
	// back at or after since (the zero time: every one the store holds),
	// oldest outcome first; outcomes fed at the same time in the order
	// they were recorded, and the predictions of a row in the order they
	// were appended.
	Joined(ctx context.Context, endpoint process.EndpointRef, since time.Time) ([]Joined, error)
	// Pending counts endpoint's rows that have predictions and no
	// outcome.
	Pending(ctx context.Context, endpoint process.EndpointRef) (int, error)
	// Close releases the store; later calls fail with ErrClosed.
	Close() error
}

// Options bound a store. Replicas that share a store should be given the
// same bounds: each applies its own.
type Options struct {
	// Retention is how long a record is kept after its row was scored
	// (the prediction's At, by Now); 0 or less means DefaultRetention.
	Retention time.Duration
	// MaxRecords bounds the predictions kept, across endpoints; past it
	// the earliest appended leave first. 0 or less means
	// DefaultMaxRecords.
	MaxRecords int
	// Now is the clock the bounds are applied by; nil means time.Now.
	Now func() time.Time
}

// The defaults of [Options].
const (
	DefaultRetention  = 30 * 24 * time.Hour
	DefaultMaxRecords = 1_000_000
)

// PruneInterval bounds how long a store may hold records past its bounds.
// A store that applies them in bulk, as the PostgreSQL store does, applies
// them at the latest on the first Append once this much of its clock has
// passed since it last did; until then the records past a bound are still
// held, and counted, matched and joined. The memory and file stores apply
// the bounds on every call.
const PruneInterval = time.Minute

// WithDefaults returns o with the defaults in place of its zero (or
// negative) fields, so that every store reads the same bounds from it.
func (o Options) WithDefaults() Options {
	if o.Retention <= 0 {
		o.Retention = DefaultRetention
	}
	if o.MaxRecords <= 0 {
		o.MaxRecords = DefaultMaxRecords
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// ErrClosed is the error of a store used after Close.
var ErrClosed = errors.New("outcomes: store closed")
