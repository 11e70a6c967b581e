package xgboost

import (
	"bytes"
	"fmt"

	"github.com/scorehub/scorehub/registry/process"
)

// Limits bounds what [Format.Load] accepts, so that an upload cannot make
// the server spend unbounded memory or time. A zero (or negative) field
// takes its default.
type Limits struct {
	// MaxBytes bounds the file's size. Default 256 MiB.
	MaxBytes int64
	// MaxTrees bounds the trees of the ensemble. Default 100,000.
	MaxTrees int
	// MaxNodes bounds the nodes of one tree. Default 1<<20.
	MaxNodes int
	// MaxDepth bounds the depth of a tree (a root alone has depth 0).
	// Default 128.
	MaxDepth int
	// MaxFeatures bounds the features the model reads. Default 10,000.
	MaxFeatures int
	// MaxClasses bounds a classifier's classes. Default 1,000.
	MaxClasses int
}

// The defaults of [Limits]: generous for any model XGBoost trains in
// memory, tight enough to bound what a hostile file costs to load.
const (
	DefaultMaxBytes    = 256 << 20 // the default of Limits.MaxBytes
	DefaultMaxTrees    = 100_000   // the default of Limits.MaxTrees
	DefaultMaxNodes    = 1 << 20   // the default of Limits.MaxNodes
	DefaultMaxDepth    = 128       // the default of Limits.MaxDepth
	DefaultMaxFeatures = 10_000    // the default of Limits.MaxFeatures
	DefaultMaxClasses  = 1_000     // the default of Limits.MaxClasses
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
	set(&l.MaxNodes, DefaultMaxNodes)
	set(&l.MaxDepth, DefaultMaxDepth)
	set(&l.MaxFeatures, DefaultMaxFeatures)
	set(&l.MaxClasses, DefaultMaxClasses)
	return l
}

// Format reads XGBoost model files. Its zero value is ready to use with the
// default limits. A Format is safe for concurrent use, and so is every
// model it loads.
type Format struct {
	Limits Limits
}

var _ process.ModelFormat = Format{}

// Name returns "xgboost".
func (Format) Name() string { return "xgboost" }

// Detect reports whether artifact looks like an XGBoost model saved by
// save_model: a JSON object whose first bytes hold the key "learner", or a
// UBJSON object whose first key is "learner" or "version".
func (Format) Detect(artifact []byte) bool {
	return isUBJSON(artifact) || isJSON(artifact)
}

// isJSON reports whether b starts as XGBoost's JSON does.
func isJSON(b []byte) bool {
	b = bytes.TrimLeft(b[:min(len(b), 512)], " \t\r\n")
	if len(b) < 2 || b[0] != '{' {
		return false
	}
	rest := bytes.TrimLeft(b[1:], " \t\r\n")
	return len(rest) > 0 && rest[0] == '"' && bytes.Contains(b, []byte(`"learner"`))
}

// isUBJSON reports whether b starts as XGBoost's UBJSON does.
func isUBJSON(b []byte) bool {
	if len(b) < 2 || b[0] != '{' {
		return false
	}
	switch b[1] {
	case 'i', 'U', 'I', 'l', 'L', '#', '$':
	default:
		return false
	}
	r := newUBJReader(b[:min(len(b), 64)])
	if r.beginObject() != nil {
		return false
	}
	k, ok, err := r.key()
	return err == nil && ok && (string(k) == "learner" || string(k) == "version")
}

// Load reads an XGBoost model saved as JSON or UBJSON (told apart by
// content) and returns it ready to score. meta names what the file does
// not: the label, the classes and, when given, the features. Anything the
// reader does not support is refused with an error naming it.
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
	var r reader
	switch {
	case isUBJSON(artifact):
		r = newUBJReader(artifact)
	case isJSON(artifact):
		r = newJSONReader(artifact)
	default:
		return nil, nil, process.ModelErrorf(process.ErrModelFormat,
			"the file is not an XGBoost model saved as JSON or UBJSON")
	}
	w := &walker{r: r, lim: lim}
	raw, err := w.decode()
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

// producer names the program that wrote the file, from its version.
func producer(version []int64) string {
	if len(version) == 0 {
		return "xgboost"
	}
	s := "xgboost "
	for i, v := range version {
		if i > 0 {
			s += "."
		}
		s += fmt.Sprint(v)
	}
	return s
}
