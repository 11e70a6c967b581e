package management

import (
	"bytes"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/scorehub/scorehub/internal/httperr"
	"github.com/scorehub/scorehub/problem"
	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/process"
	"github.com/scorehub/scorehub/scoring"
)

// The media types a model upload is sent as: the artifact alone, or a
// form of the artifact and its metadata.
const (
	mediaOctetStream = "application/octet-stream"
	mediaUBJSON      = "application/ubjson"
	mediaXML         = "application/xml" // PMML, as RFC 7303 names XML
	mediaTextXML     = "text/xml"
	mediaMultipart   = "multipart/form-data"
)

// The parts of a multipart upload.
const (
	partArtifact  = "artifact"
	partMetadata  = "metadata"
	partReference = "reference"
)

// metadataParams are the query parameters that carry the metadata of an
// artifact sent as the raw body.
var metadataParams = []string{"label", "classes", "features", "optionalFeatures", "lenient", "description"}

// modelMetadataInput is the metadata part of a multipart upload, and what
// the query parameters of a raw upload are read as.
type modelMetadataInput struct {
	Label        string             `json:"label" validate:"max=256,nocontrol"`
	Classes      []string           `json:"classes" validate:"max=10000,unique,dive,required,max=256,nocontrol"`
	Features     []string           `json:"features" validate:"max=100000,unique,dive,required,max=256,nocontrol"`
	Optional     []string           `json:"optionalFeatures" validate:"max=100000,unique,dive,required,max=256,nocontrol"`
	Lenient      bool               `json:"lenient"`
	Description  string             `json:"description" validate:"max=4096"`
	Verification *verificationInput `json:"verification"`

	Unknown map[string]jsontext.Value `json:",unknown" validate:"-"`
}

// verificationInput is the verification member of the metadata: rows as a
// scoring request's data, one expected prediction per row, and the
// tolerance numbers may differ by (0 means the registry's default).
type verificationInput struct {
	Rows      jsontext.Value   `json:"rows" validate:"-"`
	Expected  []jsontext.Value `json:"expected" validate:"-"`
	Tolerance float64          `json:"tolerance" validate:"min=0"`

	Unknown map[string]jsontext.Value `json:",unknown" validate:"-"`
}

func (in *modelMetadataInput) unknown() []problem.FieldError {
	out := unknownMembers("", in.Unknown)
	if in.Verification != nil {
		out = append(out, unknownMembers("/verification", in.Verification.Unknown)...)
	}
	return out
}

func (in *modelMetadataInput) metadata() process.ModelMetadata {
	return process.ModelMetadata{Label: in.Label, Classes: in.Classes, Features: in.Features,
		OptionalFeatures: in.Optional, Lenient: in.Lenient, Description: in.Description}
}

// uploadModelVersion is POST /api/v1/models/{name}/versions: store a new
// version of the model (creating the model with its first), 201 with
// Location, or the version already stored with the same bytes and
// metadata, 200. The body is the artifact itself (application/json,
// application/ubjson or application/octet-stream; metadata in the query
// parameters label, classes, features and description, lists separated by
// commas) or multipart/form-data with the part "artifact" and optionally
// the part "metadata", a JSON object that may also carry verification
// rows, and optionally the part "reference": rows like those the model
// will score, as JSON {"data":[…]} or CSV with a header, that its drift
// is measured against. The format is told by the content, never by a
// name or type.
func (h *Handler) uploadModelVersion(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	if !registry.ValidName(name) {
		return httperr.Newf(problem.InvalidRequest, "the model name %q in the URL is not a valid name "+
			"(letters, digits, '.', '_', '-'; starting with a letter or digit; at most 128)", name)
	}
	artifact, meta, upload, err := h.readUpload(r)
	if err != nil {
		return err
	}
	v, created, err := h.reg.AddModelVersion(r.Context(), name, artifact, meta, upload)
	if err != nil {
		return err
	}
	m, ok := h.reg.Snapshot().State().Model(name)
	if !ok {
		// Removed since: show the version as it was stored.
		m = registry.Model{Name: name}
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
		w.Header().Set("Location", "versions/"+strconv.Itoa(v.Version))
	}
	return writeJSON(w, status, modelVersionView(m, v))
}

// readUpload reads an upload's artifact, metadata, verification and
// reference in either of its forms.
func (h *Handler) readUpload(r *http.Request) ([]byte, process.ModelMetadata, *registry.Upload, error) {
	ct := r.Header.Get("Content-Type")
	mt, params, err := mime.ParseMediaType(ct)
	if err == nil && mt == mediaMultipart {
		return h.readMultipartUpload(r, params["boundary"])
	}
	if err != nil || (mt != mediaOctetStream && mt != mediaUBJSON && mt != mediaXML && mt != mediaTextXML && !isMediaType(ct, mediaJSON)) {
		return nil, process.ModelMetadata{}, nil, httperr.New(problem.UnsupportedMediaType,
			httperr.MediaTypeMessage("a model is sent as Content-Type: application/json, application/ubjson, application/xml, text/xml or application/octet-stream (the file alone), or multipart/form-data (the file and its metadata)", ct))
	}
	q, err := uploadQuery(r)
	if err != nil {
		return nil, process.ModelMetadata{}, nil, err
	}
	in, err := h.metadataFromQuery(q)
	if err != nil {
		return nil, process.ModelMetadata{}, nil, err
	}
	artifact, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, process.ModelMetadata{}, nil, readError(err, "the request body could not be read")
	}
	return artifact, in.metadata(), nil, nil
}

