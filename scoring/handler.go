package scoring

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/scorehub/scorehub/internal/httperr"
	"github.com/scorehub/scorehub/internal/urlpath"
	"github.com/scorehub/scorehub/problem"
	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/process"
	"github.com/scorehub/scorehub/scoring/internal/wire"
)

// DefaultTimeout bounds an execution whose endpoint sets no timeout.
const DefaultTimeout = 10 * time.Second

// Defaults of the bounds on what clients may make the handler hold; see
// [Config].
const (
	DefaultWriteProgressTimeout = 60 * time.Second
	DefaultMaxDecodingBytes     = 256 << 20
)

// Config configures a [Handler].
type Config struct {
	// Registry resolves endpoints. It is required.
	Registry *registry.Registry

	// Queues runs executions. nil means New makes one over Registry; a
	// given one must be built over Registry too.
	Queues *Queues

	// Limits bound every request; zero fields mean the defaults.
	Limits Limits

	// DefaultTimeout bounds an execution, queue wait included, when the
	// endpoint sets no Timeout. Zero means 10 s.
	DefaultTimeout time.Duration

	// RetryAfter is what a client refused because a queue is full, or
	// because MaxDecodingBytes is used up, is told to wait, rounded up to
	// whole seconds. Zero means 1 s.
	RetryAfter time.Duration

	// WriteProgressTimeout bounds how long a streamed answer may go
	// without a write making progress: each write of the answer must
	// finish within it, so a client that reads slowly but steadily is
	// served however long its answer takes, while one that stops reading
	// has its connection closed, and the handler returns and frees the
	// request. It needs a ResponseWriter that supports write deadlines
	// (http.ResponseController), as the net/http server's does. Zero means
	// 60 s; a negative value turns it off. An answer that fits in one
	// 32 KiB buffer is written at once and left to the server's
	// WriteTimeout.
	WriteProgressTimeout time.Duration

	// MaxDecodingBytes bounds the bytes of the request bodies the handler
	// holds at once, from when a body is read until its answer is
	// written: a body of announced length counts in full before it is
	// read, a chunked one as it arrives. A request that would pass it is
	// answered 503 server_busy with Retry-After. Zero means 256 MiB, or
	// Limits.MaxBodyBytes when that is larger; a negative value turns it
	// off. A positive value below Limits.MaxBodyBytes is refused by New,
	// as a body the limits allow could then never be served.
	MaxDecodingBytes int64

	// Authorize decides whether r may call an endpoint of a group whose
	// Auth.Mode is registry.TokenRequired; it is called with the group's
	// name and policy, and only for such groups. It returns nil to let the request
	// through. Otherwise its error is the answer: a [*problem.Error] it
	// composed (possibly wrapped) as it is, a 401 with its Challenge, a 429
	// with its RetryAfter; [ErrUnauthorized] or [ErrForbidden] (possibly
	// wrapped) as 401 unauthorized or 403 forbidden; anything else, the
	// sentinels of scorehub's other packages included, as 500
	// internal_error. A Challenge is sent as WWW-Authenticate; a 401
	// without one says "Bearer".
	//
	// nil refuses every request to a token group with 401: the handler
	// never lets a protected group through without a check.
	Authorize func(r *http.Request, group string, p registry.AuthPolicy) error

	// Logger receives failed requests with their cause (server faults at
	// error level, an endpoint's timeout at warn, what the client caused at
	// debug) and process panics with their stack. nil
	// means slog.Default().
	Logger *slog.Logger

	// Observer, when not nil, is told about every request once it is
	// answered; see [Observer]. nil means none, at no cost per request.
	Observer Observer

	// Prefix is the path the handler is mounted under, such as /webapi,
	// which it then strips itself: mount it at Prefix+"/" without
	// http.StripPrefix, and save the copy of every request that makes.
	// Empty means the handler sees paths from the root, either because it
	// is mounted there or because http.StripPrefix removed the prefix.
	// Each segment is made of letters, digits, '.', '_', '-' and '~'.
	Prefix string
}

// Handler is the scoring endpoint handler:
//
//	POST /{group}/api/v1/services/{path}/{alias}
//
// under [Config.Prefix], or relative to where it is mounted with
// http.StripPrefix. Every
// other method on such a path is a 405 and every other path a 404, both as
// JSON errors. It is safe for concurrent use.
//
// Under a group whose policy requires a token, a request without
// credentials Authorize accepts gets the same refusal at every address,
// whether a deployment or endpoint is there, enabled or not: a caller
// cannot list a protected group's endpoints by probing. The names of the
// groups themselves are not hidden: a group that does not exist is a 404,
// as an address under a public group is, so do not put secrets in group
// names.
type Handler struct {
	engine         *engine
	lim            Limits
	defaultTimeout time.Duration
	retryAfter     int
	authorize      func(*http.Request, string, registry.AuthPolicy) error
	log            *slog.Logger
	observer       Observer
	prefix         string
	writeProgress  time.Duration // 0: no write deadlines
	maxDecoding    int64         // 0: no bound
	epoch          time.Time     // when New made it: durations are measured as offsets from it

	decoding atomic.Int64 // body bytes held by requests in flight
	states   wire.Pool
	bufs     sync.Pool // *[]byte response buffers
	partBufs sync.Pool // *[]byte buffers of the parts of a large answer
}

