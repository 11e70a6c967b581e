// Package scoring is scorehub's scoring endpoint: the [Handler] that takes
// rows as JSON, runs the endpoint's process on them and answers with the
// same rows plus the process's result columns, wire-compatible with the
// scoring agent of RapidMiner / Altair AI Hub.
//
// One request flows through it like this:
//
//	host mux → middleware → Handler
//	  → route /{group}/api/v1/services/{path}/{alias}, names checked
//	  → Authorize (token groups, before any deployment is looked up)
//	  → registry.Snapshot().Resolve (lock-free)
//	  → decode: body → columnar process.Table, one pass of a scanner
//	    made for this one shape of document, which hands anything else,
//	    and every fault, to the strict JSON decoder (a large body in parts
//	    on every processor), no map per row
//	  → conform: the process's input schema
//	  → Queues: a slot on the endpoint's execution queue
//	  → process.Process.Score under the endpoint's timeout
//	  → encode: inputs echoed as sent, then the results
//
// The JSON codec, decoding and encoding, is the package's own
// (scoring/internal/wire); [Decode] is its pure entry point beside the
// handler, for rows that arrive otherwise than as a scoring request, such
// as a job's. [Queues] is shared with anything else that should respect
// the queues' limits.
//
// # Wire contract
//
// The request is POST with Content-Type application/json (a charset
// parameter must name UTF-8; anything else is 415) and a body
// {"data":[{...},{...}]}. The JSON is strict: trailing commas, comments,
// NaN, single quotes, invalid UTF-8, a key twice in one object and data
// after the top-level object are refused. Values are numbers or text; for
// pandas clients, null is a missing value, true and false are the text
// "true" and "false", and other top-level keys (such as "schema") are
// ignored. The columns are the union of the rows' keys in order of first
// appearance; a row without a key has a missing value there. Query
// parameters are macros handed to the process; a parameter given twice is
// refused.
//
// The response has one object per input row: the keys that row had, in
// column order, each value exactly as it was sent (a number keeps its
// digits, a string its escapes, true stays true), then the result columns
// in the process's order; missing, NaN and infinite results are null, and a
// result named like an input column takes its place. {"data":[]} is
// answered with {"data":[]} without running the process.
//
// The endpoint's timeout (or Config.DefaultTimeout) covers the whole
// execution, the wait for a queue slot included. A process runs on a worker
// goroutine, so that the client is answered when the timeout passes even by
// a process that does not heed its context; such a process keeps its queue
// slot until it returns. A process the catalog marks
// [process.ProcessInfo].Prompt runs on the request's goroutine instead,
// which saves the hand-off, and is trusted to return soon after its context
// ends. A client that disconnects cancels the process's context.
//
// A large request uses every processor Go runs on (GOMAXPROCS, at most
// 8): a body of 128 KiB or more is decoded in parts, each a stretch of
// the "data" array cut between two rows, each on a goroutine of its own;
// 2,048 rows or more are encoded in parts too, written in order while the
// next parts are encoded; and they are scored in row ranges at once when
// the process is [process.ProcessInfo].RowWise. The answer is byte for
// byte the one a single pass gives: a body in which any part finds a fault
// is decoded again in one pass, which answers the fault as it always has.
// Smaller requests are handled on their own goroutine alone.
//
// A client is not trusted to read its answer: a streamed answer that makes
// no write progress for Config.WriteProgressTimeout (60 s by default) has
// its connection closed, which ends the handler and frees the request's
// table and buffers. The bodies of requests in flight are bounded together
// by Config.MaxDecodingBytes (256 MiB by default): a request whose body
// would pass it is answered 503 server_busy with Retry-After rather than
// let the server's memory grow.
//
// The handler matches paths itself rather than through an http.ServeMux:
// each segment is unescaped and checked with [registry.ValidName], so "..",
// "." or an escaped slash is a 404, never a redirect or a lookup. Mount it
// with http.StripPrefix, or set [Config.Prefix] and it strips the prefix
// itself, without copying the request.
//
// # Errors
//
// Every error is the JSON shape
// {"error":{"type":"…","message":"…","pointer":"…"}}, the pointer present
// where a place in the request is at fault (for example /data/3/age), and
// every error the package returns is a [*problem.Error], or wraps one, whose
// Code is that type. The type codes are stable:
//
//	not_found               404 no endpoint at this address, or a name that is not valid
//	endpoint_disabled       404 the endpoint's deployment is disabled
//	method_not_allowed      405 not POST (with Allow: POST)
//	unauthorized            401 a token group's request without acceptable credentials
//	forbidden               403 a token group's request whose caller may not use the group
//	unsupported_media_type  415 the body is not declared as JSON in UTF-8
//	malformed_json          400 the body is not strict JSON
//	duplicate_key           400 a key appears twice in one object
//	invalid_request         400 not an object, "data" missing or not an array, a row not an object, an empty key, a malformed query string
//	invalid_value           400 an object or array as a value, a number out of range
//	mixed_types             400 a column holds numbers in one row and text in another
//	schema_mismatch         400 a required column is missing from every row, or a column has the wrong kind
//	duplicate_macro         400 a query parameter is given more than once
//	request_timeout         408 the body did not arrive within the server's read timeout
//	body_too_large          413 the body exceeds Limits.MaxBodyBytes
//	too_many_rows           413 more rows than Limits.MaxRows
//	too_many_columns        413 more distinct keys than Limits.MaxColumns
//	too_many_cells          413 rows × columns exceed Limits.MaxCells
//	too_many_result_cells   413 rows × result columns exceed Limits.MaxResultCells (before the process runs when it declares its result columns)
//	response_too_large      413 the answer would pass Limits.MaxResponseBytes, judged by a lower bound (when too_many_result_cells is)
//	queue_full              503 the queue's waiting list is full (with Retry-After)
//	server_busy             503 the bodies being read and decoded would pass Config.MaxDecodingBytes (with Retry-After)
//	unavailable             503 the endpoint's queue is not defined
//	process_unavailable     503 the endpoint's process is not in this server's catalog
//	timeout                 504 the execution did not finish in time
//	internal_error          500 anything else: a process error, panic or bad result (the cause is logged)
//
// # Jobs
//
// [Jobs] runs a process outside a request, on the same [Queues] and along
// the same path as the handler (a slot, the process under its timeout with
// its panics recovered, the result checked): a job's rows are a [Request]
// from [Decode], the job is kept in a [jobs.Store], waits PENDING for
// a slot, runs RUNNING under its timeout (which, unlike a request's, starts
// once it has the slot) and ends FINISHED (its result encoded as the
// handler would answer it), ERROR, STOPPED or TIMED_OUT. The
// management API serves it under /executions/jobs. Over a job store that
// several server replicas share ([JobsConfig.Replica]) a job runs on the
// replica it was submitted to, under a lease that replica renews every
// second; it is read and stopped through any replica, and the others end
// it ERROR, interrupted, when its replica stops renewing.
//
// A job can do nothing its submitter, the [Caller], could not do through
// the handler: a job naming an endpoint passes the group policy check the
// handler runs (give [JobsConfig.Authorize] the handler's Authorize);
// running a catalog process directly, or an endpoint's process on another
// queue, is an administrator's right. Each job belongs to its submitter:
// [Jobs.Job], [Jobs.List], [Jobs.Result] and [Jobs.Stop] show a caller who
// is not an administrator only their own jobs, and another's as not found.
//
// Jobs are kept, so what one submitter may keep is bounded: a job's body
// (8 MiB by default, below a request's), the jobs an owner has PENDING or
// RUNNING (8; past it 429 job_quota_exceeded with Retry-After), the bytes
// of an owner's stored results (256 MiB; 429 job_quota_exceeded) and of
// everyone's (2 GiB; 507 storage_full). The result bytes are counted by the
// [jobs.Registry], which records each result's length; a job whose
// result would pass a byte quota when it finishes ends ERROR with that
// type and its result is not stored. Administrators are bound by the total
// only. See [JobsConfig].
//
// A request whose client left is logged as client_closed_request (499); no
// client sees it. A process may return a [*problem.Error], possibly
// wrapped, to choose the answer itself, for example a 400 for input it
// cannot score; its Status may be zero for a code of package problem, and
// is set for a code of the host's own. A sentinel of scorehub's packages
// that a process passes on (registry.ErrNotFound, say) is a failure of the
// process like any other error: 500.
//
// # Observing
//
// Config.Observer is told about every answered request: the endpoint's
// registry names ([Unmatched] when the request resolved to none), the
// status, the rows scored and the time taken. The metrics package turns
// that into Prometheus metrics; with no Observer the handler does none of
// this work.
package scoring
