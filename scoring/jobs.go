package scoring

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/scorehub/scorehub/internal/httperr"
	"github.com/scorehub/scorehub/problem"
	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/jobs"
	"github.com/scorehub/scorehub/registry/process"
	"github.com/scorehub/scorehub/scoring/internal/wire"
)

// Defaults of [JobsConfig].
const (
	DefaultJobTimeout   = time.Hour
	DefaultJobRetention = 24 * time.Hour
	DefaultMaxJobs      = 10_000
	DefaultJobSweep     = time.Minute
	// DefaultLeaseCheck is how often a runner over a shared store tends
	// its leases: a stop asked for through another replica takes effect
	// within it.
	DefaultLeaseCheck = time.Second
	// DefaultMaxJobBodyBytes bounds a job's body: below a scoring
	// request's, as a job's input and result are kept.
	DefaultMaxJobBodyBytes = 8 << 20
	// DefaultMaxActiveJobsPerOwner bounds the jobs one owner has PENDING
	// or RUNNING.
	DefaultMaxActiveJobsPerOwner = 8
	// DefaultMaxOwnerResultBytes bounds the stored results of one owner's
	// jobs (256 MiB).
	DefaultMaxOwnerResultBytes = 256 << 20
	// DefaultMaxResultBytes bounds the stored results of every job (2 GiB).
	DefaultMaxResultBytes = 2 << 30
	// activeQuotaRetry is the Retry-After, in seconds, of a submission over
	// the active jobs quota: about when a short job has made room.
	activeQuotaRetry = 10
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
	// not close it. Unless Replica is set it must not be shared with
	// another runner: NewJobs ends the jobs it holds that have not ended
	// (see [jobs.NewRegistry]).
	Store jobs.Store

	// Replica, when set, says that Store is shared with the runners of
	// other server replicas (several servers over one database), and
	// names this one among them: a name no other live replica uses (see
	// [jobs.NewSharedRegistry]). A job then runs on the replica it
	// was submitted to, which holds its input, under a lease it renews
	// while the job runs; a stop asked for through another replica
	// reaches it within LeaseCheck; and once a replica stops renewing
	// (it crashed, or lost the store) the others end its jobs ERROR,
	// type "interrupted", when their leases lapse. Empty means Store is
	// this runner's alone.
	Replica string
	// Lease is how long a replica's claim on a job holds without renewal.
	// Zero means jobs.DefaultLease (15 s). Only with Replica.
	Lease time.Duration
	// LeaseCheck is how often a runner with a Replica renews the leases
	// of its jobs, looks for stop requests and for other replicas' lapsed
	// leases. Zero means DefaultLeaseCheck (1 s); it must be at most a
	// third of Lease.
	LeaseCheck time.Duration

	// Limits bound a job's input, and the result it may make, as they bound a
	// scoring request; zero fields mean the defaults, except MaxBodyBytes, whose
	// zero means DefaultMaxJobBodyBytes (8 MiB): a job's body is kept until it
	// runs and echoed in its stored result, so it is bounded below a scoring
	// request's.
	Limits Limits

	// MaxActiveJobsPerOwner bounds the jobs one owner ([Caller.Subject])
	// has PENDING or RUNNING at once; a submission past it is a 429
	// job_quota_exceeded with Retry-After. Zero means
	// DefaultMaxActiveJobsPerOwner (8). Administrators are not bound.
	MaxActiveJobsPerOwner int
	// MaxOwnerResultBytes bounds the bytes of the stored results of one
	// owner's jobs. A submission while they are at or past it, or whose
	// result would take them past it, is a 429 job_quota_exceeded; the
	// result is judged before the job runs by a lower bound of its size
	// (see [Jobs.Submit]). A job whose result passes it all the same ends
	// ERROR with type job_quota_exceeded and no result stored. Zero means
	// DefaultMaxOwnerResultBytes (256 MiB). Administrators are not bound.
	MaxOwnerResultBytes int64
	// MaxResultBytes bounds the bytes of the stored results of every job,
	// administrators' included. A submission while they are at or past it,
	// or whose result would take them past it, is a 507 storage_full; a
	// job whose result passes it all the same ends ERROR with type
	// storage_full and no result stored. Zero means
	// DefaultMaxResultBytes (2 GiB).
	MaxResultBytes int64
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

	// Now is the clock retention and leases are measured by; nil means
	// time.Now.
	Now func() time.Time
	// Rand makes job IDs; nil means crypto/rand.
	Rand io.Reader
	// Logger receives failures with their cause and process panics. nil
	// means slog.Default().
	Logger *slog.Logger

	// Authorize decides, as [Config.Authorize] does for a scoring request,
	// whether the submitter of a job naming an endpoint of a group whose
	// Auth.Mode is registry.TokenRequired may use that group; it is given
	// the request that submits the job ([Caller.Request]). Give it the
	// function the scoring handler has, so that a job is allowed exactly
	// what its submitter may do at the endpoint's scoring address. nil
	// refuses every job naming an endpoint of a token group with 401.
	Authorize func(r *http.Request, group string, p registry.AuthPolicy) error
}

