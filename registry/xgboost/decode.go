package xgboost

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/scorehub/scorehub/registry/process"
)

// file is a model file as read, before it is checked: the fields of
// XGBoost's schema that scoring needs, typed. Both formats decode into it.
type file struct {
	version      []int64
	featureNames []string
	featureTypes []string
	baseScore    []float32
	numClass     int64
	numFeature   int64
	numTarget    int64
	objective    string
	booster      string // gbtree, dart, gblinear, …
	trees        []rawTree
	treeInfo     []int64
	weightDrop   []float32
	numParallel  int64
	indptr       []int64
	haveTrees    bool
	weights      []float32 // gblinear's
}

// rawTree is one tree's arrays as the file holds them.
type rawTree struct {
	left, right  []int32
	splitIndex   []int32
	cond         []float32
	defaultLeft  []bool
	splitType    []uint8
	catNodes     []int32
	catSegments  []int64
	catSizes     []int64
	cats         []int32
	hess         []float32 // sum_hessian: each node's cover
	numNodes     int64     // tree_param.num_nodes; -1 when absent
	leafVector   int64     // tree_param.size_leaf_vector
	haveNumNodes bool
}

// walker turns the values a reader pulls into a file, under the limits.
type walker struct {
	r   reader
	lim Limits
}

// invalid is an error for a file that is not a valid model.
func invalid(format string, args ...any) error {
	return process.ModelErrorf(process.ErrModelInvalid, format, args...)
}

// wrap turns a reader's error into one naming where in the model it was.
func (w *walker) wrap(path string, err error) error {
	if err == nil {
		return nil
	}
	if _, ok := err.(*syntaxError); ok {
		return invalid("%s (reading %s)", err.Error(), path)
	}
	return err
}

// expect checks the kind of the next value.
func (w *walker) expect(path string, want kind) error {
	k, err := w.r.peek()
	if err != nil {
		return w.wrap(path, err)
	}
	if k != want {
		return invalid("%s is %s, not %s", path, k, want)
	}
	return nil
}

// object reads an object, calling field for each key; field must read or
// skip the value.
func (w *walker) object(path string, field func(key string) error) error {
	if err := w.expect(path, kindObject); err != nil {
		return err
	}
	if err := w.r.beginObject(); err != nil {
		return w.wrap(path, err)
	}
	// A repeated key would leave it to chance which value XGBoost reads.
	var seen []string
	for {
		k, ok, err := w.r.key()
		if err != nil {
			return w.wrap(path, err)
		}
		if !ok {
			return nil
		}
		key := string(k)
		if slices.Contains(seen, key) {
			return invalid("%s has the key %q twice", path, key)
		}
		seen = append(seen, key)
		if err := field(key); err != nil {
			return err
		}
	}
}

// array reads an array of at most max elements, calling elem for each.
// over reports the error for an array longer than max.
func (w *walker) array(path string, max int, over func(n int) error, elem func(i int) error) error {
	if err := w.expect(path, kindArray); err != nil {
		return err
	}
	n, err := w.r.beginArray()
	if err != nil {
		return w.wrap(path, err)
	}
	if n > max {
		return over(n)
	}
	for i := 0; ; i++ {
		ok, err := w.r.more()
		if err != nil {
			return w.wrap(path, err)
		}
		if !ok {
			return nil
		}
		if i >= max {
			return over(i + 1)
		}
		if err := elem(i); err != nil {
			return err
		}
	}
}

// skip skips a value.
func (w *walker) skip(path string) error { return w.wrap(path, w.r.skip()) }

// maxList bounds the small lists of a file (version, base_score) that no
// limit names.
const maxList = 1 << 16

func (w *walker) tooLong(path string, max int) func(int) error {
	return func(n int) error {
		return invalid("%s has %d or more elements, more than the %d it can have", path, n, max)
	}
}

// ints reads an array of integers.
func (w *walker) ints(path string, max int, over func(int) error) ([]int64, error) {
	var out []int64
	err := w.array(path, max, over, func(int) error {
		v, err := w.r.int()
		if err != nil {
			return w.wrap(path, err)
		}
		out = append(out, v)
		return nil
	})
	return out, err
}

