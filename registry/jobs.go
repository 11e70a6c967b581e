package registry

import (
	"context"
	"slices"
	"sync"
	"time"
)

// JobState is where a [Job] is in its life:
//
//	PENDING → RUNNING → FINISHED | ERROR | STOPPED | TIMED_OUT
//
// A job that is stopped, or cannot start, while it waits for a slot goes
// from PENDING straight to STOPPED or ERROR. The four end states are final.
type JobState string

// The states of a job.
const (
	JobPending  JobState = "PENDING"
	JobRunning  JobState = "RUNNING"
	JobFinished JobState = "FINISHED"
	JobError    JobState = "ERROR"
	JobStopped  JobState = "STOPPED"
	JobTimedOut JobState = "TIMED_OUT"
)

// JobStates lists every state, in the order of a job's life.
func JobStates() []JobState {
	return []JobState{JobPending, JobRunning, JobFinished, JobError, JobStopped, JobTimedOut}
}

// Valid reports whether s is one of the states of [JobStates].
func (s JobState) Valid() bool { return slices.Contains(JobStates(), s) }

// Final reports whether s is an end state: FINISHED, ERROR, STOPPED or
// TIMED_OUT.
func (s JobState) Final() bool {
	switch s {
	case JobFinished, JobError, JobStopped, JobTimedOut:
		return true
	}
	return false
}

// ErrJobTransition reports a change of a job's state that its life does not
// allow (see [JobState]); the error names the job and both states.
var ErrJobTransition error = &sentinel{"registry: job state change not allowed", typeConflict,
	"the job's state does not allow this change"}

// CanTransition reports whether a job in state from may go to state to. It
// is the one place the rule of [JobState] is written.
func CanTransition(from, to JobState) bool {
	switch from {
	case JobPending:
		return to == JobRunning || to == JobError || to == JobStopped
	case JobRunning:
		return to.Final()
	}
	return false
}

// JobErrorInfo says why a job ended in ERROR, STOPPED or TIMED_OUT. Type is a
// stable snake_case code, Title a few words, Message one sentence; all are
// safe to show to clients.
type JobErrorInfo struct {
	Type    string `json:"type"`
	Title   string `json:"title"`
	Message string `json:"message"`
}

// Job is one execution of a process on an execution queue, outside a
// scoring request. Its input is held by the runner until the job starts and
// is not stored; its result is stored apart from it (see [JobStore]).
//
// Its JSON form is how a [FileJobStore] keeps it, in format version 1 of
// its job files: a change to a tag is a change of that format.
type Job struct {
	// ID is a name (see [ValidName]) unique in the store.
	ID    string   `json:"id"`
	State JobState `json:"state"`
	// Queue is the execution queue the job runs on.
	Queue string `json:"queue"`
	// Process is the catalog name of the process the job runs.
	Process string `json:"process"`
	// Endpoint is the endpoint the job was submitted for, if any.
	Endpoint *EndpointRef `json:"endpoint,omitempty"`
	// Rows is the number of input rows.
	Rows int `json:"rows"`
	// CreatedAt is when the job was stored; StartedAt when it got a slot;
	// FinishedAt when it reached an end state. Unset times are zero.
	CreatedAt  time.Time `json:"createdAt"`
	StartedAt  time.Time `json:"startedAt,omitzero"`
	FinishedAt time.Time `json:"finishedAt,omitzero"`
	// Error says why the job ended other than FINISHED; nil otherwise.
	Error *JobErrorInfo `json:"error,omitempty"`
}

