// Package registry is scorehub's domain: the records that decide what is
// reachable over HTTP — web API [Group]s, [Deployment]s with their
// [Endpoint]s, and execution [Queue]s — with the rules of their writes, the
// [Registry] that publishes them as snapshots, model versions and aliases,
// and the stores that keep them. What a process reads and writes (tables,
// processes, the catalog, model formats) is the vocabulary of package
// registry/process, beneath this one; the model formats import only it.
//
// Records live in a [Store], which only loads them and commits one change
// at a time. This package has two: [MemStore] for tests and ephemeral
// servers, and [FileStore], which makes every acknowledged write durable.
// The service's PostgreSQL store (Config.StoreURL) keeps them in a PostgreSQL database that
// several server replicas share, and package registrytest holds the
// conformance suite every store passes.
//
// A [Registry] is the one way to write records. It checks every rule of a
// write once, above the store, on its immutable current [State]: revisions
// (optimistic concurrency: a record carries the revision its writer read,
// and a stale write fails with a [*ConflictError]), references, built-in
// records and records in use. It then has the store commit the change and
// publishes the new [Snapshot] through an atomic pointer before the write
// returns.
//
// # Models
//
// A trained model file is deployed at runtime, without a rebuild. A
// [process.ModelFormat] (a sub-package per format, such as package xgboost)
// reads files of one kind; a host registers it with
// [process.Catalog.RegisterFormat], and [process.Catalog.LoadModel] detects
// a file's format by its content and returns a [process.LoadedModel] (see
// package process).
//
// The Registry keeps models as records, each a [Model] with immutable
// versions numbered 1, 2, 3, … ([Registry.AddModelVersion]; a number is
// never given twice) and movable aliases such as "production"
// ([Registry.PutModelAlias]). A version is content-addressed: its artifact,
// the uploaded file, is kept by its SHA-256 in the store, which must be an
// [ArtifactStore] (MemStore and FileStore are), and uploading the same
// bytes with the same [process.ModelMetadata] again returns the version
// there is.
// An upload may carry a [Verification], rows with its producer's own
// predictions, which the model must reproduce before anything is stored.
//
// An [Endpoint] names a model's alias or version instead of a process
// ("churn@production", "churn@3"; see [ParseModelRef]). The snapshot
// resolves it to the version's process, so scoring treats it as any other;
// moving the alias switches every endpoint on it in the one snapshot that
// moves it, to a version loaded before the move. Each version is parsed
// once per process: by its upload, at [New] for what endpoints and aliases
// use, or by the first request that needs it.
//
// Execution jobs are kept apart, in package registry/jobs, so that their
// frequent changes never touch the State scoring reads; that package
// imports this one for the queues and names a job refers to.
//
// The scoring handler resolves each request against the current Snapshot
// without taking a lock:
//
//	management write → Registry rules → Store commit (durable) → Snapshot published
//	scoring request  → Registry.Snapshot().Resolve(group, path, alias)
//
// Errors are [*problem.Error] values, or wrap one, whose code and sentence
// say what they are to the HTTP edge, so a client is told what it sent was
// wrong, never a Go error chain; match them with [errors.Is] against the
// sentinels.
//
// The package depends on the standard library only (and on the module's
// problem, registry/process and internal packages, which do too).
package registry
