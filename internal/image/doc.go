// Package image is the one protocol of scorehub's durable state. The
// records of a registry, the users and API tokens of the accounts, and the
// token signing keys are each a state image: loaded whole, committed whole
// on the sequence number of the state its write was decided on, and
// published to the readers of the process and to the other processes that
// share the store. One generic type serves each part of that, whatever the
// state:
//
//   - [Store] loads and commits, conditionally: a commit on a base that is
//     no longer the stored state's fails with [ErrStale] and changes
//     nothing. [Notifier] is a Store that other writers share and that
//     tells of their commits.
//   - [Mem] keeps the state in memory, [File] in one file written
//     atomically (package internal/atomicfile); package internal/pgstore
//     keeps each image in a database that replicas share.
//   - [Writer] is the one writer over a Store: it decides a write on the
//     published state, commits it, decides again on what the store holds
//     when another writer came first, and publishes the result, newer
//     states only, to readers that never take a lock.
//
// Package imagetest holds the one conformance suite every Store passes.
//
// The packages that own a state (registry, tokens) name the interfaces for
// their state (registry.Store, accounts.Store, tokens.KeyStore),
// so that a host implements a store without importing this package, and
// keep the rules of their writes: a store only persists. The package
// depends on the standard library and internal/atomicfile only.
package image
