package pmml

import "strconv"

// outputStep computes one OutputField from a model's prediction into a
// slot, so that later segments of a modelChain can read it.
type outputStep struct {
	slot    int
	f       *field
	feature string
	// class is the index of the class a probability field reads; -1
	// reads the predicted class's.
	class int
	ev    eval
}

// compileOutputs compiles a nested model's Output into fs, which gains
// one field per OutputField. target is the model's target field (nil when
// it names none); the fields are computed in the order listed, each able
// to read the ones before it.
func compileOutputs(o *output, fs *fieldSet, target *field) ([]outputStep, error) {
	if o == nil {
		return nil, nil
	}
	var steps []outputStep
	for _, of := range o.OutputFields {
		where := "the OutputField " + strconv.Quote(of.Name)
		st := outputStep{feature: of.Feature, class: -1}
		switch of.Feature {
		case "", "predictedValue", "predictedDisplayValue":
			st.feature = "predictedValue"
		case "probability":
			if of.Value != "" {
				k, err := classOf(target, of.Value, where)
				if err != nil {
					return nil, err
				}
				st.class = k
			}
		case "transformedValue", "decision":
			e, err := one(of.Exprs, where)
			if err != nil {
				return nil, err
			}
			c := &exprCompiler{fs: fs}
			if st.ev, err = c.compile(e); err != nil {
				return nil, err
			}
		case "entityId", "clusterId":
		default:
			return nil, unsupported("the OutputField feature " + of.Feature + " (of " + where + ") is not supported")
		}
		f := &field{name: of.Name, optype: of.Optype, dataType: of.DataType}
		if f.dataType == "" {
			switch st.feature {
			case "probability":
				f.dataType = "double"
			case "entityId", "clusterId":
				f.dataType = "string"
			case "predictedValue":
				if target != nil {
					f.dataType = target.dataType
				}
			}
		}
		if f.optype == "" {
			f.optype = "continuous"
			if f.dataType == "string" || f.dataType == "boolean" || f.dataType == "" {
				f.optype = "categorical"
			}
		}
		if f.dataType == "" {
			f.dataType = "string"
		}
		if err := f.checkTypes("OutputField"); err != nil {
			return nil, err
		}
		slot, err := fs.add(f)
		if err != nil {
			return nil, err
		}
		st.slot, st.f = slot, f
		steps = append(steps, st)
	}
	return steps, nil
}

// classOf returns the index of class among target's classes.
func classOf(target *field, class, where string) (int, error) {
	if target == nil {
		return 0, invalidf("%s asks for the probability of %q, but its model has no target", where, class)
	}
	s := scope{target: target}
	return s.classIndex(class, where)
}

// runOutputs computes the output fields of a prediction.
func runOutputs(steps []outputStep, in []value, p *prediction) {
	for _, st := range steps {
		var v value
		switch st.feature {
		case "predictedValue":
			v = p.value
		case "probability":
			k := st.class
			if k < 0 && p.value.kind != missing && st.f != nil {
				k = -1
				for i := range p.probs {
					if p.probs[i] > 0 && (k < 0 || p.probs[i] > p.probs[k]) {
						k = i
					}
				}
			}
			if p.value.kind != missing && k >= 0 && k < len(p.probs) {
				v = numValue(p.probs[k])
			}
		case "transformedValue", "decision":
			v = st.ev(in)
		case "entityId", "clusterId":
			if p.entity != "" {
				v = textValue(p.entity)
			}
		}
		v, ok := st.f.cast(v)
		if !ok {
			v = value{}
		}
		in[st.slot] = v
	}
}
