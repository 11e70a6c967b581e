package process

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/scorehub/scorehub/problem"
)

// ModelMetadata is what an upload says about a model file that the file
// itself does not: names its producer never wrote into it. Every field is
// optional; a format fills in what is missing from the file where it can.
//
// Its JSON form is how stores keep it and how the management API takes it.
type ModelMetadata struct {
	// Label names the predicted attribute: the result column is
	// "prediction(<Label>)". Empty means "label".
	Label string `json:"label,omitempty"`
	// Classes names a classifier's classes in the order of the model's
	// outputs. Empty means the names the file holds, else "0", "1", ….
	// Every format follows one rule ([ClassNames]): where the model's
	// classes are the integers 0..k-1 in that order (every XGBoost
	// classifier; an ONNX classifier with classlabels_int64s, as
	// scikit-learn writes one trained on such labels; a PMML target of an
	// integer dataType whose values are 0..k-1), Classes renames them, one
	// name per class in that order. Classes the file names otherwise (by
	// text, or by other integers) can only be repeated: other names, or
	// a count other than the model's, are refused.
	Classes []string `json:"classes,omitempty"`
	// Features names the model's inputs in the model's order; requests
	// carry them as columns. Empty means the names the file holds, else the
	// producer's defaults (XGBoost: "f0", "f1", …). When given, there must
	// be exactly as many as the model has inputs.
	Features []string `json:"features,omitempty"`
	// OptionalFeatures names the inputs a request may leave out of every
	// row, for a model meant to be scored without them (each a missing
	// value, as the format defines). Every other input is required: a
	// request none of whose rows has it is refused, so that a misspelt
	// column is not scored as a row of missing values.
	OptionalFeatures []string `json:"optionalFeatures,omitempty"`
	// Lenient makes every input optional, as OptionalFeatures would name
	// them all.
	Lenient bool `json:"lenient,omitempty"`
	// Description is free text shown with the version.
	Description string `json:"description,omitempty"`
}

// Clone returns a copy of m that shares no memory with it.
func (m ModelMetadata) Clone() ModelMetadata {
	m.Classes = append([]string(nil), m.Classes...)
	m.Features = append([]string(nil), m.Features...)
	m.OptionalFeatures = append([]string(nil), m.OptionalFeatures...)
	return m
}

// LabelOrDefault returns m.Label, or "label" when it is empty.
func (m ModelMetadata) LabelOrDefault() string {
	if m.Label == "" {
		return "label"
	}
	return m.Label
}

// Task is what a model predicts.
type Task string

const (
	// Classification models answer "prediction(<label>)" (text: the most
	// probable class) and one "confidence(<class>)" per class.
	Classification Task = "classification"
	// Regression models answer "prediction(<label>)" (a number).
	Regression Task = "regression"
	// Clustering models answer "cluster" (text: the id or name of the
	// cluster a row falls in).
	Clustering Task = "clustering"
)

// ModelSchema is what a format derives from a model file and its metadata:
// what the model is, the columns it reads and the columns it answers. It is
// kept with the version and shown by the management API.
type ModelSchema struct {
	// Format is the [ModelFormat]'s name, such as "xgboost".
	Format string `json:"format"`
	// Producer names the program that wrote the file and its version where
	// the file tells, such as "xgboost 1.7.4".
	Producer string `json:"producer,omitempty"`
	// Objective is the model's own name for what it optimises, such as
	// "binary:logistic".
	Objective string `json:"objective,omitempty"`
	Task      Task   `json:"task"`
	// Label and Classes are the names the result columns use.
	Label   string   `json:"label"`
	Classes []string `json:"classes,omitempty"`
	// Inputs are the columns the model reads, in its order, as the file
	// declares them. A column absent from a row is a missing value; one
	// absent from every row of a request is refused unless the metadata
	// makes it optional (see [ModelMetadata.OptionalFeatures]): the
	// process of a model [Catalog.LoadModel] loads marks the others
	// Required in its [ProcessInfo.Input].
	Inputs []ColumnSpec `json:"inputs"`
	// Domains are what the file declares of the inputs' valid values
	// ([Domain]), in the order of Inputs, for those inputs it declares
	// something of; empty when it declares nothing (XGBoost, ONNX).
	Domains []Domain `json:"domains,omitempty"`
	// Outputs are the result columns, in the order they are answered.
	Outputs []ColumnSpec `json:"outputs"`
	// Trees counts the trees of a tree ensemble; 0 for other models.
	Trees int `json:"trees,omitempty"`
	// Unexplained says, in a sentence, why the model cannot explain its
	// predictions ([Explainer]) when its format can explain others of
	// its kind but not this one: "its trees carry no covers", say. Empty
	// for a model that explains them, and for a kind of model that never
	// does.
	Unexplained string `json:"unexplained,omitempty"`
	// Warnings say, each in a sentence, where the format read the file
	// leniently: something its producer got wrong that the format read as
	// other evaluators do, because the file leaves one reading (a PMML
	// Array holding fewer values than its n says). A file that would
	// leave a doubt about an answer is refused instead. Empty for most
	// files.
	Warnings []string `json:"warnings,omitempty"`
}

