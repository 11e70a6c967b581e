package jobs

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/scorehub/scorehub/problem"
	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/process"
)

// State is where a [Job] is in its life:
//
//	PENDING → RUNNING → FINISHED | ERROR | STOPPED | TIMED_OUT
//
// A job that is stopped, or cannot start, while it waits for a slot goes
// from PENDING straight to STOPPED or ERROR. The four end states are final.
type State string

// The states of a job.
const (
	StatePending  State = "PENDING"
	StateRunning  State = "RUNNING"
	StateFinished State = "FINISHED"
	StateError    State = "ERROR"
	StateStopped  State = "STOPPED"
	StateTimedOut State = "TIMED_OUT"
)

// States lists every state, in the order of a job's life.
func States() []State {
	return []State{StatePending, StateRunning, StateFinished, StateError, StateStopped, StateTimedOut}
}

// Valid reports whether s is one of the states of [States].
func (s State) Valid() bool { return slices.Contains(States(), s) }

// Final reports whether s is an end state: FINISHED, ERROR, STOPPED or
// TIMED_OUT.
func (s State) Final() bool {
	switch s {
	case StateFinished, StateError, StateStopped, StateTimedOut:
		return true
	}
	return false
}

// ErrTransition reports a change of a job's state that its life does not
// allow (see [State]); the error names the job and both states.
var ErrTransition = &problem.Error{Code: problem.Conflict, Text: "registry: job state change not allowed",
	Message: "the job's state does not allow this change"}

// canTransition reports whether a job in state from may go to state to. It
// is the one place the rule of [State] is written.
func canTransition(from, to State) bool {
	switch from {
	case StatePending:
		return to == StateRunning || to == StateError || to == StateStopped
	case StateRunning:
		return to.Final()
	}
	return false
}

// ErrorInfo says why a job ended in ERROR, STOPPED or TIMED_OUT. Type is a
// stable snake_case code, Title a few words, Message one sentence; all are
// safe to show to clients.
type ErrorInfo struct {
	Type    string `json:"type"`
	Title   string `json:"title"`
	Message string `json:"message"`
}

// Job is one execution of a process on an execution queue, outside a
// scoring request. Its input is held by the runner until the job starts and
// is not stored; its result is stored apart from it (see [Store]).
//
// Its JSON form is how a [FileStore] keeps it, in format version 4 of
// its job files (3 lacks Revision and the lease, 2 ResultBytes too, 1
// Owner too): a change to a tag is a change of that format.
type Job struct {
	// ID is a name (see [registry.ValidName]) unique in the store.
	ID string `json:"id"`
	// Revision counts the job's writes: 1 when it is created, one higher
	// with each change. A store updates a job only at the revision its
	// change was decided on (see [Store]). Zero for a job stored by a
	// build that kept none.
	Revision uint64 `json:"revision,omitempty"`
	State    State  `json:"state"`
	// Owner is who submitted the job (a token's subject). Empty for a job
	// stored without one, such as one written by a build that kept no
	// owners: only administrators see such a job.
	Owner string `json:"owner,omitempty"`
	// Queue is the execution queue the job runs on.
	Queue string `json:"queue"`
	// Process is the catalog name of the process the job runs, or the
	// model version it runs ("churn@3", see [registry.Snapshot.EndpointProcess]).
	Process string `json:"process"`
	// Endpoint is the endpoint the job was submitted for, if any.
	Endpoint *process.EndpointRef `json:"endpoint,omitempty"`
	// Rows is the number of input rows.
	Rows int `json:"rows"`
	// CreatedAt is when the job was stored; StartedAt when it got a slot;
	// FinishedAt when it reached an end state. Unset times are zero.
	CreatedAt  time.Time `json:"createdAt"`
	StartedAt  time.Time `json:"startedAt,omitzero"`
	FinishedAt time.Time `json:"finishedAt,omitzero"`
	// Error says why the job ended other than FINISHED; nil otherwise.
	Error *ErrorInfo `json:"error,omitempty"`
	// ResultBytes is the length of a FINISHED job's stored result, set by
	// the [Registry]: what the job counts against a [ResultQuota].
	ResultBytes int64 `json:"resultBytes,omitempty"`

	// Replica names the server replica that holds the job's input and
	// runs it, when replicas share the store (see [Lease]); empty
	// otherwise.
	Replica string `json:"replica,omitempty"`
	// LeaseExpires is when Replica's claim on a job that has not ended
	// lapses unless Replica renews it; past it, any replica ends the job
	// ERROR, type "interrupted". Zero for a job of an unshared store.
	LeaseExpires time.Time `json:"leaseExpires,omitzero"`
	// StopRequested says a stop of the job was asked for through another
	// replica than Replica, which stops it when it next renews its lease.
	StopRequested bool `json:"stopRequested,omitempty"`
}

