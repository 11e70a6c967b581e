package onnx

import (
	"github.com/scorehub/scorehub/registry/process"
)

// Limits bounds what [Format.Load] accepts, so that an upload cannot make
// the server spend unbounded memory or time. A zero (or negative) field
// takes its default.
type Limits struct {
	// MaxBytes bounds the file's size. Default 256 MiB.
	MaxBytes int64
	// MaxNodes bounds the graph's nodes (and, apart, its initializers).
	// Default 10,000.
	MaxNodes int
	// MaxTreeNodes bounds the nodes of one tree ensemble operator, all its
	// trees together. Default 1<<22.
	MaxTreeNodes int
	// MaxTrees bounds the trees of one tree ensemble. Default 100,000.
	MaxTrees int
	// MaxDepth bounds the depth of a tree (a root alone has depth 0).
	// Default 1,000.
	MaxDepth int
	// MaxFeatures bounds the graph's inputs, the columns the model reads
	// and the width (values per row) of every tensor the graph computes.
	// Default 10,000.
	MaxFeatures int
	// MaxClasses bounds a classifier's classes. Default 1,000.
	MaxClasses int
	// MaxElements bounds the values the file's tensors and attributes hold,
	// all together. Default 1<<25.
	MaxElements int
}

// The defaults of [Limits]: generous for any tabular model scikit-learn
// trains in memory, tight enough to bound what a hostile file costs to
// load.
const (
	DefaultMaxBytes     = 256 << 20 // the default of Limits.MaxBytes
	DefaultMaxNodes     = 10_000    // the default of Limits.MaxNodes
	DefaultMaxTreeNodes = 1 << 22   // the default of Limits.MaxTreeNodes
	DefaultMaxTrees     = 100_000   // the default of Limits.MaxTrees
	DefaultMaxDepth     = 1_000     // the default of Limits.MaxDepth
	DefaultMaxFeatures  = 10_000    // the default of Limits.MaxFeatures
	DefaultMaxClasses   = 1_000     // the default of Limits.MaxClasses
	DefaultMaxElements  = 1 << 25   // the default of Limits.MaxElements
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
	set(&l.MaxNodes, DefaultMaxNodes)
	set(&l.MaxTreeNodes, DefaultMaxTreeNodes)
	set(&l.MaxTrees, DefaultMaxTrees)
	set(&l.MaxDepth, DefaultMaxDepth)
	set(&l.MaxFeatures, DefaultMaxFeatures)
	set(&l.MaxClasses, DefaultMaxClasses)
	set(&l.MaxElements, DefaultMaxElements)
	return l
}

func errInvalid(format string, args ...any) error {
	return process.ModelErrorf(process.ErrModelInvalid, format, args...)
}

func errLimit(format string, args ...any) error {
	return process.ModelErrorf(process.ErrModelLimit, format, args...)
}
