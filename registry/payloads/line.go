package payloads

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/scorehub/scorehub/registry/process"
)

// Line is a record checked and encoded by [Prepare], as every store keeps
// it: its JSON line but for the seq, which the store assigns.
type Line struct {
	// Record is the record as stores keep and return it: its Row without
	// insignificant whitespace, its At in UTC without a monotonic clock
	// reading, its Seq 0.
	Record Record
	// body is Record's JSON without the seq: `{"endpoint":…}`.
	body []byte
}

// linePrefix starts every line; the seq follows it.
const linePrefix = `{"seq":`

// Prepare checks a batch as every store does before it appends any of it,
// and returns its lines; an error is [ErrInvalid] and names the first
// record refused. Prepare is the rules of an Append, above the stores: a
// store of another package calls it first.
func Prepare(rs []Record, o Options) ([]Line, error) {
	o = o.WithDefaults()
	limit := min(int64(MaxRecordBytes), o.MaxBytes)
	lines := make([]Line, len(rs))
	for i, r := range rs {
		l, err := prepare(r)
		// Counted with the longest seq, so that no seq makes it too long.
		if err == nil && l.Size(math.MaxInt64) > limit {
			err = fmt.Errorf("its line would take up to %d bytes, more than the %d a record may", l.Size(math.MaxInt64), limit)
		}
		if err != nil {
			return nil, &invalidError{fmt.Sprintf("record %d of the batch: %v", i, err)}
		}
		lines[i] = l
	}
	return lines, nil
}

func prepare(r Record) (Line, error) {
	ep := r.Endpoint
	if ep.Group == "" || ep.Path == "" || ep.Alias == "" {
		return Line{}, fmt.Errorf("it names no endpoint (group %q, path %q, alias %q)", ep.Group, ep.Path, ep.Alias)
	}
	for _, s := range []string{ep.Group, ep.Path, ep.Alias, r.Model} {
		if !utf8.ValidString(s) || strings.IndexByte(s, 0) >= 0 {
			return Line{}, fmt.Errorf("its endpoint or model %q is not UTF-8 text without NUL bytes", s)
		}
	}
	at := r.At.UTC().Round(0)
	if y := at.Year(); y < 0 || y > 9999 {
		return Line{}, fmt.Errorf("its time %v is outside the years 0 to 9999", r.At)
	}
	if !jsontext.Value(r.Row).IsValid() {
		return Line{}, errors.New("its row is not valid JSON, in UTF-8, without a name twice in an object")
	}
	var row bytes.Buffer
	if err := json.Compact(&row, r.Row); err != nil {
		return Line{}, fmt.Errorf("its row is not valid JSON: %w", err)
	}
	if row.Len() == 0 || row.Bytes()[0] != '{' {
		return Line{}, errors.New("its row is not a JSON object")
	}
	rec := Record{Endpoint: ep, Model: r.Model, At: at, Row: row.Bytes()}
	body, err := encodeBody(rec)
	if err != nil {
		return Line{}, err
	}
	return Line{Record: rec, body: body}, nil
}

// lineBody is a record's JSON without its seq.
type lineBody struct {
	Endpoint process.EndpointRef `json:"endpoint"`
	Model    string              `json:"model,omitempty"`
	At       time.Time           `json:"at"`
	Row      json.RawMessage     `json:"row"`
}

// encodeBody encodes r but for its seq, without escaping HTML (so that the
// row's strings stay as given).
func encodeBody(r Record) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(lineBody{Endpoint: r.Endpoint, Model: r.Model, At: r.At, Row: r.Row}); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// Size is the length of the line with seq: the record's JSON and a
// newline, the size the bounds count.
func (l Line) Size(seq int64) int64 {
	return int64(len(linePrefix) + digits(seq) + len(l.body) + 1)
}

// appendTo appends the line with seq to buf: the record's JSON, seq
// first, and a newline.
func (l Line) appendTo(buf []byte, seq int64) []byte {
	buf = append(buf, linePrefix...)
	buf = strconv.AppendInt(buf, seq, 10)
	buf = append(buf, ',')
	buf = append(buf, l.body[1:]...)
	return append(buf, '\n')
}

func digits(n int64) int {
	d := 1
	for n >= 10 {
		n /= 10
		d++
	}
	return d
}

// invalidError is an error that is ErrInvalid, saying what is wrong.
type invalidError struct{ msg string }

func (e *invalidError) Error() string        { return "payloads: " + e.msg }
func (e *invalidError) Is(target error) bool { return target == ErrInvalid }

// CheckLimit returns an error that is [ErrInvalid] when limit is outside
// 1 to MaxPage, as every store's Page does; a store of another package
// calls it first.
func CheckLimit(limit int) error {
	if limit < 1 || limit > MaxPage {
		return &invalidError{fmt.Sprintf("a page of %d records: the limit is 1 to %d", limit, MaxPage)}
	}
	return nil
}
