package lightgbm

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scorehub/scorehub/registry/process"
)

func ptr(v float64) *float64 { return &v }

// TestDomains: the schema declares what feature_infos records of each
// feature, under the names requests use.
func TestDomains(t *testing.T) {
	withInfos := func(infos string) string {
		return strings.Replace(small, "feature_infos=[0:10] 1:33:2", "feature_infos="+infos, 1)
	}
	tests := []struct {
		name string
		text string
		meta process.ModelMetadata
		want []process.Domain
	}{
		{
			name: "a range and category codes",
			text: small,
			want: []process.Domain{{Name: "a", Min: ptr(0), Max: ptr(10)}, {Name: "b", Numbers: []float64{1, 33, 2}}},
		},
		{
			name: "renamed by the metadata",
			text: small,
			meta: process.ModelMetadata{Features: []string{"age", "shop"}},
			want: []process.Domain{{Name: "age", Min: ptr(0), Max: ptr(10)}, {Name: "shop", Numbers: []float64{1, 33, 2}}},
		},
		{
			// -1 is where LightGBM bins missing categories: no request's
			// category.
			name: "an unused feature declares nothing; -1 is no category",
			text: withInfos("none -1:4:2"),
			want: []process.Domain{{Name: "b", Numbers: []float64{4, 2}}},
		},
		{
			name: "a constant feature",
			text: withInfos("[-1.5:-1.5] 7"),
			want: []process.Domain{{Name: "a", Min: ptr(-1.5), Max: ptr(-1.5)}, {Name: "b", Numbers: []float64{7}}},
		},
		{
			name: "a range that does not parse declares nothing",
			text: withInfos("[0:x] 1:2"),
			want: []process.Domain{{Name: "b", Numbers: []float64{1, 2}}},
		},
		{
			name: "a range backwards declares nothing",
			text: withInfos("[3:1] 1:2"),
			want: []process.Domain{{Name: "b", Numbers: []float64{1, 2}}},
		},
		{
			// Codes 1 and 2 in feature_infos' order, 33 beyond the list,
			// then the category training never binned.
			name: "pandas names, binned ones first",
			text: small + "\npandas_categorical:[[\"zero\", \"one\", \"two\"]]\n",
			want: []process.Domain{{Name: "a", Min: ptr(0), Max: ptr(10)}, {Name: "b", Values: []string{"one", "two", "zero"}}},
		},
		{
			name: "nothing declared",
			text: withInfos("none none"),
			want: nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lm, err := Format{}.Load([]byte(tt.text), tt.meta)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, lm.Schema.Domains); diff != "" {
				t.Errorf("domains (-want +got):\n%s", diff)
			}
		})
	}
}

// TestFixtureDomains: the fixtures LightGBM wrote declare their training
// ranges, and their categories most frequent first, as feature_infos
// lists them.
func TestFixtureDomains(t *testing.T) {
	codes := []float64{24, 35, 28, 8, 15, 20, 30, 34, 7, 9, 10, 13, 19, 27, 1, 6, 18, 23, 32, 36, 38, 3, 4, 25, 26, 39, 2, 16, 17, 22, 31, 33, 37, 0, 12, 29, 11, 5, 14, 21}
	names := make([]string, len(codes))
	for i, c := range codes {
		names[i] = fmt.Sprintf("shop_%02d", int(c))
	}
	ranges := []process.Domain{
		{Name: "x1", Min: ptr(-2.8244940202379314), Max: ptr(3.193423156327079)},
		{Name: "x2", Min: ptr(-0.99821881229346698), Max: ptr(0.99841956104251084)},
	}
	tests := []struct {
		fixture string
		want    []process.Domain
	}{
		{"categorical", append([]process.Domain{{Name: "shop", Numbers: codes}}, ranges...)},
		{"categorical_pandas", append([]process.Domain{{Name: "shop", Values: names}}, ranges...)},
		{"multiclass", []process.Domain{
			{Name: "sepal_length", Min: ptr(4.2999999999999998), Max: ptr(7.9000000000000004)},
			{Name: "sepal_width", Min: ptr(2), Max: ptr(4.4000000000000004)},
			{Name: "petal_length", Min: ptr(1), Max: ptr(6.9000000000000004)},
			{Name: "petal_width", Min: ptr(0.10000000000000001), Max: ptr(2.5)},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			_, lm := loadFixture(t, "testdata", tt.fixture)
			if diff := cmp.Diff(tt.want, lm.Schema.Domains); diff != "" {
				t.Errorf("domains (-want +got):\n%s", diff)
			}
		})
	}
}
