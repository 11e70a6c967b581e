package pmml

import (
	"encoding/xml"
	"math"
	"strconv"
	"strings"
)

// clusteringModel is a ClusteringModel element: clusters with their
// centers, and how a row's distance to a center is measured.
type clusteringModel struct {
	modelHeader
	ModelClass          string             `xml:"modelClass,attr"`
	NumberOfClusters    *int               `xml:"numberOfClusters,attr"`
	ComparisonMeasure   *comparisonMeasure `xml:"ComparisonMeasure"`
	ClusteringFields    []*clusteringField `xml:"ClusteringField"`
	MissingValueWeights *unknownElement    `xml:"MissingValueWeights"`
	Clusters            []*cluster         `xml:"Cluster"`
}

// comparisonMeasure names the distance and the default way two values
// compare; the measure is its one child element.
type comparisonMeasure struct {
	Kind            string           `xml:"kind,attr"`
	CompareFunction string           `xml:"compareFunction,attr"`
	Extensions      []unknownElement `xml:"Extension"`
	Measures        []measureMethod  `xml:",any"`
}

// measureMethod is the measure element: euclidean, squaredEuclidean,
// cityBlock, chebychev, minkowski, or one this reader refuses by name.
type measureMethod struct {
	XMLName xml.Name
	P       *float64 `xml:"p-parameter,attr"`
}

// clusteringField is how one field counts in the distance.
type clusteringField struct {
	Field           string          `xml:"field,attr"`
	IsCenterField   string          `xml:"isCenterField,attr"`
	FieldWeight     *float64        `xml:"fieldWeight,attr"`
	SimilarityScale *float64        `xml:"similarityScale,attr"`
	CompareFunction string          `xml:"compareFunction,attr"`
	Comparisons     *unknownElement `xml:"Comparisons"`
}

// cluster is one cluster and its center.
type cluster struct {
	ID    string `xml:"id,attr"`
	Name  string `xml:"name,attr"`
	Array *array `xml:"Array"`
}

// distance is a compiled distance measure.
type distance uint8

const (
	euclidean distance = iota
	squaredEuclidean
	cityBlock
	chebychev
	minkowski
)

// compareFunction compares one value of a row with a center coordinate.
type compareFunction uint8

const (
	absDiff  compareFunction = iota // |x - y|
	gaussSim                        // exp(-ln 2 · (x-y)² / s²)
	delta                           // 0 when equal, else 1
	equal                           // 1 when equal, else 0
)

// parseCompareFunction reads a compareFunction; ok is false for one this
// reader does not support.
func parseCompareFunction(name string) (c compareFunction, ok bool) {
	switch name {
	case "absDiff":
		return absDiff, true
	case "gaussSim":
		return gaussSim, true
	case "delta":
		return delta, true
	case "equal":
		return equal, true
	}
	return 0, false
}

// clusterField is one compiled center field.
type clusterField struct {
	slot    int
	weight  float64
	compare compareFunction
	scale   float64 // gaussSim's similarityScale
}

// clustering is a compiled ClusteringModel of modelClass centerBased.
type clustering struct {
	s       *scope
	fields  []clusterField
	measure distance
	p       float64     // minkowski's p
	centers [][]float64 // by cluster, one coordinate per field
	// labels name each cluster in the answer: its name, else its id, else
	// its 1-based index, as RapidMiner's cluster column names it.
	labels []string
}

