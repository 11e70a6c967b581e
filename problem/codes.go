package problem

// Code is a stable snake_case error code, sent to clients as the "type" of
// {"error":{"type":…}} and read by Go callers from [Error].Code.
type Code string

// The codes of scorehub's errors, grouped by the kind of answer.
const (
	Internal Code = "internal_error"
	// ClientClosedRequest is a request whose client left before the
	// answer; it is logged, and no client sees it.
	ClientClosedRequest  Code = "client_closed_request"
	NotFound             Code = "not_found"
	MethodNotAllowed     Code = "method_not_allowed"
	UnsupportedMediaType Code = "unsupported_media_type"
	BodyTooLarge         Code = "body_too_large"
	RequestTimeout       Code = "request_timeout"
	// Timeout is an execution that did not finish within its time.
	Timeout     Code = "timeout"
	Unavailable Code = "unavailable"
	// StoreUnavailable is a store of records, jobs or accounts that
	// cannot be reached for now (a database that is down or restarting):
	// a write is refused, nothing is changed, and the answer carries
	// Retry-After.
	StoreUnavailable Code = "store_unavailable"
	// ServerBusy is a server that holds as many request bodies as it may
	// at once (with Retry-After).
	ServerBusy Code = "server_busy"
)

// Requests that are not well formed.
const (
	MalformedJSON      Code = "malformed_json"
	InvalidRequest     Code = "invalid_request"
	InvalidParameter   Code = "invalid_parameter"
	ValidationFailed   Code = "validation_failed"
	DuplicateKey       Code = "duplicate_key"
	InvalidValue       Code = "invalid_value"
	MixedTypes         Code = "mixed_types"
	SchemaMismatch     Code = "schema_mismatch"
	DuplicateMacro     Code = "duplicate_macro"
	TooManyRows        Code = "too_many_rows"
	TooManyColumns     Code = "too_many_columns"
	TooManyCells       Code = "too_many_cells"
	TooManyResultCells Code = "too_many_result_cells"
	ResponseTooLarge   Code = "response_too_large"
	InvalidReference   Code = "invalid_reference"
	PreconditionFailed Code = "precondition_failed"
)

// Records and executions.
const (
	Conflict           Code = "conflict"
	AlreadyExists      Code = "already_exists"
	InUse              Code = "in_use"
	EndpointDisabled   Code = "endpoint_disabled"
	ProcessUnavailable Code = "process_unavailable"
	QueueFull          Code = "queue_full"
	JobNotFinished     Code = "job_not_finished"
	JobEnded           Code = "job_ended"
)

// Credentials and limits.
const (
	Unauthorized Code = "unauthorized"
	InvalidToken Code = "invalid_token"
	Forbidden    Code = "forbidden"
	RateLimited  Code = "rate_limited"
	CORSRejected Code = "cors_rejected"
	// JobQuotaExceeded is a caller's share of the job store used up;
	// StorageFull the store's room for job results.
	JobQuotaExceeded Code = "job_quota_exceeded"
	StorageFull      Code = "storage_full"
)

// Model files: of no format the server reads, or one it cannot use, past a
// limit, or scoring other than the upload expected.
const (
	UnsupportedModelFormat Code = "unsupported_model_format"
	InvalidModel           Code = "invalid_model"
	ModelLimitExceeded     Code = "model_limit_exceeded"
	VerificationFailed     Code = "verification_failed"
)
