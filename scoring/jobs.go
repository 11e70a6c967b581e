package scoring

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/scorehub/scorehub/internal/httperr"
	"github.com/scorehub/scorehub/registry"
)

// Defaults of [JobsConfig].
const (
	DefaultJobTimeout   = time.Hour
	DefaultJobRetention = 24 * time.Hour
	DefaultMaxJobs      = 10_000
	DefaultJobSweep     = time.Minute
)

// JobsConfig configures a [Jobs] runner.
type JobsConfig struct {
	// Registry resolves processes and endpoints. Required.
	Registry *registry.Registry
	// Queues runs the jobs; it must be the Queues the scoring handler runs
	// on, so that jobs and scoring requests share each queue's limits.
	// Required, built over Registry.
	Queues *Queues
	// Store keeps the jobs and their results. Required; the runner does
	// not close it. It must not be shared with another runner: NewJobs
	// ends the jobs it holds that have not ended (see
	// [registry.NewJobRegistry]).
	Store registry.JobStore

	// Limits bound a job's input as they bound a scoring request; zero
	// fields mean the defaults.
	Limits Limits
	// Timeout bounds a job's run once it has a slot, when its endpoint sets
	// no Timeout. Zero means DefaultJobTimeout (1 h).
	Timeout time.Duration
	// Retention is how long an ended job and its result are kept. Zero
	// means DefaultJobRetention (24 h).
	Retention time.Duration
	// MaxJobs bounds how many ended jobs are kept; the oldest go first.
	// Zero means DefaultMaxJobs.
	MaxJobs int
	// SweepInterval is how often ended jobs past Retention or MaxJobs are
	// removed. Zero means DefaultJobSweep (1 min).
	SweepInterval time.Duration

	// Now is the clock retention is measured by; nil means time.Now.
	Now func() time.Time
	// Rand makes job IDs; nil means crypto/rand.
	Rand io.Reader
	// Logger receives failures with their cause and process panics. nil
	// means slog.Default().
	Logger *slog.Logger
}

// JobSpec is what a job runs: a catalog process by name, or the process of
// an endpoint, on decoded rows.
type JobSpec struct {
	// Queue is the execution queue; empty means the endpoint's, or
	// DEFAULT.
	Queue string
	// Process names a catalog process. Exactly one of Process and Endpoint
	// is set.
	Process string
	// Endpoint names a deployed endpoint, whose process, queue and timeout
	// the job takes.
	Endpoint *registry.EndpointRef
	// Input is the rows, decoded by [Decode] with the runner's
	// [Jobs.Limits]. Required. The job's result echoes them as a scoring
	// response would; the runner owns the Request from Submit on.
	Input *Request
	// Macros are handed to the process.
	Macros map[string]string
}

// Jobs runs processes as jobs: each is stored PENDING, waits for a slot on
// its execution queue (shared with the scoring requests), runs RUNNING
// under its timeout, and ends FINISHED with its result stored, ERROR,
// STOPPED or TIMED_OUT (see [registry.JobState]). A janitor removes ended
// jobs past the retention. Jobs is safe for concurrent use.
type Jobs struct {
	engine         *engine
	store          registry.JobStore     // reads
	writes         *registry.JobRegistry // every write, under its rules
	lim            Limits
	timeout        time.Duration
	retention      time.Duration
	maxJobs        int
	now            func() time.Time
	rand           io.Reader
	base           context.Context // cancelled when shutdown gives up waiting
	cancelAll      context.CancelFunc
	stopSweep      chan struct{}
	sweepDone      chan struct{}
	mu             sync.Mutex // guards running and closed
	running        map[string]*jobRun
	closed         bool
	wg             sync.WaitGroup // one per job goroutine
	shutdownSignal sync.Once
}

// jobRun is how to stop a job the runner holds.
type jobRun struct {
	cancel context.CancelCauseFunc
}

