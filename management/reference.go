package management

import (
	"bytes"
	"encoding/csv"
	"errors"
	"io"
	"net/http"
	"unicode/utf8"

	"github.com/scorehub/scorehub/internal/httperr"
	"github.com/scorehub/scorehub/problem"
	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/drift"
	"github.com/scorehub/scorehub/registry/process"
	"github.com/scorehub/scorehub/scoring"
)

// mediaCSV is the media type of reference rows sent as CSV.
const mediaCSV = "text/csv"

// referenceJSON is what a model version shows of its reference, the
// profile its endpoints' drift is measured against: how many rows it
// was built from, the inputs it profiles and the prediction column.
type referenceJSON struct {
	Rows       int64    `json:"rows"`
	Features   []string `json:"features"`
	Prediction string   `json:"prediction,omitzero"`
	// Declared says the reference comes from what the model's file
	// declares of its inputs alone, not from rows (rows is 0).
	Declared bool `json:"declared"`
}

func referenceView(p *drift.Profile) *referenceJSON {
	if p == nil {
		return nil
	}
	out := &referenceJSON{Features: make([]string, len(p.Features)), Declared: p.Declared}
	for i, f := range p.Features {
		out.Features[i] = f.Name
	}
	if len(p.Features) > 0 {
		h := p.Features[0].Reference
		out.Rows = h.Missing
		for _, n := range h.Counts {
			out.Rows += n
		}
	}
	if p.Prediction != nil {
		out.Prediction = p.Prediction.Name
	}
	return out
}

// referenceRows reads reference rows sent as contentType: JSON
// {"data":[…]} read as a scoring request's, with its strictness, or CSV
// (text/csv) with a header row, every cell text and an empty cell a
// missing value. Without a type, or as application/octet-stream (what
// curl sends a file part as), a body that starts with '{' is JSON and
// any other CSV. where names the body in errors.
func referenceRows(contentType string, body []byte, where string) (*process.Table, error) {
	trimmed := bytes.TrimLeft(body, " \t\r\n\ufeff")
	switch {
	case len(trimmed) == 0:
		return nil, httperr.Newf(problem.InvalidRequest, "%s is empty: send rows as JSON {\"data\":[…]} or as CSV with a header", where)
	case isMediaType(contentType, mediaJSON), trimmed[0] == '{' && (contentType == "" || isMediaType(contentType, mediaOctetStream)):
		req, err := scoring.Decode(bytes.NewReader(body), scoring.Limits{MaxBodyBytes: int64(len(body)), MaxRows: registry.MaxReferenceRows})
		if err != nil {
			return nil, err
		}
		return req.Table, nil
	case isMediaType(contentType, mediaCSV), contentType == "", isMediaType(contentType, "text/plain"), isMediaType(contentType, mediaOctetStream):
		return csvRows(body, where)
	}
	return nil, httperr.New(problem.UnsupportedMediaType,
		httperr.MediaTypeMessage(where+" must be sent as application/json ({\"data\":[…]}) or text/csv (with a header)", contentType))
}

// csvRows reads CSV with a header row into a table of text columns, at
// most registry.MaxReferenceRows rows.
func csvRows(body []byte, where string) (*process.Table, error) {
	if !utf8.Valid(body) {
		return nil, httperr.Newf(problem.InvalidRequest, "%s is not valid UTF-8", where)
	}
	r := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(body, []byte("\ufeff"))))
	r.ReuseRecord = false
	header, err := r.Read()
	if err != nil {
		return nil, csvError(err, where)
	}
	if len(header) > scoring.DefaultMaxColumns {
		return nil, httperr.Newf(problem.TooManyColumns, "%s has %d columns, more than %d", where, len(header), scoring.DefaultMaxColumns)
	}
	seen := make(map[string]bool, len(header))
	for i, h := range header {
		if h == "" || seen[h] {
			return nil, httperr.Newf(problem.InvalidRequest, "%s has a header whose column %d is empty or named twice (%q)", where, i+1, h)
		}
		seen[h] = true
	}
	values := make([][]string, len(header))
	missing := make([][]bool, len(header))
	rows := 0
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, csvError(err, where)
		}
		if rows++; rows > registry.MaxReferenceRows {
			return nil, httperr.Newf(problem.TooManyRows, "%s has more than %d rows", where, registry.MaxReferenceRows)
		}
		if rows*len(header) > scoring.DefaultMaxCells {
			return nil, httperr.Newf(problem.TooManyCells, "%s has more than %d cells", where, scoring.DefaultMaxCells)
		}
		for i, cell := range rec {
			values[i] = append(values[i], cell)
			missing[i] = append(missing[i], cell == "")
		}
	}
	cols := make([]process.Column, len(header))
	for i, h := range header {
		cols[i] = process.TextColumn(h, values[i], missing[i])
	}
	t, err := process.NewTable(rows, cols...)
	if err != nil {
		return nil, httperr.Newf(problem.InvalidRequest, "%s cannot be read as rows: %v", where, err)
	}
	return t, nil
}

func csvError(err error, where string) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return httperr.Newf(problem.InvalidRequest, "%s is not valid CSV at line %d: %v", where, pe.Line, pe.Err).Wrap(err)
	}
	if err == io.EOF {
		return httperr.Newf(problem.InvalidRequest, "%s has no header row", where)
	}
	return httperr.Newf(problem.InvalidRequest, "%s cannot be read as CSV: %v", where, err).Wrap(err)
}

// putModelReference is PUT /api/v1/models/{name}/versions/{version}/reference:
// replace the version's reference with the profile of the rows in the
// body (application/json {"data":[…]} or text/csv with a header), scored
// by the version's model. 200 with the version; its endpoints measure
// drift against the new reference from then on, their live figures
// starting again.
func (h *Handler) putModelReference(w http.ResponseWriter, r *http.Request) error {
	m, v, err := h.modelVersion(r)
	if err != nil {
		return err
	}
	ct := r.Header.Get("Content-Type")
	if !isMediaType(ct, mediaJSON) && !isMediaType(ct, mediaCSV) {
		return httperr.New(problem.UnsupportedMediaType,
			httperr.MediaTypeMessage("reference rows are sent as Content-Type: application/json ({\"data\":[…]}) or text/csv (with a header)", ct))
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return readError(err, "the request body could not be read")
	}
	rows, err := referenceRows(ct, body, "the request body")
	if err != nil {
		return err
	}
	stored, err := h.reg.PutModelReference(r.Context(), m.Name, v.Version, rows)
	if err != nil {
		return err
	}
	if now, ok := h.reg.Snapshot().State().Model(m.Name); ok {
		m = now
	}
	return writeJSON(w, http.StatusOK, modelVersionView(m, stored))
}
