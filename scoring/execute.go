package scoring

import (
	"context"
	"fmt"
	"github.com/scorehub/scorehub/registry/drift"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/process"
	"github.com/scorehub/scorehub/scoring/internal/wire"
)

// engine is the one path every execution takes, a scoring request's and a
// job's alike: a slot on the execution queue, the process run under its
// deadline with its panics recovered, the result checked, the slot released
// and the execution counted. The [Handler] and [Jobs] differ only in how
// they receive the rows and hand on the result. It is safe for concurrent
// use.
type engine struct {
	reg        *registry.Registry
	queues     *Queues
	challenges *Challenges // the queues'
	log        *slog.Logger

	calls sync.Pool  // *call, with their channels
	work  chan *call // hands calls to idle workers; unbuffered
}

// newEngine returns an engine running on queues, which must be built over
// reg; field names the configuration field queues came from.
func newEngine(reg *registry.Registry, queues *Queues, field string, log *slog.Logger) (*engine, error) {
	// A Handler, a Jobs runner and the management API that serve one
	// registry must share one set of queues, or each would enforce the
	// queues' limits on its own executions only.
	switch {
	case queues == nil:
		return nil, fmt.Errorf("scoring: no queues given (%s)", field)
	case queues.reg != reg:
		return nil, fmt.Errorf("scoring: the queues are built over another registry (%s)", field)
	}
	if log == nil {
		log = slog.Default()
	}
	return &engine{reg: reg, queues: queues, challenges: queues.challenges, log: log, work: make(chan *call)}, nil
}

// execution is one run of a process: what runs, on which queue, on what
// input and for how long.
type execution struct {
	process process.ProcessInfo
	queue   string
	in      process.Input
	timeout time.Duration
	// maxResultCells and maxResponseBytes bound the rows × result columns
	// of the answer and its bytes (Limits.MaxResultCells,
	// Limits.MaxResponseBytes); 0 is no bound. execute hands them to the
	// process in its input.
	maxResultCells   int
	maxResponseBytes int64

	// background marks a job's execution. No client waits for it, so its
	// timeout starts once it holds a slot, and it runs on the caller's
	// goroutine to its end: the job ends when its process returns, never
	// before. A request's timeout covers its wait for a slot too, and the
	// client is answered at the deadline even if the process runs on.
	background bool
	// started, when not nil, is called once the execution holds its slot,
	// before the process runs. An error from it ends the execution with
	// that error, the slot released unused.
	started func() error

	// challengers are the endpoint's challengers, scored beside its
	// process as [registry.Challenger] says; splitKey and answeredBy are
	// the endpoint's [registry.Endpoint] fields.
	challengers []registry.ChallengerTarget
	splitKey    string
	answeredBy  bool
	rowID       string
	reference   *drift.Profile // nil: the endpoint's drift is not measured
	monitor     registry.Monitor
	outliers    bool                 // add the outlier column
	payloadLog  *registry.PayloadLog // nil: the endpoint logs no rows
	model       bool                 // the endpoint names a model: its process is a version's
	// after are what runs once the answer is written (or the job's result
	// kept): the shadows, which must not delay it. See [execution.answered].
	after []func()
}

// answered runs what waits for x's answer to be written.
func (x *execution) answered() {
	for _, f := range x.after {
		f()
	}
	x.after = nil
}

// execute runs x and returns the process's result, checked to have one row
// per input row and no more result cells or bytes than x allows, or the
// error that ended it: a 413 too_many_result_cells or response_too_large
// (before the process runs when it declares its result columns), the
// queue's ([ErrQueueFull], [ErrNoQueue]), the context's when the deadline
// passed or req ended (even if the process then succeeded), a
// [*problem.Error] the process composed, or an internal error for anything
// else the process did.
//
// req is the caller's context: its values reach the process, its deadline
// bounds the execution, and its end cancels the process. A process that
// runs on a worker (neither [process.ProcessInfo].Prompt nor background) is
// watched so that execute returns at once when the deadline passes or req
// ends; one that does not heed its context keeps its slot until it returns.
func (e *engine) execute(req context.Context, x *execution) (wire.Result, error) {
	if len(x.challengers) > 0 || x.answeredBy || x.rowID != "" || x.reference != nil || x.outliers || x.payloadLog != nil {
		return e.challenged(req, x)
	}
	return e.executeOne(req, x)
}