// Clone returns a copy of s that shares no memory with it.
func (s ModelSchema) Clone() ModelSchema {
	s.Classes = append([]string(nil), s.Classes...)
	s.Warnings = append([]string(nil), s.Warnings...)
	s.Inputs = append([]ColumnSpec(nil), s.Inputs...)
	s.Outputs = append([]ColumnSpec(nil), s.Outputs...)
	if s.Domains != nil {
		domains := make([]Domain, len(s.Domains))
		for i, d := range s.Domains {
			domains[i] = d.clone()
		}
		s.Domains = domains
	}
	return s
}

// LoadedModel is a model file turned into something that scores: its
// schema and its process.
type LoadedModel struct {
	Schema ModelSchema
	// Process scores tables whose columns are named as Schema.Inputs
	// (matched by name; other columns are ignored) and answers the columns
	// of Schema.Outputs. A format's Process only computes, as
	// [ProcessInfo.Prompt] describes, and is safe for concurrent use.
	Process Process
	// RowWise says that Process makes the promise of
	// [ProcessInfo.RowWise]: each row is answered from that row alone,
	// always with the same columns. A format sets it once a test has
	// scored row ranges of one table at once and found the rows answered
	// as the whole table answers them.
	RowWise bool
	// Sample, when set, is example input as a client would post it in
	// "data": a JSON array of row objects. Nil means one row built from
	// Schema.Inputs.
	Sample json.RawMessage

	// inputs, when set by Catalog.LoadModel, are Schema.Inputs with the
	// metadata's requirements: what ProcessInfo checks requests with.
	inputs []ColumnSpec
}

// ProcessInfo returns m as a catalog entry named name, ready for
// [Catalog.Register]: its schema checks requests, its sample starts the test
// page, and it runs on the request's goroutine, a large request's rows in
// parts on several when the model is RowWise.
func (m *LoadedModel) ProcessInfo(name string) ProcessInfo {
	sample := m.Sample
	if sample == nil {
		sample = m.Schema.sampleRow()
	}
	desc := m.Schema.Format + " " + string(m.Schema.Task) + " model"
	if m.Schema.Objective != "" {
		desc += " (" + m.Schema.Objective + ")"
	}
	inputs := m.inputs
	if inputs == nil {
		inputs = m.Schema.Inputs
	}
	return ProcessInfo{
		Name:        name,
		Description: desc,
		Input:       slices.Clone(inputs),
		Output:      append([]ColumnSpec(nil), m.Schema.Outputs...),
		Sample:      sample,
		Process:     m.Process,
		Prompt:      true,
		RowWise:     m.RowWise,
	}
}

// sampleRow is one row with a value of the right kind for every input.
func (s ModelSchema) sampleRow() json.RawMessage {
	var b bytes.Buffer
	b.WriteString("[{")
	for i, c := range s.Inputs {
		if i > 0 {
			b.WriteByte(',')
		}
		name, _ := json.Marshal(c.Name)
		b.Write(name)
		if c.Kind == Text {
			b.WriteString(`:""`)
		} else {
			b.WriteString(`:0`)
		}
	}
	b.WriteString("}]")
	return b.Bytes()
}

// SampleRows returns the first n rows of t (all when it has fewer) as a
// client would post them in "data", each with every input of s in the
// model's order: its value in t, or null where t has none (a missing
// value, which still counts as sent). Other columns of t are left out. It
// returns nil when t has no rows.
func (s ModelSchema) SampleRows(t *Table, n int) json.RawMessage {
	n = min(n, t.Rows())
	if n <= 0 {
		return nil
	}
	var b bytes.Buffer
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('{')
		for j, in := range s.Inputs {
			if j > 0 {
				b.WriteByte(',')
			}
			name, _ := json.Marshal(in.Name)
			b.Write(name)
			b.WriteByte(':')
			b.Write(sampleValue(t, in.Name, i))
		}
		b.WriteByte('}')
	}
	b.WriteByte(']')
	return b.Bytes()
}

