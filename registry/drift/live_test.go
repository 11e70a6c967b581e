package drift_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/scorehub/scorehub/registry/drift"
	"github.com/scorehub/scorehub/registry/process"
)

// clock is a Window.Now that tests move by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func newClock() *clock { return &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)} }

// smallProfile has a number x with bins ≤2, (2, 4], > 4 over [1, 6], a
// text city with bins a, b, other (c seen), and a text prediction.
func smallProfile(t testing.TB) *drift.Profile {
	t.Helper()
	tab := table(t,
		num("x", 1, 2, 3, 4, 5, 6),
		text("city", "a", "a", "a", "b", "b", "c"),
		text("prediction(y)", "no", "no", "no", "no", "yes", "yes"),
	)
	p, err := drift.BuildProfile(tab, []process.ColumnSpec{{Name: "x", Kind: process.Number}, {Name: "city", Kind: process.Text}},
		drift.Options{Bins: 3, Categories: 2, Prediction: process.ColumnSpec{Name: "prediction(y)", Kind: process.Text}})
	if err != nil {
		t.Fatal(err)
	}
	if want := []float64{2, 4}; !cmp.Equal(p.Features[0].Edges, want) {
		t.Fatalf("x edges %v, want %v", p.Features[0].Edges, want)
	}
	return p
}

func newLive(t testing.TB, p *drift.Profile, w drift.Window) *drift.Live {
	t.Helper()
	l, err := drift.NewLive(p, w)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestObserveCounts(t *testing.T) {
	p := smallProfile(t)
	tests := []struct {
		name   string
		tables [][]process.Column
		want   *drift.Histograms
	}{
		{
			name: "bins, missing, out of range, other and unseen",
			tables: [][]process.Column{{
				num("x", 0, 1, 2, 2.5, 4, 4.5, 6, 7, nan),
				text("city", "a", "b", "c", "zz", "", "a", "a", "b", "zz"),
				num("ignored", 1, 2, 3, 4, 5, 6, 7, 8, 9),
			}, {
				text("prediction(y)", "yes", "no", "maybe", "no", "no", "", "no", "no", "no"),
			}},
			want: &drift.Histograms{
				Rows: 9,
				Features: []drift.Histogram{
					// 0 and 7 are outside [1, 6] and still have bins.
					{Name: "x", Counts: []int64{3, 2, 3}, Missing: 1, OutOfRange: 2},
					// c is "other" and was seen; zz is "other" and unseen.
					{Name: "city", Counts: []int64{3, 2, 3}, Missing: 1, Unseen: 2},
				},
				Prediction: &drift.Histogram{Name: "prediction(y)", Counts: []int64{6, 1, 1}, Missing: 1, Unseen: 1},
			},
		},
		{
			name:   "absent and mistyped columns are missing",
			tables: [][]process.Column{{text("x", "1", "2"), num("city", 1, 2)}},
			want: &drift.Histograms{
				Rows: 2,
				Features: []drift.Histogram{
					{Name: "x", Counts: []int64{0, 0, 0}, Missing: 2},
					{Name: "city", Counts: []int64{0, 0, 0}, Missing: 2},
				},
				Prediction: &drift.Histogram{Name: "prediction(y)", Counts: []int64{0, 0, 0}, Missing: 2},
			},
		},
		{
			name:   "the first table holding a column is read",
			tables: [][]process.Column{{num("x", 5)}, {num("x", 1), text("city", "b")}},
			want: &drift.Histograms{
				Rows: 1,
				Features: []drift.Histogram{
					{Name: "x", Counts: []int64{0, 0, 1}},
					{Name: "city", Counts: []int64{0, 1, 0}},
				},
				Prediction: &drift.Histogram{Name: "prediction(y)", Counts: []int64{0, 0, 0}, Missing: 1},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newLive(t, p, drift.Window{Rows: 1000, Now: newClock().Now})
			var tabs []*process.Table
			for _, cols := range tt.tables {
				tabs = append(tabs, table(t, cols...))
			}
			if err := l.Observe(tabs...); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, l.Snapshot()); diff != "" {
				t.Errorf("snapshot (-want +got):\n%s", diff)
			}
		})
	}
}