// errStopRequested and errShutdown are the causes a job's context is
// cancelled with.
var (
	errStopRequested = errors.New("scoring: job stopped on request")
	errShutdown      = errors.New("scoring: server shutting down")
)

// Errors of the runner, as clients see them.
var (
	errJobNotFinished = httperr.New(httperr.TypeJobNotFinished, "the job has not finished; its result is available once it is FINISHED")
	errJobEnded       = httperr.New(httperr.TypeJobEnded, "the job has already ended")
	errJobsClosed     = httperr.New(httperr.TypeUnavailable, "the server is shutting down and takes no new jobs")
	errJobQueueFull   = httperr.New(TypeQueueFull, "the execution queue's waiting list is full; retry later").WithRetryAfter(1)
	errNoInput        = httperr.New(TypeInvalidRequest, "the job has no input rows")
)

// NewJobs returns a runner configured by cfg and starts its janitor. The
// jobs Store holds that have not ended, interrupted by the stop of the
// server that ran them, end ERROR with type "interrupted". NewJobs fails
// when Registry, Queues or Store is missing, Queues belongs to another
// registry, a limit or duration is negative, or those jobs cannot be
// ended.
func NewJobs(cfg JobsConfig) (*Jobs, error) {
	switch {
	case cfg.Registry == nil:
		return nil, errors.New("scoring: JobsConfig.Registry is required")
	case cfg.Queues == nil:
		return nil, errors.New("scoring: JobsConfig.Queues is required")
	case cfg.Store == nil:
		return nil, errors.New("scoring: JobsConfig.Store is required")
	case cfg.Timeout < 0 || cfg.Retention < 0 || cfg.SweepInterval < 0 || cfg.MaxJobs < 0:
		return nil, errors.New("scoring: JobsConfig durations and MaxJobs must not be negative")
	}
	eng, err := newEngine(cfg.Registry, cfg.Queues, "JobsConfig.Queues", cfg.Logger)
	if err != nil {
		return nil, err
	}
	lim, err := cfg.Limits.resolve()
	if err != nil {
		return nil, err
	}
	writes, err := registry.NewJobRegistry(context.Background(), cfg.Store)
	if err != nil {
		return nil, fmt.Errorf("scoring: %w", err)
	}
	j := &Jobs{
		engine: eng, store: cfg.Store, writes: writes, lim: lim,
		timeout: cfg.Timeout, retention: cfg.Retention, maxJobs: cfg.MaxJobs,
		now: cfg.Now, rand: cfg.Rand,
		running:   make(map[string]*jobRun),
		stopSweep: make(chan struct{}),
		sweepDone: make(chan struct{}),
	}
	if j.timeout == 0 {
		j.timeout = DefaultJobTimeout
	}
	if j.retention == 0 {
		j.retention = DefaultJobRetention
	}
	if j.maxJobs == 0 {
		j.maxJobs = DefaultMaxJobs
	}
	if j.now == nil {
		j.now = time.Now
	}
	if j.rand == nil {
		j.rand = rand.Reader
	}
	interval := cfg.SweepInterval
	if interval == 0 {
		interval = DefaultJobSweep
	}
	j.base, j.cancelAll = context.WithCancel(context.Background())
	go j.janitor(interval)
	return j, nil
}

// Queues returns the queues the runner runs jobs on.
func (j *Jobs) Queues() *Queues { return j.engine.queues }

// Limits returns the runner's limits on a job's input, defaults filled in:
// decode a job's rows with them.
func (j *Jobs) Limits() Limits { return j.lim }

