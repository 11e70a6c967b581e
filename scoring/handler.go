package scoring

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"mime"
	"net/http"
	"net/url"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/scorehub/scorehub/internal/httperr"
	"github.com/scorehub/scorehub/internal/urlpath"
	"github.com/scorehub/scorehub/registry"
)

// DefaultTimeout bounds an execution whose endpoint sets no timeout.
const DefaultTimeout = 10 * time.Second

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

	// RetryAfter is what a client refused because a queue is full is told
	// to wait, rounded up to whole seconds. Zero means 1 s.
	RetryAfter time.Duration

	// Authorize decides whether r may call an endpoint of a group whose
	// Auth.Mode is registry.TokenRequired; it is called with the group's
	// policy, and only for such groups. It returns nil to let the request
	// through. Otherwise its error is the answer: an [*Error] as it is;
	// [ErrUnauthorized] or [ErrForbidden] (possibly wrapped) as 401
	// unauthorized or 403 forbidden; anything else as 500 internal_error.
	// An [*Error]'s Challenge is sent as WWW-Authenticate; a 401 without
	// one says "Bearer".
	//
	// nil refuses every request to a token group with 401: the handler
	// never lets a protected group through without a check.
	Authorize func(r *http.Request, p registry.AuthPolicy) error

	// Logger receives failed requests (server faults at error level, with
	// their cause) and process panics with their stack. nil means
	// slog.Default().
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
type Handler struct {
	reg            *registry.Registry
	queues         *Queues
	lim            Limits
	defaultTimeout time.Duration
	retryAfter     int
	authorize      func(*http.Request, registry.AuthPolicy) error
	log            *slog.Logger
	observer       Observer
	prefix         string

	states statePool
	bufs   sync.Pool  // *[]byte response buffers
	calls  sync.Pool  // *call, with their channels
	work   chan *call // hands calls to idle workers; unbuffered
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
	} else if q.reg != cfg.Registry {
		return nil, errors.New("scoring: Config.Queues is built over another registry")
	}
	h := &Handler{
		reg:            cfg.Registry,
		queues:         q,
		lim:            lim,
		defaultTimeout: cfg.DefaultTimeout,
		retryAfter:     1,
		authorize:      cfg.Authorize,
		log:            cfg.Logger,
		observer:       cfg.Observer,
		prefix:         prefix,
		work:           make(chan *call),
	}
	if h.defaultTimeout == 0 {
		h.defaultTimeout = DefaultTimeout
	}
	if cfg.RetryAfter > 0 {
		h.retryAfter = int(math.Ceil(cfg.RetryAfter.Seconds()))
	}
	if h.log == nil {
		h.log = slog.Default()
	}
	return h, nil
}

// Queues returns the queues the handler runs executions on.
func (h *Handler) Queues() *Queues { return h.queues }

// ServeHTTP answers one scoring request. The steps, each of which may end it
// with an error: route and names (404), method (405), the endpoint in the
// current registry snapshot (404, 503), Authorize for token groups (401,
// 403), Content-Type (415), macros, body and its decoding (400, 413), the
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
	target, err := h.reg.Snapshot().Resolve(group, path, alias)
	if err != nil {
		h.fail(w, r, o, err)
		return
	}
	o.resolved(target)
	if target.Group.Auth.Mode == registry.TokenRequired {
		if err := h.checkAuth(r, target.Group.Auth); err != nil {
			h.fail(w, r, o, err)
			return
		}
	}
	if !isJSON(r.Header.Get("Content-Type")) {
		h.fail(w, r, o, errMediaType)
		return
	}
	macros, err := parseMacros(r.URL.RawQuery)
	if err != nil {
		h.fail(w, r, o, err)
		return
	}

	st := h.states.get()
	defer st.pool.put(st)
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
	if err := st.read(body, h.lim.MaxBodyBytes, r.ContentLength); err != nil {
		h.fail(w, r, o, err)
		return
	}
	req, err := st.decode(h.lim)
	if err != nil {
		h.fail(w, r, o, err)
		return
	}
	if req.Table.Rows() == 0 {
		o.answered(http.StatusOK, 0)
		writeJSON(w, []byte(emptyResponse))
		return
	}
	if err := req.Conform(target.Process.Input); err != nil {
		h.fail(w, r, o, err)
		return
	}

	in := registry.Input{
		Table:    req.Table,
		Macros:   macros,
		Endpoint: registry.EndpointRef{Group: group, Path: path, Alias: alias},
	}
	result, err := h.execute(r.Context(), target, in)
	if err != nil {
		h.fail(w, r, o, err)
		return
	}
	enc, err := newEncoder(req, result)
	if err != nil {
		h.fail(w, r, o, err) // checked by execute already
		return
	}
	o.answered(http.StatusOK, req.Table.Rows())
	h.respond(w, r, enc, req.Table.Rows())
}

