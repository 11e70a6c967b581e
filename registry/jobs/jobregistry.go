package jobs

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/scorehub/scorehub/internal/image"
	"github.com/scorehub/scorehub/problem"
	"github.com/scorehub/scorehub/registry"
)

// Registry is the one way to write jobs: it applies every rule of a job
// write once, above the [Store], which only persists. Reads apply no
// rule and go to the store directly.
//
// The rules of a write:
//
//   - A new job must be valid ([*registry.InvalidError]) and its ID unused
//     ([registry.ErrExists]); it is stored PENDING, stamped with the time, whatever
//     state, times and error it was given.
//   - A job changes state only as its life allows ([ErrTransition]; see
//     [Job.Transition]), stamped with the time; only a FINISHED job gets a
//     result (an empty one when none is given), whose length it records
//     as [Job.ResultBytes].
//   - [Registry.Finish] stores a result only within a [ResultQuota];
//     a job whose result would exceed it ends ERROR without one.
//   - Retention removes ended jobs only.
//   - Jobs that had not ended when the registry was made were interrupted
//     by the stop of the server that ran them: [NewRegistry] ends them
//     ERROR, type "interrupted".
//   - Over a store that replicas share ([NewSharedRegistry]), a job
//     belongs to the replica that creates it and claims it as it starts
//     ([Job.Replica]), under a lease ([Job.LeaseExpires]) that replica
//     renews ([Registry.Renew]); another replica asks for a stop in the
//     store ([Registry.RequestStop]) and ends the job ERROR, type
//     "interrupted", only once its lease has lapsed
//     ([Registry.EndLapsed]).
//
// The time comes from the [registry.StoreOptions] of a store of this package, else
// the wall clock, in UTC. A Registry is safe for concurrent use: a
// change decided on a state another writer has since changed is refused by
// the store with [registry.ErrStale], and the Registry reads the job again and
// decides afresh.
type Registry struct {
	store Store
	now   func() time.Time
	lease Lease // zero Replica: the store is this process's alone
	// finish serializes the quota check and the write of Finish, so that
	// two results cannot both fit the last room.
	finish sync.Mutex
}

// ResultQuota bounds the bytes of stored results (see [Job.ResultBytes])
// a job's result may bring the store to. Zero fields are no limit.
type ResultQuota struct {
	// Owner bounds the results of the jobs of the finishing job's owner,
	// its own included.
	Owner int64
	// Total bounds the results of every job the store holds.
	Total int64
}

// Retention says which ended jobs [Registry.Delete] removes: those
// that ended before Before, and beyond the MaxEnded most recently ended
// ones. Zero fields remove nothing by that rule. Jobs that have not ended
// are never removed.
type Retention struct {
	Before   time.Time
	MaxEnded int
}

// DefaultLease is how long a replica's claim on a job lasts without
// renewal when [Lease.Duration] is zero.
const DefaultLease = 15 * time.Second

// Lease configures a [Registry] over a store that several server
// replicas share, such as a database.
type Lease struct {
	// Replica names this replica in the jobs it runs ([Job.Replica]).
	// Required: a name (see [registry.ValidName]) that no other live replica uses,
	// or each would end the other's jobs when it starts. A replica started
	// again under its old name ends the jobs of its previous life at once;
	// under a new name, the others end them when their leases lapse.
	Replica string
	// Duration is how long a claim on a job lasts without renewal: a job
	// whose replica stopped (crashed, lost the store) is ended ERROR,
	// "interrupted", by another replica that long after the last renewal.
	// Zero means [DefaultLease]; a replica renews its claims when less
	// than two thirds of it remain, so renew at least every third of it.
	Duration time.Duration
	// Now is the clock of the leases and of the times jobs are stamped
	// with. Nil means the StoreOptions.Now of a store of this package,
	// else the wall clock. Replicas' clocks must agree to well within
	// Duration.
	Now func() time.Time
}

