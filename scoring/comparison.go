package scoring

import (
	"cmp"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/process"
)

// Challenges keeps what the champions and challengers of endpoints
// ([registry.Challenger]) did in this process: for each pair on an
// endpoint, the rows compared and agreed on, the distribution of the
// difference of their answers, the challenger's latency and errors; and
// the champion's latency. It also bounds how many shadow executions run
// at once. Every execution on a [Queues] feeds the Challenges it holds
// ([Queues.Challenges]), a request's and a job's alike. It is safe for
// concurrent use; its figures are this process's alone.
type Challenges struct {
	shadows   *shadows
	answering *answering // what the champions' answers take of the processors

	predictions        atomic.Pointer[predictionLog] // nil: predictions are not kept
	droppedPredictions atomic.Uint64
	payloads           atomic.Pointer[payloadLog] // nil: no rows are logged
	droppedPayloads    atomic.Uint64
	sampledPayloads    atomic.Uint64
	sharing            atomic.Pointer[sharing] // nil: the figures are this replica's alone
	monitors           sync.Map                // monitorKey → *monitored
	bounds             sync.Map                // *drift.Profile → *drift.Outliers
	boundsMade         atomic.Int64

	// pairs and champions are read on every challenged execution, and
	// written once a pair; sync.Map serves that without a lock shared by
	// the cores.
	pairs     sync.Map // pairKey → *pairStats
	champions sync.Map // championKey → *latency
}

// newChallenges returns Challenges that run at most budget shadows at
// once.
func newChallenges(budget int) *Challenges {
	return &Challenges{shadows: newShadows(budget), answering: newAnswering(0)}
}

type championKey struct {
	endpoint process.EndpointRef
	champion string
}

type pairKey struct {
	championKey
	challenger string
	mode       string
}

// pair returns the figures of x's champion and challenger ch.
func (c *Challenges) pair(x *execution, ch *registry.ChallengerTarget) *pairStats {
	k := pairKey{championKey{x.in.Endpoint, x.process.Name}, ch.Process.Name, ch.Mode}
	if ch.Err != nil {
		k.challenger = ch.Model // no version: the reference that could not be had
	}
	if p, ok := c.pairs.Load(k); ok {
		return p.(*pairStats)
	}
	p, _ := c.pairs.LoadOrStore(k, &pairStats{delta: newHistogram(deltaBounds), latency: latency{h: newHistogram(latencyBounds)}})
	return p.(*pairStats)
}

// champion records that x's champion answered in d.
func (c *Challenges) champion(x *execution, d time.Duration) {
	k := championKey{x.in.Endpoint, x.process.Name}
	l, ok := c.champions.Load(k)
	if !ok {
		l, _ = c.champions.LoadOrStore(k, newLatency())
	}
	l.(*latency).observe(d)
}

// unavailable counts a request whose challenger ch could not score.
func (c *Challenges) unavailable(x *execution, ch *registry.ChallengerTarget) {
	c.pair(x, ch).unavailable.Add(1)
}

// splitAnswered records that split challenger ch took d over its rows
// rows, failing with err.
func (c *Challenges) splitAnswered(x *execution, ch *registry.ChallengerTarget, rows int, d time.Duration, err error) {
	p := c.pair(x, ch)
	p.latency.observe(d)
	if err != nil {
		p.errors.Add(1)
		return
	}
	p.answered.Add(uint64(rows))
}

// pairStats are the figures of one champion and challenger.
type pairStats struct {
	compared, agreed atomic.Uint64 // rows
	answered         atomic.Uint64 // rows a split challenger answered
	skipped          atomic.Uint64 // rows a shadow did not score
	errors           atomic.Uint64 // failed executions of the challenger
	unavailable      atomic.Uint64 // requests the challenger could not score
	delta            *histogram
	latency          latency
	batch            shadowBatch // the rows a shadow is yet to score
}

// deltaBounds are the upper bounds of the buckets of |Δ confidence| and
// |Δ prediction|.
var deltaBounds = []float64{0.001, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 10, 100}

