package treeshap

// Tree is a binary tree in arrays indexed by node, the root at 0. A walk
// only reads it: many Walkers may walk one Tree at once.
type Tree struct {
	// Left and Right are a split's children; Left[i] < 0 marks a leaf.
	Left, Right []int32
	// Feature is the feature a split reads.
	Feature []int32
	// Cover is how much training data reached each node (a hessian sum or
	// a count): the weights of the expectation a contribution is taken
	// against.
	Cover []float64
	// Value is a leaf's output; ignored at a split.
	Value []float64
	// Depth is the most splits on a path from the root to a leaf.
	Depth int
}

// Mean returns the tree's expected output: the leaves' values weighted by
// the cover that reaches them, each split's mean its children's weighted
// by their covers over its own.
func (t *Tree) Mean() float64 {
	return t.mean(0)
}

func (t *Tree) mean(i int32) float64 {
	if t.Left[i] < 0 {
		return t.Value[i]
	}
	l, r := t.Left[i], t.Right[i]
	return (t.mean(l)*t.Cover[l] + t.mean(r)*t.Cover[r]) / t.Cover[i]
}

// elem is one feature on the path from the root to a node: the share of
// cover that passes the splits on it when the feature is unknown (zero)
// and whether the row passes them (one: 1 or 0, never another value in
// path-dependent TreeSHAP), and the weight of subsets of the path's
// features of one size.
type elem struct {
	feat      int32
	zero, one float64
	w         float64
}

// Walker holds the memory a walk works in. A Walker is not safe for
// concurrent use; its zero value is ready.
type Walker struct {
	buf []elem
	inv []float64 // inv[i] is 1/i, so that the walk multiplies rather than divides
	// ws, up and down are a leaf's path weights and unwinding factors.
	ws, up, down []float64
	t            *Tree
	hot          func(node int32) int32
	phi          []float64
	scale        float64
}

// Add adds scale times the contributions of t's output for one row to
// phi, indexed by feature. hot returns the child of a split the row takes,
// as the model's scoring decides it. The contributions sum to
// scale × (the row's leaf value − t.Mean()).
func (w *Walker) Add(t *Tree, hot func(node int32) int32, scale float64, phi []float64) {
	if t.Left[0] < 0 {
		return // one leaf: nothing to attribute
	}
	// The paths of every depth, each at most one longer than its parent's.
	need := (t.Depth + 2) * (t.Depth + 3) / 2
	if len(w.buf) < need {
		w.buf = make([]elem, need)
	}
	if len(w.inv) < t.Depth+3 {
		w.inv = make([]float64, t.Depth+3)
		for i := 1; i < len(w.inv); i++ {
			w.inv[i] = 1 / float64(i)
		}
		w.ws = make([]float64, t.Depth+2)
		w.up = make([]float64, t.Depth+2)
		w.down = make([]float64, t.Depth+2)
	}
	w.t, w.hot, w.phi, w.scale = t, hot, phi, scale
	w.recurse(0, 0, 0, 1, 1, -1)
	w.t, w.hot, w.phi = nil, nil, nil
}

// recurse visits node i, whose parent's path is the n elements at
// buf[base:], having come through a split on feature pf that lets the
// fraction pz of cover through when the feature is unknown and po (0 or
// 1) of the row.
func (w *Walker) recurse(i int32, base, n int, pz, po float64, pf int32) {
	start := base + n
	m := w.buf[start : start+n+1]
	copy(m, w.buf[base:start])
	w.extend(m, pz, po, pf)
	n++
	t := w.t
	if t.Left[i] < 0 {
		w.leaf(m, t.Value[i]*w.scale)
		return
	}
	f := t.Feature[i]
	iz, io := 1.0, 1.0
	for k := 1; k < n; k++ {
		if m[k].feat == f {
			// A feature split on again: its earlier split is undone and
			// its fractions carried into this one.
			iz, io = m[k].zero, m[k].one
			w.unwind(m, k)
			n--
			break
		}
	}
	hot := w.hot(i)
	cold := t.Left[i]
	if hot == cold {
		cold = t.Right[i]
	}
	c := t.Cover[i]
	w.recurse(hot, start, n, iz*t.Cover[hot]/c, io, f)
	w.recurse(cold, start, n, iz*t.Cover[cold]/c, 0, f)
}

// leaf adds the contributions of a leaf of value v reached by path m:
// each feature's weight with its element unwound times the difference its
// passing the splits makes.
func (w *Walker) leaf(m []elem, v float64) {
	l := len(m) - 1
	inv := w.inv
	// The weights and the factors every element's unwinding multiplies
	// them by, gathered once for the leaf.
	ws, up, down := w.ws[:l], w.up[:l], w.down[:l]
	for j := range ws {
		ws[j] = m[j].w
		up[j] = float64(l+1) * inv[j+1]
		down[j] = float64(l-j) * inv[l+1]
	}
	last := m[l].w
	// A feature the row does not pass (one 0) has, unwound, the weights
	// Σ m[j].w·(l+1)/(zero·(l−j)); times its difference −zero, its
	// contribution does not depend on which feature it is.
	offPath, haveOff := 0.0, false
	for k := 1; k <= l; k++ {
		e := &m[k]
		if e.one == 0 {
			if !haveOff {
				for j := l - 1; j >= 0; j-- {
					offPath += ws[j] * inv[l-j]
				}
				offPath *= -float64(l+1) * v
				haveOff = true
			}
			if e.zero != 0 {
				w.phi[e.feat] += offPath
			}
			continue
		}
		z := e.zero
		next, total := last, 0.0
		for j := l - 1; j >= 0; j-- {
			t := next * up[j]
			total += t
			next = ws[j] - t*z*down[j]
		}
		w.phi[e.feat] += total * (1 - z) * v
	}
}

// extend appends to the path m[:len(m)-1] the feature f with fractions
// z and o, updating the subset weights.
func (w *Walker) extend(m []elem, z, o float64, f int32) {
	l := len(m) - 1
	m[l] = elem{feat: f, zero: z, one: o}
	if l == 0 {
		m[l].w = 1
		return
	}
	r := w.inv[l+1]
	for i := l - 1; i >= 0; i-- {
		if o != 0 {
			m[i+1].w += m[i].w * float64(i+1) * r
		}
		m[i].w = z * m[i].w * float64(l-i) * r
	}
}

// unwind removes element k from the path m, undoing its extension; the
// path is then m[:len(m)-1].
func (w *Walker) unwind(m []elem, k int) {
	l := len(m) - 1
	inv := w.inv
	z, o := m[k].zero, m[k].one
	next := m[l].w
	for j := l - 1; j >= 0; j-- {
		if o != 0 {
			t := m[j].w
			m[j].w = next * float64(l+1) * inv[j+1]
			next = t - m[j].w*z*float64(l-j)*inv[l+1]
		} else {
			m[j].w = m[j].w * float64(l+1) * inv[l-j] / z
		}
	}
	for j := k; j < l; j++ {
		m[j].feat, m[j].zero, m[j].one = m[j+1].feat, m[j+1].zero, m[j+1].one
	}
}