// int32s reads an array of integers that fit in 32 bits.
func (w *walker) int32s(path string, max int, over func(int) error) ([]int32, error) {
	var out []int32
	err := w.array(path, max, over, func(i int) error {
		v, err := w.r.int()
		if err != nil {
			return w.wrap(path, err)
		}
		if v < -1<<31 || v >= 1<<32 {
			return invalid("%s[%d] is %d, out of range", path, i, v)
		}
		// XGBoost keeps split indices unsigned: reinterpret, as it does.
		out = append(out, int32(uint32(v)))
		return nil
	})
	return out, err
}

// float32s reads an array of numbers as float32.
func (w *walker) float32s(path string, max int, over func(int) error) ([]float32, error) {
	var out []float32
	err := w.array(path, max, over, func(int) error {
		v, err := w.r.float32()
		if err != nil {
			return w.wrap(path, err)
		}
		out = append(out, v)
		return nil
	})
	return out, err
}

// strings reads an array of strings.
func (w *walker) strings(path string, max int, over func(int) error) ([]string, error) {
	var out []string
	err := w.array(path, max, over, func(i int) error {
		if err := w.expect(fmt.Sprintf("%s[%d]", path, i), kindString); err != nil {
			return err
		}
		s, err := w.r.str()
		if err != nil {
			return w.wrap(path, err)
		}
		out = append(out, s)
		return nil
	})
	return out, err
}

// param reads an integer parameter: XGBoost writes them as strings ("3"),
// older or hand-made files as numbers.
func (w *walker) param(path string) (int64, error) {
	k, err := w.r.peek()
	if err != nil {
		return 0, w.wrap(path, err)
	}
	switch k {
	case kindNumber:
		v, err := w.r.int()
		return v, w.wrap(path, err)
	case kindString:
		s, err := w.r.str()
		if err != nil {
			return 0, w.wrap(path, err)
		}
		v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil {
			return 0, invalid("%s is %q, not an integer", path, s)
		}
		return v, nil
	}
	return 0, invalid("%s is %s, not an integer", path, k)
}

// decode reads a whole model file.
func (w *walker) decode() (*file, error) {
	f := &file{numTarget: 1, numParallel: 1}
	seenLearner := false
	err := w.object("the file", func(k string) error {
		switch k {
		case "learner":
			seenLearner = true
			return w.learner(f)
		case "version":
			v, err := w.ints("version", maxList, w.tooLong("version", maxList))
			f.version = v
			return err
		}
		return w.skip(k)
	})
	if err != nil {
		return nil, err
	}
	if err := w.r.end(); err != nil {
		return nil, w.wrap("the end of the file", err)
	}
	if !seenLearner {
		return nil, invalid("the file has no \"learner\": it is not an XGBoost model")
	}
	return f, nil
}

func (w *walker) learner(f *file) error {
	return w.object("learner", func(k string) error {
		var err error
		switch k {
		case "feature_names":
			f.featureNames, err = w.strings("learner.feature_names", w.lim.MaxFeatures, w.featureLimit)
		case "feature_types":
			f.featureTypes, err = w.strings("learner.feature_types", w.lim.MaxFeatures, w.featureLimit)
		case "learner_model_param":
			err = w.modelParam(f)
		case "objective":
			err = w.object("learner.objective", func(k string) error {
				if k != "name" {
					return w.skip("learner.objective." + k)
				}
				if err := w.expect("learner.objective.name", kindString); err != nil {
					return err
				}
				s, err := w.r.str()
				f.objective = s
				return w.wrap("learner.objective.name", err)
			})
		case "gradient_booster":
			err = w.booster("learner.gradient_booster", f)
		default:
			err = w.skip("learner." + k)
		}
		return err
	})
}

func (w *walker) featureLimit(n int) error {
	return process.ModelErrorf(process.ErrModelLimit,
		"the model has %d or more features, more than the limit of %d", n, w.lim.MaxFeatures)
}