// Submit checks spec, stores the job PENDING and starts it. It fails with
// an [*Error]: 400 invalid_request without rows or without exactly one of
// process and endpoint, 422 invalid_reference for an unknown process,
// endpoint or queue, 404 endpoint_disabled, 413 for rows beyond the
// runner's Limits, 400 schema_mismatch for rows the process's schema does
// not accept, 503 queue_full when the queue's waiting list is full (no job
// is then stored), 503 unavailable once Shutdown has begun.
//
// The waiting list is checked when the job is submitted. A job that then
// loses the last waiting place to a scoring request ends ERROR with type
// queue_full.
func (j *Jobs) Submit(ctx context.Context, spec JobSpec) (registry.Job, error) {
	x, err := j.resolve(spec)
	if err != nil {
		return registry.Job{}, err
	}
	req := spec.Input
	if req == nil {
		return registry.Job{}, errNoInput
	}
	if err := j.lim.admit(req); err != nil {
		return registry.Job{}, err
	}
	if err := req.Conform(x.process.Input); err != nil {
		return registry.Job{}, err
	}
	queues := j.engine.queues
	if st, ok := queues.Stat(x.queue); ok && st.Waiting >= st.MaxWaiting && (st.Waiting > 0 || st.Running >= st.MaxConcurrent) {
		return registry.Job{}, errJobQueueFull.Wrap(fmt.Errorf("scoring: queue %q: %w", x.queue, ErrQueueFull))
	}
	id, err := j.newID()
	if err != nil {
		return registry.Job{}, err
	}
	job := registry.Job{ID: id, Queue: x.queue, Process: x.process.Name, Endpoint: spec.Endpoint, Rows: req.Table.Rows()}

	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed {
		return registry.Job{}, errJobsClosed
	}
	job, err = j.writes.Create(ctx, job)
	if err != nil {
		return registry.Job{}, fmt.Errorf("scoring: store job: %w", err)
	}
	runCtx, cancel := context.WithCancelCause(j.base)
	run := &jobRun{cancel: cancel}
	j.running[id] = run
	j.wg.Add(1)
	x.in = registry.Input{Table: req.Table, Macros: spec.Macros}
	if spec.Endpoint != nil {
		x.in.Endpoint = *spec.Endpoint
	}
	go j.run(runCtx, run, job, x, req)
	return job, nil
}

// resolve finds what spec runs: the process, its queue and its timeout.
func (j *Jobs) resolve(spec JobSpec) (*execution, error) {
	snap := j.engine.reg.Snapshot()
	var x execution
	switch {
	case (spec.Process == "") == (spec.Endpoint == nil):
		return nil, httperr.New(TypeInvalidRequest, "name either a process or an endpoint")
	case spec.Endpoint != nil:
		e := spec.Endpoint
		target, err := snap.Resolve(e.Group, e.Path, e.Alias)
		if errors.Is(err, registry.ErrNotFound) {
			return nil, httperr.Newf(httperr.TypeInvalidRef,
				"no endpoint %s/%s/%s is deployed", e.Group, e.Path, e.Alias).At("/endpoint").Wrap(err)
		}
		if err != nil {
			return nil, err
		}
		x = endpointExecution(target, j.timeout)
		if spec.Queue != "" {
			x.queue = spec.Queue
		}
	default:
		p, ok := j.engine.reg.Catalog().Lookup(spec.Process)
		if !ok {
			return nil, httperr.Newf(httperr.TypeInvalidRef,
				"no process named %q is in the catalog", spec.Process).At("/process")
		}
		x = execution{process: p, queue: spec.Queue, timeout: j.timeout}
		if x.queue == "" {
			x.queue = registry.DefaultQueue
		}
	}
	if _, ok := snap.State().Queue(x.queue); !ok {
		return nil, httperr.Newf(httperr.TypeInvalidRef,
			"no execution queue named %q is defined", x.queue).At("/queueName")
	}
	x.background = true
	return &x, nil
}

// admit checks a request decoded elsewhere, perhaps under other limits,
// against l.
func (l Limits) admit(r *Request) error {
	rows, cols := r.Table.Rows(), r.Table.NumColumns()
	switch {
	case int64(len(r.st.data)) > l.MaxBodyBytes:
		return errBodyTooLarge(l.MaxBodyBytes)
	case rows > l.MaxRows:
		return tooLarge(TypeTooManyRows, "the request has more than %d rows", l.MaxRows)
	case cols > l.MaxColumns:
		return tooLarge(TypeTooManyColumns, "the request has more than %d columns", l.MaxColumns)
	case cols > 0 && rows > l.MaxCells/cols:
		return tooLarge(TypeTooManyCells, "the request has more than %d cells (rows × columns)", l.MaxCells)
	}
	return nil
}

