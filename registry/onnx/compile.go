package onnx

import (
	"fmt"
	"slices"
	"strings"
)

// value is a graph value as the compiler knows it: its type and shape,
// and where the evaluator keeps it.
type value struct {
	name string
	dt   dtype
	// dims are the dimensions of one row of a batch value ([N] has none,
	// [N,F] has [F]); a constant's are all its dimensions.
	dims  []int
	width int       // values per row: the product of dims
	konst *constant // set for initializers
	slot  int       // the evaluator's slot of a batch value
	node  int       // the producing node's index, -1 for inputs and initializers
	zip   bool      // a sequence of maps, as ZipMap makes
	cls   []string  // set when the value holds a classifier's scores, one per class in this order
	// clsInts says that cls are integer labels (classlabels_int64s), in
	// decimal.
	clsInts bool
	// origin is set when each value of a row is one model input's value,
	// read or copied by operators that move values without computing new
	// ones from several (Identity, Cast, Concat, Reshape, Flatten,
	// ArrayFeatureExtractor): origin[j] is the request column value j
	// comes from. Explanations attribute a tree's splits to it.
	origin []int32
	// scores is set when the value holds a tree ensemble's scores as the
	// ensemble answers them, copied (Identity, Cast, Reshape, Flatten,
	// ZipMap) but not transformed.
	scores *treeNode
}

func (v *value) describe() string {
	if v.konst != nil {
		return fmt.Sprintf("%s %v", v.dt, v.dims)
	}
	return fmt.Sprintf("%s [N%s]", v.dt, dimsSuffix(v.dims))
}

func dimsSuffix(dims []int) string {
	var b strings.Builder
	for _, d := range dims {
		fmt.Fprintf(&b, ",%d", d)
	}
	return b.String()
}

// state is one evaluation of a plan: a batch of rows and the tensors of
// its values by slot.
type state struct {
	rows int
	vals []tensor
	// bad marks rows the graph cannot score (a value it cannot represent,
	// an unknown category an encoder refuses); nil when there are none.
	bad []bool
	// raw, set by an explanation, asks one tree ensemble for its raw
	// scores.
	raw *rawScores
}

func (s *state) markBad(row int) {
	if s.bad == nil {
		s.bad = make([]bool, s.rows)
	}
	s.bad[row] = true
}

// kernel computes a node's outputs from its inputs.
type kernel func(s *state)

// step is a compiled node.
type step struct {
	node int
	run  kernel
}

// compiler turns a graph into a plan.
type compiler struct {
	lim    Limits
	opsets map[string]int64 // by domain; "" is the default domain
	values map[string]*value
	slots  int
	steps  []step
	trees  int
	// columns counts the request columns the graph inputs read so far:
	// the values of a row of every input, in order.
	columns int
}

// domain names used by the operators this package evaluates.
const (
	domainDefault = ""
	domainML      = "ai.onnx.ml"
)

// batch adds a batch value.
func (c *compiler) batch(name string, dt dtype, dims []int, node int) (*value, error) {
	w := product(dims)
	for _, d := range dims {
		if d <= 0 {
			return nil, errInvalid("value %q has an empty dimension", name)
		}
	}
	if w > c.lim.MaxFeatures {
		return nil, errLimit("value %q has %d values per row, more than the limit of %d", name, w, c.lim.MaxFeatures)
	}
	if _, dup := c.values[name]; dup {
		return nil, errInvalid("value %q is produced twice", name)
	}
	v := &value{name: name, dt: dt, dims: dims, width: w, slot: c.slots, node: node}
	c.slots++
	c.values[name] = v
	return v, nil
}

