package registry

import (
	"bytes"
	"encoding/json"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/scorehub/scorehub/registry/drift"
	"github.com/scorehub/scorehub/registry/process"
)

// versionKey names one version of one model.
type versionKey struct {
	model   string
	version int
}

// versionInfo is what resolving an endpoint needs of a version without
// recomputing it per request: the key of its loaded form and the name its
// process goes by, and its sample.
type versionInfo struct {
	key     cacheKey
	process string // "model@version"
	sum     string
	meta    process.ModelMetadata
	sample  json.RawMessage // nil: the format's
	// reference is what the version's drift is measured against; nil
	// for a version uploaded without verification.
	reference *drift.Profile
}

func newVersionInfo(model string, v ModelVersion) versionInfo {
	return versionInfo{
		key:       cacheKey{sum: v.SHA256, meta: metaDigest(v.Metadata)},
		process:   model + "@" + strconv.Itoa(v.Version),
		sum:       v.SHA256,
		meta:      v.Metadata.Clone(),
		sample:    bytes.Clone(v.Sample),
		reference: v.Reference,
	}
}

// Model returns the model named name.
func (s *State) Model(name string) (Model, bool) {
	m, ok := s.models[name]
	if !ok {
		return Model{}, false
	}
	return m.clone(), true
}

// Models returns every model, sorted by name.
func (s *State) Models() []Model {
	out := make([]Model, 0, len(s.models))
	for _, m := range s.models {
		out = append(out, m.clone())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// resolveRef returns the version ref names on s, or an [*InvalidError]
// saying which part names nothing.
func (s *State) resolveRef(ref ModelRef) (versionInfo, error) {
	m, ok := s.models[ref.Model]
	if !ok {
		return versionInfo{}, invalid("", "names no model: %q", ref.Model)
	}
	v := ref.Version
	if ref.Alias != "" {
		a, ok := m.Alias(ref.Alias)
		if !ok {
			return versionInfo{}, invalid("", "model %q has no alias %q", ref.Model, ref.Alias)
		}
		v = a.Version
	}
	info, ok := s.keys[versionKey{ref.Model, v}]
	if !ok {
		return versionInfo{}, invalid("", "model %q has no version %d", ref.Model, v)
	}
	return info, nil
}

// ResolveModel returns the model version ref ("churn@production" or
// "churn@3") names on s, as "model@version". It fails with an
// [*InvalidError] saying which part names nothing.
func (s *State) ResolveModel(ref string) (string, error) {
	r, err := ParseModelRef(ref)
	if err != nil {
		return "", invalid("", "%v", err)
	}
	info, err := s.resolveRef(r)
	if err != nil {
		return "", err
	}
	return info.process, nil
}

// Reference returns the reference of the version the model reference
// ref names ("churn@production", "churn@3"), which its drift is measured
// against; nil when ref names no version s holds, or one without a
// reference.
func (s *State) Reference(ref string) *drift.Profile {
	r, err := ParseModelRef(ref)
	if err != nil {
		return nil
	}
	info, err := s.resolveRef(r)
	if err != nil {
		return nil
	}
	return info.reference
}

// checkModelRef reports a model reference that names nothing s holds, as
// an [*InvalidError] without a pointer saying which part of it: the
// message is the one the management API shows at the endpoint's model.
func (s *State) checkModelRef(ref string) error {
	r, err := ParseModelRef(ref)
	if err != nil {
		return err
	}
	m, ok := s.models[r.Model]
	switch {
	case !ok:
		return invalid("", "names no model: %q", r.Model)
	case r.Alias != "":
		if _, ok := m.Alias(r.Alias); !ok {
			return invalid("", "names no alias of model %q: %q", r.Model, r.Alias)
		}
	default:
		if _, ok := m.Version(r.Version); !ok {
			return invalid("", "names no version of model %q: %d", r.Model, r.Version)
		}
	}
	return nil
}

// endpointUsing returns the first endpoint, as "group/path/alias", whose
// model reference use accepts.
func (s *State) endpointUsing(use func(ModelRef) bool) (string, bool) {
	for _, d := range s.Deployments() {
		for _, e := range d.Endpoints {
			for _, ref := range e.Models() {
				if r, err := ParseModelRef(ref); err == nil && use(r) {
					return d.Group + "/" + d.Path + "/" + e.Alias, true
				}
			}
		}
	}
	return "", false
}

// identicalVersion returns the version of model name whose artifact and
// metadata are sum and meta.
func (s *State) identicalVersion(name, sum string, meta process.ModelMetadata) (ModelVersion, bool) {
	for _, v := range s.models[name].Versions {
		if v.SHA256 == sum && sameMetadata(v.Metadata, meta) {
			return v.clone(), true
		}
	}
	return ModelVersion{}, false
}

// withModel returns s with m stored in place of cur (the zero Model when
// m is new), its revision one higher and stamped now, and the change.
func (s *State) withModel(m Model, cur Model, exists bool, now time.Time) (*State, Change) {
	m.Revision, m.UpdatedAt = cur.Revision+1, now
	if !exists {
		m.CreatedAt = now
	}
	n := s.next()
	n.models = copyMap(s.models)
	n.models[m.Name] = m
	n.keys = copyMap(s.keys)
	for _, v := range cur.Versions {
		delete(n.keys, versionKey{m.Name, v.Version})
	}
	for _, v := range m.Versions {
		n.keys[versionKey{m.Name, v.Version}] = newVersionInfo(m.Name, v)
	}
	c := m.clone()
	return n, Change{Model: &c, Revision: cur.Revision}
}

// withModelVersion returns s with v added to the model name (created when
// it does not exist) as its next version, the change, and v as stored.
func (s *State) withModelVersion(name string, v ModelVersion, now time.Time) (*State, Change, ModelVersion, error) {
	if err := checkName("/name", name); err != nil {
		return nil, Change{}, ModelVersion{}, err
	}
	cur, exists := s.models[name]
	m := cur.clone()
	m.Name = name
	m.LastVersion++
	v = v.clone()
	v.Version, v.CreatedAt = m.LastVersion, now
	m.Versions = append(m.Versions, v)
	n, c := s.withModel(m, cur, exists, now)
	return n, c, v.clone(), nil
}

// withModelAlias returns s with the alias a of model written, the change,
// and a as stored.
func (s *State) withModelAlias(model string, a ModelAlias, now time.Time) (*State, Change, ModelAlias, error) {
	cur, exists := s.models[model]
	if !exists {
		return nil, Change{}, ModelAlias{}, errorf(ErrNotFound, "model %q does not exist", model)
	}
	if err := checkAliasName("/name", a.Name); err != nil {
		return nil, Change{}, ModelAlias{}, err
	}
	if _, ok := cur.Version(a.Version); !ok {
		return nil, Change{}, ModelAlias{}, invalid("/version", "model %q has no version %d", model, a.Version)
	}
	old, had := cur.Alias(a.Name)
	if err := checkRevision("alias", model+"@"+a.Name, a.Revision, old.Revision, had); err != nil {
		return nil, Change{}, ModelAlias{}, err
	}
	a.Revision, a.CreatedAt, a.UpdatedAt = old.Revision+1, now, now
	if had {
		a.CreatedAt = old.CreatedAt
	}
	m := cur.clone()
	m.Aliases = m.Aliases[:0]
	for _, x := range cur.Aliases {
		if x.Name != a.Name {
			m.Aliases = append(m.Aliases, x)
		}
	}
	m.Aliases = append(m.Aliases, a)
	sort.Slice(m.Aliases, func(i, j int) bool { return m.Aliases[i].Name < m.Aliases[j].Name })
	n, c := s.withModel(m, cur, true, now)
	return n, c, a, nil
}

// withoutModelAlias returns s without the alias of model.
func (s *State) withoutModelAlias(model, alias string, rev uint64, now time.Time) (*State, Change, error) {
	cur, exists := s.models[model]
	if !exists {
		return nil, Change{}, errorf(ErrNotFound, "model %q does not exist", model)
	}
	old, had := cur.Alias(alias)
	if !had {
		return nil, Change{}, errorf(ErrNotFound, "model %q has no alias %q", model, alias)
	}
	if err := checkRevision("alias", model+"@"+alias, rev, old.Revision, true); err != nil {
		return nil, Change{}, err
	}
	if ep, ok := s.endpointUsing(func(r ModelRef) bool { return r.Model == model && r.Alias == alias }); ok {
		return nil, Change{}, errorf(ErrInUse, "alias %s@%s is used by endpoint %s", model, alias, ep)
	}
	m := cur.clone()
	m.Aliases = m.Aliases[:0]
	for _, x := range cur.Aliases {
		if x.Name != alias {
			m.Aliases = append(m.Aliases, x)
		}
	}
	n, c := s.withModel(m, cur, true, now)
	return n, c, nil
}

// withoutModelVersion returns s without version of model.
func (s *State) withoutModelVersion(model string, version int, now time.Time) (*State, Change, error) {
	cur, exists := s.models[model]
	if !exists {
		return nil, Change{}, errorf(ErrNotFound, "model %q does not exist", model)
	}
	if _, ok := cur.Version(version); !ok {
		return nil, Change{}, errorf(ErrNotFound, "model %q has no version %d", model, version)
	}
	for _, a := range cur.Aliases {
		if a.Version == version {
			return nil, Change{}, errorf(ErrInUse, "version %d of model %q is what alias %q points at", version, model, a.Name)
		}
	}
	if ep, ok := s.endpointUsing(func(r ModelRef) bool { return r.Model == model && r.Alias == "" && r.Version == version }); ok {
		return nil, Change{}, errorf(ErrInUse, "version %s@%d is used by endpoint %s", model, version, ep)
	}
	m := cur.clone()
	m.Versions = m.Versions[:0]
	for _, v := range cur.Versions {
		if v.Version != version {
			m.Versions = append(m.Versions, v.clone())
		}
	}
	n, c := s.withModel(m, cur, true, now)
	return n, c, nil
}

// withoutModel returns s without the model name, its versions and its
// aliases.
func (s *State) withoutModel(name string, rev uint64) (*State, Change, error) {
	cur, exists := s.models[name]
	if !exists {
		return nil, Change{}, errorf(ErrNotFound, "model %q does not exist", name)
	}
	if err := checkRevision("model", name, rev, cur.Revision, true); err != nil {
		return nil, Change{}, err
	}
	if ep, ok := s.endpointUsing(func(r ModelRef) bool { return r.Model == name }); ok {
		return nil, Change{}, errorf(ErrInUse, "model %q is used by endpoint %s", name, ep)
	}
	n := s.next()
	n.models = copyMap(s.models)
	delete(n.models, name)
	n.keys = copyMap(s.keys)
	for _, v := range cur.Versions {
		delete(n.keys, versionKey{name, v.Version})
	}
	c := cur.clone()
	return n, Change{Model: &c, Delete: true, Revision: cur.Revision}, nil
}

// referenced reports whether a version of a model in s has the artifact
// sum.
func (s *State) referenced(sum string) bool {
	for _, info := range s.keys {
		if info.sum == sum {
			return true
		}
	}
	return false
}

// modelVersion returns version of model.
func (s *State) modelVersion(model string, version int) (ModelVersion, bool) {
	m, ok := s.models[model]
	if !ok {
		return ModelVersion{}, false
	}
	return m.Version(version)
}

// withVersionReference returns s with p as the reference of version of
// model, the change, and the version as stored. sum is the version's
// artifact as the reference was profiled by: a version deleted and its
// number given to other content since is not found.
func (s *State) withVersionReference(model string, version int, sum string, p *drift.Profile, now time.Time) (*State, Change, ModelVersion, error) {
	cur, exists := s.models[model]
	if !exists {
		return nil, Change{}, ModelVersion{}, errorf(ErrNotFound, "model %q does not exist", model)
	}
	m := cur.clone()
	i := slices.IndexFunc(m.Versions, func(v ModelVersion) bool { return v.Version == version && v.SHA256 == sum })
	if i < 0 {
		return nil, Change{}, ModelVersion{}, errorf(ErrNotFound, "model %q has no version %d", model, version)
	}
	m.Versions[i].Reference = p
	n, c := s.withModel(m, cur, true, now)
	return n, c, m.Versions[i].clone(), nil
}
