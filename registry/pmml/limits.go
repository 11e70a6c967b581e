package pmml

import (
	"github.com/scorehub/scorehub/registry/process"
)

// Limits bounds what [Format.Load] accepts, so that an upload cannot make
// the server spend unbounded memory or time. A zero (or negative) field
// takes its default.
type Limits struct {
	// MaxBytes bounds the file's size. Default 64 MiB.
	MaxBytes int64
	// MaxDepth bounds how deep XML elements nest, which also bounds the
	// depth of trees, predicates and expressions. Default 256.
	MaxDepth int
	// MaxNodes bounds the XML elements of the whole file. Default 4<<20.
	MaxNodes int
	// MaxFields bounds the data and derived fields of the file. Default
	// 10,000.
	MaxFields int
	// MaxSegments bounds the segments of all MiningModels together.
	// Default 100,000.
	MaxSegments int
	// MaxClasses bounds a classifier's classes. Default 1,000.
	MaxClasses int
}

// The defaults of [Limits]: generous for any model a PMML exporter writes
// for tabular data, tight enough to bound what a hostile file costs to load.
const (
	DefaultMaxBytes    = 64 << 20 // the default of Limits.MaxBytes
	DefaultMaxDepth    = 256      // the default of Limits.MaxDepth
	DefaultMaxNodes    = 4 << 20  // the default of Limits.MaxNodes
	DefaultMaxFields   = 10_000   // the default of Limits.MaxFields
	DefaultMaxSegments = 100_000  // the default of Limits.MaxSegments
	DefaultMaxClasses  = 1_000    // the default of Limits.MaxClasses
)

// withDefaults returns l with every zero field set to its default.
func (l Limits) withDefaults() Limits {
	set := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	set(&l.MaxDepth, DefaultMaxDepth)
	set(&l.MaxNodes, DefaultMaxNodes)
	set(&l.MaxFields, DefaultMaxFields)
	set(&l.MaxSegments, DefaultMaxSegments)
	set(&l.MaxClasses, DefaultMaxClasses)
	return l
}

// invalidf is an error matching process.ErrModelInvalid.
func invalidf(format string, args ...any) error {
	return process.ModelErrorf(process.ErrModelInvalid, format, args...)
}

// limitf is an error matching process.ErrModelLimit.
func limitf(format string, args ...any) error {
	return process.ModelErrorf(process.ErrModelLimit, format, args...)
}

// unsupported is an error matching process.ErrModelInvalid for something
// valid PMML this reader does not score; msg names it.
func unsupported(msg string) error {
	return process.ModelErrorf(process.ErrModelInvalid, "%s", msg)
}