// Transition returns j in state to, stamped at now: StartedAt when it
// starts running, FinishedAt when it ends, with jerr as its Error. It fails
// with [ErrJobTransition] when j's life does not allow the change.
func (j Job) Transition(to JobState, now time.Time, jerr *JobErrorInfo) (Job, error) {
	if !CanTransition(j.State, to) {
		return j, errorf(ErrJobTransition, "job %q cannot go from %s to %s", j.ID, j.State, to)
	}
	j.State = to
	if to == JobRunning {
		j.StartedAt = now
	}
	if to.Final() {
		j.FinishedAt = now
		j.Error = jerr
		if to == JobFinished {
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
	case !ValidName(j.ID):
		return invalid("/id", "%q is not a valid job id", j.ID)
	case !ValidName(j.Queue):
		return invalid("/queueName", "%q is not a valid queue name", j.Queue)
	case !ValidName(j.Process):
		return invalid("/process", "%q is not a valid process name", j.Process)
	case j.Rows < 0:
		return invalid("/rows", "must not be negative")
	}
	return nil
}

// InterruptedJobError returns the Error of a job that was PENDING or
// RUNNING when its server stopped: a durable [JobStore] gives it to such
// jobs, which become ERROR, when it is opened again.
func InterruptedJobError() JobErrorInfo {
	return JobErrorInfo{
		Type:    "interrupted",
		Title:   "Job interrupted",
		Message: "the server stopped before the job finished",
	}
}

// JobFilter selects jobs from a [JobStore]. Zero fields select everything.
type JobFilter struct {
	State JobState
	Queue string
	// Offset skips that many matching jobs; Limit, when positive, returns
	// at most that many.
	Offset, Limit int
}

func (f JobFilter) match(j *Job) bool {
	return (f.State == "" || j.State == f.State) && (f.Queue == "" || j.Queue == f.Queue)
}

// JobRetention says which ended jobs [JobStore.DeleteJobs] removes: those
// that ended before Before, and beyond the MaxEnded most recently ended
// ones. Zero fields remove nothing by that rule. Jobs that have not ended
// are never removed.
type JobRetention struct {
	Before   time.Time
	MaxEnded int
}

// JobStore keeps jobs and the results of finished ones. It is separate from
// [Store]: jobs change far more often than the records scoring reads, and
// are not part of the [State] every scoring request resolves against.
// Implementations must be safe for concurrent use and apply the rules of
// [MemJobStore]:
//
//   - CreateJob stores a new PENDING job ([ErrExists] when its ID is taken,
//     [*InvalidError] for a bad field) stamped with the store's time.
//   - UpdateJob changes a job's state as [Job.Transition] allows, stamped
//     with the store's time, and stores result with a FINISHED job; any
//     other change fails with [ErrJobTransition].
//   - Jobs lists the newest first (by CreatedAt, then ID) and returns the
//     number of matching jobs before Offset and Limit.
//   - An acknowledged write is committed (durable, for a durable store).
type JobStore interface {
	CreateJob(ctx context.Context, j Job) (Job, error)
	// Job returns the job id, or [ErrNotFound].
	Job(ctx context.Context, id string) (Job, error)
	Jobs(ctx context.Context, f JobFilter) (jobs []Job, total int, err error)
	UpdateJob(ctx context.Context, id string, to JobState, jerr *JobErrorInfo, result []byte) (Job, error)
	// JobResult returns the stored result of a FINISHED job, or
	// [ErrNotFound].
	JobResult(ctx context.Context, id string) ([]byte, error)
	// DeleteJobs removes the ended jobs r selects, with their results, and
	// returns how many it removed.
	DeleteJobs(ctx context.Context, r JobRetention) (int, error)
	// Close releases the store. Later calls fail with [ErrClosed].
	Close() error
}

// jobCore is the part of a job store that does not depend on where jobs
// are kept. persist, when set, makes a changed job (and a new result)
// durable before it is published; remove deletes a job's files.
type jobCore struct {
	opts    StoreOptions
	persist func(j *Job, result []byte) error
	remove  func(id string, hasResult bool) error

	mu      sync.Mutex // serialises writes; guards everything below
	jobs    map[string]*Job
	results map[string][]byte // in memory for MemJobStore; nil values mark a result on disk
	closed  bool
}

func (c *jobCore) init(opts StoreOptions) {
	c.opts = opts
	c.jobs = make(map[string]*Job)
	c.results = make(map[string][]byte)
}

func (c *jobCore) check(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if c.closed {
		return ErrClosed
	}
	return nil
}

func (c *jobCore) CreateJob(ctx context.Context, j Job) (Job, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.check(ctx); err != nil {
		return Job{}, err
	}
	if err := j.validate(); err != nil {
		return Job{}, err
	}
	if _, ok := c.jobs[j.ID]; ok {
		return Job{}, errorf(ErrExists, "job %q already exists", j.ID)
	}
	j = j.clone()
	j.State, j.CreatedAt, j.StartedAt, j.FinishedAt, j.Error = JobPending, c.opts.now(), time.Time{}, time.Time{}, nil
	if c.persist != nil {
		if err := c.persist(&j, nil); err != nil {
			return Job{}, err
		}
	}
	c.jobs[j.ID] = &j
	return j.clone(), nil
}

func (c *jobCore) Job(ctx context.Context, id string) (Job, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.check(ctx); err != nil {
		return Job{}, err
	}
	j, ok := c.jobs[id]
	if !ok {
		return Job{}, errorf(ErrNotFound, "job %q does not exist", id)
	}
	return j.clone(), nil
}

func (c *jobCore) Jobs(ctx context.Context, f JobFilter) ([]Job, int, error) {
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

func (c *jobCore) UpdateJob(ctx context.Context, id string, to JobState, jerr *JobErrorInfo, result []byte) (Job, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.check(ctx); err != nil {
		return Job{}, err
	}
	cur, ok := c.jobs[id]
	if !ok {
		return Job{}, errorf(ErrNotFound, "job %q does not exist", id)
	}
	if jerr != nil {
		e := *jerr
		jerr = &e
	}
	next, err := cur.Transition(to, c.opts.now(), jerr)
	if err != nil {
		return Job{}, err
	}
	if to != JobFinished {
		result = nil
	} else if result == nil {
		result = []byte{}
	}
	if c.persist != nil {
		if err := c.persist(&next, result); err != nil {
			return Job{}, err
		}
	}
	c.jobs[id] = &next
	if to == JobFinished {
		if c.persist != nil {
			c.results[id] = nil // on disk
		} else {
			c.results[id] = slices.Clone(result)
		}
	}
	return next.clone(), nil
}

// DeleteJobs implements [JobStore].
func (c *jobCore) DeleteJobs(ctx context.Context, r JobRetention) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.check(ctx); err != nil {
		return 0, err
	}
	var ended []*Job
	for _, j := range c.jobs {
		if j.State.Final() {
			ended = append(ended, j)
		}
	}
	slices.SortFunc(ended, func(a, b *Job) int {
		if c := b.FinishedAt.Compare(a.FinishedAt); c != 0 {
			return c
		}
		return newestFirst(a, b)
	})
	n := 0
	for i, j := range ended {
		if (r.MaxEnded > 0 && i >= r.MaxEnded) || (!r.Before.IsZero() && j.FinishedAt.Before(r.Before)) {
			_, hasResult := c.results[j.ID]
			if c.remove != nil {
				if err := c.remove(j.ID, hasResult); err != nil {
					return n, err
				}
			}
			delete(c.jobs, j.ID)
			delete(c.results, j.ID)
			n++
		}
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

// MemJobStore is a [JobStore] that keeps jobs and results in memory only.
// It is safe for concurrent use.
type MemJobStore struct{ jobCore }

var _ JobStore = (*MemJobStore)(nil)

// NewMemJobStore returns an empty job store.
func NewMemJobStore(opts StoreOptions) *MemJobStore {
	s := &MemJobStore{}
	s.init(opts)
	return s
}

// JobResult implements [JobStore].
func (s *MemJobStore) JobResult(ctx context.Context, id string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	b, ok := s.results[id]
	if !ok {
		return nil, errorf(ErrNotFound, "job %q has no stored result", id)
	}
	return slices.Clone(b), nil
}

// Close implements [JobStore].
func (s *MemJobStore) Close() error {
	s.close()
	return nil
}
