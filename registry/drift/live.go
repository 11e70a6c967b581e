package drift

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/scorehub/scorehub/registry/process"
)

// MaxSlots is the most slots a [Window] may have.
const MaxSlots = 1000

// Window bounds the rows a [Live] keeps: the last Duration, the last
// Rows, or whichever is fewer when both are set. At least one must be.
// The window moves by whole slots, so that it holds:
//   - by time, no row older than Duration and every row of the last
//     Duration − Duration/Slots;
//   - by rows, at most Rows rows and, once that many have been seen, at
//     least Rows − Rows/Slots, rounded to whole requests (one request's
//     rows share a slot, and a request of more than Rows rows is kept
//     whole while it is the newest).
type Window struct {
	// Duration is how far back the window reaches; zero means no bound
	// by time.
	Duration time.Duration
	// Rows is how many of the newest rows the window holds; zero means
	// no bound by rows.
	Rows int64
	// Slots is how many slots the window is cut into, 1 to MaxSlots;
	// zero means 60 (a minute each for an hour). More slots move the
	// window more smoothly and take more memory.
	Slots int
	// Now returns the time; nil means time.Now.
	Now func() time.Time
}

// Live counts the rows a model scores over a sliding [Window], in the
// bins of a [Profile]. Its memory is fixed when it is made:
//
//	(Slots + 1) × (2 + Σ over features and prediction of (bins + 2)) × 8 bytes
//
// (a ring of slots, each a row count, a start time and per column its
// bin, missing and outside counters, and one more for a categorical
// number's unseen values): 176,656 bytes (about 173 KiB) for 30 features
// of 10 bins in 60 slots, plus the profile's lookups.
//
// A Live is safe for concurrent use. [Live.Observe] adds a request's
// counts to the current slot with atomic adds, one per non-zero counter,
// after counting the request on its own goroutine; it takes a lock only
// when the window moves on to a new slot, once per slot. [Live.Snapshot]
// holds that lock while it reads, so the window does not move under it,
// and may see a request that is being counted only in part.
type Live struct {
	profile *Profile
	cols    []liveColumn // the features, then the prediction
	hasPred bool
	width   int // counters per slot

	now      func() time.Time
	span     int64 // Window.Duration in nanoseconds, or 0
	slotSpan int64 // how long a slot is current, or 0
	maxRows  int64 // Window.Rows, or 0
	slotRows int64 // how many rows fill a slot, or 0

	gen  atomic.Int64 // the current slot is ring[gen % len(ring)]
	mu   sync.Mutex   // held to move to a new slot and to read
	ring []slot
}

// liveColumn is what Observe needs of one profiled column.
type liveColumn struct {
	name  string
	kind  process.Kind
	off   int // its first counter in a slot: bins, then missing, then outside
	bins  int
	edges []float64
	lo    float64
	hi    float64
	// index maps a Text value to its bin; a value in Others maps to the
	// "other" bin, and a value absent from it is unseen.
	index map[string]int32
	// values are a categorical Number column's known values, ascending;
	// a value absent from them is unseen.
	values []float64
	extra  int // counters after the bins: 2, or 3 with values
}

// The counters a column has after its bins: outside counts a Number's
// values out of range, a Text's unseen ones; unseen a categorical
// Number's unseen ones.
const (
	missingCounter = iota
	outsideCounter
	unseenCounter
	maxExtra
)

type slot struct {
	start  atomic.Int64 // UnixNano of the slot's first row
	rows   atomic.Int64
	counts []atomic.Int64
}

// NewLive returns a Live counting in p's bins over window w. It fails
// when p is not a valid profile or w bounds nothing. p must not be
// modified afterwards.
func NewLive(p *Profile, w Window) (*Live, error) {
	if err := p.validate(); err != nil {
		return nil, err
	}
	if w.Duration < 0 || w.Rows < 0 || w.Slots < 0 || w.Slots > MaxSlots {
		return nil, fmt.Errorf("drift: window of %v, %d rows, %d slots: want none negative and at most %d slots", w.Duration, w.Rows, w.Slots, MaxSlots)
	}
	if w.Duration == 0 && w.Rows == 0 {
		return nil, errors.New("drift: window bounds neither time nor rows")
	}
	slots := w.Slots
	if slots == 0 {
		slots = 60
	}
	l := &Live{profile: p, now: w.Now, span: int64(w.Duration), maxRows: w.Rows}
	if l.now == nil {
		l.now = time.Now
	}
	if l.span > 0 {
		l.slotSpan = max(1, l.span/int64(slots))
	}
	if l.maxRows > 0 {
		l.slotRows = (l.maxRows + int64(slots) - 1) / int64(slots)
	}
	add := func(f *Feature) {
		c := liveColumn{name: f.Name, kind: f.Kind, off: l.width, bins: f.bins(), edges: f.Edges, lo: f.Min, hi: f.Max, extra: outsideCounter + 1}
		if len(f.Values) > 0 {
			c.values, c.extra = f.Values, unseenCounter+1
		}
		if f.Kind == process.Text {
			c.index = make(map[string]int32, len(f.Categories)+len(f.Others))
			for i, v := range f.Categories {
				c.index[v] = int32(i)
			}
			for _, v := range f.Others {
				c.index[v] = int32(len(f.Categories))
			}
		}
		l.width += c.bins + c.extra
		l.cols = append(l.cols, c)
	}
	for i := range p.Features {
		add(&p.Features[i])
	}
	if p.Prediction != nil {
		add(p.Prediction)
		l.hasPred = true
	}
	// One slot more than the window's, so that the slots a full window
	// reads are never the one being reset.
	l.ring = make([]slot, slots+1)
	for i := range l.ring {
		l.ring[i].counts = make([]atomic.Int64, l.width)
		l.ring[i].start.Store(math.MinInt64)
	}
	l.ring[0].start.Store(l.now().UnixNano())
	return l, nil
}

