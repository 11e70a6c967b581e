package scoring

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/scorehub/scorehub/registry/outcomes"
	"github.com/scorehub/scorehub/registry/process"
)

// predictionLog hands the predictions of rows with IDs to an
// [outcomes.Store] off the answer's path: the scoring goroutine puts a
// batch in a bounded queue, or drops it and counts it when the queue is
// full, and one goroutine appends what the queue holds.
type predictionLog struct {
	store   outcomes.Store
	log     *slog.Logger
	queue   chan batch
	dropped *atomic.Uint64 // predictions not kept: the queue was full, or the store refused them
	done    chan struct{}
	once    sync.Once
}

// batch is predictions handed to the store, or, with flushed set, a
// mark that closes flushed once every batch before it is appended.
type batch struct {
	ps      []outcomes.Prediction
	flushed chan struct{}
}

// predictionQueue is how many batches wait for the store at most.
const predictionQueue = 1024

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
	if log == nil {
		log = slog.Default()
	}
	l := &predictionLog{store: store, log: log, queue: make(chan batch, predictionQueue),
		dropped: &q.challenges.droppedPredictions, done: make(chan struct{})}
	if !q.challenges.predictions.CompareAndSwap(nil, l) {
		return errors.New("scoring: predictions are kept already")
	}
	go l.run()
	return nil
}

// StopKeepingPredictions appends the predictions that wait, within ctx,
// and stops handing more to the store.
func (q *Queues) StopKeepingPredictions(ctx context.Context) error {
	l := q.challenges.predictions.Swap(nil)
	if l == nil {
		return nil
	}
	l.once.Do(func() { close(l.queue) })
	select {
	case <-l.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// DroppedPredictions counts the predictions of rows with IDs that were
// not kept: the store fell behind or refused them.
func (q *Queues) DroppedPredictions() uint64 {
	return q.challenges.droppedPredictions.Load()
}

// put hands ps to the store, or drops them.
func (l *predictionLog) put(ps []outcomes.Prediction) {
	if len(ps) == 0 {
		return
	}
	defer func() {
		if recover() != nil { // the log stopped as the batch came
			l.dropped.Add(uint64(len(ps)))
		}
	}()
	select {
	case l.queue <- batch{ps: ps}:
	default:
		l.dropped.Add(uint64(len(ps)))
	}
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
	mark := batch{flushed: make(chan struct{})}
	if err := func() (err error) {
		defer func() {
			if recover() != nil { // the log stopped: nothing waits
				err = nil
			}
		}()
		select {
		case l.queue <- mark:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}(); err != nil {
		return err
	}
	select {
	case <-mark.flushed:
		return nil
	case <-l.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// run appends batches until the queue closes, several at a time when
// they wait.
func (l *predictionLog) run() {
	defer close(l.done)
	for b := range l.queue {
		ps := b.ps
		var marks []chan struct{}
		if b.flushed != nil {
			marks = append(marks, b.flushed)
		}
		for more := true; more && len(ps) < 10_000; {
			select {
			case next, ok := <-l.queue:
				if !ok {
					more = false
					break
				}
				ps = append(ps, next.ps...)
				if next.flushed != nil {
					marks = append(marks, next.flushed)
				}
			default:
				more = false
			}
		}
		if len(ps) > 0 {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			if err := l.store.Append(ctx, ps); err != nil {
				l.dropped.Add(uint64(len(ps)))
				l.log.Warn("scoring: predictions not kept", "predictions", len(ps), "error", err)
			}
			cancel()
		}
		for _, m := range marks {
			close(m)
		}
	}
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

// keeper returns the keep of challenger k of x's predictions, for a
// shadow to call once it answered, when x no longer lives.
func (c *Challenges) keeper(x *execution, k int) func(ids []string, a *answers) {
	ep, model, role := x.in.Endpoint, x.challengers[k].Process.Name, x.challengers[k].Mode
	return func(ids []string, a *answers) {
		c.handOver(ep, ids, a, func(int) (string, string) { return model, role })
	}
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
