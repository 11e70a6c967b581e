package drift_test

import (
	"math"
	"testing"

	"github.com/scorehub/scorehub/registry/process"
)

// num returns a Number column in which NaN marks a missing value.
func num(name string, values ...float64) process.Column {
	return process.NumberColumn(name, values, nil)
}

// text returns a Text column in which "" marks a missing value.
func text(name string, values ...string) process.Column {
	missing := make([]bool, len(values))
	for i, v := range values {
		missing[i] = v == ""
	}
	return process.TextColumn(name, values, missing)
}

func table(t testing.TB, cols ...process.Column) *process.Table {
	t.Helper()
	rows := 0
	if len(cols) > 0 {
		rows = cols[0].Len()
	}
	tab, err := process.NewTable(rows, cols...)
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

var nan = math.NaN()

func numbers(n int, f func(i int) float64) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = f(i)
	}
	return v
}
