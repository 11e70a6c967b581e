package scoring

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/payloads"
	"github.com/scorehub/scorehub/registry/process"
	"github.com/scorehub/scorehub/scoring/internal/wire"
)

// payloadLog hands the sampled rows of endpoints with a payload log to a
// [payloads.Store] off the answer's path.
type payloadLog = sink[payloads.Record]

// LogPayloads has executions on q hand a sample of the rows of every
// endpoint with a payload log ([registry.Endpoint.PayloadLog]) to store,
// each row with its answer and its redacted columns replaced by
// [registry.RedactedValue]. The rows are sampled and encoded once the
// answer is written, and appended off the answer's path: when store falls
// behind, a batch is dropped and counted ([Queues.DroppedPayloads]),
// never waited for, as is a row whose JSON passes maxRowBytes. Call it
// once, before executions start; StopLoggingPayloads appends what waits
// and stops. It fails when
// payloads are logged already.
func (q *Queues) LogPayloads(store payloads.Store, log *slog.Logger) error {
	if store == nil {
		return errors.New("scoring: LogPayloads needs a store")
	}
	if q.challenges.payloads.Load() != nil {
		return errors.New("scoring: payloads are logged already")
	}
	l := newSink("payloads", store.Append, payloadWeight, sinkBudget, &q.challenges.droppedPayloads, log)
	if !q.challenges.payloads.CompareAndSwap(nil, l) {
		l.stop(context.Background())
		return errors.New("scoring: payloads are logged already")
	}
	return nil
}

// payloadWeight is about the bytes r holds.
func payloadWeight(r payloads.Record) int64 { return int64(128 + len(r.Row) + len(r.Model)) }

// maxRowBytes bounds a logged row's JSON: a longer row is dropped and
// counted alone, as the store would refuse its record, and with it every
// record appended beside it.
const maxRowBytes = payloads.MaxRecordBytes - 4096

// StopLoggingPayloads appends the rows that wait, within ctx, and stops
// handing more to the store.
func (q *Queues) StopLoggingPayloads(ctx context.Context) error {
	l := q.challenges.payloads.Swap(nil)
	if l == nil {
		return nil
	}
	return l.stop(ctx)
}

// FlushPayloads waits, within ctx, until the rows handed to the store
// before the call are appended (or dropped).
func (q *Queues) FlushPayloads(ctx context.Context) error {
	l := q.challenges.payloads.Load()
	if l == nil {
		return nil
	}
	return l.flush(ctx)
}

// DroppedPayloads counts the sampled rows that were not logged: the store
// fell behind or refused them.
func (q *Queues) DroppedPayloads() uint64 { return q.challenges.droppedPayloads.Load() }

// SampledPayloads counts the rows sampled for the payload log, those
// dropped included.
func (q *Queues) SampledPayloads() uint64 { return q.challenges.sampledPayloads.Load() }

// logPayloads samples x's rows for its endpoint's payload log, once the
// answer is written (see sample), encoded with result, which by(r) says row r was answered by ("" for a process
// endpoint).
func (e *engine) logPayloads(x *execution, result wire.Result, by func(r int) string) {
	l := e.challenges.payloads.Load()
	if l == nil {
		return
	}
	cfg, table, ep := x.payloadLog, x.in.Table, x.in.Endpoint
	x.after = append(x.after, func() {
		rows := sample(table.Rows(), cfg.Rate)
		if len(rows) == 0 {
			return
		}
		out, err := joinResult(result)
		if err != nil {
			return
		}
		e.challenges.sampledPayloads.Add(uint64(len(rows)))
		enc := newRowEncoder(table, out, cfg.Redact)
		if slices.Contains(cfg.Redact, registry.AnsweredByColumn) {
			by = func(int) string { return "" } // who answered is what the column would say
		}
		now := time.Now()
		rs := make([]payloads.Record, 0, len(rows))
		for _, r := range rows {
			row := enc.row(r)
			if len(row) > maxRowBytes {
				e.challenges.droppedPayloads.Add(1)
				continue
			}
			rs = append(rs, payloads.Record{Endpoint: ep, Model: by(r), At: now, Row: row})
		}
		l.put(rs)
	})
}