// New returns a handler configured by cfg. It fails when Registry is
// missing, Queues belongs to another registry, or a limit or duration is
// negative or out of range.
func New(cfg Config) (*Handler, error) {
	if cfg.Registry == nil {
		return nil, errors.New("scoring: Config.Registry is required")
	}
	lim, err := cfg.Limits.resolve()
	if err != nil {
		return nil, err
	}
	if cfg.DefaultTimeout < 0 || cfg.RetryAfter < 0 {
		return nil, errors.New("scoring: Config.DefaultTimeout and Config.RetryAfter must not be negative")
	}
	if cfg.MaxDecodingBytes > 0 && cfg.MaxDecodingBytes < lim.MaxBodyBytes {
		return nil, fmt.Errorf("scoring: Config.MaxDecodingBytes %d is below Limits.MaxBodyBytes %d", cfg.MaxDecodingBytes, lim.MaxBodyBytes)
	}
	prefix := ""
	if cfg.Prefix != "" {
		if prefix, err = urlpath.Prefix(cfg.Prefix); err != nil {
			return nil, fmt.Errorf("scoring: Config.Prefix: %w", err)
		}
	}
	q := cfg.Queues
	if q == nil {
		if q, err = NewQueues(cfg.Registry); err != nil {
			return nil, err
		}
	}
	eng, err := newEngine(cfg.Registry, q, "Config.Queues", cfg.Logger)
	if err != nil {
		return nil, err
	}
	h := &Handler{
		engine:         eng,
		lim:            lim,
		defaultTimeout: cfg.DefaultTimeout,
		retryAfter:     1,
		authorize:      cfg.Authorize,
		log:            eng.log,
		observer:       cfg.Observer,
		prefix:         prefix,
		epoch:          time.Now(),
	}
	if h.defaultTimeout == 0 {
		h.defaultTimeout = DefaultTimeout
	}
	switch {
	case cfg.WriteProgressTimeout == 0:
		h.writeProgress = DefaultWriteProgressTimeout
	case cfg.WriteProgressTimeout > 0:
		h.writeProgress = cfg.WriteProgressTimeout
	}
	switch {
	case cfg.MaxDecodingBytes == 0:
		h.maxDecoding = max(DefaultMaxDecodingBytes, lim.MaxBodyBytes)
	case cfg.MaxDecodingBytes > 0:
		h.maxDecoding = cfg.MaxDecodingBytes
	}
	if cfg.RetryAfter > 0 {
		h.retryAfter = int(math.Ceil(cfg.RetryAfter.Seconds()))
	}
	return h, nil
}

// Queues returns the queues the handler runs executions on.
func (h *Handler) Queues() *Queues { return h.engine.queues }

// ServeHTTP answers one scoring request. The steps, each of which may end it
// with an error: route and names (404), method (405), Authorize when the
// group requires a token (401, 403), the endpoint in the current registry
// snapshot (404, 503), Content-Type (415), macros, body and its decoding (400, 413), the
// process's input schema (400), a slot on the endpoint's queue (503), the
// process under the timeout (504, 500), the response.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.observer != nil {
		h.serveObserved(w, r)
		return
	}
	h.serve(w, r, nil)
}