// sampleValue is row i of t's column name as JSON: null when t has no
// such column or no value there, or a number JSON cannot hold.
func sampleValue(t *Table, name string, i int) []byte {
	c, ok := t.Lookup(name)
	if !ok || c.IsMissing(i) {
		return []byte("null")
	}
	var v any
	if c.Kind == Text {
		v = c.Texts[i]
	} else {
		v = c.Numbers[i]
	}
	out, err := json.Marshal(v)
	if err != nil { // ±Inf
		return []byte("null")
	}
	return out
}

// check reports a LoadedModel a format should never return.
func (m *LoadedModel) check(format string) error {
	if m == nil || m.Process == nil {
		return fmt.Errorf("registry: format %q loaded no process", format)
	}
	if len(m.Schema.Outputs) == 0 {
		return fmt.Errorf("registry: format %q loaded a model without outputs", format)
	}
	for _, specs := range [][]ColumnSpec{m.Schema.Inputs, m.Schema.Outputs} {
		seen := make(map[string]bool, len(specs))
		for _, s := range specs {
			if s.Name == "" || seen[s.Name] || (s.Kind != Number && s.Kind != Text) {
				return fmt.Errorf("registry: format %q loaded a model with an empty, repeated or untyped column %q", format, s.Name)
			}
			seen[s.Name] = true
		}
	}
	if err := checkDomains(m.Schema.Domains, m.Schema.Inputs); err != nil {
		return fmt.Errorf("registry: format %q loaded a model where %w", format, err)
	}
	return nil
}

// RequiredInputs returns the inputs of s as the process of a model loaded
// with meta checks requests: each Required unless meta makes it optional
// (OptionalFeatures, Lenient). An optional feature that names no input is
// an error of kind [ErrModelInvalid].
func (s ModelSchema) RequiredInputs(meta ModelMetadata) ([]ColumnSpec, error) {
	optional := make(map[string]bool, len(meta.OptionalFeatures))
	for _, name := range meta.OptionalFeatures {
		optional[name] = true
	}
	inputs := make([]ColumnSpec, len(s.Inputs))
	for i, c := range s.Inputs {
		c.Required = !meta.Lenient && !optional[c.Name]
		inputs[i] = c
		delete(optional, c.Name)
	}
	if len(optional) > 0 {
		return nil, ModelErrorf(ErrModelInvalid, "the metadata's optionalFeatures name %q, which the model has no input of",
			slices.Sorted(maps.Keys(optional)))
	}
	return inputs, nil
}

// notUTF8 returns the first text of m that is not UTF-8, and what it is;
// "" when there is none.
func (m ModelMetadata) notUTF8() (what, text string) {
	texts := []namedText{{"label", m.Label}, {"description", m.Description}}
	texts = appendNamed(texts, "class", m.Classes...)
	texts = appendNamed(texts, "feature", m.Features...)
	texts = appendNamed(texts, "optional feature", m.OptionalFeatures...)
	return firstNotUTF8(texts)
}

// notUTF8 returns the first text of s that is not UTF-8, and what it is;
// "" when there is none. A file may hold such bytes (UBJSON's strings are
// bytes), and no client could read them back as JSON.
func (s ModelSchema) notUTF8() (what, text string) {
	texts := []namedText{{"producer", s.Producer}, {"objective", s.Objective}, {"label", s.Label}}
	texts = appendNamed(texts, "class", s.Classes...)
	for _, c := range s.Inputs {
		texts = append(texts, namedText{"input column", c.Name})
	}
	for _, c := range s.Outputs {
		texts = append(texts, namedText{"result column", c.Name})
	}
	for _, d := range s.Domains {
		texts = appendNamed(texts, "valid value of input "+d.Name, d.Values...)
	}
	return firstNotUTF8(texts)
}

// namedText is a text of a model and what it is, for a message.
type namedText struct{ what, text string }

func appendNamed(texts []namedText, what string, list ...string) []namedText {
	for _, t := range list {
		texts = append(texts, namedText{what, t})
	}
	return texts
}

func firstNotUTF8(texts []namedText) (what, text string) {
	for _, t := range texts {
		if !utf8.ValidString(t.text) {
			return t.what, t.text
		}
	}
	return "", ""
}

// ModelFormat reads model files of one kind: a sub-package per format
// (package xgboost, for example) provides one, and a host registers it with
// [Catalog.RegisterFormat]. Implementations must be safe for concurrent use
// and must never run code a file carries.
type ModelFormat interface {
	// Name is the format's short name, such as "xgboost". It is unique
	// within a catalog and valid as a name (see [ValidName]).
	Name() string
	// Detect reports whether artifact is a file of this format, judging by
	// its content (never a file name). It is cheap: it reads the first
	// bytes, and a true answer is a claim Load then tests in full.
	Detect(artifact []byte) bool
	// Load parses artifact, with meta supplying what the file lacks, under
	// the format's own limits, and returns the model. A file that is not a
	// valid model fails with an error matching [ErrModelInvalid], one past
	// a limit with [ErrModelLimit], and one using something the format does
	// not support (an objective, an operator) with [ErrModelInvalid]
	// naming it; made with [ModelErrorf]. Load never returns a model that
	// would score differently from its producer.
	Load(artifact []byte, meta ModelMetadata) (*LoadedModel, error)
}