// sample returns which of n rows to log at rate: ⌊n·rate + U⌋ of them
// (U uniform in [0, 1)), so that a request logs its share within one row
// and the expected share is rate exactly, however its rows come; which
// rows is drawn uniformly, each subset of that size as likely as any
// other (Knuth's selection sampling), in row order.
func sample(n int, rate float64) []int {
	k := int(math.Floor(float64(n)*rate + rand.Float64()))
	k = min(max(k, 0), n)
	if k == 0 {
		return nil
	}
	rows := make([]int, 0, k)
	for r := 0; r < n && len(rows) < k; r++ {
		if rand.IntN(n-r) < k-len(rows) {
			rows = append(rows, r)
		}
	}
	return rows
}

// rowEncoder writes rows as JSON objects as the scoring handler answers
// them, numbers and strings written as answers write them: the input's columns, a result column in place of an input of its
// name, then the other result columns; a missing value, NaN or ±Inf as
// null. A redacted column's value is registry.RedactedValue, and so is
// what other columns say of it: its contributions
// (contribution(<name>), contribution(<class>,<name>)) and its name in
// the outlier column.
type rowEncoder struct {
	cols     []*process.Column
	names    [][]byte // each column's quoted name and a colon
	redacted []bool
	outliers int // the outlier column's index, -1 when none or no input is redacted
	redact   []string
}

func newRowEncoder(in, out *process.Table, redact []string) *rowEncoder {
	e := &rowEncoder{outliers: -1, redact: redact}
	add := func(c *process.Column) {
		name := wire.AppendString(nil, c.Name)
		if c.Name == registry.OutlierColumn && len(redact) > 0 && c.Kind == process.Text {
			e.outliers = len(e.cols)
		}
		e.cols = append(e.cols, c)
		e.names = append(e.names, append(name, ':'))
		e.redacted = append(e.redacted, redacts(redact, c.Name))
	}
	for i := range in.NumColumns() {
		c := in.Column(i)
		if rc, ok := out.Lookup(c.Name); ok {
			c = rc
		}
		add(c)
	}
	for i := range out.NumColumns() {
		if c := out.Column(i); in.Index(c.Name) < 0 {
			add(c)
		}
	}
	return e
}

// redacts reports whether redacting the columns redact hides column
// name: one of them, or a contribution of one.
func redacts(redact []string, name string) bool {
	if slices.Contains(redact, name) {
		return true
	}
	inner, ok := strings.CutPrefix(name, "contribution(")
	if !ok {
		return false
	}
	if inner, ok = strings.CutSuffix(inner, ")"); !ok {
		return false
	}
	for _, r := range redact {
		if inner == r || strings.HasSuffix(inner, ","+r) {
			return true
		}
	}
	return false
}

var redactedJSON = wire.AppendString(nil, registry.RedactedValue)

// row returns row r as a JSON object.
func (e *rowEncoder) row(r int) []byte {
	b := make([]byte, 0, 16*len(e.cols)+2)
	b = append(b, '{')
	for i, c := range e.cols {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, e.names[i]...)
		switch {
		case e.redacted[i]:
			b = append(b, redactedJSON...)
		case c.IsMissing(r):
			b = append(b, "null"...)
		case c.Kind == process.Number:
			b = wire.AppendNumber(b, c.Numbers[r])
		case i == e.outliers:
			b = wire.AppendString(b, e.hideNames(c.Texts[r]))
		default:
			b = wire.AppendString(b, c.Texts[r])
		}
	}
	return append(b, '}')
}

// hideNames returns the outlier column's text with the redacted inputs'
// names replaced by registry.RedactedValue.
func (e *rowEncoder) hideNames(text string) string {
	names := strings.Split(text, ", ")
	for i, n := range names {
		if slices.Contains(e.redact, n) {
			names[i] = registry.RedactedValue
		}
	}
	return strings.Join(names, ", ")
}
