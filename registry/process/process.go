package process

import "context"

// EndpointRef names the endpoint a request came through.
type EndpointRef struct {
	Group string `json:"group"`
	Path  string `json:"path"`
	Alias string `json:"alias"`
}

// Input is what a [Process] scores: the request's rows as a table, the
// request's macros (query parameters), the endpoint that was called and
// the limits its result is held to.
type Input struct {
	Table    *Table
	Macros   map[string]string
	Endpoint EndpointRef
	// Limits bound the result, as the scoring engine will check it.
	Limits ResultLimits
}

// Process is an analytical process hosted behind scoring endpoints.
//
// Score returns a table of result columns with exactly in.Table.Rows() rows;
// the scoring handler adds them after the input columns of every row. A
// result column named like an input column replaces it. Score must stop
// early when ctx is done (the client left, or the endpoint's timeout passed)
// and must not modify in.Table. It is called from many goroutines at once,
// for different requests; for the rows of one request too, in disjoint
// ranges, only when its catalog entry says so ([ProcessInfo.RowWise]).
type Process interface {
	Score(ctx context.Context, in Input) (*Table, error)
}

// ProcessFunc adapts a function to the [Process] interface.
type ProcessFunc func(ctx context.Context, in Input) (*Table, error)

// Score calls f(ctx, in).
func (f ProcessFunc) Score(ctx context.Context, in Input) (*Table, error) { return f(ctx, in) }