// Transition returns j in state to, stamped at now: StartedAt when it
// starts running, FinishedAt when it ends, with jerr as its Error. It fails
// with [ErrTransition] when j's life does not allow the change.
func (j Job) Transition(to State, now time.Time, jerr *ErrorInfo) (Job, error) {
	if !canTransition(j.State, to) {
		return j, errorf(ErrTransition, "job %q cannot go from %s to %s", j.ID, j.State, to)
	}
	j.State = to
	if to == StateRunning {
		j.StartedAt = now
	}
	if to.Final() {
		j.FinishedAt = now
		j.Error = jerr
		if to == StateFinished {
			j.Error = nil
		}
	}
	return j, nil
}

func (j Job) clone() Job {
	if j.Endpoint != nil {
		e := *j.Endpoint
		j.Endpoint = &e
	}
	if j.Error != nil {
		e := *j.Error
		j.Error = &e
	}
	return j
}

func (j *Job) validate() error {
	switch {
	case !registry.ValidName(j.ID):
		return invalid("/id", "%q is not a valid job id", j.ID)
	case !registry.ValidName(j.Queue):
		return invalid("/queueName", "%q is not a valid queue name", j.Queue)
	case !registry.ValidName(j.Process) && !validModelProcess(j.Process):
		return invalid("/process", "%q is not a valid process name", j.Process)
	case j.Rows < 0:
		return invalid("/rows", "must not be negative")
	}
	return nil
}

// validModelProcess reports whether s names a model version's process:
// "model@version".
func validModelProcess(s string) bool {
	r, err := registry.ParseModelRef(s)
	return err == nil && r.Alias == ""
}

// Filter selects jobs from a [Store]. Zero fields select everything.
type Filter struct {
	State State
	Queue string
	// Owner selects the jobs of one owner.
	Owner string
	// CreatedFrom, when not zero, selects the jobs created at or after it
	// (to the nanosecond).
	CreatedFrom time.Time
	// Offset skips that many matching jobs; Limit, when positive, returns
	// at most that many.
	Offset, Limit int
}

func (f Filter) match(j *Job) bool {
	return (f.State == "" || j.State == f.State) && (f.Queue == "" || j.Queue == f.Queue) &&
		(f.Owner == "" || j.Owner == f.Owner) && (f.CreatedFrom.IsZero() || !j.CreatedAt.Before(f.CreatedFrom))
}

// Store keeps jobs and the results of finished ones. It is separate from
// [registry.Store]: jobs change far more often than the records scoring reads, and
// are not part of the [registry.State] every scoring request resolves against.
//
// A Store only persists: it stores what it is given and applies no rule
// of a job's life. A [Registry] decides every write (a new job's fields
// and times, the changes of [State], which ended jobs retention removes,
// jobs a stopped server interrupted) and reads go to the store directly.
// So a store is small, and package registrytest's job conformance suite
// proves any implementation.
//
// An update is conditional: it names the [Job.Revision] the job had when
// its change was decided, and the store refuses it with [registry.ErrStale] when
// the stored job is no longer at that revision. So two writers (two
// replicas on one database) cannot both change a job: a database store
// runs UPDATE … WHERE id = $1 AND revision = $base and reports ErrStale
// when no row changed, and the Registry reads the job again and decides
// afresh. The state alone would not do: a job that stays RUNNING still
// changes (its lease is renewed, a stop is requested), and a renewal must
// not overwrite a stop request decided at the same time. Creating is
// conditional on the ID (an INSERT under a primary key), deleting needs no
// condition (only ended jobs, which never change, are deleted).
//
// Implementations must be safe for concurrent use; a call with a done
// context fails with its error and changes nothing; a store keeps its own
// copies of what it is given and returns copies. An acknowledged write is
// committed (durable, for a durable store); a failed write leaves the job
// as it was.
type Store interface {
	// CreateJob stores j, or fails with [registry.ErrExists] when a job with its ID
	// is stored.
	CreateJob(ctx context.Context, j Job) error
	// UpdateJob replaces the stored job j.ID with j if that job's Revision
	// is still base, and fails with [registry.ErrStale] otherwise (or with
	// [registry.ErrNotFound] when no job j.ID is stored). j is stored as given, its
	// Revision included (the Registry gives base+1). A non-nil result
	// is stored with j (only a FINISHED job is given one), committed no
	// later than j.
	UpdateJob(ctx context.Context, base uint64, j Job, result []byte) error
	// Job returns the job id, or [registry.ErrNotFound].
	Job(ctx context.Context, id string) (Job, error)
	// Jobs lists the jobs f selects, newest first (by CreatedAt, then ID
	// descending), and returns how many match before Offset and Limit.
	Jobs(ctx context.Context, f Filter) (jobs []Job, total int, err error)
	// JobResult returns the stored result of a job, or [registry.ErrNotFound].
	JobResult(ctx context.Context, id string) ([]byte, error)
	// DeleteJobs removes the jobs ids names, with their results, and
	// returns how many it removed; IDs not stored are skipped.
	DeleteJobs(ctx context.Context, ids []string) (int, error)
	// Close releases the store. Later calls fail with [registry.ErrClosed].
	Close() error
}