// Caller is who submits a job, as the host's authentication found them.
type Caller struct {
	// Subject names the caller (a token's subject). It is the owner of
	// the jobs the caller submits, and a caller who is not an
	// administrator sees and stops only the jobs it owns; empty, such a
	// caller sees none.
	Subject string
	// Admin says the caller is an administrator: only an administrator
	// may run a catalog process directly, run an endpoint's process on a
	// queue other than the endpoint's, and see and stop every job. A
	// caller restricted to some web API groups (WebAPIGroups) is never
	// one, whatever Admin says.
	Admin bool
	// WebAPIGroups, when not empty, are the only web API groups the
	// caller's credential may use (an API token's restriction, as
	// tokens.Claims.WebAPIGroups): its jobs may name only endpoints of
	// those groups, and it sees and stops only the jobs it owns on them.
	WebAPIGroups []string
	// Since, when not zero, is when the caller's identity began: the
	// creation of the user account that holds Subject now. Jobs of Subject
	// created before it belong to an earlier account of that name, since
	// deleted, and the caller neither sees nor stops them. Zero means
	// every job of Subject is the caller's (a user the host manages).
	Since time.Time
	// Request is the request that submits the job. Its credentials are
	// what [JobsConfig.Authorize] checks against the policy of the group
	// of the endpoint a job names; without it a job naming an endpoint of
	// a token group is refused.
	Request *http.Request
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
	Endpoint *process.EndpointRef
	// Input is the rows, decoded by [Decode] with the runner's
	// [Jobs.Limits]. Required: a Request made otherwise holds no rows to
	// echo, and is refused as none. The job's result echoes them as a
	// scoring response would; the runner owns the Request from Submit on.
	Input *Request
	// Macros are handed to the process.
	Macros map[string]string
	// Caller is who submits the job, and what they may run.
	Caller Caller
}

// Jobs runs processes as jobs: each is stored PENDING, waits for a slot on
// its execution queue (shared with the scoring requests), runs RUNNING
// under its timeout, and ends FINISHED with its result stored, ERROR,
// STOPPED or TIMED_OUT (see [jobs.State]). A janitor removes ended
// jobs past the retention. Jobs is safe for concurrent use.
type Jobs struct {
	engine         *engine
	authorize      func(*http.Request, string, registry.AuthPolicy) error
	store          jobs.Store     // reads
	writes         *jobs.Registry // every write, under its rules
	lim            Limits
	timeout        time.Duration
	retention      time.Duration
	maxJobs        int
	maxActive      int
	quota          jobs.ResultQuota // of an owner who is not an administrator
	now            func() time.Time
	rand           io.Reader
	base           context.Context // cancelled when shutdown gives up waiting
	cancelAll      context.CancelFunc
	stopSweep      chan struct{}
	sweepDone      chan struct{}
	stopLeases     chan struct{} // nil when the store is not shared
	leasesDone     chan struct{}
	mu             sync.Mutex // guards running and closed
	running        map[string]*jobRun
	closed         bool
	wg             sync.WaitGroup // one per job goroutine
	shutdownSignal sync.Once
	leasesSignal   sync.Once
}

// jobRun is how to stop a job the runner holds, and whose it is.
type jobRun struct {
	cancel context.CancelCauseFunc
	owner  string
}

