package process

import (
	"encoding/json"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
)

// ColumnSpec describes a column a process reads or writes.
type ColumnSpec struct {
	Name string `json:"name"`
	Kind Kind   `json:"kind"`
	// Required marks an input column that must be present in at least one
	// row of a request. It has no meaning for result columns.
	Required bool `json:"required,omitempty"`
}

// ProcessInfo is a named process in a [Catalog], with what clients and the
// test page need to know about it.
type ProcessInfo struct {
	// Name is how deployments refer to the process. It follows the same rule
	// as every other name (see [ValidName]).
	Name        string
	Description string
	// Input, when set, is checked before the process runs: a Required column
	// absent from every row, or a column of another kind, is refused.
	Input []ColumnSpec
	// Output lists the result columns, where they are known in advance.
	Output []ColumnSpec
	// Sample is example input as a client would post it in "data": a JSON
	// array of row objects. The endpoint test page starts from it.
	Sample json.RawMessage
	// Process scores requests. It must not be nil.
	Process Process
	// Prompt promises that Process only computes: it does not wait on the
	// network, a disk, a lock held long or another goroutine, and it
	// returns within moments of its context ending. The scoring handler
	// then runs it on the request's own goroutine instead of handing it to
	// a worker goroutine, which is a large part of the cost of a small
	// request. A process that breaks the promise holds its request past
	// the endpoint's timeout: the 504 is sent only when Score returns.
	Prompt bool
	// RowWise promises that Process answers each row from that row alone
	// (and the macros and endpoint), never from the other rows of the
	// request or from their number, and that it returns the same columns,
	// in the same order and of the same kinds, for any rows. The scoring
	// engine may then call Score on disjoint row ranges of one large
	// request at once, each with a table of those rows, and join the
	// results in row order: a request's rows are scored on every
	// processor. A process that returns other columns for one range than
	// for another fails the request with an internal error.
	RowWise bool
}

// Catalog is what the host program can run: the processes it registers by
// name, and the model formats whose files it can load
// ([Catalog.RegisterFormat]). Its zero value is an empty catalog ready to
// use. It is safe for concurrent use; process lookups take no lock.
type Catalog struct {
	mu      sync.Mutex // serialises Register; guards formats
	m       atomic.Pointer[map[string]ProcessInfo]
	formats []ModelFormat
}

// NewCatalog returns an empty catalog.
func NewCatalog() *Catalog { return &Catalog{} }

// procs returns the registered processes; nil before the first Register.
func (c *Catalog) procs() map[string]ProcessInfo {
	if m := c.m.Load(); m != nil {
		return *m
	}
	return nil
}

// Register adds p. It fails when the name is invalid or taken, the process is
// nil, a schema column is invalid, or Sample is not a JSON array of objects.
func (c *Catalog) Register(p ProcessInfo) error {
	if err := checkName("/name", p.Name); err != nil {
		return fmt.Errorf("registry: process: %w", err)
	}
	if p.Process == nil {
		return fmt.Errorf("registry: process %q: nil Process", p.Name)
	}
	for _, specs := range [][]ColumnSpec{p.Input, p.Output} {
		seen := make(map[string]bool, len(specs))
		for _, s := range specs {
			if s.Name == "" || seen[s.Name] {
				return fmt.Errorf("registry: process %q: column %q is empty or repeated", p.Name, s.Name)
			}
			if s.Kind != Number && s.Kind != Text {
				return fmt.Errorf("registry: process %q: column %q has invalid kind", p.Name, s.Name)
			}
			seen[s.Name] = true
		}
	}
	if p.Sample != nil {
		var rows []map[string]json.RawMessage
		if err := json.Unmarshal(p.Sample, &rows); err != nil {
			return fmt.Errorf("registry: process %q: sample is not a JSON array of objects: %w", p.Name, err)
		}
		p.Sample = append(json.RawMessage(nil), p.Sample...)
	}
	p.Input = append([]ColumnSpec(nil), p.Input...)
	p.Output = append([]ColumnSpec(nil), p.Output...)

	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.procs()
	if _, ok := old[p.Name]; ok {
		return errorf(ErrExists, "process %q already exists", p.Name)
	}
	next := make(map[string]ProcessInfo, len(old)+1)
	for k, v := range old {
		next[k] = v
	}
	next[p.Name] = p
	c.m.Store(&next)
	return nil
}

// Lookup returns the process registered as name.
func (c *Catalog) Lookup(name string) (ProcessInfo, bool) {
	p, ok := c.procs()[name]
	return p, ok
}

// List returns every registered process, sorted by name.
func (c *Catalog) List() []ProcessInfo {
	m := c.procs()
	out := make([]ProcessInfo, 0, len(m))
	for _, p := range m {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