// checkAuth applies the group's token policy and returns the refusal.
func (h *Handler) checkAuth(r *http.Request, p registry.AuthPolicy) error {
	if h.authorize == nil {
		h.log.WarnContext(r.Context(), "scoring: a web API group requires a token but the handler has no Authorize function; refusing",
			"path", r.URL.Path)
		return errNeedsToken
	}
	if err := h.authorize(r, p); err != nil {
		return authError(err)
	}
	return nil
}

// call is one execution of a process on a goroutine other than the
// request's (a worker), so that the handler can answer when the deadline
// passes even if the process does not heed its context. Calls are reused,
// channel included, once their outcome has been received; a call whose
// worker may still hold it (the deadline passed first) is left to the
// garbage collector.
type call struct {
	h      *Handler
	ctx    context.Context
	slot   *Slot
	p      registry.ProcessInfo
	in     registry.Input
	result *registry.Table
	err    error
	done   chan struct{} // buffered: run never blocks on it
}

// execute runs the target's process on a slot of its queue under the
// endpoint's timeout, which covers the wait for the slot.
//
// A process the catalog marks Prompt runs on this goroutine, and its
// context tells it when the client leaves. Any other runs on a worker,
// so that when the deadline passes or the client leaves execute returns at
// once; a process that does not heed its context keeps its slot until it
// returns. The execution's context has the request's values and the
// earlier of the request's deadline and the endpoint's timeout (see
// [execContext] for why it is not derived from the request's context).
func (h *Handler) execute(req context.Context, target registry.Target, in registry.Input) (*registry.Table, error) {
	timeout := target.Endpoint.Timeout
	if timeout <= 0 {
		timeout = h.defaultTimeout
	}
	deadline := time.Now().Add(timeout)
	if d, ok := req.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	prompt := target.Process.Prompt
	// A worker's execution is watched: the loop below cancels it when the
	// client leaves.
	ctx := newExecContext(req, deadline, !prompt)
	defer ctx.release()
	slot, err := h.queues.acquire(ctx, req, target.Endpoint.QueueName())
	if err != nil {
		return nil, err
	}
	if prompt {
		return h.runProcess(ctx, slot, target.Process, in)
	}
	c, _ := h.calls.Get().(*call)
	if c == nil {
		c = &call{done: make(chan struct{}, 1)}
	}
	c.h, c.ctx, c.slot, c.p, c.in = h, ctx, slot, target.Process, in
	h.dispatch(c)
	reqDone := req.Done()
	for {
		select {
		case <-c.done:
			return h.finish(c)
		case <-reqDone:
			reqDone = nil
			if errors.Is(req.Err(), context.DeadlineExceeded) {
				continue // ctx has that deadline too and ends with it
			}
			ctx.cancel(context.Canceled) // the client left: the process hears of it
		case <-ctx.Done():
		}
		select {
		case <-c.done: // finished as the context ended
			return h.finish(c)
		default:
			return nil, ctx.Err()
		}
	}
}