// order returns the graph's nodes in an order where each node follows
// the nodes producing its inputs, checking that every input is produced
// once and that there is no cycle.
func order(g *graphProto, known map[string]bool) ([]int, error) {
	producer := make(map[string]int, len(g.nodes))
	for i, n := range g.nodes {
		for _, o := range n.outputs {
			if o == "" {
				continue
			}
			if known[o] {
				return nil, errInvalid("node %s writes %q, which is already a graph input or initializer", nodeName(&n, i), o)
			}
			if j, dup := producer[o]; dup {
				return nil, errInvalid("value %q is produced by two nodes (%s and %s)", o, nodeName(&g.nodes[j], j), nodeName(&n, i))
			}
			producer[o] = i
		}
	}
	pending := make([]int, len(g.nodes))
	users := make([][]int, len(g.nodes))
	for i, n := range g.nodes {
		for _, in := range n.inputs {
			if in == "" || known[in] {
				continue
			}
			j, ok := producer[in]
			if !ok {
				return nil, errInvalid("node %s reads %q, which no node, graph input or initializer produces", nodeName(&n, i), in)
			}
			pending[i]++
			users[j] = append(users[j], i)
		}
	}
	var out, ready []int
	for i := range g.nodes {
		if pending[i] == 0 {
			ready = append(ready, i)
		}
	}
	for len(ready) > 0 {
		i := ready[0]
		ready = ready[1:]
		out = append(out, i)
		for _, u := range users[i] {
			pending[u]--
			if pending[u] == 0 {
				ready = append(ready, u)
			}
		}
	}
	if len(out) != len(g.nodes) {
		for i := range g.nodes {
			if pending[i] > 0 {
				return nil, errInvalid("the graph has a cycle through node %s", nodeName(&g.nodes[i], i))
			}
		}
	}
	return out, nil
}

func nodeName(n *nodeProto, i int) string {
	if n.name != "" {
		return fmt.Sprintf("%q (%s)", n.name, n.opType)
	}
	return fmt.Sprintf("%d (%s)", i, n.opType)
}

// compileNode type-checks node i and adds its step.
func (c *compiler) compileNode(g *graphProto, i int) error {
	n := &g.nodes[i]
	domain := n.domain
	if domain == "ai.onnx" {
		domain = domainDefault
	}
	version, ok := c.opsets[domain]
	if !ok {
		return errInvalid("node %s uses domain %q, which the model does not import", nodeName(n, i), n.domain)
	}
	op, ok := operators[opKey{domain, n.opType}]
	if !ok {
		return errInvalid("operator %q (domain %q) is not supported", n.opType, n.domain)
	}
	ctx := &nodeCtx{c: c, n: n, idx: i, version: version, attrs: make(map[string]*attrProto, len(n.attrs))}
	for k := range n.attrs {
		a := &n.attrs[k]
		if a.ref != "" || a.other {
			return ctx.errorf("attribute %q is of a kind that is not supported", a.name)
		}
		if _, dup := ctx.attrs[a.name]; dup {
			return ctx.errorf("attribute %q appears twice", a.name)
		}
		ctx.attrs[a.name] = a
	}
	for _, name := range n.inputs {
		if name == "" {
			ctx.ins = append(ctx.ins, nil)
			continue
		}
		ctx.ins = append(ctx.ins, c.values[name])
	}
	if len(ctx.ins) < op.minIn || len(ctx.ins) > op.maxIn {
		return ctx.errorf("has %d inputs; it takes %d to %d", len(ctx.ins), op.minIn, op.maxIn)
	}
	run, err := op.compile(ctx)
	if err != nil {
		return err
	}
	for name := range ctx.attrs {
		if !ctx.used[name] {
			return ctx.errorf("attribute %q is not supported", name)
		}
	}
	c.steps = append(c.steps, step{node: i, run: run})
	return nil
}

// opKey names an operator.
type opKey struct{ domain, op string }

// operator compiles one kind of node.
type operator struct {
	minIn, maxIn int
	compile      func(*nodeCtx) (kernel, error)
}

// nodeCtx is what an operator's compile function sees of its node.
type nodeCtx struct {
	c       *compiler
	n       *nodeProto
	idx     int
	version int64
	ins     []*value
	attrs   map[string]*attrProto
	used    map[string]bool
}

func (x *nodeCtx) errorf(format string, args ...any) error {
	return errInvalid("node %s: %s", nodeName(x.n, x.idx), fmt.Sprintf(format, args...))
}

func (x *nodeCtx) limitf(format string, args ...any) error {
	return errLimit("node %s: %s", nodeName(x.n, x.idx), fmt.Sprintf(format, args...))
}

// attr returns the attribute name when it is of type typ, marking it read.
func (x *nodeCtx) attr(name string, typ int64) (*attrProto, error) {
	if x.used == nil {
		x.used = make(map[string]bool)
	}
	x.used[name] = true
	a, ok := x.attrs[name]
	if !ok {
		return nil, nil
	}
	if a.typ != typ && a.typ != 0 {
		return nil, x.errorf("attribute %q has the wrong type", name)
	}
	return a, nil
}

