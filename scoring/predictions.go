package scoring

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/scorehub/scorehub/registry/outcomes"
	"github.com/scorehub/scorehub/registry/process"
)

// predictionLog hands the predictions of rows with IDs to an
// [outcomes.Store] off the answer's path.
type predictionLog = sink[outcomes.Prediction]

// sinkBudget bounds the bytes of the records a sink holds waiting for its
// store: past it, the store has fallen behind, and more are dropped.
const sinkBudget = 64 << 20

// predictionWeight is about the bytes p holds.
func predictionWeight(p outcomes.Prediction) int64 {
	return int64(160 + len(p.RowID) + len(p.Model) + len(p.Label) + 8*len(p.Confidences) + 16*len(p.Classes))
}

// KeepPredictions has executions on q hand the predictions of rows that
// carry an ID ([registry.Endpoint.RowID]) to store, the champion's and
// every challenger's, so that outcomes fed back later can be joined with
// them. The predictions are appended off the answer's path: when store
// falls behind, a batch is dropped and counted ([Queues.DroppedPredictions]),
// never waited for. Call it once, before executions start; Stop flushes
// what waits and stops. It fails when predictions are kept already.
func (q *Queues) KeepPredictions(store outcomes.Store, log *slog.Logger) error {
	if store == nil {
		return errors.New("scoring: KeepPredictions needs a store")
	}
	if q.challenges.predictions.Load() != nil {
		return errors.New("scoring: predictions are kept already")
	}
	l := newSink("predictions", store.Append, predictionWeight, sinkBudget, &q.challenges.droppedPredictions, log)
	if !q.challenges.predictions.CompareAndSwap(nil, l) {
		l.stop(context.Background())
		return errors.New("scoring: predictions are kept already")
	}
	return nil
}

// StopKeepingPredictions appends the predictions that wait, within ctx,
// and stops handing more to the store.
func (q *Queues) StopKeepingPredictions(ctx context.Context) error {
	l := q.challenges.predictions.Swap(nil)
	if l == nil {
		return nil
	}
	return l.stop(ctx)
}

// DroppedPredictions counts the predictions of rows with IDs that were
// not kept: the store fell behind or refused them.
func (q *Queues) DroppedPredictions() uint64 {
	return q.challenges.droppedPredictions.Load()
}

// FlushPredictions waits, within ctx, until the predictions handed to the
// store before the call are appended (or dropped), so that outcomes fed
// back for rows already answered find their champion's predictions. A
// shadow's are handed over once it has scored, which may be later; the
// store joins them to the outcome of their row all the same.
func (q *Queues) FlushPredictions(ctx context.Context) error {
	l := q.challenges.predictions.Load()
	if l == nil {
		return nil
	}
	return l.flush(ctx)
}

// keeping reports whether predictions are kept.
func (c *Challenges) keeping() bool { return c.predictions.Load() != nil }

// keep hands the predictions in a of the rows with ids to the log, if
// predictions are kept: row r answered by x's champion, or by challenger
// who[r] when who is not nil and who[r] is not -1.
func (c *Challenges) keep(x *execution, ids []string, a *answers, who []int) {
	c.handOver(x.in.Endpoint, ids, a, func(r int) (string, string) {
		if who != nil && who[r] >= 0 {
			return x.challengers[who[r]].Process.Name, x.challengers[who[r]].Mode
		}
		return x.process.Name, outcomes.RoleChampion
	})
}

// handOver hands the predictions in a of endpoint's rows with ids to the
// log, if predictions are kept, row r's answered by the model and in the
// role by(r) returns.
func (c *Challenges) handOver(endpoint process.EndpointRef, ids []string, a *answers, by func(r int) (model, role string)) {
	l := c.predictions.Load()
	if l == nil || a == nil || ids == nil {
		return
	}
	now := time.Now()
	ps := make([]outcomes.Prediction, 0, len(ids))
	for r, id := range ids {
		if id == "" {
			continue
		}
		p := outcomes.Prediction{Endpoint: endpoint, RowID: id, At: now}
		p.Model, p.Role = by(r)
		a.fill(&p, r)
		ps = append(ps, p)
	}
	l.put(ps)
}

// fill sets p's answer to a's of row r.
func (a *answers) fill(p *outcomes.Prediction, r int) {
	if a.labels == nil {
		p.Value = a.numbers[r]
		return
	}
	if a.missing[r] {
		return
	}
	p.Label, p.Classes = a.labels[r], a.classes
	p.Confidences = make([]float64, len(a.classes))
	for i := range a.classes {
		p.Confidences[i] = a.conf[i][r]
	}
}

// rowIDs returns each row's ID, the value of column name as text, ""
// for a row without one; nil when no row has one.
func rowIDs(t *process.Table, name string) []string {
	col, ok := t.Lookup(name)
	if !ok {
		return nil
	}
	ids := make([]string, t.Rows())
	some := false
	for r := range ids {
		if !col.IsMissing(r) {
			ids[r] = keyText(col, r)
			some = true
		}
	}
	if !some {
		return nil
	}
	return ids
}