// maxWidth is the most counters one column has.
const maxWidth = max(MaxBins, MaxCategories+1) + maxExtra

// Observe counts the rows of one request. Profiled columns are looked up
// by name in tables, in order (a request's input, then its result, say);
// a column that is in none of them, or has another kind than the
// profile's, counts as missing in every row. Missing values, NaN and
// ±Inf count as missing. Observe fails, counting nothing, when the
// tables' row counts differ.
func (l *Live) Observe(tables ...*process.Table) error {
	if len(tables) == 0 {
		return nil
	}
	rows := tables[0].Rows()
	for _, t := range tables[1:] {
		if t.Rows() != rows {
			return fmt.Errorf("drift: observed tables have %d and %d rows", rows, t.Rows())
		}
	}
	if rows == 0 {
		return nil
	}
	s := l.current(l.now().UnixNano())
	var buf [maxWidth]int64
	for ci := range l.cols {
		lc := &l.cols[ci]
		counts := buf[:lc.bins+lc.extra]
		clear(counts)
		var col *process.Column
		for _, t := range tables {
			if c, ok := t.Lookup(lc.name); ok {
				col = c
				break
			}
		}
		switch {
		case col == nil || col.Kind != lc.kind:
			counts[lc.bins+missingCounter] = int64(rows)
		case lc.kind == process.Number:
			lc.countNumbers(counts, col)
		default:
			lc.countTexts(counts, col)
		}
		sc := s.counts[lc.off : lc.off+len(counts)]
		for i, n := range counts {
			if n != 0 {
				sc[i].Add(n)
			}
		}
	}
	s.rows.Add(int64(rows))
	return nil
}

func (lc *liveColumn) countNumbers(counts []int64, c *process.Column) {
	missing, outside := &counts[lc.bins+missingCounter], &counts[lc.bins+outsideCounter]
	for i, v := range c.Numbers {
		if (c.Missing != nil && c.Missing[i]) || math.IsNaN(v) || math.IsInf(v, 0) {
			*missing++
			continue
		}
		if v < lc.lo || v > lc.hi {
			*outside++
		}
		if lc.values != nil {
			if _, known := slices.BinarySearch(lc.values, v); !known {
				counts[lc.bins+unseenCounter]++
			}
		}
		counts[numberBin(lc.edges, v)]++
	}
}

func (lc *liveColumn) countTexts(counts []int64, c *process.Column) {
	missing, outside := &counts[lc.bins+missingCounter], &counts[lc.bins+outsideCounter]
	other := lc.bins - 1
	for i, v := range c.Texts {
		if c.Missing != nil && c.Missing[i] {
			*missing++
			continue
		}
		b, ok := lc.index[v]
		if !ok {
			*outside++
			b = int32(other)
		}
		counts[b]++
	}
}

// current returns the slot rows seen at now go to, moving the window on
// when the current slot's time is up or it is full.
func (l *Live) current(now int64) *slot {
	for {
		g := l.gen.Load()
		s := &l.ring[g%int64(len(l.ring))]
		timeUp := l.slotSpan > 0 && now-s.start.Load() >= l.slotSpan
		full := l.slotRows > 0 && s.rows.Load() >= l.slotRows
		if !timeUp && !full {
			return s
		}
		l.mu.Lock()
		if l.gen.Load() == g {
			next := &l.ring[(g+1)%int64(len(l.ring))]
			for i := range next.counts {
				next.counts[i].Store(0)
			}
			next.rows.Store(0)
			next.start.Store(now)
			l.gen.Store(g + 1)
		}
		l.mu.Unlock()
	}
}

// Profile returns the profile l counts in the bins of.
func (l *Live) Profile() *Profile { return l.profile }

// Snapshot returns the counts of the rows in the window now.
func (l *Live) Snapshot() *Histograms {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now().UnixNano()
	sum := make([]int64, l.width)
	var rows int64
	g := l.gen.Load()
	for k := g; k >= 0 && k > g-int64(len(l.ring)); k-- {
		s := &l.ring[k%int64(len(l.ring))]
		if l.span > 0 && s.start.Load() <= now-l.span {
			break
		}
		n := s.rows.Load()
		if l.maxRows > 0 && k != g && rows+n > l.maxRows {
			break
		}
		rows += n
		for i := range sum {
			sum[i] += s.counts[i].Load()
		}
	}
	h := &Histograms{Rows: rows, Features: make([]Histogram, 0, len(l.cols))}
	for i := range l.cols {
		lc := &l.cols[i]
		c := sum[lc.off : lc.off+lc.bins+lc.extra]
		hist := Histogram{Name: lc.name, Counts: c[:lc.bins:lc.bins], Missing: c[lc.bins+missingCounter]}
		switch {
		case lc.kind == process.Text:
			hist.Unseen = c[lc.bins+outsideCounter]
		case lc.values != nil:
			hist.OutOfRange, hist.Unseen = c[lc.bins+outsideCounter], c[lc.bins+unseenCounter]
		default:
			hist.OutOfRange = c[lc.bins+outsideCounter]
		}
		if l.hasPred && i == len(l.cols)-1 {
			h.Prediction = &hist
		} else {
			h.Features = append(h.Features, hist)
		}
	}
	return h
}
