package payloads

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/scorehub/scorehub/registry/process"
)

// Record is one scored row as the log keeps it.
type Record struct {
	// Seq numbers the record in its store: assigned by Append, ascending
	// in the order records were appended, never reused; it is the cursor
	// of [Store.Page]. Append ignores what it is given.
	Seq int64 `json:"seq"`
	// Endpoint is the endpoint that scored the row; Append refuses a
	// record without one.
	Endpoint process.EndpointRef `json:"endpoint"`
	// Model is the version that answered, "churn@3"; empty for a
	// process endpoint.
	Model string `json:"model,omitempty"`
	// At is when the row was scored; the retention counts from it.
	At time.Time `json:"at"`
	// Row is a JSON object: the row's inputs and results, redacted by
	// the caller as the endpoint's policy says. A store keeps it without
	// its insignificant whitespace and returns it so, its names, their
	// order, its strings and numbers exactly as given.
	Row json.RawMessage `json:"row"`
}

// Store keeps the sampled rows of endpoints in bounded space: a store
// drops its oldest records first, once they are older than its retention
// or once it holds more than its byte bound. It is safe for concurrent
// use; several replicas may share one store of a database.
type Store interface {
	// Append adds records, numbering them in order. A batch that holds a
	// record the store cannot keep (see [ErrInvalid]) is refused whole,
	// before anything is stored. Appending no records does nothing.
	Append(ctx context.Context, rs []Record) error
	// Page returns up to limit (1 to MaxPage) of endpoint's records with
	// Seq greater than after, oldest first, and whether more of them
	// follow. After 0 starts at the oldest the store holds; the Seq of the
	// last record of a page starts the next. A record older than the
	// retention is never returned, though a store may hold it a while.
	Page(ctx context.Context, endpoint process.EndpointRef, after int64, limit int) ([]Record, bool, error)
	// Close releases the store; later calls fail with ErrClosed.
	Close() error
}

// MaxPage bounds the limit of [Store.Page].
const MaxPage = 1000

// MaxRecordBytes bounds a record's size: the length of its JSON line as
// the file store writes it (see [Options.MaxBytes]). Append refuses a
// longer record, and one longer than the store's MaxBytes.
const MaxRecordBytes = 1 << 20

// Options bound a store. Replicas that share a store should be given the
// same bounds: each applies its own.
type Options struct {
	// Retention is how long a record is kept after its At, by Now; 0 or
	// less means DefaultRetention.
	Retention time.Duration
	// MaxBytes bounds the bytes the log holds across endpoints; past it
	// the oldest records leave first. A record counts as the length of
	// its JSON line, seq and newline included, as the file store writes
	// it. 0 or less means DefaultMaxBytes.
	MaxBytes int64
	// Now is the clock the bounds are applied by; nil means time.Now.
	Now func() time.Time
}

// The defaults of [Options].
const (
	DefaultRetention = 7 * 24 * time.Hour
	DefaultMaxBytes  = 256 << 20
)

// PruneInterval bounds how long a store that applies its bounds in bulk,
// as the PostgreSQL store does, may hold records past the byte bound: it
// applies the bounds at the latest on the first Append once this much of
// its clock has passed since it last did. The memory and file stores
// apply them on every Append.
const PruneInterval = time.Minute

// WithDefaults returns o with the defaults in place of its zero (or
// negative) fields, so that every store reads the same bounds from it.
func (o Options) WithDefaults() Options {
	if o.Retention <= 0 {
		o.Retention = DefaultRetention
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// ErrClosed is the error of a store used after Close.
var ErrClosed = errors.New("payloads: store closed")

// ErrInvalid is what the error of a call with an argument no store takes
// is (errors.Is): a Page limit outside 1 to MaxPage, or an appended record
// without an endpoint (a Group, Path and Alias), with text that is not
// UTF-8 or holds a NUL byte in its endpoint or model, with a time outside
// the years 0 to 9999, with a Row that is not one JSON object (RFC 8259,
// in UTF-8, without a name twice in an object), or longer than
// MaxRecordBytes or the store's MaxBytes.
var ErrInvalid = errors.New("payloads: invalid argument")

// ErrBacklog is the error of an Append that a file store refuses because
// the disk has not kept up: the records it has yet to write would pass
// the bound of its memory. Nothing of the batch is stored; a later Append
// may succeed.
var ErrBacklog = errors.New("payloads: the log's writer is behind")