// newID returns a random UUID (version 4).
func (j *Jobs) newID() (string, error) {
	var b [16]byte
	if _, err := io.ReadFull(j.rand, b[:]); err != nil {
		return "", fmt.Errorf("scoring: job id: %w", err)
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16]), nil
}

// run takes the job through its life: PENDING until x holds a slot,
// RUNNING until its process returns, then its end state.
func (j *Jobs) run(ctx context.Context, run *jobRun, job registry.Job, x *execution, req *Request) {
	defer j.wg.Done()
	defer func() {
		j.mu.Lock()
		delete(j.running, job.ID)
		j.mu.Unlock()
		run.cancel(nil)
	}()
	var notStarted error
	x.started = func() error {
		_, notStarted = j.writes.Update(context.Background(), job.ID, registry.JobRunning, nil, nil)
		return notStarted
	}
	result, err := j.engine.execute(ctx, x)
	switch {
	case notStarted != nil:
		if !errors.Is(notStarted, registry.ErrJobTransition) { // else Shutdown marked it STOPPED
			j.logStoreError(job.ID, notStarted)
		}
	case err != nil:
		j.end(job.ID, j.failure(ctx, err, x.timeout), nil)
	default:
		j.end(job.ID, ending{state: registry.JobFinished}, appendResponse(nil, req, result))
	}
}

// ending is the end state a job reaches and why.
type ending struct {
	state registry.JobState
	err   *registry.JobErrorInfo
}

// failure decides how a job whose run failed with err ends: STOPPED when
// it was stopped or the server gave up waiting for it (whatever the process
// did), TIMED_OUT past its deadline, ERROR otherwise with a message safe
// for clients.
func (j *Jobs) failure(ctx context.Context, err error, timeout time.Duration) ending {
	switch cause := context.Cause(ctx); {
	case errors.Is(cause, errStopRequested):
		return ending{registry.JobStopped, &registry.JobErrorInfo{Type: "stopped", Title: "Job stopped", Message: "the job was stopped on request"}}
	case errors.Is(cause, errShutdown) || (ctx.Err() != nil && j.base.Err() != nil):
		return ending{registry.JobStopped, shutdownStop()}
	case errors.Is(err, context.DeadlineExceeded):
		return ending{registry.JobTimedOut, &registry.JobErrorInfo{Type: httperr.TypeTimeout, Title: "Job timed out",
			Message: fmt.Sprintf("the process did not finish within %s", timeout)}}
	case errors.Is(err, ErrQueueFull):
		return ending{registry.JobError, &registry.JobErrorInfo{Type: TypeQueueFull, Title: "Queue full", Message: "the execution queue's waiting list was full"}}
	}
	e := httperr.From(err)
	if e.Status >= 500 {
		j.engine.log.Error("scoring: job failed", "cause", err.Error())
	}
	return ending{registry.JobError, &registry.JobErrorInfo{Type: e.Type, Title: "Job failed", Message: e.Message}}
}

func shutdownStop() *registry.JobErrorInfo {
	return &registry.JobErrorInfo{Type: "stopped", Title: "Job stopped", Message: "the server shut down before the job finished"}
}

// end moves the job to its end state. A job Shutdown has already marked
// STOPPED stays so.
func (j *Jobs) end(id string, e ending, result []byte) {
	_, err := j.writes.Update(context.Background(), id, e.state, e.err, result)
	if err != nil && !errors.Is(err, registry.ErrJobTransition) {
		j.logStoreError(id, err)
	}
}

