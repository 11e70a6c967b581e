package scoring

import (
	"context"
	"fmt"
	"hash/fnv"
	"iter"
	"math"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"slices"
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
	e.monitor(x, result) // a split's rows in the champion's window, each with the answer it got
	if ids != nil {
		e.challenges.keep(x, ids, shadowView(result, x.modelOutputs()), who)
	}
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
		champ := result // the champion's own columns, before any added below
		x.after = append(x.after, func() { e.shadow(x, i, table, champ, ids) })
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

// modelOutputs returns the columns x's process answers itself: its
// Output without those the endpoint adds after them (answeredBy,
// outlier), which its result does not hold yet.
func (x *execution) modelOutputs() []process.ColumnSpec {
	out := x.process.Output
	if x.outliers && len(out) > 0 && out[len(out)-1].Name == registry.OutlierColumn {
		out = out[:len(out)-1]
	}
	if x.answeredBy && len(out) > 0 && out[len(out)-1].Name == registry.AnsweredByColumn {
		out = out[:len(out)-1]
	}
	return out
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
// the prediction (a regressor), copied out of an answer's own columns (a
// missing confidence or prediction as NaN), so that they hold none of
// the request's memory and can gather the answers to many requests.
type answers struct {
	shaped     bool // classifier and classes are set: a holds an answer's columns
	classifier bool
	labels     []string // nil: not a classifier
	classes    []string // a classifier's, in the order of its confidence columns
	missing    []bool
	conf       [][]float64 // the confidences of classes[i], by row
	numbers    []float64   // a regressor's predictions
}

// shadowView returns the answers of result a shadow is compared with:
// the first text column of outputs read as the predicted class and its
// confidence(<class>) columns, or the first number column as a
// regression's prediction; nil when result holds no such columns.
func shadowView(result wire.Result, outputs []process.ColumnSpec) *answers {
	a := &answers{}
	if !a.appendResult(result, outputs) {
		return nil
	}
	return a
}

// appendResult appends to a the answers of the rows of result, whose
// process declares outputs, as shadowView reads them. It reports false,
// a unchanged, when result holds no such answers or answers of another
// kind or classes than a holds already.
func (a *answers) appendResult(result wire.Result, outputs []process.ColumnSpec) bool {
	if result.Parts == nil {
		if result.Whole == nil {
			return false
		}
		return a.appendTable(result.Whole, outputs)
	}
	var parts answers
	for _, t := range result.Parts {
		if !parts.appendTable(t, outputs) {
			return false
		}
	}
	return a.appendAnswers(&parts)
}

// appendAnswers appends the rows of b to a, and reports false, a
// unchanged, when b holds no answers or answers of another kind or
// classes than a.
func (a *answers) appendAnswers(b *answers) bool {
	switch {
	case !b.shaped:
		return false
	case !a.shaped:
		*a = *b
		return true
	case a.classifier != b.classifier || !slices.Equal(a.classes, b.classes):
		return false
	}
	a.missing = append(a.missing, b.missing...)
	a.labels = append(a.labels, b.labels...)
	for i := range a.conf {
		a.conf[i] = append(a.conf[i], b.conf[i]...)
	}
	a.numbers = append(a.numbers, b.numbers...)
	return true
}

// answerLabel is the name of the column of outputs that a classifier's
// answers read as its predicted class: the first text column; "" for a
// regressor.
func answerLabel(outputs []process.ColumnSpec) string {
	for _, o := range outputs {
		if o.Kind == process.Text {
			return o.Name
		}
	}
	return ""
}

// confidences yields, in the order of outputs, the class and column of
// each confidence(<class>) column of outputs that t holds as numbers.
func confidences(t *process.Table, outputs []process.ColumnSpec) iter.Seq2[string, *process.Column] {
	return func(yield func(string, *process.Column) bool) {
		for _, o := range outputs {
			if cls, ok := process.ConfidenceClass(o.Name); ok && o.Kind == process.Number {
				if c, ok := t.Lookup(o.Name); ok && c.Kind == process.Number && !yield(cls, c) {
					return
				}
			}
		}
	}
}

// prediction returns a regressor's prediction in t: the column of the
// first number column of outputs, if t holds it as numbers.
func prediction(t *process.Table, outputs []process.ColumnSpec) (*process.Column, bool) {
	for _, o := range outputs {
		if o.Kind == process.Number {
			c, ok := t.Lookup(o.Name)
			return c, ok && c.Kind == process.Number
		}
	}
	return nil, false
}

// fits reports whether t holds answers a can take: a label column and
// confidences of a's classes (those t holds, when a holds none yet), or a
// regression's prediction when a is one.
func (a *answers) fits(t *process.Table, outputs []process.ColumnSpec) bool {
	label := answerLabel(outputs)
	if label == "" {
		_, ok := prediction(t, outputs)
		return ok && (!a.shaped || !a.classifier)
	}
	if c, ok := t.Lookup(label); !ok || c.Kind != process.Text || (a.shaped && !a.classifier) {
		return false
	}
	if !a.shaped {
		return true
	}
	i := 0
	for cls := range confidences(t, outputs) {
		if i >= len(a.classes) || a.classes[i] != cls {
			return false
		}
		i++
	}
	return i == len(a.classes)
}

// appendTable appends the answers of t's rows to a, as appendResult does.
func (a *answers) appendTable(t *process.Table, outputs []process.ColumnSpec) bool {
	if !a.fits(t, outputs) {
		return false
	}
	a.shaped = true
	label := answerLabel(outputs)
	if label == "" {
		had := len(a.numbers)
		c, _ := prediction(t, outputs)
		a.numbers = appendNumbers(a.numbers, c)
		for _, v := range a.numbers[had:] {
			a.missing = append(a.missing, math.IsNaN(v))
		}
		return true
	}
	c, _ := t.Lookup(label)
	a.classifier = true
	if a.labels == nil { // not nil for a classifier, even of no rows
		a.labels = make([]string, 0, t.Rows())
	}
	a.labels = append(a.labels, c.Texts...)
	if c.Missing != nil {
		a.missing = append(a.missing, c.Missing...)
	} else {
		a.missing = append(a.missing, make([]bool, t.Rows())...)
	}
	i := 0
	for cls, cc := range confidences(t, outputs) {
		if i == len(a.classes) {
			a.classes = append(a.classes, cls)
			a.conf = append(a.conf, nil)
		}
		a.conf[i] = appendNumbers(a.conf[i], cc)
		i++
	}
	return true
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

// appendNumbers appends c's numbers to dst, NaN where one is missing.
func appendNumbers(dst []float64, c *process.Column) []float64 {
	had := len(dst)
	dst = append(dst, c.Numbers...)
	for r, m := range c.Missing {
		if m {
			dst[had+r] = math.NaN()
		}
	}
	return dst
}

// shadow has challenger k of x score table beside x's champion, whose
// result is champ, on a shadow worker: in the challenger's batch, with
// the rows of every request answered within shadowGather of the batch's
// first and while it waits for a worker (see shadowBatch), unless every
// worker is busy and as many tasks wait, when it counts the rows as
// skipped. The challenger's predictions of rows with ids are kept.
func (e *engine) shadow(x *execution, k int, table *process.Table, champ wire.Result, ids []string) {
	c := &x.challengers[k]
	stats := e.challenges.pair(x, c)
	b := &stats.batch
	inputs := c.Process.Input
	if len(inputs) == 0 { // a process that declares none reads what the request holds
		inputs = make([]process.ColumnSpec, table.NumColumns())
		for i := range inputs {
			inputs[i] = process.ColumnSpec{Name: table.Column(i).Name, Kind: table.Column(i).Kind}
		}
	}
	switch b.add(inputs, table, champ, x.modelOutputs(), ids) {
	case wrongKind:
		stats.errors.Add(1) // the challenger reads a column of another kind than the request holds
		return
	case batchFull, unanswered:
		stats.skipped.Add(uint64(table.Rows()))
		return
	case joinedBatch:
		return // the task offered already takes these rows too
	}
	proc, role, ep, timeout := c.Process, c.Mode, x.in.Endpoint, x.timeout
	skip := func() {
		if t, _, _ := b.take(); t != nil {
			stats.skipped.Add(uint64(t.Rows()))
		}
	}
	run := func(ctx context.Context) {
		// The batch gathers the rows of the requests answered while the
		// shadow waits for a processor, on which its first slice is then
		// scored.
		if e.challenges.answering.acquire(ctx) != nil {
			skip()
			return
		}
		t, champ, kept := b.take()
		if t == nil {
			e.challenges.answering.give(1)
			return
		}
		all, scored, took, err := e.scoreSlices(ctx, proc, t, ep)
		if took > 0 {
			stats.latency.observe(took)
		}
		if err != nil {
			stats.errors.Add(1)
			e.log.Debug("scoring: a shadow challenger failed", "group", ep.Group, "path", ep.Path, "alias", ep.Alias, "challenger", proc.Name, "rows", t.Rows(), "error", err)
			return
		}
		stats.skipped.Add(uint64(t.Rows() - scored))
		if scored == 0 {
			return
		}
		stats.compare(champ.slice(0, scored), all)
		if all == nil {
			return
		}
		for _, p := range kept {
			if n := min(len(p.ids), scored-p.lo); n > 0 {
				e.challenges.handOver(ep, p.ids[:n], all.slice(p.lo, p.lo+n), func(int) (string, string) { return proc.Name, role })
			}
		}
	}
	// Offered a moment later, the task takes the rows of the requests
	// answered meanwhile too: one execution, and one wake of a worker,
	// for them all.
	time.AfterFunc(shadowGather, func() {
		if !e.challenges.shadows.offer(shadowTask{run: run, timeout: timeout}) {
			skip()
		}
	})
}

// shadowGather is how long a shadow batch gathers rows before its task
// is offered to a worker.
const shadowGather = 2 * time.Millisecond

// A shadow scores a batch of a RowWise challenger in slices, each on a
// processor answers leave idle (see answering), of as many rows as take
// about sliceTime, within minSlice and maxSlice rows, the first of
// firstSlice.
const (
	sliceTime  = 200 * time.Microsecond
	firstSlice = 256
	minSlice   = 16
	maxSlice   = 16384
)

// scoreSlices scores t with shadow challenger p in slices (in one when
// p is not RowWise): the first on the processor the caller acquired for
// it, each next once answers leave one idle, until every row is scored
// or ctx ends. It gives back every processor it scores on. It returns the answers to the rows
// scored, the first scored of t (nil when the challenger's answers hold
// none to compare), and the time the challenger took; or the
// challenger's failure, which its deadline passing as it scores the
// first slice is too. Rows past a slice the deadline ended are left
// unscored.
func (e *engine) scoreSlices(ctx context.Context, p process.ProcessInfo, t *process.Table, ep process.EndpointRef) (all *answers, scored int, took time.Duration, err error) {
	n, size := t.Rows(), firstSlice
	if n <= size || !p.RowWise { // a process that reads rows together scores them together
		size = n
	}
	answering := e.challenges.answering
	for scored < n {
		if scored > 0 && answering.acquire(ctx) != nil {
			break
		}
		lo, hi := scored, min(scored+size, n)
		start := time.Now()
		res, err := e.scoreShadow(ctx, p, process.Input{Table: t.Slice(lo, hi), Endpoint: ep})
		d := time.Since(start)
		answering.give(1)
		took += d
		switch {
		case err != nil && lo > 0 && ctx.Err() != nil:
			return all, lo, took, nil // the deadline ended this slice: the rest is skipped
		case err != nil:
			return nil, 0, took, err
		case lo == 0 && hi == n:
			return shadowView(wire.Result{Whole: res}, p.Output), n, took, nil
		}
		if all == nil {
			all = &answers{}
		}
		if !all.appendResult(wire.Result{Whole: res}, p.Output) {
			return nil, hi, took, nil // compared with nothing: a failure
		}
		scored = hi
		if d > 0 {
			size = min(max(int(float64(hi-lo)*float64(sliceTime)/float64(d)), minSlice), maxSlice)
		}
	}
	return all, scored, took, nil
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