// NewRegistry returns a Registry over store and ends, as ERROR, the
// jobs store holds that have not ended: no job vanishes, and none stays
// running forever after a crash. It assumes that no other process runs the
// store's jobs, as a [FileStore]'s lock ensures; for a store that
// replicas share, use [NewSharedRegistry]. Closing the store is the
// caller's.
func NewRegistry(ctx context.Context, store Store) (*Registry, error) {
	r, err := newJobRegistry(store)
	if err != nil {
		return nil, err
	}
	all, _, err := store.Jobs(ctx, Filter{})
	if err != nil {
		return nil, fmt.Errorf("registry: read jobs: %w", err)
	}
	slices.SortFunc(all, func(a, b Job) int { return strings.Compare(a.ID, b.ID) })
	for _, j := range all {
		if _, err := r.interrupt(ctx, j, func(Job) bool { return true }); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// NewSharedRegistry returns a Registry over a store that other
// replicas, each with a Registry of its own, share: the jobs of other
// replicas are left to them while their leases hold. It ends, as ERROR,
// type "interrupted", the jobs whose lease has lapsed, those of a previous
// life of this replica (l.Replica) and those stored without a replica.
func NewSharedRegistry(ctx context.Context, store Store, l Lease) (*Registry, error) {
	switch {
	case !registry.ValidName(l.Replica):
		return nil, fmt.Errorf("registry: JobLease.Replica %q is not a valid name", l.Replica)
	case l.Duration < 0:
		return nil, errors.New("registry: JobLease.Duration must not be negative")
	}
	if l.Duration == 0 {
		l.Duration = DefaultLease
	}
	r, err := newJobRegistry(store)
	if err != nil {
		return nil, err
	}
	r.lease = l
	if l.Now != nil {
		r.now = func() time.Time { return l.Now().UTC() }
	}
	mine := func(j Job) bool { return j.Replica == l.Replica }
	if _, err := r.endLapsed(ctx, mine); err != nil {
		return nil, err
	}
	return r, nil
}

func newJobRegistry(store Store) (*Registry, error) {
	if store == nil {
		return nil, errors.New("registry: NewJobRegistry needs a store")
	}
	r := &Registry{store: store, now: func() time.Time { return time.Now().UTC() }}
	if c, ok := store.(interface{ now() time.Time }); ok {
		r.now = c.now // StoreOptions.Now of this package's stores
	}
	return r, nil
}

// Replica returns the name of this replica, empty when the store is not
// shared.
func (r *Registry) Replica() string { return r.lease.Replica }

// interruptedJobError is the Error of a job that was PENDING or RUNNING
// when its server stopped.
func interruptedJobError() ErrorInfo {
	return ErrorInfo{
		Type:    "interrupted",
		Title:   "Job interrupted",
		Message: "the server stopped before the job finished",
	}
}

// interrupt ends j ERROR, "interrupted", if it has not ended and, as read
// again before each attempt, ended(j) holds, and reports whether it did.
// A job that ended or vanished meanwhile is left alone.
func (r *Registry) interrupt(ctx context.Context, j Job, ended func(Job) bool) (bool, error) {
	if j.State.Final() {
		return false, nil
	}
	info := interruptedJobError()
	wrote := false
	_, err := r.change(ctx, j.ID, func(cur Job, now time.Time) (Job, bool, error) {
		wrote = !cur.State.Final() && ended(cur)
		if !wrote {
			return cur, false, nil
		}
		next, err := cur.Transition(StateError, now, &info)
		return next, true, err
	}, nil)
	if err != nil {
		if errors.Is(err, ErrTransition) || errors.Is(err, registry.ErrNotFound) {
			return false, nil
		}
		return false, fmt.Errorf("registry: end interrupted job %q: %w", j.ID, err)
	}
	return wrote, nil
}

// EndLapsed ends, as ERROR, type "interrupted", the jobs of other replicas
// whose lease has lapsed: their replica stopped, or lost the store, before
// they ended. It returns how many it ended. A lease renewed between the
// read and the write is seen: the job is read again, and left alone. Over
// a store that is not shared it does nothing.
func (r *Registry) EndLapsed(ctx context.Context) (int, error) {
	if r.lease.Replica == "" {
		return 0, nil
	}
	return r.endLapsed(ctx, func(Job) bool { return false })
}

// endLapsed ends the jobs whose lease has lapsed, and those mine selects
// whatever their lease.
func (r *Registry) endLapsed(ctx context.Context, mine func(Job) bool) (int, error) {
	lapsed := func(j Job) bool {
		if mine(j) {
			return true
		}
		return j.Replica != r.lease.Replica && !j.LeaseExpires.After(r.now())
	}
	n := 0
	for _, state := range []State{StatePending, StateRunning} {
		jobs, _, err := r.store.Jobs(ctx, Filter{State: state})
		if err != nil {
			return n, fmt.Errorf("registry: read jobs: %w", err)
		}
		for _, j := range jobs {
			if !lapsed(j) {
				continue
			}
			ended, err := r.interrupt(ctx, j, lapsed)
			if err != nil {
				return n, err
			}
			if ended {
				n++
			}
		}
	}
	return n, nil
}

// change applies decide to the job id as stored and writes what it
// decides, at the revision it read: when another writer changed the job
// in between, it reads the job again and decides afresh. decide returns
// the next job and whether to write it; change stamps the next revision.
// result is stored with the write. It returns the job as stored.
func (r *Registry) change(ctx context.Context, id string, decide func(cur Job, now time.Time) (Job, bool, error), result []byte) (Job, error) {
	for range image.MaxAttempts {
		cur, err := r.store.Job(ctx, id)
		if err != nil {
			return Job{}, err
		}
		next, write, err := decide(cur, r.now())
		if err != nil || !write {
			return next, err
		}
		next = next.clone() // what decide was given is the caller's
		next.Revision = cur.Revision + 1
		switch err := r.store.UpdateJob(ctx, cur.Revision, next, result); {
		case errors.Is(err, registry.ErrStale):
			continue // another writer changed the job: decide again
		case err != nil:
			return Job{}, err
		}
		return next, nil
	}
	return Job{}, errorf(registry.ErrStale, "job %q kept changing", id)
}

// Create stores j as a new PENDING job and returns it as stored.
func (r *Registry) Create(ctx context.Context, j Job) (Job, error) {
	if err := j.validate(); err != nil {
		return Job{}, err
	}
	now := r.now()
	j.Revision, j.State, j.CreatedAt, j.StartedAt, j.FinishedAt, j.Error = 1, StatePending, now, time.Time{}, time.Time{}, nil
	j.Replica, j.LeaseExpires, j.StopRequested = "", time.Time{}, false
	if r.lease.Replica != "" {
		j.Replica, j.LeaseExpires = r.lease.Replica, now.Add(r.lease.Duration)
	}
	if err := r.store.CreateJob(ctx, j); err != nil {
		return Job{}, err
	}
	return j.clone(), nil
}

// Update moves the job id to state to, with jerr as its Error when it ends
// other than FINISHED and result as its result when it ends FINISHED, and
// returns it as stored. It fails with [registry.ErrNotFound] for an unknown job and
// with [ErrTransition] when the job's life does not allow the change.
// Over a shared store, the move to RUNNING is this replica's claim on the
// job: it names this replica and starts a lease.
func (r *Registry) Update(ctx context.Context, id string, to State, jerr *ErrorInfo, result []byte) (Job, error) {
	if to != StateFinished {
		result = nil
	} else if result == nil {
		result = []byte{}
	}
	return r.change(ctx, id, func(cur Job, now time.Time) (Job, bool, error) {
		next, err := cur.Transition(to, now, jerr)
		if err != nil {
			return Job{}, false, err
		}
		if to == StateFinished {
			next.ResultBytes = int64(len(result))
		}
		if to == StateRunning && r.lease.Replica != "" {
			next.Replica, next.LeaseExpires = r.lease.Replica, now.Add(r.lease.Duration)
		}
		return next, true, nil
	}, result)
}

// Renew renews this replica's lease on the job id, which it runs, when
// less than two thirds of the lease remain, and returns the job as stored.
// The caller stops running the job when it has ended (another replica
// found its lease lapsed) or belongs to another replica, and stops it when
// StopRequested is set. Over a store that is not shared it only reads the
// job.
func (r *Registry) Renew(ctx context.Context, id string) (Job, error) {
	return r.change(ctx, id, func(cur Job, now time.Time) (Job, bool, error) {
		if r.lease.Replica == "" || cur.State.Final() || cur.Replica != r.lease.Replica ||
			cur.LeaseExpires.Sub(now) >= r.lease.Duration*2/3 {
			return cur, false, nil
		}
		cur.LeaseExpires = now.Add(r.lease.Duration)
		return cur, true, nil
	}, nil)
}

// RequestStop records in the store that the job id is to be stopped, for
// the replica that runs it to act on (see [Registry.Renew]), and
// returns the job as stored. A job that has ended fails with
// [ErrTransition].
func (r *Registry) RequestStop(ctx context.Context, id string) (Job, error) {
	return r.change(ctx, id, func(cur Job, now time.Time) (Job, bool, error) {
		if cur.State.Final() {
			return cur, false, errorf(ErrTransition, "job %q has already ended %s", id, cur.State)
		}
		if cur.StopRequested {
			return cur, false, nil
		}
		cur.StopRequested = true
		return cur, true, nil
	}, nil)
}

// Delete removes the ended jobs rt selects, with their results, and
// returns how many it removed.
func (r *Registry) Delete(ctx context.Context, rt Retention) (int, error) {
	if rt.Before.IsZero() && rt.MaxEnded <= 0 {
		return 0, nil
	}
	// Every job is read: the store is bounded by this very retention, and
	// a filter of ended jobs would be one more thing each store implements.
	all, _, err := r.store.Jobs(ctx, Filter{})
	if err != nil {
		return 0, err
	}
	ended := slices.DeleteFunc(all, func(j Job) bool { return !j.State.Final() })
	slices.SortFunc(ended, func(a, b Job) int {
		if c := b.FinishedAt.Compare(a.FinishedAt); c != 0 {
			return c
		}
		return newestFirst(&a, &b)
	})
	var ids []string
	for i, j := range ended {
		if (rt.MaxEnded > 0 && i >= rt.MaxEnded) || (!rt.Before.IsZero() && j.FinishedAt.Before(rt.Before)) {
			ids = append(ids, j.ID)
		}
	}
	if len(ids) == 0 {
		return 0, nil
	}
	return r.store.DeleteJobs(ctx, ids)
}

// ResultBytes returns the bytes of stored results (see [Job.ResultBytes])
// of owner's jobs and of every job. It reads the store's finished jobs.
func (r *Registry) ResultBytes(ctx context.Context, owner string) (ofOwner, total int64, err error) {
	finished, _, err := r.store.Jobs(ctx, Filter{State: StateFinished})
	if err != nil {
		return 0, 0, err
	}
	for _, j := range finished {
		total += j.ResultBytes
		if j.Owner == owner {
			ofOwner += j.ResultBytes
		}
	}
	return ofOwner, total, nil
}

// Finish ends the job id FINISHED with result when the result fits q, and
// ERROR without it otherwise, with type "job_quota_exceeded" (over
// q.Owner) or "storage_full" (over q.Total); it returns the job as stored. It
// fails as [Registry.Update] does. The check and the write are one step
// for the callers of this Registry; writers through other registries
// over the same store may overshoot a quota by the results they finish at
// the same moment.
func (r *Registry) Finish(ctx context.Context, id string, result []byte, q ResultQuota) (Job, error) {
	if q.Owner <= 0 && q.Total <= 0 {
		return r.Update(ctx, id, StateFinished, nil, result)
	}
	r.finish.Lock()
	defer r.finish.Unlock()
	cur, err := r.store.Job(ctx, id)
	if err != nil {
		return Job{}, err
	}
	ofOwner, total, err := r.ResultBytes(ctx, cur.Owner)
	if err != nil {
		return Job{}, err
	}
	n := int64(len(result))
	switch {
	case q.Owner > 0 && ofOwner+n > q.Owner:
		return r.Update(ctx, id, StateError, &ErrorInfo{Type: string(problem.JobQuotaExceeded), Title: "Result quota exceeded",
			Message: fmt.Sprintf("the result (%d bytes) would take the owner's stored results past %d bytes; it was not stored", n, q.Owner)}, nil)
	case q.Total > 0 && total+n > q.Total:
		return r.Update(ctx, id, StateError, &ErrorInfo{Type: string(problem.StorageFull), Title: "Result storage full",
			Message: fmt.Sprintf("the result (%d bytes) would take the stored results past %d bytes; it was not stored", n, q.Total)}, nil)
	}
	return r.Update(ctx, id, StateFinished, nil, result)
}
