package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Targets of an endpoint that measures its drift against the same
// endpoint with its monitor off (issue 40): at 1 row, at least this share
// of its requests per second; at cfg.Large rows, one request at a time,
// at most this many times its wall time per request.
const (
	monitorTargetRatio = 0.9
	monitorLargeTarget = 1.15
)

// monitorReferenceFile is the reference -monitor uploads the model with,
// under the module's directory: the demo's iris data, CSV whose header
// names the model's four features and species, the label, which the
// reference's profile leaves out.
const monitorReferenceFile = "internal/demo/iris.csv"

// driftReference is the reference the monitor of the endpoint -monitor
// measures counts its rows against, as the upload answered it.
type driftReference struct {
	Rows       int64    `json:"rows"`
	Features   []string `json:"features"`
	Prediction string   `json:"prediction,omitempty"`
}

// deployMonitored uploads the model file under moduleDir once, with the
// reference file under moduleDir as its reference rows, and deploys, in
// the group and under the prefix of the endpoint at path, the endpoints
// monitored, with no monitor member (its monitor on, with the defaults),
// and unmonitored, with its monitor off; on the server at base, logged
// in as the admin with adminPassword. On an error it deletes what it
// made.
func deployMonitored(ctx context.Context, c *http.Client, base, path, moduleDir, adminPassword string) (*pair, error) {
	reference, err := os.ReadFile(filepath.Join(moduleDir, monitorReferenceFile))
	if err != nil {
		return nil, fmt.Errorf("loadtest: -monitor uploads %s of the scorehub module (-module) as the model's reference: %w", monitorReferenceFile, err)
	}
	return deployPair(ctx, c, base, path, moduleDir, adminPassword, pairSpec{
		flag: "-monitor", names: [2]string{"monitored", "unmonitored"}, rpsTarget: monitorTargetRatio, wallTarget: monitorLargeTarget,
		endpoints: func(ctx context.Context, p *pair, artifact []byte) ([2]map[string]any, error) {
			ref, v, err := p.upload(ctx, artifact, "monitored and not", reference)
			if err != nil {
				return [2]map[string]any{}, err
			}
			if p.monitor, err = checkReference(v); err != nil {
				return [2]map[string]any{}, err
			}
			p.model = ref
			return [2]map[string]any{{"model": ref}, {"model": ref, "monitor": false}}, nil
		},
	})
}

// checkReference returns the reference of the version v, which must be
// profiled from the reference rows and of every input of the model: else
// the monitor would count fewer columns than a real reference has it
// count.
func checkReference(v uploaded) (*driftReference, error) {
	inputs := make([]string, len(v.Inputs))
	for i, in := range v.Inputs {
		inputs[i] = in.Name
	}
	r := v.Reference
	switch {
	case r == nil:
		return nil, fmt.Errorf("loadtest: the model uploaded with %s has no reference", monitorReferenceFile)
	case r.Declared || r.Rows == 0:
		return nil, fmt.Errorf("loadtest: the reference of the model uploaded with %s is not profiled from its rows", monitorReferenceFile)
	case !slices.Equal(slices.Sorted(slices.Values(r.Features)), slices.Sorted(slices.Values(inputs))):
		return nil, fmt.Errorf("loadtest: the reference rows of %s profile %s; the model reads %s",
			monitorReferenceFile, strings.Join(r.Features, ", "), strings.Join(inputs, ", "))
	}
	return &driftReference{Rows: r.Rows, Features: r.Features, Prediction: r.Prediction}, nil
}

// driftFigures is what GET …/drift answers of the endpoint -monitor
// measures, read after the run.
type driftFigures struct {
	// Rows counts the rows measured: those scored within Window, the
	// newest MaxRows at most, so that a run that scores more shows
	// MaxRows.
	Rows    int64  `json:"rows"`
	Window  string `json:"window"`
	MaxRows int    `json:"maxRows"`
	// Features is how many of the model's inputs are measured;
	// Prediction whether its answers are too.
	Features   int  `json:"features"`
	Prediction bool `json:"prediction"`
}

// drift reads what the monitor of p's endpoint measured counted, and
// checks that its ceiling's counted nothing.
func (p *pair) drift(ctx context.Context) (*driftFigures, error) {
	var v struct {
		Rows       int64      `json:"rows"`
		Window     string     `json:"window"`
		MaxRows    int        `json:"maxRows"`
		Features   []struct{} `json:"features"`
		Prediction *struct{}  `json:"prediction"`
	}
	if err := p.get(ctx, p.endpoint(0)+"/drift", &v); err != nil {
		return nil, err
	}
	var se *statusError
	switch err := p.get(ctx, p.endpoint(1)+"/drift", nil); {
	case errors.As(err, &se) && se.status == http.StatusNotFound:
	case err != nil:
		return nil, err
	default:
		return nil, fmt.Errorf("loadtest: GET %s/drift answered figures: the monitor of %s is not off", p.endpoint(1), p.names[1])
	}
	return &driftFigures{Rows: v.Rows, Window: v.Window, MaxRows: v.MaxRows, Features: len(v.Features),
		Prediction: v.Prediction != nil}, nil
}

// writeDrift writes what the monitor counted for people.
func (r *pairReport) writeDrift(w io.Writer) {
	d := r.Drift
	what := fmt.Sprintf("%d inputs", d.Features)
	if d.Prediction {
		what += " and the prediction"
	}
	fmt.Fprintf(w, "\n%s drift after the run: %d rows measured (the newest within %s, at most %d) of %s, against a reference of %d rows; %s drift: not measured, its monitor off\n",
		r.Measured, d.Rows, d.Window, d.MaxRows, what, r.Reference.Rows, r.Ceiling)
}
