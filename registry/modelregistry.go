package registry

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/scorehub/scorehub/registry/process"
)

// MaxSampleRows is how many of an upload's verification rows its version
// keeps as its sample ([ModelVersion.Sample]): enough to show a few kinds
// of row, few enough for a test page's request body.
const MaxSampleRows = 3

// AddModelVersion uploads artifact as the next version of the model name,
// creating the model when it does not exist, and returns the version as
// stored and whether it was created.
//
// The catalog's formats load artifact with meta ([process.Catalog.LoadModel]) before
// anything is written, and, when u has a verification, the loaded model
// must reproduce its expected predictions ([ErrVerification] otherwise). An
// upload whose artifact and metadata are those of an existing version of
// the model writes nothing and returns that version, created false; but
// for u's reference rows, which replace that version's reference.
// Otherwise the artifact is stored (durably, for a durable store) before
// the commit that adds the version, numbered one above the highest number
// the model has ever given. The first [MaxSampleRows] verification rows
// become the version's sample. The version's reference, which its drift
// is measured against, is the profile of u's reference rows (which must
// be profiled, [ErrReference] otherwise) or else of its verification
// rows (where they can be); u may be nil.
//
// It fails with a plain error when the Registry's store is no
// [ArtifactStore]: such a store keeps no models.
func (r *Registry) AddModelVersion(ctx context.Context, name string, artifact []byte, meta process.ModelMetadata, u *Upload) (ModelVersion, bool, error) {
	if err := checkName("/name", name); err != nil {
		return ModelVersion{}, false, err
	}
	as := r.models.store
	if as == nil {
		return ModelVersion{}, false, errNoArtifacts
	}
	meta = meta.Clone()
	sum := sum256(artifact)
	key := cacheKey{sum: sum, meta: metaDigest(meta)}
	// Parsing can be slow: outside the write, and kept for the endpoints
	// that will use the version.
	r.models.pin(key)
	defer r.models.unpin(key, r.w.State)
	e, err := r.models.get(key, func() (*process.LoadedModel, error) { return r.catalog.LoadModel(artifact, meta) })
	if err != nil {
		return ModelVersion{}, false, err
	}
	var (
		sample   json.RawMessage
		verified *process.Table // the model's answers to the verification rows
	)
	if u != nil && u.Verification != nil {
		v := u.Verification
		if verified, err = verify(ctx, e.model, v); err != nil {
			return ModelVersion{}, false, err
		}
		sample = e.model.Schema.SampleRows(v.Rows, MaxSampleRows)
	}
	reference, err := u.reference(ctx, e.model, verified)
	if err != nil {
		return ModelVersion{}, false, err
	}
	var (
		out     ModelVersion
		created bool
	)
	err = r.Update(ctx, func(tx *Tx) error {
		if old, ok := tx.st.identicalVersion(name, sum, meta); ok {
			out, created = old, false
			if u == nil || u.Reference == nil {
				return nil
			}
			// The same file again with reference rows: they are its
			// reference from now on, as PutModelReference would make them.
			next, c, stored, err := tx.st.withVersionReference(name, old.Version, old.SHA256, reference, tx.now)
			out = stored
			return tx.set(next, c, err)
		}
		if err := as.PutArtifact(ctx, sum, artifact); err != nil {
			return err
		}
		next, c, stored, err := tx.st.withModelVersion(name, ModelVersion{
			SHA256: sum, Size: int64(len(artifact)), Metadata: meta, Schema: e.model.Schema, Sample: sample, Reference: reference,
		}, tx.now)
		out, created = stored, true
		return tx.set(next, c, err)
	})
	if err != nil {
		return ModelVersion{}, false, err
	}
	return out, created, nil
}

// PutModelAlias points the alias a.Name of model at version a.Version and
// returns the alias as stored. a.Revision follows the rules of [Registry]
// (0 creates, [AnyRevision], or the alias's current revision, else a
// [*ConflictError] of Kind "alias"); the model must exist ([ErrNotFound])
// and have the version (an [*InvalidError] at "/version"); an alias name is
// a valid name that is not all digits.
//
// The version is loaded before the alias moves, so that every endpoint on
// the alias switches to a model ready to score in the snapshot that moves
// it; a version that cannot be loaded fails with [ErrUnavailable] and the
// alias stays where it was.
func (r *Registry) PutModelAlias(ctx context.Context, model string, a ModelAlias) (ModelAlias, error) {
	// Loading can be slow: before the write where the version exists now,
	// and again (at once, from the cache) on the state the write decides on.
	if err := r.ready(r.Snapshot().state, model, a.Version); err != nil {
		return ModelAlias{}, err
	}
	return update(ctx, r, func(tx *Tx) (ModelAlias, error) { return tx.PutModelAlias(model, a) })
}

// ready loads version of model of st, and fails with ErrUnavailable when
// it cannot be loaded. A version st does not have is left for the write's
// rules to refuse.
func (r *Registry) ready(st *State, model string, version int) error {
	info, ok := st.keys[versionKey{model, version}]
	if !ok {
		return nil
	}
	if _, err := r.models.stored(info); err != nil {
		return unavailable(fmt.Sprintf("model %s cannot be loaded in this server; the alias was not moved", info.process), err)
	}
	return nil
}

// DeleteModelAlias removes the alias of model, which must be at revision
// (or [AnyRevision]). It fails with [ErrInUse] while an endpoint names
// model@alias.
func (r *Registry) DeleteModelAlias(ctx context.Context, model, alias string, revision uint64) error {
	return r.Update(ctx, func(tx *Tx) error { return tx.DeleteModelAlias(model, alias, revision) })
}