// executeOne is execute of x's process alone.
func (e *engine) executeOne(req context.Context, x *execution) (wire.Result, error) {
	x.in.Limits = x.resultLimits(x.in.Table.Rows())
	if err := x.admitResult(x.in.Table.Rows()); err != nil {
		return wire.Result{}, err
	}
	if x.background {
		slot, err := e.queues.acquire(req, nil, x.queue)
		if err != nil {
			return wire.Result{}, err
		}
		if err := x.begin(slot); err != nil {
			return wire.Result{}, err
		}
		ctx := newExecContext(req, deadline(req, x.timeout), false)
		defer ctx.release()
		return e.run(ctx, slot, x)
	}
	prompt := x.process.Prompt
	// A worker's execution is watched: the loop in await cancels it when
	// the client leaves.
	ctx := newExecContext(req, deadline(req, x.timeout), !prompt)
	defer ctx.release()
	slot := &ctx.slot
	if err := e.queues.acquireInto(ctx, req, x.queue, slot); err != nil {
		return wire.Result{}, err
	}
	if err := x.begin(slot); err != nil {
		return wire.Result{}, err
	}
	if prompt {
		return e.run(ctx, slot, x)
	}
	return e.await(req, ctx, slot, x)
}

// resultLimits are x's bounds on an answer of rows rows.
func (x *execution) resultLimits(rows int) process.ResultLimits {
	return process.ResultLimits{Rows: rows, MaxCells: x.maxResultCells, MaxBytes: x.maxResponseBytes}
}

// admitResult refuses, before x runs, an answer whose rows × the result
// columns x's process declares would pass x's bounds. A process that
// declares none is checked on its result (see run).
func (x *execution) admitResult(rows int) error {
	names := 0
	for _, c := range x.process.Output {
		names += len(c.Name)
	}
	return x.resultLimits(rows).Check(len(x.process.Output), names)
}

// admitResultOf is admitResult for the result x's process returned.
func (x *execution) admitResultOf(rows int, result wire.Result) error {
	t := result.Whole
	if result.Parts != nil {
		t = result.Parts[0] // every part has the same columns
	}
	names := 0
	for i := range t.NumColumns() {
		names += len(t.Column(i).Name)
	}
	return x.resultLimits(rows).Check(t.NumColumns(), names)
}

// begin calls x.started, if any, on the slot x holds.
func (x *execution) begin(slot *Slot) error {
	if x.started == nil {
		return nil
	}
	if err := x.started(); err != nil {
		slot.Release(context.Canceled)
		return err
	}
	return nil
}

// deadline is the earlier of req's deadline and timeout from now.
func deadline(req context.Context, timeout time.Duration) time.Time {
	d := time.Now().Add(timeout)
	if rd, ok := req.Deadline(); ok && rd.Before(d) {
		return rd
	}
	return d
}

// run calls the process on slot, checks its result and releases the slot.
// It turns a panic into an error, after logging it with its stack.
func (e *engine) run(ctx context.Context, slot *Slot, x *execution) (result wire.Result, err error) {
	name := x.process.Name
	defer func() {
		if v := recover(); v != nil {
			e.log.ErrorContext(ctx, "scoring: process panicked", "process", name, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			err = fmt.Errorf("scoring: process %q panicked: %v", name, v)
		}
		err = processError(ctx, name, err)
		if err != nil {
			result = wire.Result{}
		}
		slot.Release(err)
	}()
	result, err = e.score(ctx, x)
	if err == nil && result.Parts == nil { // parts are checked as they are scored
		if cerr := wire.CheckResult(x.in.Table.Rows(), result.Whole); cerr != nil {
			err = fmt.Errorf("scoring: process %q: %w", name, cerr)
		}
	}
	if err == nil {
		// What a process declared is checked before it ran; what it
		// returns, declared or not, is checked before it is encoded.
		err = x.admitResultOf(x.in.Table.Rows(), result)
	}
	return result, err
}

// processError decides what a process's error means: the context's error
// when the deadline passed or the caller left (even if the process then
// succeeded), an answer it composed as it is, anything else (the sentinels
// of scorehub's packages included) an internal error.
func processError(ctx context.Context, name string, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	if err == nil {
		return nil
	}
	if e := composed(err); e != nil {
		return e
	}
	// A context error of the process's own (not ours) is a failure like any
	// other; %v keeps it from being taken for a timeout.
	return errInternal.Wrap(fmt.Errorf("scoring: process %q: %v", name, err))
}

// endpointExecution is the execution of t's process on its endpoint's
// queue, under the endpoint's timeout or, when it sets none, dflt.
func endpointExecution(t *registry.Target, dflt time.Duration) execution {
	x := execution{process: t.Process, queue: t.Endpoint.QueueName(), timeout: t.Endpoint.Timeout,
		challengers: t.Challengers, splitKey: t.Endpoint.SplitKey, answeredBy: t.Endpoint.AnsweredBy, rowID: t.Endpoint.RowID, reference: t.Reference,
		monitor: t.Endpoint.Monitor.Settings(), outliers: t.Endpoint.OutlierColumn && t.Endpoint.Model != "", payloadLog: t.Endpoint.PayloadLog,
		model: t.Endpoint.Model != ""}
	if x.timeout <= 0 {
		x.timeout = dflt
	}
	return x
}
