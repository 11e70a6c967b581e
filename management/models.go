package management

import (
	"bytes"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/scorehub/scorehub/internal/httperr"
	"github.com/scorehub/scorehub/problem"
	"github.com/scorehub/scorehub/registry"
)

// DefaultMaxModelBytes bounds the body of a model upload when
// [Config.MaxModelBytes] is zero: 64 MiB.
const DefaultMaxModelBytes = 64 << 20

// modelRoutes are the routes of the model registry: any valid token reads
// models, versions and aliases; an administrator's uploads, moves aliases,
// removes, and downloads an artifact.
func modelRoutes() []route {
	return []route{
		{http.MethodGet, "/api/v1/models", readAccess, (*Handler).listModels},
		{http.MethodGet, "/api/v1/models/{name}", readAccess, (*Handler).getModel},
		{http.MethodDelete, "/api/v1/models/{name}", writeAccess, (*Handler).deleteModel},
		{http.MethodGet, "/api/v1/models/{name}/versions", readAccess, (*Handler).listModelVersions},
		{http.MethodPost, "/api/v1/models/{name}/versions", uploadAccess, (*Handler).uploadModelVersion},
		{http.MethodGet, "/api/v1/models/{name}/versions/{version}", readAccess, (*Handler).getModelVersion},
		{http.MethodDelete, "/api/v1/models/{name}/versions/{version}", writeAccess, (*Handler).deleteModelVersion},
		{http.MethodGet, "/api/v1/models/{name}/versions/{version}/artifact", adminReadAccess, (*Handler).getModelArtifact},
		{http.MethodPut, "/api/v1/models/{name}/versions/{version}/reference", uploadAccess, (*Handler).putModelReference},
		{http.MethodGet, "/api/v1/models/{name}/aliases/{alias}", readAccess, (*Handler).getModelAlias},
		{http.MethodPut, "/api/v1/models/{name}/aliases/{alias}", writeAccess, (*Handler).putModelAlias},
		{http.MethodDelete, "/api/v1/models/{name}/aliases/{alias}", writeAccess, (*Handler).deleteModelAlias},
	}
}

// modelJSON is a model as the API shows it: its versions in ascending
// order and its aliases by name.
type modelJSON struct {
	Name      string             `json:"name"`
	Versions  []modelVersionJSON `json:"versions"`
	Aliases   []modelAliasJSON   `json:"aliases"`
	Revision  uint64             `json:"revision"`
	CreatedAt time.Time          `json:"createdAt"`
	UpdatedAt time.Time          `json:"updatedAt"`
}

// modelVersionJSON is one immutable version of a model: what the upload
// said (label, classes, description) and what the registry derived from
// the file. aliases names the model's aliases that point at it; sample
// holds the first rows its upload was verified with.
type modelVersionJSON struct {
	Model     string       `json:"model"`
	Version   int          `json:"version"`
	SHA256    string       `json:"sha256"`
	Size      int64        `json:"size"`
	Format    string       `json:"format"`
	Producer  string       `json:"producer"`
	Objective string       `json:"objective"`
	Task      string       `json:"task"`
	Label     string       `json:"label"`
	Classes   []string     `json:"classes"`
	Inputs    []columnJSON `json:"inputs"`
	Outputs   []columnJSON `json:"outputs"`
	Trees     int          `json:"trees"`
	// Warnings are the format's, where it read the file leniently; absent
	// when there are none.
	Warnings    []string       `json:"warnings,omitempty"`
	Description string         `json:"description"`
	Aliases     []string       `json:"aliases"`
	Sample      jsontext.Value `json:"sample,omitzero"`
	// Reference is what the version's drift is measured against; absent
	// when it has none.
	Reference *referenceJSON `json:"reference,omitzero"`
	CreatedAt time.Time      `json:"createdAt"`
}

