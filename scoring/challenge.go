package scoring

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/outcomes"
	"github.com/scorehub/scorehub/registry/process"
	"github.com/scorehub/scorehub/scoring/internal/wire"
)

// challenged runs x as its endpoint's champion and challengers: the rows
// a split challenger is assigned are answered by it instead of the
// champion (by the champion after all when it fails), and every shadow
// challenger scores the rows after the answer is ready, on a goroutine of
// its own, under its own deadline and within the Challenges' budget, its
// answer compared and dropped. Nothing a challenger does fails, delays or
// changes the champion's answer.
func (e *engine) challenged(req context.Context, x *execution) (wire.Result, error) {
	table := x.in.Table
	assign, split := x.assign(table)
	var ids []string // each row's ID, when the endpoint keeps predictions
	if x.rowID != "" && e.challenges.keeping() {
		ids = rowIDs(table, x.rowID)
	}
	var (
		result wire.Result
		who    []int // who answered each row: a split challenger's index, -1 the champion; nil: the champion all
		err    error
	)
	if !split {
		start := time.Now()
		if result, err = e.executeOne(req, x); err != nil {
			return wire.Result{}, err
		}
		if len(x.challengers) > 0 {
			e.challenges.champion(x, time.Since(start))
		}
	} else if result, who, err = e.split(req, x, assign); err != nil {
		return wire.Result{}, err
	}
	e.monitor(x, result)  // a split's rows in the champion's window, each with the answer it got
	var answered *answers // what the shadows compare with, and the predictions kept
	if ids != nil || x.hasShadow() {
		answered = shadowView(result, x.process.Output)
	}
	e.challenges.keep(x, ids, answered, who)
	for i := range x.challengers {
		c := &x.challengers[i]
		if c.Mode != registry.ChallengeShadow {
			continue
		}
		if c.Err != nil {
			e.challenges.unavailable(x, c)
			continue
		}
		// After the answer is written: a shadow takes no processor from
		// its champion's encoding.
		x.after = append(x.after, func() { e.shadow(x, i, table, answered, ids) })
	}
	if x.answeredBy {
		by := make([]string, table.Rows())
		for r := range by {
			by[r] = x.process.Name
			if who != nil && who[r] >= 0 {
				by[r] = x.challengers[who[r]].Process.Name
			}
		}
		if result, err = withColumn(result, process.TextColumn(registry.AnsweredByColumn, by, nil)); err != nil {
			return wire.Result{}, err
		}
	}
	if x.outliers {
		if result, err = e.challenges.withOutliers(result, table, x.reference); err != nil {
			return wire.Result{}, err
		}
	}
	if x.payloadLog != nil {
		e.logPayloads(x, result, func(r int) string {
			switch {
			case who != nil && who[r] >= 0:
				return x.challengers[who[r]].Process.Name
			case x.model:
				return x.process.Name
			}
			return ""
		})
	}
	return result, nil
}

// hasShadow reports whether x has a shadow challenger.
func (x *execution) hasShadow() bool {
	for i := range x.challengers {
		if x.challengers[i].Mode == registry.ChallengeShadow {
			return true
		}
	}
	return false
}

// assign returns, for each row of t, the index in x.challengers of the
// split challenger that answers it, -1 for the champion, and whether any
// row goes to a challenger. With a split key, a row's place in [0, 100)
// is a hash of its key's value, so that one key always meets one model;
// without one, a request's rows all take one place, drawn at random.
// A row without a key value, and the share of a challenger that cannot
// score, are the champion's.
func (x *execution) assign(t *process.Table) ([]int, bool) {
	var shares []int // indices of the split challengers that can score
	for i := range x.challengers {
		if c := &x.challengers[i]; c.Mode == registry.ChallengeSplit && c.Err == nil && c.Percent > 0 {
			shares = append(shares, i)
		}
	}
	if len(shares) == 0 {
		return nil, false
	}
	pick := func(place float64) int {
		cum := 0.0
		for _, i := range shares {
			cum += x.challengers[i].Percent
			if place < cum {
				return i
			}
		}
		return -1
	}
	assign := make([]int, t.Rows())
	key, keyed := (*process.Column)(nil), x.splitKey != ""
	if keyed {
		key, _ = t.Lookup(x.splitKey)
	}
	some := false
	if !keyed {
		k := pick(rand.Float64() * 100)
		for r := range assign {
			assign[r] = k
		}
		return assign, k >= 0
	}
	for r := range assign {
		assign[r] = -1
		if key == nil || key.IsMissing(r) {
			continue
		}
		if assign[r] = pick(SplitPlace(keyText(key, r))); assign[r] >= 0 {
			some = true
		}
	}
	return assign, some
}

