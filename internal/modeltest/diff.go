package modeltest

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// A Difference is a value where a document differs from the one it is
// compared with.
type Difference struct {
	// Path is where the value is: object keys after "/", list indexes in
	// brackets, as in /learner/gradient_booster/model/trees[3]/split_conditions[17].
	Path string
	// Want and Got describe the value in the committed document and in
	// the new one.
	Want, Got string
}

func (d Difference) String() string { return d.Path + ": want " + d.Want + ", got " + d.Got }

// Compare returns where the decoded document got differs from want, in
// path order. A document is made of:
//
//   - map[string]any, an object, whose keys must be the same;
//   - []any, a list, of the same length and in the same order;
//   - string, bool and nil, equal exactly;
//   - int64, an integer (a count, an index, a feature number, a type), equal
//     exactly;
//   - float32 and float64, within [Tolerance] as [Close] says;
//   - json.Number, a number as the file spells it: two integers (digits
//     alone) must be equal, any other two within [Tolerance].
//
// So the structure of a model (its graph or trees, feature indices,
// labels, the names of everything) must be the same, and its real numbers
// may differ in the last digits that another build of the training
// library computes differently.
func Compare(want, got any) []Difference {
	var c comparer
	c.walk("", want, got)
	return c.diffs
}

type comparer struct{ diffs []Difference }

func (c *comparer) differ(path string, want, got any) {
	c.diffs = append(c.diffs, Difference{Path: path, Want: describe(want), Got: describe(got)})
}

func (c *comparer) walk(path string, want, got any) {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			c.differ(path, want, got)
			return
		}
		keys := slices.Collect(maps.Keys(w))
		for k := range g {
			if _, ok := w[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.SortFunc(keys, compareKeys)
		for _, k := range keys {
			wv, inWant := w[k]
			gv, inGot := g[k]
			switch {
			case !inWant:
				c.diffs = append(c.diffs, Difference{Path: path + "/" + k, Want: "nothing", Got: describe(gv)})
			case !inGot:
				c.diffs = append(c.diffs, Difference{Path: path + "/" + k, Want: describe(wv), Got: "nothing"})
			default:
				c.walk(path+"/"+k, wv, gv)
			}
		}
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			c.differ(path, want, got)
			return
		}
		for i := range w {
			c.walk(fmt.Sprintf("%s[%d]", path, i), w[i], g[i])
		}
	case json.Number:
		if g, ok := got.(json.Number); !ok || !sameNumber(w, g) {
			c.differ(path, want, got)
		}
	case float64:
		if g, ok := got.(float64); !ok || !Close(w, g) {
			c.differ(path, want, got)
		}
	case float32:
		if g, ok := got.(float32); !ok || !Close(float64(w), float64(g)) {
			c.differ(path, want, got)
		}
	case string, bool, int64, nil:
		if want != got {
			c.differ(path, want, got)
		}
	default:
		c.diffs = append(c.diffs, Difference{Path: path, Want: fmt.Sprintf("a value Compare reads, not %T", want), Got: describe(got)})
	}
}

// compareKeys orders keys as text, but an index in brackets at the end by
// its number, so that Node[2] comes before Node[10].
func compareKeys(a, b string) int {
	pa, ia := splitIndex(a)
	pb, ib := splitIndex(b)
	return cmp.Or(strings.Compare(pa, pb), cmp.Compare(ia, ib), strings.Compare(a, b))
}

func splitIndex(k string) (string, int) {
	open := strings.LastIndexByte(k, '[')
	if open < 0 || !strings.HasSuffix(k, "]") {
		return k, -1
	}
	i, err := strconv.Atoi(k[open+1 : len(k)-1])
	if err != nil {
		return k, -1
	}
	return k[:open], i
}

// integer matches a number written as an integer.
var integer = regexp.MustCompile(`^-?[0-9]+$`)

func sameNumber(a, b json.Number) bool {
	if a == b {
		return true
	}
	if integer.MatchString(string(a)) && integer.MatchString(string(b)) {
		x, errX := a.Int64()
		y, errY := b.Int64()
		return errX == nil && errY == nil && x == y
	}
	x, errX := a.Float64()
	y, errY := b.Float64()
	return errX == nil && errY == nil && Close(x, y)
}

// describe says what v is in a difference's message: a value itself, or
// the kind and size of a container.
func describe(v any) string {
	switch v := v.(type) {
	case map[string]any:
		return fmt.Sprintf("an object of %d keys", len(v))
	case []any:
		return fmt.Sprintf("a list of %d", len(v))
	case string:
		return strconv.Quote(v)
	case float32:
		return strconv.FormatFloat(float64(v), 'g', -1, 32)
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	case nil:
		return "null"
	}
	return fmt.Sprint(v)
}
