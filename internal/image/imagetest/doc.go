// Package imagetest holds the one conformance suite of [image.Store]: the
// contract an [image.Writer] relies on, which every store of every state
// must keep, in memory, in a file or in a database. [Run] runs it on the
// stores of one state type, [RunShared] on two handles of a store that
// several writers share ([image.Notifier]). The packages that own a state
// run it through their own suites (registrytest, tokenstest), which give
// it the [Kit] of their state and add what their rules make of a store.
//
// [Shared] is a store in memory that several handles share, each telling
// its subscribers of the others' commits, as a database does for the
// replicas on it: for tests of what is built on a shared store.
package imagetest