// compileClustering checks r against the fields of fs and compiles it.
func compileClustering(r *clusteringModel, fs *fieldSet) (model, error) {
	s, err := fs.enter(&r.modelHeader, "ClusteringModel", "clustering")
	if err != nil {
		return nil, err
	}
	if r.ModelClass != "centerBased" {
		return nil, unsupported("ClusteringModel modelClass " + strconv.Quote(r.ModelClass) + " is not supported (centerBased)")
	}
	if r.MissingValueWeights != nil {
		return nil, unsupported("ClusteringModel MissingValueWeights are not supported")
	}
	cm := r.ComparisonMeasure
	if cm == nil {
		return nil, invalidf("ClusteringModel has no ComparisonMeasure")
	}
	if cm.Kind != "distance" {
		return nil, unsupported("ClusteringModel ComparisonMeasure kind " + strconv.Quote(cm.Kind) + " is not supported (distance)")
	}
	if len(cm.Measures) != 1 {
		return nil, invalidf("ClusteringModel's ComparisonMeasure holds %d measures; it needs one", len(cm.Measures))
	}
	m := &clustering{s: s}
	switch name := cm.Measures[0].XMLName.Local; name {
	case "euclidean":
		m.measure = euclidean
	case "squaredEuclidean":
		m.measure = squaredEuclidean
	case "cityBlock":
		m.measure = cityBlock
	case "chebychev":
		m.measure = chebychev
	case "minkowski":
		p := cm.Measures[0].P
		if p == nil || !(*p >= 1) || math.IsInf(*p, 0) {
			return nil, invalidf("ClusteringModel's minkowski measure needs a finite p-parameter of at least 1")
		}
		m.measure, m.p = minkowski, s.math.round(*p)
	default:
		return nil, unsupported("ClusteringModel measure " + name + " is not supported (euclidean, squaredEuclidean, cityBlock, chebychev or minkowski)")
	}
	fallback := cm.CompareFunction
	if fallback == "" {
		fallback = "absDiff"
	}
	for _, f := range r.ClusteringFields {
		if f.IsCenterField == "false" {
			continue
		}
		if f.Comparisons != nil {
			return nil, unsupported("ClusteringModel's ClusteringField " + f.Field + " holds Comparisons, which are not supported")
		}
		slot, _, ok := s.fs.lookup(f.Field)
		if !ok {
			return nil, invalidf("ClusteringModel's ClusteringField names %q, which is not a field of the model", f.Field)
		}
		cf := clusterField{slot: slot, weight: 1}
		if f.FieldWeight != nil {
			if !(*f.FieldWeight >= 0) || math.IsInf(*f.FieldWeight, 0) {
				return nil, invalidf("ClusteringModel's ClusteringField %q has a negative or infinite fieldWeight", f.Field)
			}
			cf.weight = s.math.round(*f.FieldWeight)
		}
		name := f.CompareFunction
		if name == "" {
			name = fallback
		}
		c, ok := parseCompareFunction(name)
		if !ok {
			return nil, unsupported("ClusteringModel compareFunction " + strconv.Quote(name) + " is not supported (absDiff, gaussSim, delta or equal)")
		}
		cf.compare = c
		if c == gaussSim {
			if f.SimilarityScale == nil || !(*f.SimilarityScale != 0) || math.IsInf(*f.SimilarityScale, 0) {
				return nil, invalidf("ClusteringModel's ClusteringField %q compares with gaussSim but has no similarityScale", f.Field)
			}
			cf.scale = s.math.round(*f.SimilarityScale)
		}
		m.fields = append(m.fields, cf)
	}
	if len(m.fields) == 0 {
		return nil, invalidf("ClusteringModel has no center field")
	}
	if len(r.Clusters) == 0 {
		return nil, invalidf("ClusteringModel has no Cluster")
	}
	if r.NumberOfClusters != nil && *r.NumberOfClusters != len(r.Clusters) {
		return nil, invalidf("ClusteringModel says numberOfClusters=%d but holds %d Clusters", *r.NumberOfClusters, len(r.Clusters))
	}
	for i, c := range r.Clusters {
		ix := strconv.Itoa(i + 1)
		id := c.ID
		if id == "" {
			id = ix
		}
		label := c.Name
		if label == "" {
			label = id
		}
		if c.Array == nil {
			return nil, invalidf("ClusteringModel's Cluster %s has no Array of center coordinates", label)
		}
		center, err := numberArray(c.Array)
		if err != nil {
			return nil, invalidf("ClusteringModel's Cluster %s: %s", label, err)
		}
		if len(center) != len(m.fields) {
			return nil, invalidf("ClusteringModel's Cluster %s has %d center coordinates for %d center fields", label, len(center), len(m.fields))
		}
		for k := range center {
			center[k] = s.math.round(center[k])
		}
		m.centers = append(m.centers, center)
		m.labels = append(m.labels, label)
	}
	return m, nil
}

// numberArray reads an Array of numbers, checking its n.
func numberArray(a *array) ([]float64, error) {
	switch a.Type {
	case "real", "int", "REAL", "INT":
	default:
		return nil, invalidf("the Array is of type %q, not real or int", a.Type)
	}
	words := strings.Fields(a.Text)
	if a.N != nil && *a.N != len(words) {
		return nil, invalidf("the Array says n=%d but holds %d numbers", *a.N, len(words))
	}
	out := make([]float64, len(words))
	for i, w := range words {
		f, err := strconv.ParseFloat(strings.Trim(w, `"`), 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, invalidf("the Array's value %q is not a finite number", w)
		}
		out[i] = f
	}
	return out, nil
}

func (m *clustering) predict(in []value, out *prediction) error {
	if err := m.s.prepare(in); err != nil {
		return err
	}
	best, bestD := -1, math.Inf(1)
	for c, center := range m.centers {
		d, ok := m.distance(in, center)
		if !ok {
			out.value = value{}
			return nil
		}
		if d < bestD {
			best, bestD = c, d
		}
	}
	if best < 0 {
		out.value = value{}
		return nil
	}
	out.value = textValue(m.labels[best])
	out.entity = m.labels[best]
	out.entityIndex = best + 1
	return nil
}

// distance is the measure from the row's values to center. A missing
// value leaves its field out, and the sum of the others is scaled up by
// the share of the weight left out, as the spec's missing value
// adjustment with unit weights does; no value at all means no answer.
func (m *clustering) distance(in []value, center []float64) (float64, bool) {
	mc := m.s.math
	var sum, all, present float64
	for i := range m.fields {
		f := &m.fields[i]
		all++
		x, ok := in[f.slot].asNumber()
		if !ok {
			continue
		}
		present++
		c := f.compareValues(mc.round(x), center[i], mc)
		switch m.measure {
		case euclidean, squaredEuclidean:
			sum = mc.round(sum + mc.round(mc.round(f.weight*c)*c))
		case cityBlock:
			sum = mc.round(sum + mc.round(f.weight*math.Abs(c)))
		case chebychev:
			sum = max(sum, mc.round(f.weight*math.Abs(c)))
		case minkowski:
			sum = mc.round(sum + mc.round(f.weight*mc.round(math.Pow(math.Abs(c), m.p))))
		}
	}
	if present == 0 {
		return 0, false
	}
	if m.measure != chebychev {
		sum = mc.round(sum * mc.round(all/present))
	}
	switch m.measure {
	case euclidean:
		return mc.round(math.Sqrt(sum)), true
	case minkowski:
		return mc.round(math.Pow(sum, mc.round(1/m.p))), true
	}
	return sum, true
}

// compareValues is f's compare function of x and y, in mc's arithmetic.
func (f *clusterField) compareValues(x, y float64, mc mathContext) float64 {
	switch f.compare {
	case gaussSim:
		d := mc.round(x - y)
		return mc.round(math.Exp(mc.round(mc.round(mc.round(mc.round(-math.Ln2)*d)*d) / mc.round(f.scale*f.scale))))
	case delta:
		if x == y {
			return 0
		}
		return 1
	case equal:
		if x == y {
			return 1
		}
		return 0
	}
	return mc.round(x - y)
}