// workerIdle is how long a worker waits for its next call before it exits:
// between one and two periods, as the timer is checked, not re-armed, per
// call.
const workerIdle = time.Second

// dispatch runs c on an idle worker, or on a new one when none is idle.
// Workers outlive their calls so that an execution does not pay for
// starting a goroutine and growing its small stack, which together were a
// twentieth of a one-row request's CPU time in profiles of the server under
// load. A worker whose process never returns is simply never idle again.
func (h *Handler) dispatch(c *call) {
	select {
	case h.work <- c:
	default:
		go h.worker(c)
	}
}

// worker runs c, then the calls handed to it, until a period of workerIdle
// passes without one.
func (h *Handler) worker(c *call) {
	idle := time.NewTimer(workerIdle)
	defer idle.Stop()
	busy := false // a call ran since the timer last fired
	for {
		if c != nil {
			c.run()
			c, busy = nil, true // c is recycled by finish once run has signalled
		}
		select {
		case c = <-h.work:
		case <-idle.C:
			if !busy {
				return
			}
			busy = false
			idle.Reset(workerIdle)
		}
	}
}

// finish returns the outcome of a call whose run has ended, and recycles
// the call.
func (h *Handler) finish(c *call) (*registry.Table, error) {
	result, err := c.result, c.err
	*c = call{done: c.done}
	h.calls.Put(c)
	return result, err
}

// run runs the call's process on the worker and signals its outcome.
func (c *call) run() {
	c.result, c.err = c.h.runProcess(c.ctx, c.slot, c.p, c.in)
	c.done <- struct{}{}
}

