package management

import (
	"bufio"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/scorehub/scorehub/internal/httperr"
	"github.com/scorehub/scorehub/problem"
	"github.com/scorehub/scorehub/registry/payloads"
	"github.com/scorehub/scorehub/registry/process"
)

// payloadRoutes are served when Config.Payloads logs rows.
func payloadRoutes() []route {
	return []route{
		{http.MethodGet, "/api/v1/endpoints/{group}/{path}/{alias}/payloads", adminReadAccess, (*Handler).getPayloads},
	}
}

// mediaJSONLines is the media type of the payload log's export: one JSON
// record a line.
const mediaJSONLines = "application/x-ndjson"

// defaultPayloadPage is how many records a page of the payload log holds
// when ?limit= is not given.
const defaultPayloadPage = 100

// payloadJSON is one logged row.
type payloadJSON struct {
	Seq   int64          `json:"seq"`
	Model string         `json:"model,omitzero"`
	At    time.Time      `json:"at"`
	Row   jsontext.Value `json:"row"`
}

// payloadPageJSON is a page of the payload log: its records, oldest
// first, and the after that reads the next page, absent on the last.
type payloadPageJSON struct {
	Endpoint process.EndpointRef `json:"endpoint"`
	Records  []payloadJSON       `json:"records"`
	Next     *int64              `json:"next,omitzero"`
}

// getPayloads is GET /api/v1/endpoints/{group}/{path}/{alias}/payloads:
// the rows the endpoint's payload log sampled, with their answers, for
// administrators. A page holds up to ?limit= records (100 by default,
// at most payloads.MaxPage) after ?after= (a seq; 0, the default, is
// from the oldest). With ?format=jsonl, or Accept: application/x-ndjson,
// the whole log of the endpoint after ?after= is sent as JSON Lines, one
// record a line, read from the store a page at a time.
func (h *Handler) getPayloads(w http.ResponseWriter, r *http.Request) error {
	_, _, ref, err := endpointOf(r, h.reg.Snapshot().State())
	if err != nil {
		return err
	}
	q := r.URL.Query()
	for p := range q {
		if p != "after" && p != "limit" && p != "format" {
			return httperr.Newf(problem.InvalidParameter, "the parameter %q is not one this route reads (after, limit, format)", p)
		}
	}
	after, err := strconv.ParseInt(q.Get("after"), 10, 64)
	if q.Get("after") == "" {
		after, err = 0, nil
	}
	if err != nil || after < 0 {
		return httperr.Newf(problem.InvalidParameter, "the after parameter must be a record's seq, an integer from 0, not %q", q.Get("after"))
	}
	limit, err := intParam(q.Get("limit"), "limit", defaultPayloadPage, 1, payloads.MaxPage)
	if err != nil {
		return err
	}
	// The rows this replica sampled before the call are in the log.
	if err := h.queues.FlushPayloads(r.Context()); err != nil {
		return err
	}
	switch f := q.Get("format"); {
	case f == "jsonl", f == "" && strings.Contains(r.Header.Get("Accept"), mediaJSONLines):
		return h.exportPayloads(w, r, ref, after)
	case f != "" && f != "json":
		return httperr.Newf(problem.InvalidParameter, "the format parameter must be json (a page) or jsonl (the whole log, as JSON Lines), not %q", f)
	}
	rs, more, err := h.payloads.Page(r.Context(), ref, after, limit)
	if err != nil {
		return err
	}
	out := payloadPageJSON{Endpoint: ref, Records: make([]payloadJSON, len(rs))}
	for i, rec := range rs {
		out.Records[i] = payloadView(rec)
	}
	if more && len(rs) > 0 {
		out.Next = &rs[len(rs)-1].Seq
	}
	return writeJSON(w, http.StatusOK, out)
}

func payloadView(rec payloads.Record) payloadJSON {
	return payloadJSON{Seq: rec.Seq, Model: rec.Model, At: rec.At, Row: jsontext.Value(rec.Row)}
}

// exportPayloads sends endpoint's log after seq as JSON Lines. A store
// that fails after the first line has been sent ends the body early: the
// client sees a body cut short, the status already sent.
func (h *Handler) exportPayloads(w http.ResponseWriter, r *http.Request, endpoint process.EndpointRef, after int64) error {
	rs, more, err := h.payloads.Page(r.Context(), endpoint, after, payloads.MaxPage)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", mediaJSONLines)
	w.Header().Set("Content-Disposition", `attachment; filename="`+endpoint.Group+"-"+endpoint.Path+"-"+endpoint.Alias+`-payloads.jsonl"`)
	w.WriteHeader(http.StatusOK)
	bw := bufio.NewWriterSize(w, 64<<10)
	for {
		for _, rec := range rs {
			b, err := json.Marshal(payloadView(rec))
			if err != nil {
				return nil
			}
			if _, err := bw.Write(append(b, '\n')); err != nil {
				return nil // the client left
			}
		}
		if !more || len(rs) == 0 {
			break
		}
		if rs, more, err = h.payloads.Page(r.Context(), endpoint, rs[len(rs)-1].Seq, payloads.MaxPage); err != nil {
			h.logger.Warn("management: the payload export ended early", "endpoint", endpoint.Group+"/"+endpoint.Path+"/"+endpoint.Alias, "error", err)
			break
		}
	}
	bw.Flush()
	return nil
}