// compare records the rows both champ and shadow answered.
func (p *pairStats) compare(champ, shadow *answers) {
	if shadow == nil || len(shadow.missing) != len(champ.missing) {
		p.errors.Add(1)
		return
	}
	var compared, agreed uint64
	for r := range champ.missing {
		if champ.missing[r] || shadow.missing[r] {
			continue
		}
		compared++
		if champ.labels != nil {
			if shadow.labels == nil {
				continue
			}
			if champ.labels[r] == shadow.labels[r] {
				agreed++
			}
			// The difference of the confidence of the class the
			// champion predicted.
			a, b := champ.of(champ.labels[r]), shadow.of(champ.labels[r])
			if a != nil && b != nil {
				p.delta.observe(math.Abs(a[r] - b[r]))
			}
			continue
		}
		if shadow.numbers != nil {
			d := math.Abs(champ.numbers[r] - shadow.numbers[r])
			p.delta.observe(d)
			if d == 0 {
				agreed++
			}
		}
	}
	p.compared.Add(compared)
	p.agreed.Add(agreed)
}

// histogram counts values in buckets of fixed upper bounds, the last
// bucket unbounded.
type histogram struct {
	bounds []float64
	counts []atomic.Uint64
	sum    atomic.Uint64 // float64 bits
}

func newHistogram(bounds []float64) *histogram {
	return &histogram{bounds: bounds, counts: make([]atomic.Uint64, len(bounds)+1)}
}

func (h *histogram) observe(v float64) {
	if math.IsNaN(v) {
		return
	}
	i, _ := slices.BinarySearch(h.bounds, v)
	h.counts[i].Add(1)
	for {
		old := h.sum.Load()
		if h.sum.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+v)) {
			return
		}
	}
}

// Histogram is a distribution as [Challenges] counts it.
type Histogram struct {
	// Bounds are the buckets' upper bounds (inclusive); Counts has one
	// more, the values above the last bound.
	Bounds []float64 `json:"bounds"`
	Counts []uint64  `json:"counts"`
	Count  uint64    `json:"count"`
	Sum    float64   `json:"sum"`
}

func (h *histogram) read() Histogram {
	out := Histogram{Bounds: slices.Clone(h.bounds), Counts: make([]uint64, len(h.counts)), Sum: math.Float64frombits(h.sum.Load())}
	for i := range h.counts {
		out.Counts[i] = h.counts[i].Load()
		out.Count += out.Counts[i]
	}
	return out
}

// latencyBounds are the upper bounds, in seconds, of latency buckets.
var latencyBounds = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// latency is a histogram of durations in seconds.
type latency struct{ h *histogram }

func newLatency() *latency { return &latency{h: newHistogram(latencyBounds)} }

func (l *latency) observe(d time.Duration) { l.h.observe(d.Seconds()) }

// Comparison is what one champion and challenger of an endpoint did in
// this process.
type Comparison struct {
	// Champion and Challenger name the model versions ("churn@3"); a
	// challenger that could not be had is named by its reference.
	Champion   string `json:"champion"`
	Challenger string `json:"challenger"`
	// Mode is the challenger's, [registry.ChallengeShadow] or
	// [registry.ChallengeSplit].
	Mode string `json:"mode"`
	// Compared counts the rows both answered (a shadow's), Agreed those
	// on which they agree: the same predicted class, or for a regressor
	// the same prediction.
	Compared uint64 `json:"compared"`
	Agreed   uint64 `json:"agreed"`
	// Delta is the distribution of |Δ confidence| of the class the
	// champion predicted (a classifier) or |Δ prediction| (a regressor)
	// over the rows compared.
	Delta Histogram `json:"delta"`
	// Answered counts the rows a split challenger answered.
	Answered uint64 `json:"answered"`
	// Skipped counts the rows a shadow did not score: those it had no
	// processor for before its deadline (answers come first), those past
	// the rows a batch may gather, those whose champion answered nothing
	// to compare with, and those of a batch no worker could take.
	Skipped uint64 `json:"skipped"`
	// Errors counts the challenger's failed executions; Unavailable the
	// requests it could not score at all (its model could not be had, or
	// answers other columns than the champion's).
	Errors      uint64 `json:"errors"`
	Unavailable uint64 `json:"unavailable"`
	// ChampionLatency and ChallengerLatency are how long each took over
	// its rows, in seconds.
	ChampionLatency   Histogram `json:"championLatency"`
	ChallengerLatency Histogram `json:"challengerLatency"`
}

// NoComparison returns the Comparison of a pair before either scored a
// row: every count 0, the histograms empty.
func NoComparison(champion, challenger, mode string) Comparison {
	return Comparison{Champion: champion, Challenger: challenger, Mode: mode,
		Delta: newHistogram(deltaBounds).read(), ChampionLatency: newLatency().h.read(), ChallengerLatency: newLatency().h.read()}
}