// modelAliasJSON is an alias of a model: a movable name of one of its
// versions.
type modelAliasJSON struct {
	Model     string    `json:"model"`
	Alias     string    `json:"alias"`
	Version   int       `json:"version"`
	Revision  uint64    `json:"revision"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

func modelView(m registry.Model) modelJSON {
	out := modelJSON{
		Name:      m.Name,
		Versions:  make([]modelVersionJSON, len(m.Versions)),
		Aliases:   make([]modelAliasJSON, len(m.Aliases)),
		Revision:  m.Revision,
		CreatedAt: m.CreatedAt,
		UpdatedAt: m.UpdatedAt,
	}
	for i, v := range m.Versions {
		out.Versions[i] = modelVersionView(m, v)
	}
	for i, a := range m.Aliases {
		out.Aliases[i] = modelAliasView(m.Name, a)
	}
	return out
}

func modelVersionView(m registry.Model, v registry.ModelVersion) modelVersionJSON {
	aliases := []string{}
	for _, a := range m.Aliases {
		if a.Version == v.Version {
			aliases = append(aliases, a.Name)
		}
	}
	classes := v.Schema.Classes
	if classes == nil {
		classes = []string{}
	}
	// The inputs as requests are checked against them: the file's, each
	// required unless the metadata makes it optional. The version was
	// loaded with its metadata, so it names no other input.
	inputs, err := v.Schema.RequiredInputs(v.Metadata)
	if err != nil {
		inputs = v.Schema.Inputs
	}
	return modelVersionJSON{
		Model:       m.Name,
		Version:     v.Version,
		SHA256:      v.SHA256,
		Size:        v.Size,
		Format:      v.Schema.Format,
		Producer:    v.Schema.Producer,
		Objective:   v.Schema.Objective,
		Task:        string(v.Schema.Task),
		Label:       v.Schema.Label,
		Classes:     classes,
		Inputs:      columnsView(inputs),
		Outputs:     columnsView(v.Schema.Outputs),
		Trees:       v.Schema.Trees,
		Warnings:    v.Schema.Warnings,
		Description: v.Metadata.Description,
		Aliases:     aliases,
		Sample:      jsontext.Value(v.Sample),
		Reference:   referenceView(v.Reference),
		CreatedAt:   v.CreatedAt,
	}
}

func modelAliasView(model string, a registry.ModelAlias) modelAliasJSON {
	return modelAliasJSON{
		Model:     model,
		Alias:     a.Name,
		Version:   a.Version,
		Revision:  a.Revision,
		CreatedAt: a.CreatedAt,
		UpdatedAt: a.UpdatedAt,
	}
}

// model returns the stored model the URL names, or a 404, also for a model
// the caller may not see (see viewer).
func (h *Handler) model(r *http.Request) (registry.Model, error) {
	name := r.PathValue("name")
	st := h.reg.Snapshot().State()
	m, ok := st.Model(name)
	if !ok || !viewerOf(r, st).models()(name) {
		return registry.Model{}, notFound("model", name)
	}
	return m, nil
}

// versionParam reads the version the URL names: a positive integer, or
// the 404 of a version no model can have.
func versionParam(r *http.Request) (int, error) {
	s := r.PathValue("version")
	v, err := strconv.Atoi(s)
	if err != nil || v < 1 || s[0] == '+' || s[0] == '0' {
		return 0, httperr.Newf(problem.NotFound,
			"no version %q of model %q: versions are numbered 1, 2, …", s, r.PathValue("name"))
	}
	return v, nil
}

// modelVersion returns the stored model and version the URL names, or a
// 404.
func (h *Handler) modelVersion(r *http.Request) (registry.Model, registry.ModelVersion, error) {
	v, err := versionParam(r)
	if err != nil {
		return registry.Model{}, registry.ModelVersion{}, err
	}
	m, err := h.model(r)
	if err != nil {
		return registry.Model{}, registry.ModelVersion{}, err
	}
	mv, ok := m.Version(v)
	if !ok {
		return registry.Model{}, registry.ModelVersion{}, httperr.Newf(problem.NotFound, "model %q has no version %d", m.Name, v)
	}
	return m, mv, nil
}

// listModels is GET /api/v1/models: the models the caller may see (see
// viewer) sorted by name, one page at a time (?page=, from 0, and ?size=,
// 20 by default and at most 1000).
func (h *Handler) listModels(w http.ResponseWriter, r *http.Request) error {
	page, size, err := pageParams(r.URL.Query())
	if err != nil {
		return err
	}
	st := h.reg.Snapshot().State()
	sees := viewerOf(r, st).models()
	var seen []registry.Model
	for _, m := range st.Models() {
		if sees(m.Name) {
			seen = append(seen, m)
		}
	}
	return writeJSON(w, http.StatusOK, pageOf(seen, page, size, modelView))
}

// getModel is GET /api/v1/models/{name}.
func (h *Handler) getModel(w http.ResponseWriter, r *http.Request) error {
	m, err := h.model(r)
	if err != nil {
		return err
	}
	setETag(w, m.Revision)
	return writeJSON(w, http.StatusOK, modelView(m))
}

// deleteModel is DELETE /api/v1/models/{name}: the model, its versions,
// aliases and artifacts go; 409 in_use while an endpoint names it.
func (h *Handler) deleteModel(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	pre, err := parsePrecondition(r, 0, "")
	if err != nil {
		return err
	}
	err = h.reg.Update(r.Context(), func(tx *registry.Tx) error {
		cur, exists := tx.State().Model(name)
		if !exists {
			return notFound("model", name)
		}
		want, err := pre.revision("model", name, true, cur.Revision, registry.AnyRevision)
		if err != nil {
			return err
		}
		return tx.DeleteModel(name, want)
	})
	if err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// listModelVersions is GET /api/v1/models/{name}/versions: the model's
// versions in ascending order, one page at a time.
func (h *Handler) listModelVersions(w http.ResponseWriter, r *http.Request) error {
	page, size, err := pageParams(r.URL.Query())
	if err != nil {
		return err
	}
	m, err := h.model(r)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, pageOf(m.Versions, page, size, func(v registry.ModelVersion) modelVersionJSON {
		return modelVersionView(m, v)
	}))
}

// getModelVersion is GET /api/v1/models/{name}/versions/{version}.
func (h *Handler) getModelVersion(w http.ResponseWriter, r *http.Request) error {
	m, v, err := h.modelVersion(r)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, modelVersionView(m, v))
}

// deleteModelVersion is DELETE /api/v1/models/{name}/versions/{version}:
// 409 in_use while an alias or an endpoint names the version. A version
// is immutable, so it has no revision to match.
func (h *Handler) deleteModelVersion(w http.ResponseWriter, r *http.Request) error {
	m, v, err := h.modelVersion(r)
	if err != nil {
		return err
	}
	if err := h.reg.DeleteModelVersion(r.Context(), m.Name, v.Version); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// getModelArtifact is GET /api/v1/models/{name}/versions/{version}/artifact:
// the file as it was uploaded, for an administrator. Its ETag is its
// sha256, which never changes.
func (h *Handler) getModelArtifact(w http.ResponseWriter, r *http.Request) error {
	m, v, err := h.modelVersion(r)
	if err != nil {
		return err
	}
	data, err := h.reg.ModelArtifact(r.Context(), m.Name, v.Version)
	if err != nil {
		return err
	}
	contentType, ext := artifactType(v.Schema.Format, data)
	hd := w.Header()
	hd.Set("Content-Type", contentType)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Content-Length", strconv.Itoa(len(data)))
	hd.Set("ETag", `"`+v.SHA256+`"`)
	// Names are valid: a filename needs no quoting beyond the quotes.
	hd.Set("Content-Disposition", `attachment; filename="`+m.Name+"-"+strconv.Itoa(v.Version)+"."+ext+`"`)
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		w.Write(data)
	}
	return nil
}

// artifactType names a model file's media type and file extension: a PMML
// document is XML, an ONNX model protocol buffer bytes; of other formats'
// files, by their first bytes, JSON (an object whose first member name is
// quoted), UBJSON (an object whose first member is a UBJSON length or type
// marker), anything else bytes.
func artifactType(format string, data []byte) (contentType, ext string) {
	switch format {
	case "pmml":
		return mediaXML, "pmml"
	case "onnx":
		return "application/octet-stream", "onnx"
	}
	rest := bytes.TrimLeft(data, " \t\r\n")
	if len(rest) == 0 || rest[0] != '{' {
		return "application/octet-stream", "bin"
	}
	if next := bytes.TrimLeft(rest[1:], " \t\r\n"); len(next) > 0 && (next[0] == '"' || next[0] == '}') {
		return "application/json", "json"
	}
	if data[0] == '{' && len(data) > 1 && slices.Contains([]byte("iUIlL$#"), data[1]) {
		return "application/octet-stream", "ubj"
	}
	return "application/octet-stream", "bin"
}

// getModelAlias is GET /api/v1/models/{name}/aliases/{alias}.
func (h *Handler) getModelAlias(w http.ResponseWriter, r *http.Request) error {
	m, err := h.model(r)
	if err != nil {
		return err
	}
	name := r.PathValue("alias")
	a, ok := m.Alias(name)
	if !ok {
		return httperr.Newf(problem.NotFound, "model %q has no alias %q", m.Name, name)
	}
	setETag(w, a.Revision)
	return writeJSON(w, http.StatusOK, modelAliasView(m.Name, a))
}

// aliasInput is the body of PUT /api/v1/models/{name}/aliases/{alias}.
// The members GET shows besides version and revision may be sent back;
// model and alias must then be the ones in the URL.
type aliasInput struct {
	Version  int    `json:"version" validate:"required,min=1"`
	Revision uint64 `json:"revision"`

	Model     string         `json:"model" validate:"-"`
	Alias     string         `json:"alias" validate:"-"`
	CreatedAt jsontext.Value `json:"createdAt" validate:"-"`
	UpdatedAt jsontext.Value `json:"updatedAt" validate:"-"`

	Unknown map[string]jsontext.Value `json:",unknown" validate:"-"`
}

func (in *aliasInput) unknown() []problem.FieldError { return unknownMembers("", in.Unknown) }

// putModelAlias is PUT /api/v1/models/{name}/aliases/{alias}: point the
// alias at a version, creating it (201) or moving it (200). Every endpoint
// naming the alias scores with the version from the next request on.
func (h *Handler) putModelAlias(w http.ResponseWriter, r *http.Request) error {
	model, alias := r.PathValue("name"), r.PathValue("alias")
	if ref, err := registry.ParseModelRef("m@" + alias); err != nil || ref.Alias != alias {
		return httperr.Newf(problem.InvalidRequest, "the alias %q in the URL is not a valid alias: a name "+
			"(letters, digits, '.', '_', '-'; starting with a letter or digit; at most 128) that is not all digits, which would read as a version", alias)
	}
	data, err := readBody(r, mediaJSON)
	if err != nil {
		return err
	}
	var in aliasInput
	if err := decodeStrict(data, &in); err != nil {
		return err
	}
	var extra []problem.FieldError
	for _, f := range []struct{ pointer, got, want string }{{"/model", in.Model, model}, {"/alias", in.Alias, alias}} {
		if f.got != "" && f.got != f.want {
			extra = append(extra, problem.FieldError{Pointer: f.pointer, Message: "must be the one in the URL, " + quote(f.want)})
		}
	}
	if err := h.check(&in, extra...); err != nil {
		return err
	}
	pre, err := parsePrecondition(r, in.Revision, "/revision")
	if err != nil {
		return err
	}
	// The version loads before the write, which then finds it loaded
	// (one that cannot be loaded is refused there).
	_, _ = h.reg.Snapshot().EndpointProcess(registry.Endpoint{Model: model + "@" + strconv.Itoa(in.Version)})
	var stored registry.ModelAlias
	err = h.reg.Update(r.Context(), func(tx *registry.Tx) error {
		m, ok := tx.State().Model(model)
		if !ok {
			return notFound("model", model)
		}
		cur, exists := m.Alias(alias)
		want, err := pre.revision("alias", model+"@"+alias, exists, cur.Revision, registry.AnyRevision)
		if err != nil {
			return err
		}
		stored, err = tx.PutModelAlias(model, registry.ModelAlias{Name: alias, Version: in.Version, Revision: want})
		return err
	})
	if err != nil {
		return err
	}
	setETag(w, stored.Revision)
	return writeJSON(w, createdOrOK(stored.Revision), modelAliasView(model, stored))
}

// deleteModelAlias is DELETE /api/v1/models/{name}/aliases/{alias}: 409
// in_use while an endpoint names the alias.
func (h *Handler) deleteModelAlias(w http.ResponseWriter, r *http.Request) error {
	model, alias := r.PathValue("name"), r.PathValue("alias")
	pre, err := parsePrecondition(r, 0, "")
	if err != nil {
		return err
	}
	err = h.reg.Update(r.Context(), func(tx *registry.Tx) error {
		m, ok := tx.State().Model(model)
		if !ok {
			return notFound("model", model)
		}
		cur, exists := m.Alias(alias)
		if !exists {
			return httperr.Newf(problem.NotFound, "model %q has no alias %q", model, alias)
		}
		want, err := pre.revision("alias", model+"@"+alias, true, cur.Revision, registry.AnyRevision)
		if err != nil {
			return err
		}
		return tx.DeleteModelAlias(model, alias, want)
	})
	if err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