func (w *walker) modelParam(f *file) error {
	const p = "learner.learner_model_param"
	return w.object(p, func(k string) error {
		var err error
		switch k {
		case "base_score":
			f.baseScore, err = w.baseScore(p + ".base_score")
		case "num_class":
			f.numClass, err = w.param(p + ".num_class")
		case "num_feature":
			f.numFeature, err = w.param(p + ".num_feature")
		case "num_target":
			f.numTarget, err = w.param(p + ".num_target")
		default:
			err = w.skip(p + "." + k)
		}
		return err
	})
}

// baseScore reads base_score in each form XGBoost has written it: a string
// holding a number ("5E-1"), a number, a list of numbers, or a string
// holding a list ("[5E-1]", 3.1).
func (w *walker) baseScore(path string) ([]float32, error) {
	k, err := w.r.peek()
	if err != nil {
		return nil, w.wrap(path, err)
	}
	switch k {
	case kindNumber:
		v, err := w.r.float32()
		return []float32{v}, w.wrap(path, err)
	case kindArray:
		return w.float32s(path, maxList, w.tooLong(path, maxList))
	case kindString:
		s, err := w.r.str()
		if err != nil {
			return nil, w.wrap(path, err)
		}
		t := strings.TrimSpace(s)
		list := strings.HasPrefix(t, "[") && strings.HasSuffix(t, "]")
		if list {
			t = t[1 : len(t)-1]
		}
		var out []float32
		for _, e := range strings.Split(t, ",") {
			e = strings.TrimSpace(e)
			v, err := strconv.ParseFloat(e, 32)
			if err != nil || !isJSONNumber([]byte(strings.TrimPrefix(e, "+"))) {
				return nil, invalid("%s is %q, not a number or a list of numbers", path, s)
			}
			out = append(out, float32(v))
			if !list {
				break
			}
		}
		if !list && strings.Contains(t, ",") {
			return nil, invalid("%s is %q, not a number or a list of numbers", path, s)
		}
		return out, nil
	}
	return nil, invalid("%s is %s, not a number", path, k)
}

// booster reads gradient_booster: gbtree's {name, model}, dart's {name,
// gbtree: {name, model}, weight_drop}, or another booster's name.
func (w *walker) booster(path string, f *file) error {
	return w.object(path, func(k string) error {
		switch k {
		case "name":
			if err := w.expect(path+".name", kindString); err != nil {
				return err
			}
			s, err := w.r.str()
			if f.booster == "" {
				f.booster = s
			}
			return w.wrap(path+".name", err)
		case "model":
			return w.treeModel(path+".model", f)
		case "gbtree":
			// dart: the trees are a gbtree's, inside.
			inner := &file{}
			err := w.booster(path+".gbtree", inner)
			if err != nil {
				return err
			}
			if inner.booster != "gbtree" {
				return invalid("%s.gbtree.name is %q, not \"gbtree\"", path, inner.booster)
			}
			f.trees, f.treeInfo, f.numParallel, f.indptr, f.haveTrees = inner.trees, inner.treeInfo, inner.numParallel, inner.indptr, inner.haveTrees
			if inner.weightDrop != nil {
				f.weightDrop = inner.weightDrop
			}
			return nil
		case "weight_drop":
			// dart's tree weights: beside its gbtree (XGBoost 1.0 to 3.2),
			// or beside the model of a gbtree that holds them (3.3).
			v, err := w.float32s(path+".weight_drop", w.lim.MaxTrees, w.treeLimit)
			if f.weightDrop == nil {
				f.weightDrop = v
			}
			return err
		}
		return w.skip(path + "." + k)
	})
}

func (w *walker) treeLimit(n int) error {
	return process.ModelErrorf(process.ErrModelLimit,
		"the model has %d or more trees, more than the limit of %d", n, w.lim.MaxTrees)
}