// keyText is row r's value of key as text: a number as
// [outcomes.NumberID] writes it, so that 7 and 7.0 are one key.
func keyText(key *process.Column, r int) string {
	if key.Kind == process.Number {
		v, _ := key.Number(r)
		return outcomes.NumberID(v)
	}
	s, _ := key.Text(r)
	return s
}

// SplitPlace returns the place in [0, 100) of a row whose split key has
// the value key (a number as strconv.FormatFloat(v, 'g', -1, 64) writes
// it): the row is answered by the first split challenger whose share,
// added to those of the split challengers before it, passes its place,
// and by the champion when none does. It is a hash (FNV-1a, 64 bits), the
// same on every replica and across restarts.
func SplitPlace(key string) float64 {
	h := fnv.New64a()
	h.Write([]byte(key))
	return float64(h.Sum64()%1_000_000) / 10_000
}

// split scores the rows assign gives each model with that model, and
// returns their answers in the rows' order, with who answered each row:
// a challenger's index, or -1 for the champion.
func (e *engine) split(req context.Context, x *execution, assign []int) (wire.Result, []int, error) {
	t := x.in.Table
	groups := make(map[int][]int)
	for r, k := range assign {
		groups[k] = append(groups[k], r)
	}
	who := make([]int, t.Rows())
	var parts []splitPart
	run := func(k int, rows []int) error {
		sub := *x
		sub.challengers = nil
		sub.in.Table = gather(t, rows)
		if k >= 0 {
			sub.process = x.challengers[k].Process
		}
		start := time.Now()
		res, err := e.executeOne(req, &sub)
		elapsed := time.Since(start)
		if k >= 0 {
			e.challenges.splitAnswered(x, &x.challengers[k], len(rows), elapsed, err)
			if err != nil {
				// The challenger failed its rows: the champion answers them.
				return errChallengerFailed
			}
		} else if err != nil {
			return err
		} else {
			e.challenges.champion(x, elapsed)
		}
		whole, err := joinResult(res)
		if err != nil {
			return err
		}
		for _, r := range rows {
			who[r] = k
		}
		parts = append(parts, splitPart{rows: rows, t: whole})
		return nil
	}
	var fallback []int
	for k := -1; k < len(x.challengers); k++ {
		rows, ok := groups[k]
		if !ok {
			continue
		}
		if err := run(k, rows); err == errChallengerFailed {
			fallback = append(fallback, rows...)
		} else if err != nil {
			return wire.Result{}, nil, err
		}
	}
	if len(fallback) > 0 {
		if err := run(-1, fallback); err != nil {
			return wire.Result{}, nil, err
		}
	}
	merged, err := scatter(t.Rows(), parts)
	if err != nil {
		return wire.Result{}, nil, fmt.Errorf("scoring: process %q and its challengers: %w", x.process.Name, err)
	}
	return wire.Result{Whole: merged}, who, nil
}

// errChallengerFailed marks a split challenger's failure, which the
// champion makes good.
var errChallengerFailed = fmt.Errorf("scoring: a split challenger failed")

// splitPart is the answer of one model to some rows.
type splitPart struct {
	rows []int
	t    *process.Table
}

// gather returns the rows of t, in that order, as a table of their own.
func gather(t *process.Table, rows []int) *process.Table {
	if len(rows) == t.Rows() {
		return t // every row, in order: assign lists them so
	}
	cols := make([]process.Column, t.NumColumns())
	for i := range cols {
		c := t.Column(i)
		out := process.Column{Name: c.Name, Kind: c.Kind}
		if c.Missing != nil {
			out.Missing = make([]bool, len(rows))
			for j, r := range rows {
				out.Missing[j] = c.Missing[r]
			}
		}
		if c.Kind == process.Number {
			out.Numbers = make([]float64, len(rows))
			for j, r := range rows {
				out.Numbers[j] = c.Numbers[r]
			}
		} else {
			out.Texts = make([]string, len(rows))
			for j, r := range rows {
				out.Texts[j] = c.Texts[r]
			}
		}
		cols[i] = out
	}
	g, err := process.NewTable(len(rows), cols...)
	if err != nil {
		panic(err) // t's columns, each cut to the same rows
	}
	return g
}

