// Package pgstore is the service's PostgreSQL store, which several server
// replicas share. The service opens it from Config.StoreURL (package
// scorehub); it is internal because hosts reach it through that field, and
// plug stores of their own in through Config.Stores. A [DB] from
// [Open] is a [registry.Store], [registry.Notifier] and
// [registry.ArtifactStore] for a [registry.Registry], and a
// [jobs.Store] for a [jobs.Registry]: one value over one
// connection pool, closed once, after the registries over it. It also
// keeps the users, API tokens and token signing keys of package tokens:
// [DB.Accounts] is the [accounts.Store] of an [accounts.Book], and
// [DB.Keys] the [tokens.KeyStore] of [tokens.OpenKeySet], both over the
// same pool.
//
// # Consistency
//
// The database decides every commit, not a process's memory: a commit is
// one transaction that advances a sequence row from the Seq its rules were
// checked on (UPDATE … WHERE seq = Base), writes the one record it changes
// and notifies the other DBs (pg_notify, delivered only if the transaction
// commits). A writer whose view is outdated changes no row and gets
// [registry.ErrStale]; its Registry loads the records and decides afresh.
// A job's update is conditional on the state its writer read (UPDATE …
// WHERE id = $1 AND state = $2) and a job's creation on its ID.
//
// Each DB that a Registry subscribes to ([DB.Subscribe]) listens on a
// connection of its own for the other DBs' commits and hands the
// registry the records after each. After a lost connection it reconnects
// with backoff and loads everything at once, so a replica that missed
// notifications while it was cut off catches up by itself; a periodic
// read of the stored Seq is the safety net under both. Subscribers are
// called with records already loaded and never wait on the database;
// scoring reads the registry's snapshot and never waits on it either.
//
// Users and API tokens, and the signing key set, are committed the same
// way, each with a sequence row and a channel of its own, and published on
// the same listener connection: a password changed or a user or API token
// removed through one replica revokes what the others issued for it as
// soon as their Accounts has the new state (milliseconds on one host), and
// a key rotated by one replica is in every replica's JWKS and verifies
// there. Two replicas rotating at once are one commit and one refused
// commit; the refused one loads the set the other committed.
//
// # Schema
//
// The schema is created and upgraded by numbered migrations embedded in
// the package (migrations/NNNN_name.sql). [Open] applies the ones a
// database lacks in one transaction under a transaction-level advisory
// lock, so replicas starting together take turns, and records each
// version in schema_migrations. It refuses a database whose schema is
// newer than the build: an older build must not write records it does not
// understand. Records are rows, one table per kind, holding the record's
// JSON form (the one the file store writes), so that a row is the record
// exactly as the registry stored it.
//
// # Artifacts
//
// A model artifact is one bytea value, not a large object. The
// [registry.ArtifactStore] interface hands artifacts over whole, so
// streaming a large object would save little memory: storing or reading an
// artifact holds it in the driver's buffer besides the caller's slice
// (about 2× its size; a 256 MiB artifact measured ~1 GiB of heap for a
// store and a read back); bytea rows
// are deleted with their transaction and need no lo_unlink or vacuumlo;
// pg_dump of the tables includes them, and logical replication copies
// them, where large objects are dumped only with the whole database and
// not replicated at all. A foreign key from each model version to its
// artifact lets the database itself refuse a version whose artifact
// another writer deleted, and keep an artifact a version references.
// bytea's limit of 1 GiB is far above the formats' 256 MiB.
//
// # Security
//
// The connection string may hold a password: no error of this package
// and nothing it logs contains it.
//
// Passwords are kept as their bcrypt hashes and API tokens as their
// SHA-256, as in the accounts file. The signing key set is one row of the
// table signing_keys, holding the private keys as the key file does
// (PKCS #8 PEM in JSON), unencrypted: whoever can read that row can sign
// tokens every replica accepts, as whoever can read the key file can. It
// is protected by the database's access control. Run the service under a
// role of its own that owns the schema, grant no other role anything on
// signing_keys (PostgreSQL grants nothing to other roles on a new table
// unless default privileges say otherwise), connect with TLS that checks
// the server (sslmode=verify-full), and treat the database's backups and
// physical replicas as holding the keys. The keys never leave the row
// but to a DB's own connection: a notification carries only the new
// set's number, and no error or log line of this package or of package
// tokens contains them.
package pgstore