// jobCore is the part of a job store that does not depend on where jobs
// are kept. persist, when set, makes a job (and its result, when non-nil)
// durable before it is published; remove deletes a job's files.
type jobCore struct {
	opts    registry.StoreOptions
	persist func(j *Job, result []byte) error
	remove  func(id string, hasResult bool) error

	mu      sync.Mutex // serialises writes; guards everything below
	jobs    map[string]*Job
	results map[string][]byte // in memory for MemStore; nil values mark a result on disk
	closed  bool
}

func (c *jobCore) init(opts registry.StoreOptions) {
	c.opts = opts
	c.jobs = make(map[string]*Job)
	c.results = make(map[string][]byte)
}

// now is the store's clock, which a Registry over it stamps jobs with.
func (c *jobCore) now() time.Time {
	if c.opts.Now != nil {
		return c.opts.Now().UTC()
	}
	return time.Now().UTC()
}

func (c *jobCore) check(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if c.closed {
		return registry.ErrClosed
	}
	return nil
}

func (c *jobCore) CreateJob(ctx context.Context, j Job) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.check(ctx); err != nil {
		return err
	}
	if _, ok := c.jobs[j.ID]; ok {
		return errorf(registry.ErrExists, "job %q already exists", j.ID)
	}
	j = j.clone()
	if c.persist != nil {
		if err := c.persist(&j, nil); err != nil {
			return err
		}
	}
	c.jobs[j.ID] = &j
	return nil
}

func (c *jobCore) Job(ctx context.Context, id string) (Job, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.check(ctx); err != nil {
		return Job{}, err
	}
	j, ok := c.jobs[id]
	if !ok {
		return Job{}, errorf(registry.ErrNotFound, "job %q does not exist", id)
	}
	return j.clone(), nil
}

func (c *jobCore) Jobs(ctx context.Context, f Filter) ([]Job, int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.check(ctx); err != nil {
		return nil, 0, err
	}
	var all []*Job
	for _, j := range c.jobs {
		if f.match(j) {
			all = append(all, j)
		}
	}
	slices.SortFunc(all, newestFirst)
	total := len(all)
	all = all[min(max(f.Offset, 0), total):]
	if f.Limit > 0 && len(all) > f.Limit {
		all = all[:f.Limit]
	}
	out := make([]Job, len(all))
	for i, j := range all {
		out[i] = j.clone()
	}
	return out, total, nil
}

func newestFirst(a, b *Job) int {
	if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
		return c
	}
	switch {
	case a.ID > b.ID:
		return -1
	case a.ID < b.ID:
		return 1
	}
	return 0
}

func (c *jobCore) UpdateJob(ctx context.Context, base uint64, j Job, result []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.check(ctx); err != nil {
		return err
	}
	cur, ok := c.jobs[j.ID]
	if !ok {
		return errorf(registry.ErrNotFound, "job %q does not exist", j.ID)
	}
	if cur.Revision != base {
		return errorf(registry.ErrStale, "job %q is at revision %d, not %d", j.ID, cur.Revision, base)
	}
	j = j.clone()
	if c.persist != nil {
		if err := c.persist(&j, result); err != nil {
			return err
		}
	}
	c.jobs[j.ID] = &j
	switch {
	case result == nil:
	case c.persist != nil:
		c.results[j.ID] = nil // on disk
	default:
		c.results[j.ID] = slices.Clone(result)
	}
	return nil
}

func (c *jobCore) DeleteJobs(ctx context.Context, ids []string) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.check(ctx); err != nil {
		return 0, err
	}
	n := 0
	for _, id := range ids {
		if _, ok := c.jobs[id]; !ok {
			continue
		}
		_, hasResult := c.results[id]
		if c.remove != nil {
			if err := c.remove(id, hasResult); err != nil {
				return n, err
			}
		}
		delete(c.jobs, id)
		delete(c.results, id)
		n++
	}
	return n, nil
}

func (c *jobCore) close() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	was := c.closed
	c.closed = true
	return !was
}

// MemStore is a [Store] that keeps jobs and results in memory only.
// It is safe for concurrent use.
type MemStore struct{ jobCore }

var _ Store = (*MemStore)(nil)

// NewMemStore returns an empty job store. opts.Now is the clock a
// [Registry] over it stamps jobs with.
func NewMemStore(opts registry.StoreOptions) *MemStore {
	s := &MemStore{}
	s.init(opts)
	return s
}

// JobResult implements [Store].
func (s *MemStore) JobResult(ctx context.Context, id string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	b, ok := s.results[id]
	if !ok {
		return nil, errorf(registry.ErrNotFound, "job %q has no stored result", id)
	}
	return slices.Clone(b), nil
}

// Close implements [Store].
func (s *MemStore) Close() error {
	s.close()
	return nil
}