// ModelErrorf returns an error matching kind ([ErrModelFormat],
// [ErrModelInvalid], [ErrModelLimit] or [registry.ErrVerification]) whose client
// message is the formatted sentence. Formats use it to say exactly what in a
// file they refuse.
func ModelErrorf(kind *problem.Error, format string, args ...any) error {
	return errorf(kind, format, args...)
}

// sniffUnsafe names the kind of a file that runs code when loaded (a Python
// pickle, joblib's compressed pickles), or returns "".
func sniffUnsafe(b []byte) string {
	switch {
	case len(b) >= 2 && b[0] == 0x80 && b[1] >= 2 && b[1] <= 5:
		return "a Python pickle (or joblib) file"
	case bytes.HasPrefix(b, []byte{0x5a, 0x46, 0x30, 0x31}) && bytes.Contains(b[:min(len(b), 64)], []byte("joblib")):
		return "a joblib file"
	case len(b) >= 2 && b[0] == 0x78 && (b[1] == 0x01 || b[1] == 0x5e || b[1] == 0x9c || b[1] == 0xda):
		return "a zlib-compressed (joblib) file"
	case bytes.HasPrefix(b, []byte{0x1f, 0x8b}):
		return "a gzip-compressed file"
	case bytes.HasPrefix(b, []byte("PK\x03\x04")):
		return "a ZIP archive"
	}
	return ""
}

// RegisterFormat adds f to the formats c loads models of. It fails when f
// is nil or its name is invalid or taken.
func (c *Catalog) RegisterFormat(f ModelFormat) error {
	if f == nil {
		return fmt.Errorf("registry: nil model format")
	}
	name := f.Name()
	if err := checkName("/name", name); err != nil {
		return fmt.Errorf("registry: model format: %w", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, g := range c.formats {
		if g.Name() == name {
			return errorf(ErrExists, "model format %q already exists", name)
		}
	}
	c.formats = append(c.formats[:len(c.formats):len(c.formats)], f)
	return nil
}

// Formats returns the registered model formats, in the order registered.
func (c *Catalog) Formats() []ModelFormat {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]ModelFormat(nil), c.formats...)
}

// LoadModel detects the format of artifact among the registered ones (the
// first whose Detect claims it) and loads it with meta. A file of no
// registered format, or one that runs code when loaded (a Python pickle or
// joblib file), fails with [ErrModelFormat] without being parsed; metadata,
// or a name the file gives a column, class or label, that is not UTF-8
// text fails with [ErrModelInvalid].
func (c *Catalog) LoadModel(artifact []byte, meta ModelMetadata) (*LoadedModel, error) {
	if kind := sniffUnsafe(artifact); kind != "" {
		return nil, ModelErrorf(ErrModelFormat, "the file is %s; such files can run code when loaded and are never read: save the model in its own format instead (XGBoost: save_model to .json or .ubj; LightGBM: save_model to .txt)", kind)
	}
	if what, text := meta.notUTF8(); what != "" {
		return nil, ModelErrorf(ErrModelInvalid, "the metadata's %s %q is not UTF-8 text", what, text)
	}
	formats := c.Formats()
	for _, f := range formats {
		if !f.Detect(artifact) {
			continue
		}
		m, err := f.Load(artifact, meta.Clone())
		if err != nil {
			return nil, err
		}
		if err := m.check(f.Name()); err != nil {
			return nil, err
		}
		if what, text := m.Schema.notUTF8(); what != "" {
			return nil, ModelErrorf(ErrModelInvalid, "the model's %s %q is not UTF-8 text", what, text)
		}
		if m.inputs, err = m.Schema.RequiredInputs(meta); err != nil {
			return nil, err
		}
		m.Schema.Format = f.Name()
		return m, nil
	}
	names := make([]string, len(formats))
	for i, f := range formats {
		names[i] = f.Name()
	}
	if len(names) == 0 {
		return nil, ModelErrorf(ErrModelFormat, "this server reads no model formats")
	}
	return nil, ModelErrorf(ErrModelFormat, "the file is not a model of a format this server reads (%s)", strings.Join(names, ", "))
}