// ignore marks attributes that do not change what the node computes.
func (x *nodeCtx) ignore(names ...string) {
	if x.used == nil {
		x.used = make(map[string]bool)
	}
	for _, n := range names {
		x.used[n] = true
	}
}

func (x *nodeCtx) intAttr(name string, def int64) (int64, error) {
	a, err := x.attr(name, attrInt)
	if a == nil || err != nil {
		return def, err
	}
	return a.i, nil
}

func (x *nodeCtx) floatAttr(name string, def float32) (float32, error) {
	a, err := x.attr(name, attrFloat)
	if a == nil || err != nil {
		return def, err
	}
	return a.f, nil
}

func (x *nodeCtx) stringAttr(name, def string) (string, error) {
	a, err := x.attr(name, attrString)
	if a == nil || err != nil {
		return def, err
	}
	return string(a.s), nil
}

func (x *nodeCtx) intsAttr(name string) ([]int64, error) {
	a, err := x.attr(name, attrInts)
	if a == nil || err != nil {
		return nil, err
	}
	return a.ints, nil
}

func (x *nodeCtx) floatsAttr(name string) ([]float32, error) {
	a, err := x.attr(name, attrFloats)
	if a == nil || err != nil {
		return nil, err
	}
	return a.floats, nil
}

func (x *nodeCtx) stringsAttr(name string) ([]string, error) {
	a, err := x.attr(name, attrStrings)
	if a == nil || err != nil {
		return nil, err
	}
	out := make([]string, len(a.strings))
	for i, s := range a.strings {
		out[i] = string(s)
	}
	return out, nil
}

func (x *nodeCtx) tensorAttr(name string) (*constant, error) {
	a, err := x.attr(name, attrTensor)
	if a == nil || err != nil {
		return nil, err
	}
	if a.t == nil {
		return nil, x.errorf("attribute %q holds no tensor", name)
	}
	return decodeTensor(fmt.Sprintf("attribute %q of node %s", name, nodeName(x.n, x.idx)), a.t, x.c.lim)
}

// in returns input i, which must be a batch value of one of the types.
func (x *nodeCtx) in(i int, types ...dtype) (*value, error) {
	if i >= len(x.ins) || x.ins[i] == nil {
		return nil, x.errorf("input %d is missing", i)
	}
	v := x.ins[i]
	if v.konst != nil {
		return nil, x.errorf("input %d (%q) is a constant, which is not supported here", i, v.name)
	}
	if v.zip {
		return nil, x.errorf("input %d (%q) is a sequence of maps, which is not supported here", i, v.name)
	}
	if len(types) > 0 && !slices.Contains(types, v.dt) {
		return nil, x.errorf("input %d (%q) is %s, which is not supported here", i, v.name, v.dt)
	}
	return v, nil
}

// konst returns input i, which must be an initializer.
func (x *nodeCtx) konst(i int) (*constant, error) {
	if i >= len(x.ins) || x.ins[i] == nil {
		return nil, x.errorf("input %d is missing", i)
	}
	if x.ins[i].konst == nil {
		return nil, x.errorf("input %d (%q) must be an initializer", i, x.ins[i].name)
	}
	return x.ins[i].konst, nil
}

// out adds output i as a batch value; it returns nil when the node does
// not name that output.
func (x *nodeCtx) out(i int, dt dtype, dims []int) (*value, error) {
	if i >= len(x.n.outputs) || x.n.outputs[i] == "" {
		return nil, nil
	}
	return x.c.batch(x.n.outputs[i], dt, dims, x.idx)
}

// needed returns the steps that compute the values of slots, in order.
func needed(steps []step, g *graphProto, values map[string]*value, outputs ...*value) []step {
	want := make(map[int]bool)
	var mark func(v *value)
	mark = func(v *value) {
		if v == nil || v.node < 0 || want[v.node] {
			return
		}
		want[v.node] = true
		for _, in := range g.nodes[v.node].inputs {
			if in != "" {
				mark(values[in])
			}
		}
	}
	for _, o := range outputs {
		mark(o)
	}
	var out []step
	for _, s := range steps {
		if want[s.node] {
			out = append(out, s)
		}
	}
	return out
}
