// Package payloads keeps the sampled payload log: a bounded record of
// rows an endpoint scored, with the results it answered, so that an
// operator can see what live traffic looks like and export it (to check a
// model on it, to build a reference profile, to debug a client).
//
// The scoring path samples an endpoint's rows, redacts the columns its
// policy hides, and hands the rows to a bounded queue that appends them
// to a [Store] off the answer's path: a full queue drops rows, never
// delays an answer. The management API's payload route reads an
// endpoint's log a page at a time ([Store.Page]), oldest first, the
// cursor being the last [Record.Seq] read; an export pages through the
// whole log.
//
// A Store is bounded by age and by size, oldest records out first: in
// memory ([NewMemStore]), as rotating JSON Lines files in a data
// directory ([OpenFileStore]), or in the PostgreSQL store several
// replicas share. The three answer alike, as package payloadstest's
// conformance suite checks: Append refuses a batch holding a record it
// cannot keep ([ErrInvalid]) as a whole, numbers what it keeps in
// ascending order, and Page never returns a record older than the
// retention. The byte bound is applied by each store in its own steps:
// record by record in memory, whole files on file, in bulk within
// [PruneInterval] in PostgreSQL.
package payloads
