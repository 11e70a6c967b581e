package registry

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/scorehub/scorehub/registry/drift"
	"github.com/scorehub/scorehub/registry/process"
)

// Model is a model file's history under one name: its versions,
// numbered 1, 2, 3, … in the order uploaded, and the aliases that point at
// them. Its JSON form is how a [FileStore] keeps it (format 2).
type Model struct {
	Name string `json:"name"`
	// Versions are in ascending order of Version.
	Versions []ModelVersion `json:"versions"`
	// Aliases are in order of Name.
	Aliases []ModelAlias `json:"aliases"`
	// LastVersion is the highest version number the model has given: the
	// next upload is LastVersion+1, so that a deleted version's number is
	// never given to other content.
	LastVersion int `json:"lastVersion"`
	// Revision grows with every change to the model: a version added or
	// deleted, an alias written or deleted.
	Revision  uint64    `json:"revision"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// ModelVersion is one upload of a model: the artifact, addressed by its
// SHA-256, the metadata it came with and the schema derived from both,
// which never change; and the reference its drift is measured against,
// which may be replaced.
type ModelVersion struct {
	Version int `json:"version"`
	// SHA256 is the artifact's SHA-256 in lower-case hex: the name an
	// [ArtifactStore] keeps it under.
	SHA256   string                `json:"sha256"`
	Size     int64                 `json:"size"`
	Metadata process.ModelMetadata `json:"metadata"`
	Schema   process.ModelSchema   `json:"schema"`
	// Sample is example input as a client would post it in "data": the
	// first rows the upload was verified with ([MaxSampleRows] at most),
	// each with every input of the model, a missing value as null. Empty
	// when the upload had no verification: the test page then starts from
	// the sample the model's format gives.
	Sample json.RawMessage `json:"sample,omitempty"`
	// Reference is what the version's drift is measured against: the
	// distribution of its reference rows (uploaded with it, or put on it
	// later, see [Registry.PutModelReference]) or else of its
	// verification rows, with the model's predictions of them, or else
	// what the model's file declares of its inputs' values; nil when
	// there is none of them. It is the one part of a version that
	// changes.
	Reference *drift.Profile `json:"reference,omitempty"`
	CreatedAt time.Time      `json:"createdAt"`
}

// ModelAlias is a movable name for one version of a model, such as
// "production". Its Revision is its own, for writes that move it.
type ModelAlias struct {
	Name      string    `json:"name"`
	Version   int       `json:"version"`
	Revision  uint64    `json:"revision"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// Version returns version v.
func (m Model) Version(v int) (ModelVersion, bool) {
	for _, x := range m.Versions {
		if x.Version == v {
			return x.clone(), true
		}
	}
	return ModelVersion{}, false
}

// Alias returns the alias named name.
func (m Model) Alias(name string) (ModelAlias, bool) {
	for _, a := range m.Aliases {
		if a.Name == name {
			return a, true
		}
	}
	return ModelAlias{}, false
}

// clone returns a copy of m that shares no memory with it; its lists are
// never nil.
func (m Model) clone() Model {
	vs := make([]ModelVersion, len(m.Versions))
	for i, v := range m.Versions {
		vs[i] = v.clone()
	}
	m.Versions = vs
	m.Aliases = append(make([]ModelAlias, 0, len(m.Aliases)), m.Aliases...)
	return m
}

func (v ModelVersion) clone() ModelVersion {
	v.Metadata = v.Metadata.Clone()
	v.Schema = v.Schema.Clone()
	v.Sample = bytes.Clone(v.Sample)
	return v
}

// ModelRef is what an endpoint names instead of a process: a model and one
// of its aliases or versions. Exactly one of Alias and Version is set.
type ModelRef struct {
	Model   string
	Alias   string
	Version int
}

// ParseModelRef reads "name@alias" or "name@<version>": the model's name,
// and an alias (a valid name, see [ValidName], that is not all digits) or a
// version (a positive integer without leading zeros). It fails with an
// [*InvalidError] saying what is wrong.
func ParseModelRef(s string) (ModelRef, error) {
	name, after, ok := strings.Cut(s, "@")
	if !ok {
		return ModelRef{}, invalid("", "%q names no version or alias: write model@alias or model@version", s)
	}
	if !ValidName(name) {
		return ModelRef{}, invalid("", "%q is not a valid model name", name)
	}
	if allDigits(after) {
		v, err := strconv.Atoi(after)
		if err != nil || v < 1 || after[0] == '0' {
			return ModelRef{}, invalid("", "%q is not a version (a positive whole number without leading zeros)", after)
		}
		return ModelRef{Model: name, Version: v}, nil
	}
	if !ValidName(after) {
		return ModelRef{}, invalid("", "%q is not a valid alias name", after)
	}
	return ModelRef{Model: name, Alias: after}, nil
}

// String returns r as ParseModelRef reads it.
func (r ModelRef) String() string {
	if r.Alias != "" {
		return r.Model + "@" + r.Alias
	}
	return r.Model + "@" + strconv.Itoa(r.Version)
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// checkAliasName checks an alias's name: a valid name that is not all
// digits, which would read as a version.
func checkAliasName(pointer, s string) error {
	if err := checkName(pointer, s); err != nil {
		return err
	}
	if allDigits(s) {
		return invalid(pointer, "alias %q is all digits, which reads as a version number", s)
	}
	return nil
}

// validSHA256 reports whether s is a SHA-256 in lower-case hex.
func validSHA256(s string) bool {
	if len(s) != sha256.Size*2 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// sum256 returns the SHA-256 of b in lower-case hex.
func sum256(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// metaDigest identifies metadata by content: two that digest alike say the
// same thing (a nil list and an empty one alike).
func metaDigest(m process.ModelMetadata) string {
	b, err := json.Marshal(m)
	if err != nil {
		panic(err) // strings and lists of strings always encode
	}
	return sum256(b)
}

// validSample reports whether b is a JSON array of objects, as a sample
// is.
func validSample(b json.RawMessage) bool {
	var rows []map[string]json.RawMessage
	return json.Unmarshal(b, &rows) == nil && rows != nil
}

// compactSample returns a valid sample without insignificant space.
func compactSample(b json.RawMessage) json.RawMessage {
	if b == nil {
		return nil
	}
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		return b
	}
	return out.Bytes()
}

// sameMetadata reports whether a and b say the same.
func sameMetadata(a, b process.ModelMetadata) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// validate checks a stored model: names, version order, artifact sums and
// aliases that point at versions.
func (m *Model) validate() error {
	if err := checkName("/name", m.Name); err != nil {
		return err
	}
	if err := checkStoredRevision(m.Revision); err != nil {
		return err
	}
	prev := 0
	for i, v := range m.Versions {
		p := fmt.Sprintf("/versions/%d", i)
		if v.Version <= prev {
			return invalid(p+"/version", "version %d is not above the one before it (%d)", v.Version, prev)
		}
		prev = v.Version
		if !validSHA256(v.SHA256) {
			return invalid(p+"/sha256", "%q is not a SHA-256 in lower-case hex", v.SHA256)
		}
		if v.Size < 0 {
			return invalid(p+"/size", "negative size %d", v.Size)
		}
		if v.Sample != nil && !validSample(v.Sample) {
			return invalid(p+"/sample", "the sample is not a JSON array of row objects")
		}
	}
	if prev > m.LastVersion {
		return invalid("/lastVersion", "last version %d is below version %d", m.LastVersion, prev)
	}
	for i, a := range m.Aliases {
		p := fmt.Sprintf("/aliases/%d", i)
		if err := checkAliasName(p+"/name", a.Name); err != nil {
			return err
		}
		if i > 0 && m.Aliases[i-1].Name >= a.Name {
			return invalid(p+"/name", "alias %q is out of order or repeated", a.Name)
		}
		if err := checkStoredRevision(a.Revision); err != nil {
			return invalid(p+"/revision", "%s", err.(*InvalidError).Message)
		}
		if _, ok := m.Version(a.Version); !ok {
			return invalid(p+"/version", "alias %q points at version %d, which does not exist", a.Name, a.Version)
		}
	}
	return nil
}
