// Package jobs keeps scorehub's execution jobs: work submitted through the
// management API, run by the scoring engine on an endpoint's queue, and
// read back with its result.
//
// Jobs are kept apart from the records of package registry, in a [Store]
// ([MemStore], [FileStore]; the service's PostgreSQL store has one in
// a database), so that their frequent changes never touch the snapshot
// scoring reads. As with records, a store only persists (its conformance
// suite is in package registrytest) and a [Registry] applies every rule of
// a job write above it: a job's life, PENDING → RUNNING → an end state
// ([Job.Transition]), retention, and the end of jobs a stopped server
// interrupted. Every job write is conditional on the job's [Job.Revision],
// so that replicas sharing a store (a database) cannot overwrite each
// other's changes; over such a store a Registry made by
// [NewSharedRegistry] claims each job for the replica that runs it under a
// lease, and ends other replicas' jobs only once their leases lapse.
//
//	management POST → scoring.Jobs.Submit → Registry.Create (PENDING) → Store
//	queue slot      → Registry.Update (RUNNING) → process → Registry.Finish
//
// The package sits above package registry, whose queues, names, store
// options and errors a job uses; registry does not import it.
package jobs