// DeleteModelVersion removes version of model. It fails with [ErrInUse]
// while an alias points at the version or an endpoint names it
// (model@version). The version's number is never given again. Its
// artifact is deleted when no other version uses it.
func (r *Registry) DeleteModelVersion(ctx context.Context, model string, version int) error {
	return r.Update(ctx, func(tx *Tx) error { return tx.DeleteModelVersion(model, version) })
}

// DeleteModel removes the model name, which must be at revision (or
// [AnyRevision]), with its versions and aliases. It fails with [ErrInUse]
// while an endpoint names the model. A model created again under the name
// starts at version 1.
func (r *Registry) DeleteModel(ctx context.Context, name string, revision uint64) error {
	return r.Update(ctx, func(tx *Tx) error { return tx.DeleteModel(name, revision) })
}

// dropArtifacts deletes the artifacts among sums that no version of the
// published state uses. The write that dropped them is committed, so a
// failure here is not the caller's: the artifact stays as an orphan, which
// a FileStore removes when it is next opened.
func (r *Registry) dropArtifacts(ctx context.Context, sums []string) {
	if r.models.store == nil || len(sums) == 0 {
		return
	}
	st := r.Snapshot().state
	for _, sum := range sums {
		if !st.referenced(sum) {
			_ = r.models.store.DeleteArtifact(context.WithoutCancel(ctx), sum)
		}
	}
}

// ModelArtifact returns the artifact of version of model, as uploaded. It
// fails with [ErrNotFound] when there is no such version.
func (r *Registry) ModelArtifact(ctx context.Context, model string, version int) ([]byte, error) {
	m, ok := r.Snapshot().state.models[model]
	if !ok {
		return nil, errorf(ErrNotFound, "model %q does not exist", model)
	}
	v, ok := m.Version(version)
	if !ok {
		return nil, errorf(ErrNotFound, "model %q has no version %d", model, version)
	}
	if r.models.store == nil {
		return nil, errNoArtifacts
	}
	return r.models.store.Artifact(ctx, v.SHA256)
}

// warm loads every model version an endpoint or an alias of st uses, so
// that the first requests after a start do not wait for the parse. A
// version that cannot be loaded is left for its requests to report.
func (r *Registry) warm(st *State) {
	for _, d := range st.deployments {
		for _, e := range d.Endpoints {
			if e.Model == "" {
				continue
			}
			if ref, err := ParseModelRef(e.Model); err == nil {
				if info, err := st.resolveRef(ref); err == nil {
					_, _ = r.models.stored(info)
				}
			}
		}
	}
	for _, m := range st.models {
		for _, a := range m.Aliases {
			if info, ok := st.keys[versionKey{m.Name, a.Version}]; ok {
				_, _ = r.models.stored(info)
			}
		}
	}
}

// EndpointProcess returns the process e runs: the catalog's process it
// names, or the process of the model version it names, resolved on the
// snapshot (an alias to the version it points at), named "model@version",
// with the version's sample where it has one, and answering contributions
// after its results when e asks for explanations ([Explain]).
// It fails with [ErrUnavailable] when the catalog has no such process, the
// snapshot no such model, alias or version, or the version cannot be loaded
// (the error then wraps the cause, for the log), or e asks for
// explanations of a model that cannot give them.
func (s *Snapshot) EndpointProcess(e Endpoint) (process.ProcessInfo, error) {
	p, _, err := s.endpointProcess(e)
	return endpointColumns(p, e), err
}

// endpointColumns returns p declaring, after its others, the columns e
// asks for: answeredBy ([Endpoint.AnsweredBy]), then outlier
// ([Endpoint.OutlierColumn]); scoring adds them.
func endpointColumns(p process.ProcessInfo, e Endpoint) process.ProcessInfo {
	if e.Model == "" || (!e.AnsweredBy && !e.OutlierColumn) {
		return p
	}
	p.Output = slices.Clone(p.Output)
	if e.AnsweredBy {
		p.Output = append(p.Output, process.ColumnSpec{Name: AnsweredByColumn, Kind: process.Text})
	}
	if e.OutlierColumn {
		p.Output = append(p.Output, process.ColumnSpec{Name: OutlierColumn, Kind: process.Text})
	}
	return p
}

// endpointProcess is EndpointProcess, also returning a model endpoint's
// schema.
func (s *Snapshot) endpointProcess(e Endpoint) (process.ProcessInfo, *process.ModelSchema, error) {
	if e.Model == "" {
		p, ok := s.catalog.Lookup(e.Process)
		if !ok {
			return process.ProcessInfo{}, nil, errorf(ErrUnavailable, "the endpoint's process is not available in this server")
		}
		return p, nil, nil
	}
	ref, err := ParseModelRef(e.Model)
	if err != nil {
		return process.ProcessInfo{}, nil, errorf(ErrUnavailable, "the endpoint's model %q is not available in this server", e.Model)
	}
	info, err := s.state.resolveRef(ref)
	if err != nil {
		return process.ProcessInfo{}, nil, errorf(ErrUnavailable, "the endpoint's model is not available: %s", err.(*InvalidError).Message)
	}
	entry, err := s.models.stored(info)
	if err != nil {
		return process.ProcessInfo{}, nil, unavailable(fmt.Sprintf("model %s cannot be loaded in this server", info.process), err)
	}
	p := entry.info
	p.Name = info.process
	if info.sample != nil {
		p.Sample = info.sample
	}
	schema := &entry.model.Schema
	if e.Explain != nil {
		p, err = explained(p, *schema, *e.Explain)
	}
	return p, schema, err
}
