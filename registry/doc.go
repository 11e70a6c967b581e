// Package registry is scorehub's domain: the columnar [Table] that processes
// read and write, the [Process] interface and its [Catalog] of named
// implementations, and the records that decide what is reachable over HTTP —
// web API [Group]s, [Deployment]s with their [Endpoint]s, and execution
// [Queue]s.
//
// Records live in a [Store]. Two implementations ship: [MemStore] for tests
// and ephemeral servers, and [FileStore], which makes every acknowledged
// write durable. Writes use optimistic concurrency: a record carries the
// revision its writer read, and a stale write fails with a [*ConflictError].
//
// Execution jobs are kept apart, in a [JobStore] ([MemJobStore],
// [FileJobStore]), so that their frequent changes never touch the State
// scoring reads. A job's life, PENDING → RUNNING → an end state, is
// enforced in one place, [CanTransition].
//
// A [Registry] joins a Catalog and a Store and publishes an immutable
// [Snapshot] through an atomic pointer after every committed change. The
// scoring handler resolves each request against the current Snapshot without
// taking a lock:
//
//	management write → Store (durable) → new State → Snapshot published
//	scoring request  → Registry.Snapshot().Resolve(group, path, alias)
//
// The package depends on the standard library only.
package registry