// errStopRequested and errShutdown are the causes a job's context is
// cancelled with.
var (
	errStopRequested  = errors.New("scoring: job stopped on request")
	errShutdown       = errors.New("scoring: server shutting down")
	errEndedElsewhere = errors.New("scoring: job ended by another replica")
)

// Errors of the runner, as clients see them.
var (
	errJobNotFinished = httperr.New(problem.JobNotFinished, "the job has not finished; its result is available once it is FINISHED")
	errJobEnded       = httperr.New(problem.JobEnded, "the job has already ended")
	errJobsClosed     = httperr.New(problem.Unavailable, "the server is shutting down and takes no new jobs")
	errJobQueueFull   = httperr.New(problem.QueueFull, "the execution queue's waiting list is full; retry later").WithRetryAfter(1)
	errNoInput        = httperr.New(problem.InvalidRequest, "the job has no input rows")
	errProcessJob     = httperr.New(problem.Forbidden, "only an administrator may run a catalog process as a job; name an endpoint instead").At("/process")
	errJobGroup       = httperr.New(problem.Forbidden, "this credential may not use the endpoint's web API group").At("/endpoint/group")
	errJobQueue       = httperr.New(problem.Forbidden, "only an administrator may run an endpoint's job on another queue than the endpoint's").At("/queueName")
	errActiveQuota    = httperr.New(problem.JobQuotaExceeded, "too many of your jobs are pending or running; retry once one has ended").WithRetryAfter(activeQuotaRetry)
	errResultQuota    = httperr.New(problem.JobQuotaExceeded, "your jobs' stored results use up your quota; retry once older jobs have been removed")
	errStorageFull    = httperr.New(problem.StorageFull, "the job store has no room for more results; retry later")
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
	case cfg.MaxActiveJobsPerOwner < 0 || cfg.MaxOwnerResultBytes < 0 || cfg.MaxResultBytes < 0:
		return nil, errors.New("scoring: JobsConfig quotas must not be negative")
	case cfg.Replica == "" && (cfg.Lease != 0 || cfg.LeaseCheck != 0):
		return nil, errors.New("scoring: JobsConfig.Lease and LeaseCheck need a Replica")
	case cfg.Lease < 0 || cfg.LeaseCheck < 0:
		return nil, errors.New("scoring: JobsConfig.Lease and LeaseCheck must not be negative")
	}
	leaseCheck := cmp.Or(cfg.LeaseCheck, DefaultLeaseCheck)
	if cfg.Replica != "" && leaseCheck > cmp.Or(cfg.Lease, jobs.DefaultLease)/3 {
		return nil, errors.New("scoring: JobsConfig.LeaseCheck must be at most a third of Lease, so that a lease is renewed before it lapses")
	}
	if cfg.Limits.MaxBodyBytes == 0 {
		cfg.Limits.MaxBodyBytes = DefaultMaxJobBodyBytes
	}
	eng, err := newEngine(cfg.Registry, cfg.Queues, "JobsConfig.Queues", cfg.Logger)
	if err != nil {
		return nil, err
	}
	lim, err := cfg.Limits.resolve()
	if err != nil {
		return nil, err
	}
	var writes *jobs.Registry
	if cfg.Replica == "" {
		writes, err = jobs.NewRegistry(context.Background(), cfg.Store)
	} else {
		writes, err = jobs.NewSharedRegistry(context.Background(), cfg.Store,
			jobs.Lease{Replica: cfg.Replica, Duration: cfg.Lease, Now: cfg.Now})
	}
	if err != nil {
		return nil, fmt.Errorf("scoring: %w", err)
	}
	j := &Jobs{
		engine: eng, authorize: cfg.Authorize, store: cfg.Store, writes: writes, lim: lim,
		timeout: cfg.Timeout, retention: cfg.Retention, maxJobs: cfg.MaxJobs,
		maxActive: cmp.Or(cfg.MaxActiveJobsPerOwner, DefaultMaxActiveJobsPerOwner),
		quota: jobs.ResultQuota{
			Owner: cmp.Or(cfg.MaxOwnerResultBytes, DefaultMaxOwnerResultBytes),
			Total: cmp.Or(cfg.MaxResultBytes, DefaultMaxResultBytes),
		},
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
	if cfg.Replica != "" {
		j.stopLeases, j.leasesDone = make(chan struct{}), make(chan struct{})
		go j.tendLeases(leaseCheck)
	}
	return j, nil
}