// AgreementRate returns Agreed / Compared, NaN when nothing was compared.
func (c Comparison) AgreementRate() float64 {
	if c.Compared == 0 {
		return math.NaN()
	}
	return float64(c.Agreed) / float64(c.Compared)
}

// Compare returns the comparisons of endpoint's champions and
// challengers that st still deploys: the endpoint exists, its model
// resolves to the champion, and one of its challengers to the
// challenger. Figures of pairs st no longer deploys are dropped, so that
// what Challenges keeps is bounded by the deployed versions.
func (c *Challenges) Compare(st *registry.State, endpoint process.EndpointRef) []Comparison {
	c.prune(st)
	var out []Comparison
	c.pairs.Range(func(k, p any) bool {
		if k := k.(pairKey); k.endpoint == endpoint {
			out = append(out, c.comparison(k, p.(*pairStats)))
		}
		return true
	})
	slices.SortFunc(out, func(a, b Comparison) int {
		if a.Champion != b.Champion {
			return cmp.Compare(a.Champion, b.Champion)
		}
		return cmp.Compare(a.Challenger, b.Challenger)
	})
	return out
}

// EndpointComparison is the comparisons of one endpoint.
type EndpointComparison struct {
	Endpoint    process.EndpointRef
	Comparisons []Comparison
}

// All returns the comparisons of every endpoint st deploys, as Compare
// returns them.
func (c *Challenges) All(st *registry.State) []EndpointComparison {
	c.prune(st)
	byEndpoint := map[process.EndpointRef][]Comparison{}
	c.pairs.Range(func(k, p any) bool {
		pk := k.(pairKey)
		byEndpoint[pk.endpoint] = append(byEndpoint[pk.endpoint], c.comparison(pk, p.(*pairStats)))
		return true
	})
	out := make([]EndpointComparison, 0, len(byEndpoint))
	for e, cs := range byEndpoint {
		out = append(out, EndpointComparison{Endpoint: e, Comparisons: cs})
	}
	return out
}

// comparison reads p, the figures of k.
func (c *Challenges) comparison(k pairKey, p *pairStats) Comparison {
	out := Comparison{
		Champion: k.champion, Challenger: k.challenger, Mode: k.mode,
		Compared: p.compared.Load(), Agreed: p.agreed.Load(), Delta: p.delta.read(),
		Answered: p.answered.Load(), Skipped: p.skipped.Load(),
		Errors: p.errors.Load(), Unavailable: p.unavailable.Load(),
		ChampionLatency: newLatency().h.read(),
	}
	if l, ok := c.champions.Load(k.championKey); ok {
		out.ChampionLatency = l.(*latency).h.read()
	}
	out.ChallengerLatency = p.latency.h.read()
	return out
}

// prune drops the figures of pairs st no longer deploys.
func (c *Challenges) prune(st *registry.State) {
	live := map[pairKey]bool{}
	champs := map[championKey]bool{}
	deployed(st, func(ck championKey, e registry.Endpoint) {
		if len(e.Challengers) == 0 {
			return
		}
		champs[ck] = true
		for _, ch := range e.Challengers {
			name, err := st.ResolveModel(ch.Model)
			if err != nil {
				name = ch.Model
			}
			live[pairKey{ck, name, ch.Mode}] = true
			live[pairKey{ck, ch.Model, ch.Mode}] = true // one that could not be had
		}
	})
	dropAllBut(&c.pairs, live)
	dropAllBut(&c.champions, champs)
}

// deployed calls fn for every model endpoint st deploys whose model
// resolves to a version, with that endpoint's and version's key.
func deployed(st *registry.State, fn func(championKey, registry.Endpoint)) {
	for _, d := range st.Deployments() {
		for _, e := range d.Endpoints {
			if e.Model == "" {
				continue
			}
			if v, err := st.ResolveModel(e.Model); err == nil {
				fn(championKey{process.EndpointRef{Group: d.Group, Path: d.Path, Alias: e.Alias}, v}, e)
			}
		}
	}
}

// dropAllBut deletes from m every key keep does not hold.
func dropAllBut[K comparable](m *sync.Map, keep map[K]bool) {
	m.Range(func(k, _ any) bool {
		if !keep[k.(K)] {
			m.Delete(k)
		}
		return true
	})
}
