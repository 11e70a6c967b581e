package outcomes

import (
	"math"
	"slices"
	"time"
	"unique"

	"github.com/scorehub/scorehub/registry/process"
)

// index is the state the memory and file stores keep in memory: the held
// predictions in the order they were appended, each row's predictions
// and outcome, and per endpoint the count of rows without an outcome and
// the outcomes in the order they were recorded. B is what a store keeps
// of a prediction besides: the prediction itself in memory, its place in
// the log on file.
//
// Every held prediction is in one first-in-first-out queue, so that the
// bounds drop the earliest appended first and the predictions held are
// always a suffix of those appended. That is what lets the file store
// rebuild exactly this state from its log: what the bounds dropped is a
// prefix, which whole segments of the log can follow.
//
// An outcome belongs to a row for the row's life: from the prediction
// that found the row empty (its birth) until the last of its predictions
// leaves. A prediction appended later in that life is joined with the
// row's outcome too; one appended after the row left starts a new row.
//
// An index is not safe for concurrent use; its store locks it.
type index[B any] struct {
	retention time.Duration
	max       int

	eps  map[process.EndpointRef]*heldEndpoint[B]
	fifo []*heldPrediction[B] // held predictions from head, oldest appended first
	head int
	seq  uint64 // the sequence number of the next record

	// orphans are the rows a rebuild met an outcome of before any of
	// their predictions (see feedRebuilt).
	orphans []*heldRow[B]
}

// heldPrediction is one held prediction.
type heldPrediction[B any] struct {
	row   *heldRow[B]
	model unique.Handle[string]
	at    int64 // the prediction's At, in Unix nanoseconds
	seq   uint64
	body  B
}

// heldRow is what the index holds of one row ID of one endpoint.
type heldRow[B any] struct {
	ep    *heldEndpoint[B]
	id    string
	preds []*heldPrediction[B] // held, in the order they were appended
	fed   *heldOutcome[B]      // nil while the row waits for its outcome
}

// pending reports whether r has predictions and no outcome.
func (r *heldRow[B]) pending() bool { return len(r.preds) > 0 && r.fed == nil }

// hasModel reports whether r holds a prediction of model.
func (r *heldRow[B]) hasModel(model unique.Handle[string]) bool {
	for _, e := range r.preds {
		if e.model == model {
			return true
		}
	}
	return false
}

// heldOutcome is the outcome of a row.
type heldOutcome[B any] struct {
	row     *heldRow[B]
	isLabel bool
	dead    bool // its row has left, or started a new life
	label   string
	value   float64
	at      time.Time
	seq     uint64 // the record that holds it
	// recorded is the record that first held it, which orders outcomes
	// fed back at the same time; the file store carries an outcome on
	// to a record of its own when it deletes the segment that held it.
	recorded uint64
}

func (f *heldOutcome[B]) outcome() Outcome {
	return Outcome{RowID: f.row.id, IsLabel: f.isLabel, Label: f.label, Value: f.value}
}

// heldEndpoint is the rows of one endpoint.
type heldEndpoint[B any] struct {
	ref     process.EndpointRef
	rows    map[string]*heldRow[B]
	pending int               // rows with predictions and no outcome
	fed     []*heldOutcome[B] // outcomes in the order they were recorded
	deadFed int               // how many of fed are dead
}

func newIndex[B any](o Options) *index[B] {
	return &index[B]{retention: o.Retention, max: o.MaxRecords, eps: map[process.EndpointRef]*heldEndpoint[B]{}}
}

// nanos is t in Unix nanoseconds, clamped to the times an int64 holds.
func nanos(t time.Time) int64 {
	switch {
	case t.Before(time.Unix(0, math.MinInt64)):
		return math.MinInt64
	case t.After(time.Unix(0, math.MaxInt64)):
		return math.MaxInt64
	}
	return t.UnixNano()
}

// held is how many predictions the index holds.
func (x *index[B]) held() int { return len(x.fifo) - x.head }

// headSeq is the sequence number of the oldest held prediction: every
// record before it is of no use to the index but for the outcomes of rows
// it still holds.
func (x *index[B]) headSeq() uint64 {
	if x.held() == 0 {
		return x.seq
	}
	return x.fifo[x.head].seq
}