func (j *Jobs) logStoreError(id string, err error) {
	level := slog.LevelError
	if errors.Is(err, registry.ErrClosed) {
		level = slog.LevelDebug // shutting down
	}
	j.engine.log.Log(context.Background(), level, "scoring: job state not stored", "job", id, "cause", err.Error())
}

// Job returns the job id, or an error matching [registry.ErrNotFound].
func (j *Jobs) Job(ctx context.Context, id string) (registry.Job, error) {
	return j.store.Job(ctx, id)
}

// List returns the jobs f selects, newest first, and how many match.
func (j *Jobs) List(ctx context.Context, f registry.JobFilter) ([]registry.Job, int, error) {
	return j.store.Jobs(ctx, f)
}

// Result returns the result of a FINISHED job, the body a scoring request
// would have been answered with. A job that has not finished is a 409
// job_not_finished.
func (j *Jobs) Result(ctx context.Context, id string) ([]byte, error) {
	job, err := j.store.Job(ctx, id)
	if err != nil {
		return nil, err
	}
	if job.State != registry.JobFinished {
		return nil, errJobNotFinished
	}
	return j.store.JobResult(ctx, id)
}

// Stop cancels the job's context. It ends STOPPED once its process returns
// (a job still waiting for a slot at once), whatever the process then
// returns. Stopping an ended job is a 409 job_ended.
func (j *Jobs) Stop(ctx context.Context, id string) (registry.Job, error) {
	job, err := j.store.Job(ctx, id)
	if err != nil {
		return job, err
	}
	j.mu.Lock()
	run := j.running[id]
	j.mu.Unlock()
	if run == nil || job.State.Final() {
		return job, errJobEnded
	}
	run.cancel(errStopRequested)
	return job, nil
}

// Counts returns how many stored jobs are in each state.
func (j *Jobs) Counts(ctx context.Context) (map[registry.JobState]int, error) {
	out := make(map[registry.JobState]int)
	for _, s := range registry.JobStates() {
		_, n, err := j.store.Jobs(ctx, registry.JobFilter{State: s, Limit: 1})
		if err != nil {
			return nil, err
		}
		out[s] = n
	}
	return out, nil
}

// Sweep removes the ended jobs past the retention or the count limit and
// returns how many it removed. The janitor calls it every SweepInterval.
func (j *Jobs) Sweep(ctx context.Context) (int, error) {
	return j.writes.Delete(ctx, registry.JobRetention{Before: j.now().Add(-j.retention), MaxEnded: j.maxJobs})
}

func (j *Jobs) janitor(interval time.Duration) {
	defer close(j.sweepDone)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-j.stopSweep:
			return
		case <-t.C:
			if _, err := j.Sweep(context.Background()); err != nil && !errors.Is(err, registry.ErrClosed) {
				j.engine.log.Error("scoring: removing old jobs failed", "cause", err.Error())
			}
		}
	}
}

// Shutdown stops taking jobs and the janitor, then waits for the jobs
// pending and running to end until ctx is done. Then it cancels the rest and
// marks them STOPPED at once, without waiting for processes that do not
// heed their context. It returns ctx's error when it had to stop jobs, nil
// when all ended on their own. Later calls only wait as the first did.
func (j *Jobs) Shutdown(ctx context.Context) error {
	j.mu.Lock()
	j.closed = true
	j.mu.Unlock()
	j.shutdownSignal.Do(func() { close(j.stopSweep) })
	<-j.sweepDone

	done := make(chan struct{})
	go func() {
		j.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
	}
	j.mu.Lock()
	ids := make([]string, 0, len(j.running))
	for id, run := range j.running {
		run.cancel(errShutdown)
		ids = append(ids, id)
	}
	j.mu.Unlock()
	j.cancelAll()
	for _, id := range ids {
		// A job may end on its own meanwhile: then the change is refused.
		j.end(id, ending{registry.JobStopped, shutdownStop()}, nil)
	}
	return ctx.Err()
}

// Close is Shutdown without waiting: every job not ended is stopped.
func (j *Jobs) Close() error {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := j.Shutdown(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}
