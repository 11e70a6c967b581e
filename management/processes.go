package management

import (
	"net/http"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/scorehub/scorehub/registry/process"
)

// processJSON is a catalog process as the API shows it. Input and output
// are empty where the process does not declare them; sample is absent when
// it has none.
type processJSON struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	Input       []columnJSON   `json:"input"`
	Output      []columnJSON   `json:"output"`
	Sample      jsontext.Value `json:"sample,omitzero"`
}

// columnJSON is a column a process reads or writes: kind is "number" or
// "text"; required marks an input column that must appear in a request.
type columnJSON struct {
	Name     string `json:"name"`
	Kind     string `json:"kind"`
	Required bool   `json:"required"`
}

func processView(p process.ProcessInfo) processJSON {
	return processJSON{
		Name:        p.Name,
		Description: p.Description,
		Input:       columnsView(p.Input),
		Output:      columnsView(p.Output),
		Sample:      jsontext.Value(p.Sample),
	}
}

func columnsView(specs []process.ColumnSpec) []columnJSON {
	out := make([]columnJSON, len(specs))
	for i, s := range specs {
		out[i] = columnJSON{Name: s.Name, Kind: s.Kind.String(), Required: s.Required}
	}
	return out
}

// listProcesses is GET /api/v1/processes: the catalog, sorted by name.
func (h *Handler) listProcesses(w http.ResponseWriter, r *http.Request) error {
	ps := h.reg.Catalog().List()
	out := make([]processJSON, len(ps))
	for i, p := range ps {
		out[i] = processView(p)
	}
	return writeJSON(w, http.StatusOK, out)
}

// getProcess is GET /api/v1/processes/{name}.
func (h *Handler) getProcess(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	p, ok := h.reg.Catalog().Lookup(name)
	if !ok {
		return notFound("process", name)
	}
	return writeJSON(w, http.StatusOK, processView(p))
}