func (x *index[B]) row(ref process.EndpointRef, id string) *heldRow[B] {
	if ep := x.eps[ref]; ep != nil {
		return ep.rows[id]
	}
	return nil
}

// newRow adds an empty row.
func (x *index[B]) newRow(ref process.EndpointRef, id string) *heldRow[B] {
	ep := x.eps[ref]
	if ep == nil {
		ep = &heldEndpoint[B]{ref: ref, rows: map[string]*heldRow[B]{}}
		x.eps[ref] = ep
	}
	r := &heldRow[B]{ep: ep, id: id}
	ep.rows[id] = r
	return r
}

// changePending applies fn to r, keeping its endpoint's count of pending rows.
func changePending[B any](r *heldRow[B], fn func()) {
	was := r.pending()
	fn()
	switch is := r.pending(); {
	case is && !was:
		r.ep.pending++
	case was && !is:
		r.ep.pending--
	}
}

// accepts reports whether the index would hold p: not when p's row holds
// a prediction of p's model already. birth reports that p would start its
// row.
func (x *index[B]) accepts(p *Prediction) (ok, birth bool) {
	r := x.row(p.Endpoint, p.RowID)
	if r == nil {
		return true, true
	}
	return !r.hasModel(unique.Make(p.Model)), false
}

// add holds p as the record seq, with body. A birth ends the life of a
// row the index still has, with its outcome (only a rebuild has one: its
// old predictions leave with the bounds applied at its end).
func (x *index[B]) add(p *Prediction, birth bool, seq uint64, body B) {
	r := x.row(p.Endpoint, p.RowID)
	if r == nil {
		r = x.newRow(p.Endpoint, p.RowID)
	}
	e := &heldPrediction[B]{row: r, model: unique.Make(p.Model), at: nanos(p.At), seq: seq, body: body}
	changePending(r, func() {
		if birth && r.fed != nil {
			r.ep.kill(r.fed)
			r.fed = nil
		}
		r.preds = append(r.preds, e)
	})
	x.fifo = append(x.fifo, e)
}

// prune drops the oldest held predictions while more than the maximum
// are held or the oldest is past the retention at now, and reports
// whether it dropped any. Only the head of the queue leaves: a
// prediction whose At is older than the one appended before it waits for
// that one.
func (x *index[B]) prune(now time.Time) bool {
	cutoff := nanos(now.Add(-x.retention))
	dropped := false
	for x.held() > 0 {
		if e := x.fifo[x.head]; x.held() <= x.max && e.at >= cutoff {
			break
		}
		x.pop()
		dropped = true
	}
	if x.head > 64 && x.head*2 >= len(x.fifo) {
		n := copy(x.fifo, x.fifo[x.head:])
		clear(x.fifo[n:])
		x.fifo, x.head = x.fifo[:n], 0
	}
	return dropped
}

// pop drops the oldest held prediction, and its row with its outcome
// when it was the row's last.
func (x *index[B]) pop() {
	e := x.fifo[x.head]
	x.fifo[x.head] = nil
	x.head++
	r := e.row
	// The queue and the row's predictions are both in append order, so
	// the oldest held is its row's first.
	changePending(r, func() {
		r.preds[0] = nil
		r.preds = r.preds[1:]
	})
	if len(r.preds) == 0 {
		x.dropRow(r)
	}
}

// dropRow removes r, which holds no prediction, with its outcome.
func (x *index[B]) dropRow(r *heldRow[B]) {
	ep := r.ep
	delete(ep.rows, r.id)
	if r.fed != nil {
		ep.kill(r.fed)
	}
	if len(ep.rows) == 0 {
		delete(x.eps, ep.ref)
	}
}

// kill marks f dead, and compacts the list of outcomes once it is half
// dead, so that it stays within twice the outcomes held.
func (ep *heldEndpoint[B]) kill(f *heldOutcome[B]) {
	f.dead = true
	ep.deadFed++
	if ep.deadFed*2 < len(ep.fed) {
		return
	}
	live := ep.fed[:0]
	for _, f := range ep.fed {
		if !f.dead {
			live = append(live, f)
		}
	}
	clear(ep.fed[len(live):])
	ep.fed, ep.deadFed = live, 0
}