// Queues returns the queues the runner runs jobs on.
func (j *Jobs) Queues() *Queues { return j.engine.queues }

// Limits returns the runner's limits on a job's input, defaults filled in:
// decode a job's rows with them.
func (j *Jobs) Limits() Limits { return j.lim }

// Submit checks spec, stores the job PENDING and starts it. A job naming an
// endpoint must pass the check of the endpoint's group policy the scoring
// handler applies to the same caller (see [JobsConfig.Authorize]), before
// anything about the endpoint is looked up; a job naming a catalog process, or
// moving an endpoint's execution to another queue, needs an administrator
// ([Caller.Admin]). It fails with a [*problem.Error]: 400 invalid_request
// without rows or without exactly one of process and endpoint, 401 or 403 when
// the caller may not run it, 422 invalid_reference for an unknown process,
// endpoint or queue, 404 endpoint_disabled, 413 for rows beyond the runner's
// Limits (too_many_result_cells or response_too_large for rows × the result
// columns the process declares), 400 schema_mismatch for rows the process's
// schema does not accept, 503 queue_full when the queue's waiting list is full
// (no job is then stored), 503 unavailable once Shutdown has begun. A caller
// who is not an administrator gets 429 job_quota_exceeded with as many jobs
// PENDING or RUNNING as [JobsConfig.MaxActiveJobsPerOwner] allows (with
// Retry-After), or with stored results at [JobsConfig.MaxOwnerResultBytes] or
// that the job's result would take past it; anyone gets 507 storage_full
// likewise for [JobsConfig.MaxResultBytes]. The job's result is judged by a
// lower bound of its size, from its rows and the result columns the process
// declares, so that a job is refused only when its result could never be
// stored. A job whose result would pass either byte quota when it finishes (as
// jobs submitted together may) ends ERROR with that type and no result.
//
// The waiting list is checked when the job is submitted. A job that then
// loses the last waiting place to a scoring request ends ERROR with type
// queue_full.
func (j *Jobs) Submit(ctx context.Context, spec JobSpec) (jobs.Job, error) {
	x, err := j.resolve(spec)
	if err != nil {
		return jobs.Job{}, err
	}
	if spec.Input == nil || spec.Input.in == nil {
		return jobs.Job{}, errNoInput
	}
	req := spec.Input.in
	if err := req.Admit(wire.Limits(j.lim)); err != nil {
		return jobs.Job{}, err
	}
	if err := req.Conform(x.process.Input); err != nil {
		return jobs.Job{}, err
	}
	if err := x.admitResult(req.Table.Rows()); err != nil {
		return jobs.Job{}, err
	}
	spec.Input.Table = req.Table
	queues := j.engine.queues
	if st, ok := queues.Stat(x.queue); ok && st.Waiting >= st.MaxWaiting && (st.Waiting > 0 || st.Running >= st.MaxConcurrent) {
		return jobs.Job{}, errJobQueueFull.Wrap(fmt.Errorf("scoring: queue %q: %w", x.queue, ErrQueueFull))
	}
	id, err := j.newID()
	if err != nil {
		return jobs.Job{}, err
	}
	job := jobs.Job{ID: id, Owner: spec.Caller.Subject, Queue: x.queue, Process: x.process.Name, Endpoint: spec.Endpoint, Rows: req.Table.Rows()}

	if err := j.checkResultQuota(ctx, spec.Caller, req.MinResponseBytes(x.process.Output)); err != nil {
		return jobs.Job{}, err
	}

	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed {
		return jobs.Job{}, errJobsClosed
	}
	// Counted under mu with the job about to join them.
	if !spec.Caller.admin() {
		n, err := j.activeOf(ctx, spec.Caller.Subject)
		if err != nil {
			return jobs.Job{}, err
		}
		if n >= j.maxActive {
			return jobs.Job{}, errActiveQuota
		}
	}
	job, err = j.writes.Create(ctx, job)
	if err != nil {
		return jobs.Job{}, fmt.Errorf("scoring: store job: %w", err)
	}
	runCtx, cancel := context.WithCancelCause(j.base)
	run := &jobRun{cancel: cancel, owner: job.Owner}
	j.running[id] = run
	j.wg.Add(1)
	x.in = process.Input{Table: req.Table, Macros: spec.Macros}
	if spec.Endpoint != nil {
		x.in.Endpoint = *spec.Endpoint
	}
	quota := j.quota
	if spec.Caller.admin() {
		quota.Owner = 0
	}
	go j.run(runCtx, run, job, x, req, quota)
	return job, nil
}

