package pmml

import (
	"math"
	"strconv"
)

// scope is what every model element compiles first: its own field set
// (the parent's, extended by its MiningSchema and LocalTransformations),
// the steps that prepare a row for it, and its target.
type scope struct {
	fs    *fieldSet
	steps []step
	// target is the field the model predicts; nil when it names none.
	target *field
	// active are the slots of the fields its MiningSchema reads.
	active []int
	// function is the model's functionName: classification, regression
	// or clustering.
	function string
	// rescale is the Targets element's post-processing of a predicted
	// number; nil when there is none.
	rescale func(float64) float64
	// factor and constant are the rescale's when it is affine: no min,
	// max or castInteger. affine is false for another rescale.
	factor, constant float64
	affine           bool
	// math is the element's arithmetic, also fs.math.
	math mathContext
}

// prepare runs the steps that ready a row for the model.
func (s *scope) prepare(in []value) error { return runSteps(s.steps, in) }

// enter compiles what every model element starts with, in fs (the file's
// set for the top-level model, the parent's for a nested one). name is the
// element's name, for messages; functions lists the functionNames it
// supports. The top-level model treats the fields of its MiningSchema in
// place and then computes the TransformationDictionary's fields, so those
// read treated values as the model does.
func (fs *fieldSet) enter(h *modelHeader, name string, functions ...string) (*scope, error) {
	if h.IsScorable == "false" {
		return nil, invalidf("the %s is marked isScorable=\"false\"", name)
	}
	mc, err := parseMathContext(h.MathContext, name)
	if err != nil {
		return nil, err
	}
	ok := false
	for _, f := range functions {
		ok = ok || h.FunctionName == f
	}
	if !ok {
		return nil, unsupported("a " + name + " with functionName " + strconv.Quote(h.FunctionName) + " is not supported")
	}
	child := fs.child()
	child.math = mc
	top := fs.parent == nil
	steps, active, target, err := child.miningSchema(h.MiningSchema, top)
	if err != nil {
		return nil, err
	}
	if top {
		steps = append(steps, fs.globals...)
	}
	if lt := h.LocalTransformations; lt != nil {
		local, err := child.derivedFields(lt.DerivedFields)
		if err != nil {
			return nil, err
		}
		steps = append(steps, local...)
	}
	s := &scope{fs: child, steps: steps, target: target, active: active, function: h.FunctionName, math: mc}
	switch h.FunctionName {
	case "classification":
		if target != nil && target.optype == "continuous" {
			return nil, invalidf("the classification %s predicts the continuous field %q", name, target.name)
		}
	case "regression":
		if target != nil && target.optype != "continuous" {
			return nil, invalidf("the regression %s predicts the %s field %q", name, target.optype, target.name)
		}
	}
	if err := s.targets(h.Targets, name); err != nil {
		return nil, err
	}
	return s, nil
}

// targets compiles a Targets element: a regression's rescaling, bounds and
// rounding. Prior probabilities (TargetValue) are refused.
func (s *scope) targets(t *targets, name string) error {
	if t == nil {
		return nil
	}
	for _, tg := range t.Targets {
		if len(tg.TargetValues) > 0 {
			return unsupported("a Target with TargetValue elements (of a " + name + ") is not supported")
		}
		if s.function != "regression" {
			return unsupported("a Target of a " + s.function + " " + name + " is not supported")
		}
		if tg.Field != "" && s.target != nil && tg.Field != s.target.name {
			return invalidf("a Target names the field %q, not the model's target %q", tg.Field, s.target.name)
		}
		mc := s.math
		factor, constant := 1.0, mc.round(tg.RescaleConstant)
		if tg.RescaleFactor != nil {
			factor = mc.round(*tg.RescaleFactor)
		}
		lo, hi := math.Inf(-1), math.Inf(1)
		if tg.Min != nil {
			lo = mc.round(*tg.Min)
		}
		if tg.Max != nil {
			hi = mc.round(*tg.Max)
		}
		var round func(float64) float64
		switch tg.CastInteger {
		case "":
		case "round":
			round = javaRound
		case "ceiling":
			round = math.Ceil
		case "floor":
			round = math.Floor
		default:
			return invalidf("a Target has castInteger %q (round, ceiling or floor)", tg.CastInteger)
		}
		s.factor, s.constant = factor, constant
		s.affine = tg.Min == nil && tg.Max == nil && round == nil
		s.rescale = func(x float64) float64 {
			x = mc.round(mc.round(math.Min(math.Max(x, lo), hi)*factor) + constant)
			if round != nil {
				x = round(x)
			}
			return x
		}
	}
	return nil
}

// classIndex returns the index of class among the target's classes. A
// target that declares its values must list class; one that declares none
// takes its classes from the model, in the order first seen.
func (s *scope) classIndex(class string, where string) (int, error) {
	t := s.target
	if t == nil {
		return 0, invalidf("a classification model has no target field")
	}
	v, ok := t.cast(textValue(class))
	if !ok {
		return 0, invalidf("%s names the class %q, which is not a %s", where, class, t.dataType)
	}
	for i, c := range t.valid {
		cv, _ := t.cast(textValue(c))
		if equalValues(cv, v) {
			return i, nil
		}
	}
	if t.validSet != nil && !t.open {
		return 0, invalidf("%s names the class %q, which the target field %q does not list", where, class, t.name)
	}
	t.open = true
	t.valid = append(t.valid, class)
	t.validSet = setAdd(t.validSet, class)
	return len(t.valid) - 1, nil
}
