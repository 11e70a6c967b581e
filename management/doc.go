// Package management is scorehub's management REST API: one [Handler] that
// reads and changes what the scoring handler serves — execution queues, web
// API groups, deployments and their endpoints, and the models they may run
// — manages the users who get tokens and their API tokens, lists the
// process catalog, answers health
// probes and publishes an OpenAPI 3.0.3 document of every route. The queue routes are those of RapidMiner / Altair AI Hub 9
// (/executions/queues) and 10 (/api/v1/queues).
//
// # Data flow
//
// A write goes through these steps, and the next scoring request sees it:
//
//	host mux → Handler (routes relative to "/")
//	  → Bearer idToken (middleware.Bearer) → RequireAdmin for writes
//	  → body: Content-Type, at most 1 MiB, strict JSON, validator/v10
//	  → references: group, queues, catalog processes, models (422)
//	  → If-Match / revision → registry.Registry: the rules of the write,
//	    then its Store commits it (durable before the answer)
//	  → the Registry publishes a new Snapshot → scoring resolves in it
//
// Reads take the registry's current Snapshot without a lock; queue figures
// come live from the [scoring.Queues] the scoring handler runs on.
//
// # Routes
//
// Every route needs "Authorization: Bearer <idToken>" except the health
// probes, the OpenAPI document and the two endpoint routes that show a
// caller without one the public groups' endpoints. Any valid token may read; writes (POST,
// PUT, PATCH, DELETE) need a token with the admin claim, except where the
// user and API token routes below say otherwise.
//
//	GET    /health/live, /health/ready                     no token
//	GET    /api/v1/openapi.json                            no token
//	GET    /executions/queues, /api/v1/queues              queues with live figures
//	GET    /api/v1/queues/{name}    PUT, DELETE            one queue
//	GET    /api/v1/webapigroups     POST                   web API groups
//	GET    /api/v1/webapigroups/{group}    PUT, DELETE
//	GET    /api/v1/deployments      POST                   ?group=, page, size
//	GET    /api/v1/deployments/{group}/{path}    PUT, PATCH, DELETE
//	GET    /api/v1/endpoints                               every endpoint with its scoring URL (no token: public groups' only)
//	GET    /api/v1/endpoints/{group}/{path}/{alias}/process    what an endpoint runs, with its sample input (no token: public groups' only)
//	GET    /api/v1/processes, /api/v1/processes/{name}     the process catalog
//	GET    /api/v1/models                                  models, page, size
//	GET    /api/v1/models/{name}    DELETE                 one model, its versions and aliases
//	GET    /api/v1/models/{name}/versions    POST          versions, page, size; POST uploads one
//	GET    /api/v1/models/{name}/versions/{version}    DELETE
//	GET    /api/v1/models/{name}/versions/{version}/artifact    the file (admins)
//	GET    /api/v1/models/{name}/aliases/{alias}    PUT, DELETE
//	GET    /api/v1/users            POST                   users, page, size (admins; with Config.Accounts)
//	GET    /api/v1/users/{name}     PUT, PATCH, DELETE
//	GET    /api/v1/apitokens        POST                   API tokens, ?owner=, page, size
//	GET    /api/v1/apitokens/{id}   DELETE
//	GET    /executions/jobs         POST                   execution jobs (with Config.Jobs)
//	GET    /executions/jobs/{id}, /executions/jobs/{id}/result
//	POST   /executions/jobs/{id}/stop
//
// The job routes are served only when [Config.Jobs] is set. Submitting and
// stopping a job needs any valid token, or an admin's with
// [Config.JobsRequireAdmin]; a job's body is bounded by the runner's
// Limits (8 MiB by default, below a scoring request's 32 MiB), not by the
// 1 MiB of other bodies. The runner's quotas answer a user with too many
// jobs PENDING or RUNNING, or too many stored results, 429
// job_quota_exceeded, and anyone 507 storage_full when all stored results
// fill the runner's total, each also for a job whose result could not
// fit what is left, judged before it runs; a job whose result would hold
// too many cells or bytes is 413 too_many_result_cells or
// response_too_large (see [scoring.JobsConfig]). What a job may run
// is the runner's decision ([scoring.Jobs.Submit]): a job naming an endpoint
// passes the check the scoring handler applies to the same token (give the
// runner the scoring handler's Authorize), and only an admin may run a
// catalog process directly or move an endpoint's job to another queue.
//
// The user and API token routes are served only when [Config.Accounts] is
// set. Only an admin lists, creates, replaces (PUT) and removes users; a
// user reads their own record and changes their own password with PATCH
// {"password":…,"currentPassword":…}, nothing else (403 otherwise, and 403
// for a wrong currentPassword, so that the client keeps its token). Users
// of the users file are listed with source "file" and cannot be changed
// here (409 conflict); nor can an admin remove themself or their own admin
// flag (409 conflict). Passwords are write-only: no answer and no log line
// holds one. A new password breaking a rule of [accounts.CheckNewPassword]
// (too short or long, white space alone, common, repetitive or sequential)
// is a 400 validation_failed at /password naming the rule. A new user's
// name that reads as an existing user's (but for case, normalisation or
// look-alike letters) is a 409 already_exists naming that user; one with
// white space, invisible characters or letters of several scripts is a
// 400 at /name (see package accounts, User names). Anyone may create, list, read and revoke their own API tokens,
// an admin anyone's; another user's token is a 404 to anyone else. The
// answer to POST /api/v1/apitokens is the only one that shows the token's
// secret; a secret sent in a path where an ID goes is cut from the path
// before anything logs it.
//
// # Models
//
// A model is a file of a format the registry's catalog reads
// (process.Catalog.RegisterFormat), uploaded at runtime as numbered,
// immutable versions, with aliases (production, staging) that point at one
// version each. A deployment's endpoint names a catalog process
// ("process") or a model version ("model": "churn@production" or
// "churn@3"), exactly one of them; moving an alias with PUT
// …/aliases/{alias} {"version": 4} switches every endpoint on it at once.
// POST …/versions takes the file as the raw body (application/json,
// application/ubjson or application/octet-stream, metadata in the query
// parameters label, classes, features and description, lists separated by
// commas) or as multipart/form-data with the part "artifact" and an
// optional part "metadata" (a JSON object that may carry verification rows
// with the predictions the model must reproduce). The body is bounded by
// [Config.MaxModelBytes], 64 MiB by default. The format is detected from
// the content; Python pickle and joblib files are never read. Identical
// bytes and metadata are the version already stored (200); a new version is
// 201 with Location. An alias, a version or a model an endpoint uses cannot
// be removed (409 in_use), nor a version an alias names. Only an admin
// uploads, moves, removes and downloads a file; any valid token reads the
// rest.
//
// [Handler.Routes] lists them as http.ServeMux patterns; the OpenAPI
// document describes them, their bodies and their answers, together with
// the token service routes of [Config.TokenRoutes] and the scoring route.
//
// # Bodies
//
// POST and PUT bodies are application/json, PATCH bodies
// application/merge-patch+json (RFC 7396; anything else is 415), at most
// 1 MiB by default (413). JSON is strict: a member the record does not
// have, a name given twice, a value of the wrong type or data after the
// value is a 400. Fields are checked with go-playground/validator, and the
// 400 validation_failed answer lists every invalid field with its JSON
// pointer in "fields", the first of them also in "pointer". Names of groups,
// deployment paths, endpoint aliases and queues follow
// registry.ValidName, so none can leave its segment of a URL.
//
// The read-only members a GET returns (revision, createdAt, updatedAt and a
// queue's live figures) may be sent back in a PUT, so that a record can be
// read, changed and written whole; all but revision are ignored. The name
// (or group and path) a PUT or PATCH body gives must be the one in the URL
// (400 otherwise): a record cannot be renamed in place.
//
// # Revisions
//
// Records carry a revision, sent as a strong ETag ("3"). A PUT, PATCH or
// DELETE with If-Match applies only while the record is at one of the
// revisions named (or, for *, exists); otherwise the answer is 412 and
// nothing changes. Without If-Match, PUT and DELETE apply to whatever is
// stored, and PATCH applies the patch to the record as it is at that moment,
// retrying internally when another write comes in between, so no update is
// lost. A "revision" in a PUT body (or in a merge patch) is a precondition
// like If-Match; when both are given they must agree (400 otherwise). POST
// creates and answers 409 already_exists when the record exists.
//
// # Errors
//
// Every error is the JSON shape of internal/httperr:
// {"error":{"type":"…","message":"…","pointer":"…","fields":[…]}}. Type
// codes besides those of the middleware (unauthorized, invalid_token,
// invalid_request, forbidden):
//
//	validation_failed        400 the body breaks a field rule; "fields" lists every one
//	malformed_json           400 the body is not (strict) JSON
//	invalid_parameter        400 a query parameter is not valid
//	invalid_request          400 a malformed If-Match header
//	not_found                404 no record at this address, or no route
//	method_not_allowed       405 with Allow
//	already_exists           409 POST of a record that exists
//	in_use                   409 deleting a queue an endpoint uses, a group with deployments, or DEFAULT;
//	                             a model, version or alias an endpoint or alias uses
//	conflict                 409 a PATCH without If-Match lost to other writes too many times in a row;
//	                             a change to a user of the users file, or to one's own admin account
//	precondition_failed      412 If-Match or the body's revision names another revision
//	request_timeout          408 the body did not arrive within the server's read timeout
//	body_too_large           413
//	unsupported_media_type   415 with Accept-Patch on PATCH routes
//	unsupported_model_format 415 a model file of no format the server reads, or a pickle
//	invalid_reference        422 a group, queue, process, model version or API token owner that does not exist
//	invalid_model            422 a model file its format cannot use, saying why
//	model_limit_exceeded     422 a model file past one of its format's limits
//	verification_failed      422 an upload's verification rows scored otherwise than expected
//	unavailable              503 the store cannot be read (readiness) or is closed
//	store_unavailable        503 with Retry-After: the store cannot be reached for now; nothing changed
//	internal_error           500 the cause is logged, never sent
//
// # Logging
//
// Every write, a user's change of their own password and their API tokens'
// included, is logged once through log/slog, at info level (error for a
// 5xx), as "management: write" with the token's subject (empty when there
// was no valid token), the method, the route pattern, the path and the
// status.
//
// A Handler is safe for concurrent use.
package management
