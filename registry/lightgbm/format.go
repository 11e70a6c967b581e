package lightgbm

import (
	"bytes"

	"github.com/scorehub/scorehub/registry/process"
)

// Limits bounds what [Format.Load] accepts, so that an upload cannot make
// the server spend unbounded memory or time. Each is checked while the
// file is read, before anything is sized by what the file declares. A zero
// (or negative) field takes its default.
type Limits struct {
	// MaxBytes bounds the file's size. Default 256 MiB.
	MaxBytes int64
	// MaxTrees bounds the trees of the ensemble. Default 100,000.
	MaxTrees int
	// MaxLeaves bounds the leaves of one tree. Default 1<<17 (LightGBM's
	// own limit on num_leaves).
	MaxLeaves int
	// MaxDepth bounds the depth of a tree (a root alone has depth 0).
	// Default 128.
	MaxDepth int
	// MaxFeatures bounds the features the model reads. Default 10,000.
	MaxFeatures int
	// MaxClasses bounds a classifier's classes. Default 1,000.
	MaxClasses int
	// MaxCategoryWords bounds the 32-bit words of the category bitsets of
	// one tree. Default 1<<20.
	MaxCategoryWords int
}

// The defaults of [Limits].
const (
	DefaultMaxBytes         = 256 << 20 // the default of Limits.MaxBytes
	DefaultMaxTrees         = 100_000   // the default of Limits.MaxTrees
	DefaultMaxLeaves        = 1 << 17   // the default of Limits.MaxLeaves
	DefaultMaxDepth         = 128       // the default of Limits.MaxDepth
	DefaultMaxFeatures      = 10_000    // the default of Limits.MaxFeatures
	DefaultMaxClasses       = 1_000     // the default of Limits.MaxClasses
	DefaultMaxCategoryWords = 1 << 20   // the default of Limits.MaxCategoryWords
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
	set(&l.MaxTrees, DefaultMaxTrees)
	set(&l.MaxLeaves, DefaultMaxLeaves)
	set(&l.MaxDepth, DefaultMaxDepth)
	set(&l.MaxFeatures, DefaultMaxFeatures)
	set(&l.MaxClasses, DefaultMaxClasses)
	set(&l.MaxCategoryWords, DefaultMaxCategoryWords)
	return l
}

// Format reads LightGBM model files. Its zero value is ready to use with
// the default limits. A Format is safe for concurrent use, and so is every
// model it loads.
type Format struct {
	Limits Limits
}

var _ process.ModelFormat = Format{}

// Name returns "lightgbm".
func (Format) Name() string { return "lightgbm" }

// Detect reports whether artifact looks like a LightGBM text model: a
// first line "tree" followed by a line "version=…".
func (Format) Detect(artifact []byte) bool {
	b := artifact[:min(len(artifact), 64)]
	rest, ok := bytes.CutPrefix(b, []byte("tree\n"))
	if !ok {
		rest, ok = bytes.CutPrefix(b, []byte("tree\r\n"))
	}
	return ok && bytes.HasPrefix(rest, []byte("version="))
}

// Load reads a LightGBM text model (Booster.save_model, the command-line
// program's output_model) and returns it ready to score. meta names what
// the file does not: the label, the classes and, when given, the
// features. Anything the reader does not support is refused with an
// error naming it.
func (f Format) Load(artifact []byte, meta process.ModelMetadata) (*process.LoadedModel, error) {
	_, lm, err := f.load(artifact, meta)
	return lm, err
}

// load is Load, returning the model behind the process too.
func (f Format) load(artifact []byte, meta process.ModelMetadata) (*model, *process.LoadedModel, error) {
	lim := f.Limits.withDefaults()
	if int64(len(artifact)) > lim.MaxBytes {
		return nil, nil, process.ModelErrorf(process.ErrModelLimit,
			"the file has %d bytes, more than the limit of %d", len(artifact), lim.MaxBytes)
	}
	if !f.Detect(artifact) {
		return nil, nil, process.ModelErrorf(process.ErrModelFormat,
			"the file is not a LightGBM text model (its first lines are not \"tree\" and \"version=…\")")
	}
	raw, err := parse(artifact, lim)
	if err != nil {
		return nil, nil, err
	}
	m, err := build(raw, lim)
	if err != nil {
		return nil, nil, err
	}
	lm, err := m.loaded(raw, meta, lim)
	return m, lm, err
}

// invalid returns an ErrModelInvalid error whose message is the formatted
// sentence.
func invalid(format string, args ...any) error {
	return process.ModelErrorf(process.ErrModelInvalid, format, args...)
}

// limit returns an ErrModelLimit error whose message is the formatted
// sentence.
func limit(format string, args ...any) error {
	return process.ModelErrorf(process.ErrModelLimit, format, args...)
}