func TestObserveRowCountsDiffer(t *testing.T) {
	l := newLive(t, smallProfile(t), drift.Window{Rows: 1000})
	err := l.Observe(table(t, num("x", 1, 2)), table(t, text("prediction(y)", "no")))
	if err == nil || !strings.HasPrefix(err.Error(), "drift: ") {
		t.Fatalf("Observe of tables of 2 and 1 rows: %v, want an error", err)
	}
	if got := l.Snapshot().Rows; got != 0 {
		t.Errorf("a refused request left %d rows counted", got)
	}
}

// observeX feeds a request of n rows of x = v; the
// window tests read the bins of x back.
func observeX(t *testing.T, l *drift.Live, v float64, n int) {
	t.Helper()
	if err := l.Observe(table(t, num("x", numbers(n, func(int) float64 { return v })...))); err != nil {
		t.Fatal(err)
	}
}

func TestWindowTime(t *testing.T) {
	clk := newClock()
	l := newLive(t, smallProfile(t), drift.Window{Duration: time.Hour, Slots: 60, Now: clk.Now})
	steps := []struct {
		advance time.Duration
		v       float64 // x's value fed after advancing, 0 for none
		n       int
		want    []int64 // x's bins then
	}{
		{0, 1, 3, []int64{3, 0, 0}},
		{30 * time.Minute, 3, 5, []int64{3, 5, 0}},
		{29 * time.Minute, 6, 7, []int64{3, 5, 7}},
		// 61 minutes after the first rows, they are out.
		{2 * time.Minute, 0, 0, []int64{0, 5, 7}},
		{30 * time.Minute, 0, 0, []int64{0, 0, 7}},
		// A quiet hour and more empties the window.
		{2 * time.Hour, 0, 0, []int64{0, 0, 0}},
		{0, 5, 2, []int64{0, 0, 2}},
	}
	for i, s := range steps {
		clk.Add(s.advance)
		if s.n > 0 {
			observeX(t, l, s.v, s.n)
		}
		h := l.Snapshot()
		var rows int64
		for _, c := range s.want {
			rows += c
		}
		if !cmp.Equal(h.Features[0].Counts, s.want) || h.Rows != rows {
			t.Errorf("step %d: x counts %v of %d rows, want %v of %d", i, h.Features[0].Counts, h.Rows, s.want, rows)
		}
	}
}

func TestWindowRows(t *testing.T) {
	clk := newClock()
	// 10 slots of 100 rows.
	l := newLive(t, smallProfile(t), drift.Window{Rows: 1000, Slots: 10, Now: clk.Now})
	for range 100 {
		observeX(t, l, 1, 10)
		clk.Add(time.Second)
	}
	if h := l.Snapshot(); h.Rows != 1000 || !cmp.Equal(h.Features[0].Counts, []int64{1000, 0, 0}) {
		t.Fatalf("after 1000 rows: x counts %v of %d rows, want all 1000 in bin 0", h.Features[0].Counts, h.Rows)
	}
	for range 50 {
		observeX(t, l, 6, 10)
	}
	if h := l.Snapshot(); h.Rows != 1000 || !cmp.Equal(h.Features[0].Counts, []int64{500, 0, 500}) {
		t.Errorf("after 500 more: x counts %v of %d rows, want 500 old and 500 new", h.Features[0].Counts, h.Rows)
	}
	for range 100 {
		observeX(t, l, 6, 10)
	}
	if h := l.Snapshot(); h.Rows != 1000 || !cmp.Equal(h.Features[0].Counts, []int64{0, 0, 1000}) {
		t.Errorf("after 1000 more: x counts %v of %d rows, want only the new", h.Features[0].Counts, h.Rows)
	}
	// A request larger than the window is kept whole while newest.
	observeX(t, l, 3, 1500)
	if h := l.Snapshot(); h.Rows != 1500 || !cmp.Equal(h.Features[0].Counts, []int64{0, 1500, 0}) {
		t.Errorf("after one request of 1500: x counts %v of %d rows, want that request", h.Features[0].Counts, h.Rows)
	}
}

