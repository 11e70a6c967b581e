// Package outcomes keeps what models predicted for rows that carry an ID,
// and the actual outcomes fed back for them later, so that a model's live
// performance can be measured on real outcomes, champion and challengers
// on the same rows.
//
// The scoring path appends the predictions of an endpoint that names a
// row-ID column (registry.Endpoint.RowID) off the answer's path; the
// management API's feedback route records outcomes, and its performance
// route reads the joined records. A [Store] is bounded by age and by size,
// oldest records out first: in memory ([NewMemStore]), as a capped
// append-only log in a data directory ([OpenFileStore]), or in the
// PostgreSQL store several replicas share.
//
// The three answer alike, as package outcomestest's conformance suite
// checks: a row's outcome is joined with every prediction of the row,
// the first prediction of a row and model and the first outcome of a row
// are kept, and the bounds drop the earliest appended predictions first,
// with the outcomes of the rows they leave empty. The memory and file
// stores apply the bounds on every call, the PostgreSQL store in bulk,
// within [PruneInterval].
package outcomes