// activeOf counts owner's jobs that have not ended. j.mu must be held.
// Over a store of its own, j.running holds them all; over a shared one,
// other replicas run some, and the store is asked.
func (j *Jobs) activeOf(ctx context.Context, owner string) (int, error) {
	if j.writes.Replica() != "" {
		n := 0
		for _, state := range []jobs.State{jobs.StatePending, jobs.StateRunning} {
			_, total, err := j.store.Jobs(ctx, jobs.Filter{State: state, Owner: owner, Limit: 1})
			if err != nil {
				return 0, fmt.Errorf("scoring: count active jobs: %w", err)
			}
			n += total
		}
		return n, nil
	}
	n := 0
	for _, run := range j.running {
		if run.owner == owner {
			n++
		}
	}
	return n, nil
}

// checkResultQuota refuses a job of c whose result could not be stored:
// while the stored results are at a byte quota, or when minResult, a
// lower bound of the job's result (see [wire.Request.MinResponseBytes]),
// would take them past it. A refusal is never wrong, as the result could
// be no smaller; jobs that each fit may still pass a quota together, and
// the one that finishes past it ends ERROR without its result, as before.
func (j *Jobs) checkResultQuota(ctx context.Context, c Caller, minResult int64) error {
	ofOwner, total, err := j.writes.ResultBytes(ctx, c.Subject)
	if err != nil {
		return fmt.Errorf("scoring: job results: %w", err)
	}
	switch {
	case total >= j.quota.Total:
		return errStorageFull
	case !c.admin() && ofOwner >= j.quota.Owner:
		return errResultQuota
	case total+minResult > j.quota.Total:
		return httperr.Newf(problem.StorageFull,
			"the job's result would be at least %d bytes, more than the job store has room for (%d of %d bytes used)", minResult, total, j.quota.Total)
	case !c.Admin && ofOwner+minResult > j.quota.Owner:
		return httperr.Newf(problem.JobQuotaExceeded,
			"the job's result would be at least %d bytes, which would take your stored results (%d bytes) past your quota of %d bytes", minResult, ofOwner, j.quota.Owner)
	}
	return nil
}