// serve answers r, recording what o needs when o is not nil.
func (h *Handler) serve(w http.ResponseWriter, r *http.Request, o *observation) {
	var group, path, alias string
	p, escaped := urlpath.Sent(r.URL)
	p, ok := strings.CutPrefix(p, h.prefix)
	if ok {
		group, path, alias, ok = parseRoute(p, escaped)
	}
	if !ok {
		h.fail(w, r, o, errRouteNotFound)
		return
	}
	if r.Method != http.MethodPost {
		h.fail(w, r, o, errMethod)
		return
	}
	x, err := h.endpoint(r, o, group, path, alias)
	if err != nil {
		h.fail(w, r, o, err)
		return
	}
	if ct := r.Header.Get("Content-Type"); !isJSON(ct) {
		h.fail(w, r, o, mediaTypeError(ct))
		return
	}
	macros, err := parseMacros(r.URL.RawQuery)
	if err != nil {
		h.fail(w, r, o, err)
		return
	}

	st := h.states.Get()
	defer h.states.Put(st)
	body := r.Body
	if body == nil {
		body = http.NoBody
	}
	if r.ContentLength < 0 {
		// A body of announced length cannot outgrow it, and read refuses
		// one announced too large; only a chunked body needs the reader
		// that also makes the server close the connection.
		body = http.MaxBytesReader(w, body, h.lim.MaxBodyBytes)
	}
	var in io.Reader = body
	var budget *budgetReader
	if h.maxDecoding > 0 {
		// The bytes are held until the answer is written: the body, the
		// table decoded from it and the result all live until then.
		if r.ContentLength < 0 {
			budget = &budgetReader{r: body, h: h}
			defer budget.release()
			in = budget
		} else if r.ContentLength <= h.lim.MaxBodyBytes {
			if !h.reserve(r.ContentLength) {
				h.fail(w, r, o, errServerBusy)
				return
			}
			defer h.decoding.Add(-r.ContentLength)
		}
	}
	if err := st.Read(in, h.lim.MaxBodyBytes, r.ContentLength); err != nil {
		if errors.Is(err, errServerBusy) {
			// The budget reader refused the body, not the client.
			err = errServerBusy
		}
		h.fail(w, r, o, err)
		return
	}
	// From its body read to its answer written, a request to a process
	// that only computes takes a processor, or wire.Parallelism of them
	// when it is decoded, or scored and encoded, in parts; shadows run on
	// those it leaves (see answering).
	var procs int64
	answering := h.engine.challenges.answering
	if x.process.Prompt {
		procs = int64(st.Parallelism())
		answering.take(procs)
		defer func() { answering.give(procs) }()
	}
	req, err := st.Decode(wire.Limits(h.lim))
	if err != nil {
		h.fail(w, r, o, err)
		return
	}
	if procs == 1 && req.Table.Rows() >= parallelRows {
		more := int64(wire.Parallelism()) - 1
		answering.take(more)
		procs += more
	}
	if req.Table.Rows() == 0 {
		o.answered(http.StatusOK, 0)
		writeJSON(w, []byte(wire.EmptyResponse))
		return
	}
	if err := req.Conform(x.process.Input); err != nil {
		h.fail(w, r, o, err)
		return
	}

	x.in = process.Input{
		Table:    req.Table,
		Macros:   macros,
		Endpoint: process.EndpointRef{Group: group, Path: path, Alias: alias},
	}
	result, err := h.engine.execute(r.Context(), &x)
	if err != nil {
		h.fail(w, r, o, err)
		return
	}
	o.answered(http.StatusOK, req.Table.Rows())
	h.respond(w, r, req.Encoder(result), req.Table.Rows())
	x.answered() // before the request's table returns to the pool: a shadow copies it
}

// endpoint finds the endpoint group/path/alias, once r's caller has
// passed its group's policy, and returns the execution of its process.
// The endpoint's records stay in this call's frame, off the stack that
// runs the process.
func (h *Handler) endpoint(r *http.Request, o *observation, group, path, alias string) (execution, error) {
	snap := h.engine.reg.Snapshot()
	// A token group's policy is applied before its deployments are looked
	// at, so that a caller without acceptable credentials gets the same
	// answer at every address under it and cannot tell which exist or are
	// enabled.
	if g, ok := snap.State().Group(group); ok && g.Auth.Mode == registry.TokenRequired {
		if err := h.checkAuth(r, g.Name, g.Auth); err != nil {
			return execution{}, err
		}
	}
	target, err := snap.Resolve(group, path, alias)
	if err != nil {
		return execution{}, err
	}
	o.resolved(&target)
	x := endpointExecution(&target, h.defaultTimeout)
	x.maxResultCells, x.maxResponseBytes = h.lim.MaxResultCells, h.lim.MaxResponseBytes
	return x, nil
}

// errServerBusy refuses a request whose body would pass MaxDecodingBytes.
var errServerBusy = &problem.Error{Code: problem.ServerBusy, Status: http.StatusServiceUnavailable,
	Message: "the server holds as many request bodies as it may; retry later"}

// reserve counts n more body bytes as held, unless that would pass
// maxDecoding.
func (h *Handler) reserve(n int64) bool {
	for {
		cur := h.decoding.Load()
		if cur+n > h.maxDecoding {
			return false
		}
		if h.decoding.CompareAndSwap(cur, cur+n) {
			return true
		}
	}
}

// budgetReader counts a chunked body's bytes against MaxDecodingBytes as
// they are read; release gives them back. It is used by one request's
// goroutine only. Its refusal, errServerBusy, reaches the handler wrapped
// in the body reader's error, and the handler answers it itself.
type budgetReader struct {
	r    io.Reader
	h    *Handler
	held int64
}

func (b *budgetReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if n > 0 {
		if !b.h.reserve(int64(n)) {
			return 0, errServerBusy
		}
		b.held += int64(n)
	}
	return n, err
}

func (b *budgetReader) release() { b.h.decoding.Add(-b.held) }

// fail answers err. A full queue's answer tells the client when to retry,
// as Config.RetryAfter says.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, o *observation, err error) {
	e := httperr.From(err)
	if (e.Code == problem.QueueFull || e.Code == problem.ServerBusy) && e.RetryAfter == 0 {
		e = e.WithRetryAfter(h.retryAfter)
	}
	o.answered(e.Status, 0)
	httperr.Write(w, r, h.log, e)
}