// setFed records o as the outcome of r, held in the record seq and
// first recorded in the record recorded.
func (x *index[B]) setFed(r *heldRow[B], o Outcome, at time.Time, seq, recorded uint64) {
	f := &heldOutcome[B]{row: r, isLabel: o.IsLabel, label: o.Label, value: o.Value, at: at, seq: seq, recorded: recorded}
	changePending(r, func() { r.fed = f })
	r.ep.fed = append(r.ep.fed, f)
}

// plan decides a feedback batch on what the index holds: what it counts
// and, in batch order, the outcomes it records, the first of each row
// that has predictions and no outcome.
func (x *index[B]) plan(ref process.EndpointRef, outs []Outcome) (Applied, []Outcome) {
	var a Applied
	var matched []Outcome
	var taken, listed map[string]bool
	for _, o := range outs {
		r := x.row(ref, o.RowID)
		switch {
		case r == nil:
			a.Unknown++
			if len(a.UnknownIDs) < MaxListedUnknown && !listed[o.RowID] {
				if listed == nil {
					listed = map[string]bool{}
				}
				listed[o.RowID] = true
				a.UnknownIDs = append(a.UnknownIDs, o.RowID)
			}
		case r.fed != nil || taken[o.RowID]:
			a.Duplicates++
		default:
			if taken == nil {
				taken = map[string]bool{}
			}
			taken[o.RowID] = true
			a.Matched++
			matched = append(matched, o)
		}
	}
	return a, matched
}

// feed records the outcomes plan matched, in the record seq.
func (x *index[B]) feed(ref process.EndpointRef, matched []Outcome, at time.Time, seq uint64) {
	for _, o := range matched {
		x.setFed(x.row(ref, o.RowID), o, at, seq, seq)
	}
}

// feedRebuilt applies an outcome record met while rebuilding the index
// from a log: the first outcome of a row's life is kept. A row the index
// does not have yet is one whose life began in a part of the log the
// bounds deleted: it is kept as an orphan, which the row's next
// prediction adopts, unless that prediction is a birth; an orphan no
// prediction adopts is dropped at the end of the rebuild. recorded is the
// record that first recorded the outcomes.
func (x *index[B]) feedRebuilt(ref process.EndpointRef, outs []Outcome, at time.Time, seq, recorded uint64) {
	for _, o := range outs {
		r := x.row(ref, o.RowID)
		if r == nil {
			r = x.newRow(ref, o.RowID)
			x.orphans = append(x.orphans, r)
		}
		if r.fed == nil {
			x.setFed(r, o, at, seq, recorded)
		}
	}
}

// endRebuild drops the orphans no prediction adopted and applies the
// bounds at now, which drop every prediction of a row's earlier lives.
func (x *index[B]) endRebuild(now time.Time) {
	for _, r := range x.orphans {
		if len(r.preds) == 0 && x.row(r.ep.ref, r.id) == r {
			x.dropRow(r)
		}
	}
	x.orphans = nil
	x.prune(now)
}

// joined returns the outcomes of ref's rows fed at or after since, oldest
// first, and in the order they were recorded.
func (x *index[B]) joined(ref process.EndpointRef, since time.Time) []*heldOutcome[B] {
	ep := x.eps[ref]
	if ep == nil {
		return nil
	}
	var out []*heldOutcome[B]
	for _, f := range ep.fed {
		if !f.dead && !f.at.Before(since) {
			out = append(out, f)
		}
	}
	slices.SortStableFunc(out, func(a, b *heldOutcome[B]) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		switch {
		case a.recorded < b.recorded:
			return -1
		case a.recorded > b.recorded:
			return 1
		}
		return 0
	})
	return out
}

// pendingRows counts ref's rows with predictions and no outcome.
func (x *index[B]) pendingRows(ref process.EndpointRef) int {
	if ep := x.eps[ref]; ep != nil {
		return ep.pending
	}
	return 0
}

// fedIn returns the outcomes held whose record's sequence number is in
// [lo, hi), in the order of their records.
func (x *index[B]) fedIn(lo, hi uint64) []*heldOutcome[B] {
	var out []*heldOutcome[B]
	for _, ep := range x.eps {
		for _, f := range ep.fed {
			if !f.dead && f.seq >= lo && f.seq < hi {
				out = append(out, f)
			}
		}
	}
	slices.SortStableFunc(out, func(a, b *heldOutcome[B]) int {
		switch {
		case a.seq < b.seq:
			return -1
		case a.seq > b.seq:
			return 1
		}
		return 0
	})
	return out
}