// treeModel reads a gbtree's model: its trees, tree_info and parameters.
func (w *walker) treeModel(path string, f *file) error {
	f.numParallel = 1
	return w.object(path, func(k string) error {
		var err error
		switch k {
		case "trees":
			f.haveTrees = true
			err = w.array(path+".trees", w.lim.MaxTrees, w.treeLimit, func(i int) error {
				t, err := w.tree(fmt.Sprintf("tree %d", i))
				if err == nil {
					f.trees = append(f.trees, t)
				}
				return err
			})
		case "tree_info":
			f.treeInfo, err = w.ints(path+".tree_info", w.lim.MaxTrees, w.treeLimit)
		case "weights":
			// gblinear's: (features+1) × classes.
			max := (w.lim.MaxFeatures + 1) * w.lim.MaxClasses
			f.weights, err = w.float32s(path+".weights", max, w.tooLong(path+".weights", max))
		case "weight_drop":
			// dart's tree weights, here since XGBoost 3.4.
			f.weightDrop, err = w.float32s(path+".weight_drop", w.lim.MaxTrees, w.treeLimit)
		case "iteration_indptr":
			f.indptr, err = w.ints(path+".iteration_indptr", w.lim.MaxTrees+1, w.treeLimit)
		case "gbtree_model_param":
			err = w.object(path+".gbtree_model_param", func(k string) error {
				if k != "num_parallel_tree" {
					return w.skip(path + ".gbtree_model_param." + k)
				}
				var err error
				f.numParallel, err = w.param(path + ".gbtree_model_param.num_parallel_tree")
				return err
			})
		default:
			err = w.skip(path + "." + k)
		}
		return err
	})
}

// tree reads one tree; name is "tree <i>" for messages.
func (w *walker) tree(name string) (rawTree, error) {
	t := rawTree{numNodes: -1}
	over := func(n int) error {
		return process.ModelErrorf(process.ErrModelLimit,
			"%s has %d or more nodes, more than the limit of %d", name, n, w.lim.MaxNodes)
	}
	max := w.lim.MaxNodes
	err := w.object(name, func(k string) error {
		p := name + " " + k
		var err error
		switch k {
		case "left_children":
			t.left, err = w.int32s(p, max, over)
		case "right_children":
			t.right, err = w.int32s(p, max, over)
		case "split_indices":
			t.splitIndex, err = w.int32s(p, max, over)
		case "split_conditions":
			t.cond, err = w.float32s(p, max, over)
		case "sum_hessian":
			t.hess, err = w.float32s(p, max, over)
		case "default_left":
			err = w.array(p, max, over, func(i int) error {
				k, err := w.r.peek()
				if err != nil {
					return w.wrap(p, err)
				}
				var v bool
				if k == kindBool {
					v, err = w.r.bool()
				} else {
					var n int64
					n, err = w.r.int()
					if err == nil && n != 0 && n != 1 {
						return invalid("%s[%d] is %d, not 0 or 1", p, i, n)
					}
					v = n == 1
				}
				t.defaultLeft = append(t.defaultLeft, v)
				return w.wrap(p, err)
			})
		case "split_type":
			err = w.array(p, max, over, func(i int) error {
				n, err := w.r.int()
				if err != nil {
					return w.wrap(p, err)
				}
				if n != 0 && n != 1 {
					return invalid("%s node %d has split type %d; this reader knows 0 (numerical) and 1 (categorical)", name, i, n)
				}
				t.splitType = append(t.splitType, uint8(n))
				return nil
			})
		case "categories_nodes":
			t.catNodes, err = w.int32s(p, max, over)
		case "categories_segments":
			t.catSegments, err = w.ints(p, max, over)
		case "categories_sizes":
			t.catSizes, err = w.ints(p, max, over)
		case "categories":
			// Bounded by the file's size only: categories are values.
			t.cats, err = w.int32s(p, 1<<30, w.tooLong(p, 1<<30))
		case "tree_param":
			err = w.object(p, func(k string) error {
				var err error
				switch k {
				case "num_nodes":
					t.numNodes, err = w.param(p + ".num_nodes")
					t.haveNumNodes = true
				case "size_leaf_vector":
					t.leafVector, err = w.param(p + ".size_leaf_vector")
				default:
					err = w.skip(p + "." + k)
				}
				return err
			})
		default:
			err = w.skip(p)
		}
		return err
	})
	return t, err
}
