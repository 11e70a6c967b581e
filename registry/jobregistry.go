package registry

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// JobRegistry is the one way to write jobs: it applies every rule of a job
// write once, above the [JobStore], which only persists. Reads apply no
// rule and go to the store directly.
//
// The rules of a write:
//
//   - A new job must be valid ([*InvalidError]) and its ID unused
//     ([ErrExists]); it is stored PENDING, stamped with the time, whatever
//     state, times and error it was given.
//   - A job changes state only as its life allows ([ErrJobTransition]; see
//     [Job.Transition]), stamped with the time; only a FINISHED job gets a
//     result (an empty one when none is given), whose length it records
//     as [Job.ResultBytes].
//   - [JobRegistry.Finish] stores a result only within a [ResultQuota];
//     a job whose result would exceed it ends ERROR without one.
//   - Retention removes ended jobs only.
//   - Jobs that had not ended when the registry was made were interrupted
//     by the stop of the server that ran them: [NewJobRegistry] ends them
//     ERROR, type "interrupted".
//
// The time comes from the [StoreOptions] of a store of this package, else
// the wall clock, in UTC. A JobRegistry is safe for concurrent use: a
// change decided on a state another writer has since changed is refused by
// the store with [ErrStale], and the JobRegistry reads the job again and
// decides afresh.
type JobRegistry struct {
	store JobStore
	now   func() time.Time
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

// JobRetention says which ended jobs [JobRegistry.Delete] removes: those
// that ended before Before, and beyond the MaxEnded most recently ended
// ones. Zero fields remove nothing by that rule. Jobs that have not ended
// are never removed.
type JobRetention struct {
	Before   time.Time
	MaxEnded int
}

// NewJobRegistry returns a JobRegistry over store and ends, as ERROR, the
// jobs store holds that have not ended: no job vanishes, and none stays
// running forever after a crash. It assumes that no other process runs the
// store's jobs, as a [FileJobStore]'s lock ensures; closing the store is
// the caller's.
func NewJobRegistry(ctx context.Context, store JobStore) (*JobRegistry, error) {
	if store == nil {
		return nil, errors.New("registry: NewJobRegistry needs a store")
	}
	r := &JobRegistry{store: store, now: func() time.Time { return time.Now().UTC() }}
	if c, ok := store.(interface{ now() time.Time }); ok {
		r.now = c.now // StoreOptions.Now of this package's stores
	}
	all, _, err := store.Jobs(ctx, JobFilter{})
	if err != nil {
		return nil, fmt.Errorf("registry: read jobs: %w", err)
	}
	slices.SortFunc(all, func(a, b Job) int { return strings.Compare(a.ID, b.ID) })
	interrupted := interruptedJobError()
	for _, j := range all {
		if j.State.Final() {
			continue
		}
		if _, err := r.Update(ctx, j.ID, JobError, &interrupted, nil); err != nil &&
			!errors.Is(err, ErrJobTransition) && !errors.Is(err, ErrNotFound) {
			return nil, fmt.Errorf("registry: end interrupted job %q: %w", j.ID, err)
		}
	}
	return r, nil
}

// interruptedJobError is the Error of a job that was PENDING or RUNNING
// when its server stopped.
func interruptedJobError() JobErrorInfo {
	return JobErrorInfo{
		Type:    "interrupted",
		Title:   "Job interrupted",
		Message: "the server stopped before the job finished",
	}
}

// Create stores j as a new PENDING job and returns it as stored.
func (r *JobRegistry) Create(ctx context.Context, j Job) (Job, error) {
	if err := j.validate(); err != nil {
		return Job{}, err
	}
	j.State, j.CreatedAt, j.StartedAt, j.FinishedAt, j.Error = JobPending, r.now(), time.Time{}, time.Time{}, nil
	if err := r.store.CreateJob(ctx, j); err != nil {
		return Job{}, err
	}
	return j.clone(), nil
}

// Update moves the job id to state to, with jerr as its Error when it ends
// other than FINISHED and result as its result when it ends FINISHED, and
// returns it as stored. It fails with [ErrNotFound] for an unknown job and
// with [ErrJobTransition] when the job's life does not allow the change.
func (r *JobRegistry) Update(ctx context.Context, id string, to JobState, jerr *JobErrorInfo, result []byte) (Job, error) {
	if to != JobFinished {
		result = nil
	} else if result == nil {
		result = []byte{}
	}
	for range maxStale {
		cur, err := r.store.Job(ctx, id)
		if err != nil {
			return Job{}, err
		}
		next, err := cur.Transition(to, r.now(), jerr)
		if err != nil {
			return Job{}, err
		}
		next = next.clone() // jerr is the caller's
		if to == JobFinished {
			next.ResultBytes = int64(len(result))
		}
		switch err := r.store.UpdateJob(ctx, cur.State, next, result); {
		case errors.Is(err, ErrStale):
			continue // another writer moved the job: decide again
		case err != nil:
			return Job{}, err
		}
		return next, nil
	}
	return Job{}, errorf(ErrStale, "job %q kept changing", id)
}

// Delete removes the ended jobs rt selects, with their results, and
// returns how many it removed.
func (r *JobRegistry) Delete(ctx context.Context, rt JobRetention) (int, error) {
	if rt.Before.IsZero() && rt.MaxEnded <= 0 {
		return 0, nil
	}
	// Every job is read: the store is bounded by this very retention, and
	// a filter of ended jobs would be one more thing each store implements.
	all, _, err := r.store.Jobs(ctx, JobFilter{})
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
func (r *JobRegistry) ResultBytes(ctx context.Context, owner string) (ofOwner, total int64, err error) {
	finished, _, err := r.store.Jobs(ctx, JobFilter{State: JobFinished})
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
// fails as [JobRegistry.Update] does. The check and the write are one step
// for the callers of this JobRegistry; writers through other registries
// over the same store may overshoot a quota by the results they finish at
// the same moment.
func (r *JobRegistry) Finish(ctx context.Context, id string, result []byte, q ResultQuota) (Job, error) {
	if q.Owner <= 0 && q.Total <= 0 {
		return r.Update(ctx, id, JobFinished, nil, result)
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
		return r.Update(ctx, id, JobError, &JobErrorInfo{Type: typeJobQuota, Title: "Result quota exceeded",
			Message: fmt.Sprintf("the result (%d bytes) would take the owner's stored results past %d bytes; it was not stored", n, q.Owner)}, nil)
	case q.Total > 0 && total+n > q.Total:
		return r.Update(ctx, id, JobError, &JobErrorInfo{Type: typeStorageFull, Title: "Result storage full",
			Message: fmt.Sprintf("the result (%d bytes) would take the stored results past %d bytes; it was not stored", n, q.Total)}, nil)
	}
	return r.Update(ctx, id, JobFinished, nil, result)
}