// TestObserveConcurrent: goroutines observing while another snapshots
// lose no count (run it with -race).
func TestObserveConcurrent(t *testing.T) {
	p := smallProfile(t)
	l := newLive(t, p, drift.Window{Duration: time.Hour, Rows: 1 << 40, Now: newClock().Now})
	req := table(t,
		num("x", 1, 3, 5, 7, nan),
		text("city", "a", "b", "c", "zz", ""),
		text("prediction(y)", "no", "no", "yes", "no", "no"),
	)
	const workers, requests = 8, 500
	done := make(chan struct{})
	snapshots := make(chan int)
	go func() {
		n := 0
		for {
			select {
			case <-done:
				snapshots <- n
				return
			default:
				if h := l.Snapshot(); h.Rows < 0 || h.Rows > workers*requests*5 {
					t.Errorf("snapshot of %d rows", h.Rows)
				}
				n++
			}
		}
	}()
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range requests {
				if err := l.Observe(req); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	close(done)
	if n := <-snapshots; n == 0 {
		t.Log("no snapshot ran during the observations")
	}
	const k = workers * requests
	want := &drift.Histograms{
		Rows: 5 * k,
		Features: []drift.Histogram{
			{Name: "x", Counts: []int64{k, k, 2 * k}, Missing: k, OutOfRange: k},
			{Name: "city", Counts: []int64{k, k, 2 * k}, Missing: k, Unseen: k},
		},
		Prediction: &drift.Histogram{Name: "prediction(y)", Counts: []int64{4 * k, k, 0}},
	}
	if diff := cmp.Diff(want, l.Snapshot()); diff != "" {
		t.Errorf("snapshot after the observations (-want +got):\n%s", diff)
	}
}

// TestMerge: two replicas' snapshots add up to the snapshot of one Live
// fed both replicas' requests.
func TestMerge(t *testing.T) {
	p := smallProfile(t)
	w := drift.Window{Rows: 1000, Now: newClock().Now}
	a, b, both := newLive(t, p, w), newLive(t, p, w), newLive(t, p, w)
	reqs := []*process.Table{
		table(t, num("x", 1, 9), text("city", "a", "zz")),
		table(t, num("x", 3, nan, 4), text("city", "", "b", "c"), text("prediction(y)", "yes", "no", "x")),
		table(t, num("x", 0)),
	}
	for i, r := range reqs {
		replica := a
		if i%2 == 1 {
			replica = b
		}
		for _, l := range []*drift.Live{replica, both} {
			if err := l.Observe(r); err != nil {
				t.Fatal(err)
			}
		}
	}
	got, err := drift.Merge(a.Snapshot(), b.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(both.Snapshot(), got); diff != "" {
		t.Errorf("merged (-one Live fed both +merged):\n%s", diff)
	}

	other := newLive(t, &drift.Profile{Features: p.Features[:1]}, w)
	if _, err := drift.Merge(a.Snapshot(), other.Snapshot()); err == nil {
		t.Error("Merge of histograms of different profiles succeeded")
	}
	bad := b.Snapshot()
	bad.Features[1].Counts = bad.Features[1].Counts[:2]
	if _, err := drift.Merge(a.Snapshot(), bad); err == nil {
		t.Error("Merge of histograms with different bins succeeded")
	}
}

func TestNewLiveErrors(t *testing.T) {
	p := smallProfile(t)
	broken := *p
	broken.Features = append([]drift.Feature(nil), p.Features...)
	broken.Features[0].Edges = []float64{4, 2}
	tests := []struct {
		name string
		p    *drift.Profile
		w    drift.Window
		want string
	}{
		{"no bound", p, drift.Window{}, "bounds neither time nor rows"},
		{"negative duration", p, drift.Window{Duration: -time.Second}, "none negative"},
		{"too many slots", p, drift.Window{Rows: 10, Slots: drift.MaxSlots + 1}, "at most"},
		{"broken profile", &broken, drift.Window{Rows: 10}, "ascending"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := drift.NewLive(tt.p, tt.w)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("NewLive: %v, want an error saying %q", err, tt.want)
			}
		})
	}
}