// scatter returns the table of rows rows whose row r is row j of the
// part that lists r at j, with the columns of the first part; every part
// must have them.
func scatter(rows int, parts []splitPart) (*process.Table, error) {
	first := parts[0].t
	cols := make([]process.Column, first.NumColumns())
	for i := range cols {
		c := first.Column(i)
		out := process.Column{Name: c.Name, Kind: c.Kind, Missing: make([]bool, rows)}
		if c.Kind == process.Number {
			out.Numbers = make([]float64, rows)
		} else {
			out.Texts = make([]string, rows)
		}
		for _, p := range parts {
			pc, ok := p.t.Lookup(c.Name)
			if !ok || pc.Kind != c.Kind {
				return nil, fmt.Errorf("the models answer different columns: %q", c.Name)
			}
			for j, r := range p.rows {
				out.Missing[r] = pc.IsMissing(j)
				if c.Kind == process.Number {
					out.Numbers[r] = pc.Numbers[j]
				} else {
					out.Texts[r] = pc.Texts[j]
				}
			}
		}
		cols[i] = out
	}
	return process.NewTable(rows, cols...)
}

// joinResult returns r as one table.
func joinResult(r wire.Result) (*process.Table, error) {
	if r.Parts == nil {
		return r.Whole, nil
	}
	var parts []splitPart
	n := 0
	for _, p := range r.Parts {
		rows := make([]int, p.Rows())
		for j := range rows {
			rows[j] = n + j
		}
		n += p.Rows()
		parts = append(parts, splitPart{rows: rows, t: p})
	}
	return scatter(n, parts)
}

// withColumn returns r with the column c added after its others, in
// place of a column of r of the same name.
func withColumn(r wire.Result, c process.Column) (wire.Result, error) {
	t, err := joinResult(r)
	if err != nil {
		return wire.Result{}, err
	}
	cols := make([]process.Column, 0, t.NumColumns()+1)
	for i := range t.NumColumns() {
		if tc := t.Column(i); tc.Name != c.Name {
			cols = append(cols, *tc)
		}
	}
	cols = append(cols, c)
	out, err := process.NewTable(t.Rows(), cols...)
	return wire.Result{Whole: out}, err
}

// answers is what a shadow's answers are compared with: the predicted
// class of each row and the confidence of each class (a classifier), or
// the prediction (a regressor), read from an answer's own columns, which
// no one changes once it is answered and which hold none of the
// request's memory (a missing value is copied out as NaN).
type answers struct {
	labels  []string // nil: not a classifier
	classes []string // a classifier's, in the order of its confidence columns
	missing []bool
	conf    [][]float64 // the confidences of classes[i], by row
	numbers []float64   // a regressor's predictions
}

// shadowView returns the answers of result a shadow is compared with:
// the first text column of outputs read as the predicted class and its
// confidence(<class>) columns, or the first number column as a
// regression's prediction.
func shadowView(result wire.Result, outputs []process.ColumnSpec) *answers {
	t, err := joinResult(result)
	if err != nil || t == nil {
		return nil
	}
	rows := t.Rows()
	a := &answers{missing: make([]bool, rows)}
	label := ""
	for _, o := range outputs {
		if o.Kind == process.Text {
			label = o.Name
			break
		}
	}
	if label != "" {
		c, ok := t.Lookup(label)
		if !ok || c.Kind != process.Text {
			return nil
		}
		a.labels = c.Texts
		if c.Missing != nil {
			copy(a.missing, c.Missing)
		}
		for _, o := range outputs {
			if cls, ok := process.ConfidenceClass(o.Name); ok && o.Kind == process.Number {
				if cc, ok := t.Lookup(o.Name); ok && cc.Kind == process.Number {
					a.conf = append(a.conf, numbersOf(cc))
					a.classes = append(a.classes, cls)
				}
			}
		}
		return a
	}
	for _, o := range outputs {
		if o.Kind != process.Number {
			continue
		}
		c, ok := t.Lookup(o.Name)
		if !ok || c.Kind != process.Number {
			return nil
		}
		a.numbers = numbersOf(c)
		for r := range a.missing {
			a.missing[r] = math.IsNaN(a.numbers[r])
		}
		return a
	}
	return nil
}