// runProcess calls the process, checks its result and releases the slot.
// It turns a panic into an error, after logging it with its stack.
func (h *Handler) runProcess(ctx context.Context, slot *Slot, p registry.ProcessInfo, in registry.Input) (result *registry.Table, err error) {
	defer func() {
		if v := recover(); v != nil {
			h.log.ErrorContext(ctx, "scoring: process panicked", "process", p.Name, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			err = fmt.Errorf("scoring: process %q panicked: %v", p.Name, v)
		}
		err = processError(ctx, p.Name, err)
		if err != nil {
			result = nil
		}
		slot.Release(err)
	}()
	result, err = p.Process.Score(ctx, in)
	if err == nil {
		if cerr := checkResult(in.Table.Rows(), result); cerr != nil {
			err = fmt.Errorf("scoring: process %q: %w", p.Name, cerr)
		}
	}
	return result, err
}

// processError decides what a process's error means: the context's error
// when the deadline passed or the client left (even if the process then
// succeeded), an *Error as it is, anything else an internal error.
func processError(ctx context.Context, name string, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	// A context error of the process's own (not ours) is a failure like any
	// other; %v keeps it from being taken for a timeout.
	return errInternal.Wrap(fmt.Errorf("scoring: process %q: %v", name, err))
}

// flushSize is how much of a response is buffered before it is written.
const flushSize = 32 << 10

// respond writes the rows. A response that fits in one buffer goes out with
// Content-Length; a longer one is streamed.
func (h *Handler) respond(w http.ResponseWriter, r *http.Request, enc *encoder, rows int) {
	bp, _ := h.bufs.Get().(*[]byte)
	if bp == nil {
		bp = new([]byte)
	}
	defer func() {
		if cap(*bp) <= 4*flushSize {
			h.bufs.Put(bp)
		}
	}()
	buf := append((*bp)[:0], responseStart...)
	i := 0
	for ; i < rows && len(buf) < flushSize; i++ {
		buf = enc.appendRow(buf, i)
	}
	if i == rows {
		buf = append(buf, responseEnd...)
		*bp = buf
		writeJSON(w, buf)
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", "application/json")
	hd.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	for {
		if _, err := w.Write(buf); err != nil {
			h.log.DebugContext(r.Context(), "scoring: response not delivered", "path", r.URL.Path, "cause", err.Error())
			*bp = buf
			return
		}
		buf = buf[:0]
		if i == rows {
			break
		}
		for ; i < rows && len(buf) < flushSize; i++ {
			buf = enc.appendRow(buf, i)
		}
		if i == rows {
			buf = append(buf, responseEnd...)
		}
	}
	*bp = buf
}

// writeJSON writes a complete 200 response.
func writeJSON(w http.ResponseWriter, b []byte) {
	// One allocation for the three values rather than one each, as
	// Header.Set would make; the keys are canonical already. Each value's
	// slice has room for itself only, so a later Add copies instead of
	// overwriting its neighbour.
	vals := make([]string, 3)
	vals[0], vals[1], vals[2] = "application/json", "nosniff", strconv.Itoa(len(b))
	hd := w.Header()
	hd["Content-Type"] = vals[0:1:1]
	hd["X-Content-Type-Options"] = vals[1:2:2]
	hd["Content-Length"] = vals[2:3:3]
	w.WriteHeader(http.StatusOK)
	w.Write(b)
}

func (h *Handler) fail(w http.ResponseWriter, r *http.Request, o *observation, err error) {
	switch {
	case errors.Is(err, ErrQueueFull):
		err = errQueueFull.WithRetryAfter(h.retryAfter).Wrap(err)
	case errors.Is(err, ErrNoQueue):
		err = errNoQueue.Wrap(err)
	}
	e := httperr.From(err)
	o.answered(e.Status, 0)
	httperr.Write(w, r, h.log, e)
}

// parseRoute splits a path /{group}/api/v1/services/{path}/{alias} and,
// when it is escaped, unescapes the names. It reports false for any other
// shape and for a name that is not valid once unescaped (so "%2F" and ".."
// never reach a lookup).
func parseRoute(p string, escaped bool) (group, path, alias string, ok bool) {
	rest, ok := strings.CutPrefix(p, "/")
	if !ok {
		return "", "", "", false
	}
	group, rest, ok = strings.Cut(rest, "/")
	if !ok {
		return "", "", "", false
	}
	if rest, ok = strings.CutPrefix(rest, "api/v1/services/"); !ok {
		return "", "", "", false
	}
	path, alias, ok = strings.Cut(rest, "/")
	if !ok || strings.IndexByte(alias, '/') >= 0 {
		return "", "", "", false
	}
	for _, s := range []*string{&group, &path, &alias} {
		if escaped && strings.IndexByte(*s, '%') >= 0 {
			u, err := url.PathUnescape(*s)
			if err != nil {
				return "", "", "", false
			}
			*s = u
		}
		if !registry.ValidName(*s) {
			return "", "", "", false
		}
	}
	return group, path, alias, true
}

// isJSON reports whether a Content-Type header names JSON in UTF-8:
// application/json, with any parameters, a charset one naming UTF-8.
func isJSON(ct string) bool {
	if ct == "application/json" {
		return true
	}
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil || mt != "application/json" {
		return false
	}
	cs, ok := params["charset"]
	return !ok || strings.EqualFold(cs, "utf-8") || strings.EqualFold(cs, "utf8")
}

// parseMacros turns the query string into macros: each parameter once, with
// a non-empty name.
func parseMacros(raw string) (map[string]string, error) {
	if raw == "" {
		return nil, nil
	}
	q, err := url.ParseQuery(raw)
	if err != nil {
		return nil, badRequest(TypeInvalidRequest, "", "the query string is malformed").Wrap(err)
	}
	names := make([]string, 0, len(q))
	for name := range q {
		names = append(names, name)
	}
	sort.Strings(names)
	macros := make(map[string]string, len(q))
	for _, name := range names {
		v := q[name]
		switch {
		case name == "":
			return nil, badRequest(TypeInvalidRequest, "", "a query parameter has no name")
		case len(v) > 1:
			return nil, badRequest(TypeDuplicateMacro, "", "the macro %q is given %d times; give it once", name, len(v))
		}
		macros[name] = v[0]
	}
	return macros, nil
}