// uploadQuery reads the query string of an upload strictly: a pair that
// does not decode (a malformed escape, a ';') or text that is not UTF-8 is a
// 400, never metadata silently dropped or stored unreadable.
func uploadQuery(r *http.Request) (url.Values, error) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, httperr.Newf(problem.InvalidParameter, "the query string cannot be read (%v): separate parameters with '&' and escape '%%' as %%25", err).Wrap(err)
	}
	for p, vs := range q {
		bad := !utf8.ValidString(p)
		for _, v := range vs {
			bad = bad || !utf8.ValidString(v)
		}
		if bad {
			return nil, httperr.Newf(problem.InvalidParameter, "the parameter %q is not valid UTF-8", p)
		}
	}
	return q, nil
}

// metadataFromQuery reads the metadata of a raw upload from its query
// parameters. A parameter this route does not read, or one given twice, is
// a 400.
func (h *Handler) metadataFromQuery(q url.Values) (*modelMetadataInput, error) {
	in := &modelMetadataInput{}
	for p, vs := range q {
		if !isMetadataParam(p) {
			return nil, httperr.Newf(problem.InvalidParameter, "the parameter %q is not one this route reads (%s)",
				p, strings.Join(metadataParams, ", "))
		}
		if len(vs) > 1 {
			return nil, httperr.Newf(problem.InvalidParameter, "the parameter %q is given %d times; give it once", p, len(vs))
		}
	}
	in.Label, in.Description = q.Get("label"), q.Get("description")
	in.Classes, in.Features = commaList(q.Get("classes")), commaList(q.Get("features"))
	in.Optional = commaList(q.Get("optionalFeatures"))
	switch l := q.Get("lenient"); l {
	case "", "false":
	case "true":
		in.Lenient = true
	default:
		return nil, httperr.Newf(problem.InvalidParameter, "the lenient parameter must be true or false, not %q", l)
	}
	if err := h.check(in); err != nil {
		var e *problem.Error
		if errors.As(err, &e) && len(e.Fields) > 0 {
			param, item, _ := strings.Cut(strings.TrimPrefix(e.Fields[0].Pointer, "/"), "/")
			if item != "" {
				item = "the value at index " + item + " "
			}
			return nil, httperr.Newf(problem.InvalidParameter, "the %s parameter is not valid: %s%s", param, item, e.Fields[0].Message)
		}
		return nil, err
	}
	return in, nil
}

func isMetadataParam(p string) bool {
	for _, m := range metadataParams {
		if p == m {
			return true
		}
	}
	return false
}

// commaList splits a comma-separated query parameter; empty is none.
func commaList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// readMultipartUpload reads a multipart/form-data upload: exactly one part
// "artifact", at most one part "metadata" and one part "reference",
// nothing else, and no metadata in the query.
func (h *Handler) readMultipartUpload(r *http.Request, boundary string) ([]byte, process.ModelMetadata, *registry.Upload, error) {
	fail := func(err error) ([]byte, process.ModelMetadata, *registry.Upload, error) {
		return nil, process.ModelMetadata{}, nil, err
	}
	q, err := uploadQuery(r)
	if err != nil {
		return fail(err)
	}
	for p := range q {
		if isMetadataParam(p) {
			return fail(httperr.Newf(problem.InvalidParameter,
				"the parameter %q cannot be given with a multipart body: send the metadata in its part %q", p, partMetadata))
		}
		return fail(httperr.Newf(problem.InvalidParameter, "the parameter %q is not one this route reads", p))
	}
	if boundary == "" {
		return fail(httperr.New(problem.InvalidRequest, "the multipart/form-data Content-Type has no boundary parameter"))
	}
	var artifact, metadata, reference []byte
	var gotArtifact, gotMetadata, gotReference bool
	var referenceType string
	mr := multipart.NewReader(r.Body, boundary)
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fail(readError(err, "the multipart body is not well formed"))
		}
		name := part.FormName()
		var dst *[]byte
		switch {
		case name == partArtifact && !gotArtifact:
			dst, gotArtifact = &artifact, true
		case name == partMetadata && !gotMetadata:
			dst, gotMetadata = &metadata, true
		case name == partReference && !gotReference:
			dst, gotReference, referenceType = &reference, true, part.Header.Get("Content-Type")
		case name == partArtifact || name == partMetadata || name == partReference:
			return fail(httperr.Newf(problem.InvalidRequest, "the multipart body has more than one part %q; send one", name))
		default:
			return fail(httperr.Newf(problem.InvalidRequest, "the multipart body has a part %q; an upload has the part %q and, optionally, %q and %q",
				name, partArtifact, partMetadata, partReference))
		}
		if *dst, err = io.ReadAll(part); err != nil {
			return fail(readError(err, "the multipart body is not well formed"))
		}
	}
	if !gotArtifact {
		return fail(httperr.Newf(problem.InvalidRequest, "the multipart body has no part %q: the model file", partArtifact))
	}
	upload := &registry.Upload{}
	if gotReference {
		if upload.Reference, err = referenceRows(referenceType, reference, "the part "+strconv.Quote(partReference)); err != nil {
			return fail(err)
		}
	}
	if !gotMetadata {
		return artifact, process.ModelMetadata{}, upload, nil
	}
	in := &modelMetadataInput{}
	if err := decodeStrict(metadata, in); err != nil {
		return fail(err)
	}
	var extra []problem.FieldError
	if in.Verification != nil {
		var err error
		if upload.Verification, extra, err = in.Verification.verification(); err != nil {
			return fail(err)
		}
	}
	if err := h.check(in, extra...); err != nil {
		return fail(err)
	}
	return artifact, in.metadata(), upload, nil
}