// slice returns the answers of rows lo to hi of a, sharing a's memory.
func (a *answers) slice(lo, hi int) *answers {
	s := &answers{classes: a.classes, missing: a.missing[lo:hi]}
	if a.labels != nil {
		s.labels = a.labels[lo:hi]
		s.conf = make([][]float64, len(a.conf))
		for i, c := range a.conf {
			s.conf[i] = c[lo:hi]
		}
	}
	if a.numbers != nil {
		s.numbers = a.numbers[lo:hi]
	}
	return s
}

// numbersOf returns c's numbers, NaN where one is missing: c's own slice
// when none is.
func numbersOf(c *process.Column) []float64 {
	if c.Missing == nil {
		return c.Numbers
	}
	out := make([]float64, len(c.Numbers))
	copy(out, c.Numbers)
	for r, m := range c.Missing {
		if m {
			out[r] = math.NaN()
		}
	}
	return out
}

// shadow has challenger k of x score table beside x's champion, whose
// answers are champ, on a shadow worker: in the challenger's batch, with
// the rows of every request answered while the batch waits for a worker
// (see shadowBatch), if one is free or as many tasks wait as there are
// workers; otherwise it counts the rows as skipped. The challenger's
// predictions of rows with ids are kept.
func (e *engine) shadow(x *execution, k int, table *process.Table, champ *answers, ids []string) {
	c := &x.challengers[k]
	stats := e.challenges.pair(x, c)
	if champ == nil {
		stats.skipped.Add(uint64(table.Rows()))
		return
	}
	b := &stats.batch
	inputs := c.Process.Input
	if len(inputs) == 0 { // a process that declares none reads what the request holds
		inputs = make([]process.ColumnSpec, table.NumColumns())
		for i := range inputs {
			inputs[i] = process.ColumnSpec{Name: table.Column(i).Name, Kind: table.Column(i).Kind}
		}
	}
	ok, first, wrong := b.add(inputs, table, batchPart{rows: table.Rows(), champ: champ, ids: ids, keep: e.challenges.keeper(x, k)})
	switch {
	case wrong:
		stats.errors.Add(1) // the challenger reads a column of another kind than the request holds
		return
	case !ok:
		stats.skipped.Add(uint64(table.Rows()))
		return
	case !first:
		return // the task offered already takes these rows too
	}
	proc, ep := c.Process, x.in.Endpoint
	run := func(ctx context.Context) {
		t, parts := b.take()
		if t == nil {
			return
		}
		start := time.Now()
		res, err := e.scoreShadow(ctx, proc, process.Input{Table: t, Endpoint: ep})
		stats.latency.observe(time.Since(start))
		if err != nil {
			stats.errors.Add(1)
			e.log.Debug("scoring: a shadow challenger failed", "group", ep.Group, "path", ep.Path, "alias", ep.Alias, "challenger", proc.Name, "rows", t.Rows(), "error", err)
			return
		}
		all := shadowView(wire.Result{Whole: res}, proc.Output)
		lo := 0
		for _, p := range parts {
			var a *answers
			if all != nil {
				a = all.slice(lo, lo+p.rows)
			}
			lo += p.rows
			stats.compare(p.champ, a)
			p.keep(p.ids, a)
		}
	}
	if !e.challenges.shadows.offer(shadowTask{run: run, timeout: x.timeout}) {
		if t, _ := b.take(); t != nil {
			stats.skipped.Add(uint64(t.Rows()))
		}
	}
}

// scoreShadow scores in with p, its panic an error.
func (e *engine) scoreShadow(ctx context.Context, p process.ProcessInfo, in process.Input) (t *process.Table, err error) {
	defer func() {
		if v := recover(); v != nil {
			e.log.ErrorContext(ctx, "scoring: process panicked", "process", p.Name, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			t, err = nil, fmt.Errorf("scoring: process %q panicked: %v", p.Name, v)
		}
	}()
	t, err = p.Process.Score(ctx, in)
	if err == nil {
		err = wire.CheckResult(in.Table.Rows(), t)
	}
	if err == nil {
		err = ctx.Err()
	}
	return t, err
}

// defaultShadowBudget is how many shadow executions run at once: one
// per processor, so that shadows never take more than the machine's
// processors from the champions.
func defaultShadowBudget() int { return runtime.GOMAXPROCS(0) }

// of returns the confidences of class cls by row, nil when a has none.
func (a *answers) of(cls string) []float64 {
	for i, c := range a.classes {
		if c == cls {
			return a.conf[i]
		}
	}
	return nil
}