// resolve finds what spec runs: the process, its queue and its timeout.
func (j *Jobs) resolve(spec JobSpec) (*execution, error) {
	snap := j.engine.reg.Snapshot()
	var x execution
	switch {
	case (spec.Process == "") == (spec.Endpoint == nil):
		return nil, httperr.New(problem.InvalidRequest, "name either a process or an endpoint")
	case spec.Endpoint != nil:
		e := spec.Endpoint
		// A credential restricted to other groups is refused before
		// anything is looked up, whether the group exists or not.
		if !spec.Caller.mayUse(e.Group) {
			return nil, errJobGroup
		}
		// As at the scoring address: the policy first, so that a job
		// cannot tell a caller which endpoints a protected group has.
		if g, ok := snap.State().Group(e.Group); ok {
			if err := authorizeGroup(j.authorize, j.engine.log, spec.Caller.Request, g.Name, g.Auth); err != nil {
				return nil, err
			}
		}
		target, err := snap.Resolve(e.Group, e.Path, e.Alias)
		if errors.Is(err, registry.ErrNotFound) {
			return nil, httperr.Newf(problem.InvalidReference,
				"no endpoint %s/%s/%s is deployed", e.Group, e.Path, e.Alias).At("/endpoint").Wrap(err)
		}
		if err != nil {
			return nil, err
		}
		x = endpointExecution(&target, j.timeout)
		if spec.Queue != "" && spec.Queue != x.queue {
			if !spec.Caller.admin() {
				return nil, errJobQueue
			}
			x.queue = spec.Queue
		}
	default:
		if !spec.Caller.admin() {
			return nil, errProcessJob
		}
		p, ok := j.engine.reg.Catalog().Lookup(spec.Process)
		if !ok {
			return nil, httperr.Newf(problem.InvalidReference,
				"no process named %q is in the catalog", spec.Process).At("/process")
		}
		x = execution{process: p, queue: spec.Queue, timeout: j.timeout}
		if x.queue == "" {
			x.queue = registry.DefaultQueue
		}
	}
	if _, ok := snap.State().Queue(x.queue); !ok {
		return nil, httperr.Newf(problem.InvalidReference,
			"no execution queue named %q is defined", x.queue).At("/queueName")
	}
	x.background = true
	x.maxResultCells, x.maxResponseBytes = j.lim.MaxResultCells, j.lim.MaxResponseBytes
	return &x, nil
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
func (j *Jobs) run(ctx context.Context, run *jobRun, job jobs.Job, x *execution, req *wire.Request, quota jobs.ResultQuota) {
	defer j.wg.Done()
	defer func() {
		j.mu.Lock()
		delete(j.running, job.ID)
		j.mu.Unlock()
		run.cancel(nil)
	}()
	var notStarted error
	x.started = func() error {
		_, notStarted = j.writes.Update(context.Background(), job.ID, jobs.StateRunning, nil, nil)
		return notStarted
	}
	result, err := j.engine.execute(ctx, x)
	switch {
	case notStarted != nil:
		if !errors.Is(notStarted, jobs.ErrTransition) { // else Shutdown marked it STOPPED
			j.logStoreError(job.ID, notStarted)
		}
	case err != nil:
		j.end(job.ID, j.failure(ctx, err, x.timeout), nil)
	default:
		_, err := j.writes.Finish(context.Background(), job.ID, req.Encoder(result).Append(nil), quota)
		if err != nil && !errors.Is(err, jobs.ErrTransition) { // else Shutdown marked it STOPPED
			j.logStoreError(job.ID, err)
		}
		x.answered()
	}
}

// ending is the end state a job reaches and why.
type ending struct {
	state jobs.State
	err   *jobs.ErrorInfo
}

// failure decides how a job whose run failed with err ends: STOPPED when
// it was stopped or the server gave up waiting for it (whatever the process
// did), TIMED_OUT past its deadline, ERROR otherwise with a message safe
// for clients.
func (j *Jobs) failure(ctx context.Context, err error, timeout time.Duration) ending {
	switch cause := context.Cause(ctx); {
	case errors.Is(cause, errStopRequested):
		return ending{jobs.StateStopped, &jobs.ErrorInfo{Type: "stopped", Title: "Job stopped", Message: "the job was stopped on request"}}
	case errors.Is(cause, errShutdown) || (ctx.Err() != nil && j.base.Err() != nil):
		return ending{jobs.StateStopped, shutdownStop()}
	case errors.Is(cause, errEndedElsewhere):
		// Another replica ended the job; the store refuses this ending.
		return ending{jobs.StateError, &jobs.ErrorInfo{Type: "interrupted", Title: "Job interrupted",
			Message: "the job's lease lapsed before it finished"}}
	case errors.Is(err, context.DeadlineExceeded):
		return ending{jobs.StateTimedOut, &jobs.ErrorInfo{Type: string(problem.Timeout), Title: "Job timed out",
			Message: fmt.Sprintf("the process did not finish within %s", timeout)}}
	case errors.Is(err, ErrQueueFull):
		return ending{jobs.StateError, &jobs.ErrorInfo{Type: string(problem.QueueFull), Title: "Queue full", Message: "the execution queue's waiting list was full"}}
	}
	e := httperr.From(err)
	if e.Status >= 500 {
		j.engine.log.Error("scoring: job failed", "cause", err.Error())
	}
	return ending{jobs.StateError, &jobs.ErrorInfo{Type: string(e.Code), Title: "Job failed", Message: e.Message}}
}

func shutdownStop() *jobs.ErrorInfo {
	return &jobs.ErrorInfo{Type: "stopped", Title: "Job stopped", Message: "the server shut down before the job finished"}
}

// end moves the job to its end state. A job Shutdown has already marked
// STOPPED stays so.
func (j *Jobs) end(id string, e ending, result []byte) {
	_, err := j.writes.Update(context.Background(), id, e.state, e.err, result)
	if err != nil && !errors.Is(err, jobs.ErrTransition) {
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

// Job returns the job id as c may see it: an administrator sees every job,
// anyone else only the jobs they own. A job c may not see fails as one that
// does not exist, with an error matching [registry.ErrNotFound], so that
// its ID cannot be probed.
func (j *Jobs) Job(ctx context.Context, c Caller, id string) (jobs.Job, error) {
	job, err := j.store.Job(ctx, id)
	if err != nil {
		return jobs.Job{}, err
	}
	if !c.sees(job) {
		return jobs.Job{}, fmt.Errorf("scoring: job %q is not the caller's: %w", id, registry.ErrNotFound)
	}
	return job, nil
}

// sees reports whether c may see job: an administrator every job, anyone
// else the jobs whose owner they are, and a restricted caller only those of
// them that name an endpoint of its groups. A job without an owner is an
// administrator's only.
func (c Caller) sees(job jobs.Job) bool {
	switch {
	case c.admin():
		return true
	case c.Subject == "" || job.Owner != c.Subject || job.CreatedAt.Before(c.Since):
		return false
	case len(c.WebAPIGroups) == 0:
		return true
	}
	return job.Endpoint != nil && c.mayUse(job.Endpoint.Group)
}

// admin reports whether c acts as an administrator: never when restricted.
func (c Caller) admin() bool { return c.Admin && len(c.WebAPIGroups) == 0 }

// mayUse reports whether c's credential may use the web API group named
// group at all.
func (c Caller) mayUse(group string) bool {
	return len(c.WebAPIGroups) == 0 || slices.Contains(c.WebAPIGroups, group)
}

// List returns the jobs f selects among those c may see, newest first, and
// how many match: for a caller who is not an administrator, only the
// caller's own. A caller restricted to some web API groups lists none (the
// store selects jobs by owner, not by group); it looks its jobs up by ID.
func (j *Jobs) List(ctx context.Context, c Caller, f jobs.Filter) ([]jobs.Job, int, error) {
	if !c.admin() {
		if c.Subject == "" || len(c.WebAPIGroups) > 0 || f.Owner != "" && f.Owner != c.Subject {
			return nil, 0, nil
		}
		f.Owner = c.Subject
		if f.CreatedFrom.Before(c.Since) {
			f.CreatedFrom = c.Since
		}
	}
	return j.store.Jobs(ctx, f)
}

// Result returns the result of a FINISHED job c may see (see [Jobs.Job]),
// the body a scoring request would have been answered with. A job that has
// not finished is a 409 job_not_finished.
func (j *Jobs) Result(ctx context.Context, c Caller, id string) ([]byte, error) {
	job, err := j.Job(ctx, c, id)
	if err != nil {
		return nil, err
	}
	if job.State != jobs.StateFinished {
		return nil, errJobNotFinished
	}
	return j.store.JobResult(ctx, id)
}

// Stop cancels the context of a job c may see (see [Jobs.Job]). It ends
// STOPPED once its process returns (a job still waiting for a slot at
// once), whatever the process then returns. Stopping an ended job is a 409
// job_ended. Over a shared store, a job another replica runs is stopped
// by that replica once it reads the request this one stores
// ([jobs.Job.StopRequested]), within its JobsConfig.LeaseCheck.
func (j *Jobs) Stop(ctx context.Context, c Caller, id string) (jobs.Job, error) {
	job, err := j.Job(ctx, c, id)
	if err != nil {
		return job, err
	}
	if job.State.Final() {
		return job, errJobEnded
	}
	j.mu.Lock()
	run := j.running[id]
	j.mu.Unlock()
	switch {
	case run != nil:
		run.cancel(errStopRequested)
		return job, nil
	case j.writes.Replica() == "":
		return job, errJobEnded // the job ended since it was read
	}
	job, err = j.writes.RequestStop(ctx, id)
	if errors.Is(err, jobs.ErrTransition) {
		return job, errJobEnded
	}
	if err != nil {
		return job, fmt.Errorf("scoring: request the stop of job %q: %w", id, err)
	}
	return job, nil
}

// StopOwner stops every job of owner that has not ended, as [Jobs.Stop]
// would for an administrator, and returns how many it asked to stop: what
// a host does when it removes the user owner, whose jobs end with them.
// Their ended jobs stay until the retention removes them; a user later
// made with the same name does not see them (see [Caller.Since]).
func (j *Jobs) StopOwner(ctx context.Context, owner string) (int, error) {
	if owner == "" {
		return 0, nil
	}
	n := 0
	for _, state := range []jobs.State{jobs.StatePending, jobs.StateRunning} {
		list, _, err := j.store.Jobs(ctx, jobs.Filter{State: state, Owner: owner})
		if err != nil {
			return n, fmt.Errorf("scoring: list the jobs of %q: %w", owner, err)
		}
		for _, job := range list {
			_, err := j.Stop(ctx, Caller{Admin: true}, job.ID)
			switch {
			case err == nil:
				n++
			case errors.Is(err, errJobEnded), errors.Is(err, registry.ErrNotFound):
			default:
				return n, err
			}
		}
	}
	return n, nil
}

// Counts returns how many stored jobs are in each state.
func (j *Jobs) Counts(ctx context.Context) (map[jobs.State]int, error) {
	out := make(map[jobs.State]int)
	for _, s := range jobs.States() {
		_, n, err := j.store.Jobs(ctx, jobs.Filter{State: s, Limit: 1})
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
	return j.writes.Delete(ctx, jobs.Retention{Before: j.now().Add(-j.retention), MaxEnded: j.maxJobs})
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
	// Leases are renewed while the jobs end, so that no other replica
	// takes them for interrupted.
	defer j.endLeases()
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
		j.end(id, ending{jobs.StateStopped, shutdownStop()}, nil)
	}
	return ctx.Err()
}

// endLeases stops tending leases and waits until the last round is over.
func (j *Jobs) endLeases() {
	if j.stopLeases == nil {
		return
	}
	j.leasesSignal.Do(func() { close(j.stopLeases) })
	<-j.leasesDone
}

// tendLeases, over a shared store, runs leaseRound every interval until
// endLeases.
func (j *Jobs) tendLeases(interval time.Duration) {
	defer close(j.leasesDone)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-j.stopLeases:
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(context.Background(), interval)
			j.leaseRound(ctx)
			cancel()
		}
	}
}

// leaseRound renews the leases of the jobs this replica runs, stops those
// whose stop was asked for through another replica, lets go of those
// another replica ended (their leases lapsed while this one could not
// renew them), and ends other replicas' jobs whose leases lapsed.
func (j *Jobs) leaseRound(ctx context.Context) {
	j.mu.Lock()
	runs := maps.Clone(j.running)
	j.mu.Unlock()
	for id, run := range runs {
		job, err := j.writes.Renew(ctx, id)
		switch {
		case errors.Is(err, registry.ErrNotFound):
			run.cancel(errEndedElsewhere)
		case err != nil:
			j.logLeaseError("scoring: job lease not renewed", err, "job", id)
		case job.State.Final() || job.Replica != j.writes.Replica():
			run.cancel(errEndedElsewhere)
		case job.StopRequested:
			run.cancel(errStopRequested)
		}
	}
	if n, err := j.writes.EndLapsed(ctx); err != nil {
		j.logLeaseError("scoring: lapsed job leases not ended", err)
	} else if n > 0 {
		j.engine.log.Warn("scoring: ended the jobs of a replica that stopped renewing their leases", "jobs", n)
	}
}

// logLeaseError logs a failed round of leases: at warn level while the
// store cannot be reached (a lease outlives a short outage), at error
// level otherwise.
func (j *Jobs) logLeaseError(msg string, err error, attrs ...any) {
	level := slog.LevelError
	switch {
	case errors.Is(err, registry.ErrClosed):
		return // shutting down
	case errors.Is(err, registry.ErrStoreUnavailable), errors.Is(err, context.DeadlineExceeded):
		level = slog.LevelWarn
	}
	j.engine.log.Log(context.Background(), level, msg, append(attrs, "cause", err.Error())...)
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