// readError is what a failed read of the body answers: 413 past the
// limit, 408 when it came too slowly, else a 400 saying msg.
func readError(err error, msg string) error {
	var mb *http.MaxBytesError
	if errors.As(err, &mb) || httperr.From(err).Status == http.StatusRequestTimeout {
		return err
	}
	return httperr.New(problem.InvalidRequest, msg).Wrap(err)
}

// verification reads the rows as the scoring handler reads a request's
// data, with its strictness, and each expected prediction. The faults of
// the members are returned as fields to report with the others; a fault
// of the rows, which scoring reports, as the error.
func (in *verificationInput) verification() (*registry.Verification, []problem.FieldError, error) {
	var fields []problem.FieldError
	if len(in.Rows) == 0 || in.Rows.Kind() == 'n' {
		fields = append(fields, problem.FieldError{Pointer: "/verification/rows", Message: "is required: the rows to score, as a scoring request's data"})
	}
	if in.Expected == nil {
		fields = append(fields, problem.FieldError{Pointer: "/verification/expected", Message: "is required: one expected prediction per row"})
	}
	expected := make([]any, len(in.Expected))
	for i, raw := range in.Expected {
		v, ok := expectedValue(raw)
		if !ok {
			fields = append(fields, problem.FieldError{Pointer: "/verification/expected/" + strconv.Itoa(i),
				Message: "must be a number (a prediction), a string (a class), an array of numbers (the confidences in class order) or an object of result columns and their numbers or strings"})
		}
		expected[i] = v
	}
	if len(fields) > 0 {
		return nil, fields, nil
	}
	body := make([]byte, 0, len(in.Rows)+10)
	body = append(append(append(body, `{"data":`...), in.Rows...), '}')
	req, err := scoring.Decode(bytes.NewReader(body), scoring.Limits{MaxBodyBytes: int64(len(body))})
	if err != nil {
		var e *problem.Error
		if errors.As(err, &e) {
			c := *e
			if c.Pointer == "" || c.Pointer == "/data" || strings.HasPrefix(c.Pointer, "/data/") {
				c.Pointer = "/verification/rows" + strings.TrimPrefix(c.Pointer, "/data")
			}
			return nil, nil, &c
		}
		return nil, nil, err
	}
	if n := req.Table.Rows(); n != len(expected) {
		return nil, []problem.FieldError{{Pointer: "/verification/expected",
			Message: "must have one prediction per row: " + strconv.Itoa(n) + " rows, " + strconv.Itoa(len(expected)) + " predictions"}}, nil
	}
	return &registry.Verification{Rows: req.Table, Expected: expected, Tolerance: in.Tolerance}, nil, nil
}

// expectedValue reads one expected prediction: a number, a class name, the
// confidences in class order or an object of result columns.
func expectedValue(raw jsontext.Value) (any, bool) {
	switch raw.Kind() {
	case '0':
		var f float64
		err := json.Unmarshal(raw, &f)
		return f, err == nil
	case '"':
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err == nil
	case '[':
		var fs []float64
		err := json.Unmarshal(raw, &fs)
		return fs, err == nil && fs != nil
	case '{':
		var members map[string]jsontext.Value
		if json.Unmarshal(raw, &members) != nil {
			return nil, false
		}
		out := make(map[string]any, len(members))
		for k, m := range members {
			v, ok := expectedValue(m)
			switch v.(type) {
			case float64, string:
			default:
				ok = false
			}
			if !ok {
				return nil, false
			}
			out[k] = v
		}
		return out, true
	}
	return nil, false
}
