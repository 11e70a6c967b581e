package pmml

import "strconv"

// derivedStep computes a derived field into its slot.
type derivedStep struct {
	slot int
	f    *field
	ev   eval
}

func (d *derivedStep) run(in []value) error {
	v, ok := d.f.cast(d.ev(in))
	if !ok {
		v = value{}
	}
	in[d.slot] = v
	return nil
}

// derivedFields compiles DerivedFields into fs: each takes a slot, and the
// steps that compute them come back ordered so that every field is computed
// after the fields it reads, whatever order the file lists them in.
func (fs *fieldSet) derivedFields(list []*derivedField) ([]step, error) {
	steps := make([]*derivedStep, len(list))
	for i, d := range list {
		f := &field{name: d.Name, optype: d.Optype, dataType: d.DataType}
		if d.Name == "" {
			return nil, invalidf("a DerivedField has no name")
		}
		if err := f.checkTypes("DerivedField"); err != nil {
			return nil, err
		}
		slot, err := fs.add(f)
		if err != nil {
			return nil, err
		}
		steps[i] = &derivedStep{slot: slot, f: f}
	}
	bySlot := make(map[int]int, len(steps))
	for i, s := range steps {
		bySlot[s.slot] = i
	}
	deps := make([][]int, len(steps))
	for i, d := range list {
		e, err := one(d.Exprs, "the DerivedField "+strconv.Quote(d.Name))
		if err != nil {
			return nil, err
		}
		c := &exprCompiler{fs: fs, deps: make(map[int]bool)}
		ev, err := c.compile(e)
		if err != nil {
			return nil, err
		}
		steps[i].ev = ev
		for slot := range c.deps {
			fs.reads[steps[i].slot] = append(fs.reads[steps[i].slot], slot)
			if j, ok := bySlot[slot]; ok {
				deps[i] = append(deps[i], j)
			}
		}
	}
	// Depth-first topological order; a cycle is refused.
	const (
		unseen = iota
		visiting
		done
	)
	state := make([]uint8, len(steps))
	var order []step
	var visit func(i int) error
	visit = func(i int) error {
		switch state[i] {
		case visiting:
			return invalidf("the DerivedField %q is computed from itself", list[i].Name)
		case done:
			return nil
		}
		state[i] = visiting
		for _, j := range deps[i] {
			if err := visit(j); err != nil {
				return err
			}
		}
		state[i] = done
		order = append(order, steps[i])
		return nil
	}
	for i := range steps {
		if err := visit(i); err != nil {
			return nil, err
		}
	}
	return order, nil
}
