package management

import (
	"errors"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/scorehub/scorehub/problem"
	"github.com/scorehub/scorehub/registry"
)

// monitorJSON is an endpoint's drift measure (registry.Monitor) as an
// object; the member monitor is also false, the measure off, or true, the
// defaults.
type monitorJSON struct {
	Window        string `json:"window"`
	MaxRows       int64  `json:"maxRows"`
	MaxFeatures   int    `json:"maxFeatures"`
	FeatureSeries bool   `json:"featureSeries"`

	Unknown map[string]jsontext.Value `json:",unknown"`
}

// monitorView is the member monitor of an endpoint: absent when it sets
// none, false when it is off, else its settings with the defaults.
func monitorView(m *registry.Monitor) jsontext.Value {
	if m == nil {
		return nil
	}
	if m.Off {
		return jsontext.Value("false")
	}
	s := m.Settings()
	b, err := json.Marshal(monitorJSON{Window: shortDuration(s.Window), MaxRows: s.MaxRows, MaxFeatures: s.MaxFeatures, FeatureSeries: s.FeatureSeries})
	if err != nil {
		panic(err) // a struct of strings, numbers and a bool
	}
	return b
}

// readMonitor reads the member monitor of the endpoint at pointer p:
// absent or null is nil, false off, true the defaults, an object the
// settings it gives. The faults are returned to list with the others.
func readMonitor(raw jsontext.Value, p string) (*registry.Monitor, []problem.FieldError) {
	p += "/monitor"
	switch raw.Kind() {
	case 0, 'n':
		return nil, nil
	case 'f':
		return &registry.Monitor{Off: true}, nil
	case 't':
		return &registry.Monitor{}, nil
	case '{':
	default:
		return nil, []problem.FieldError{{Pointer: p, Message: `must be false (no drift measure), true (the defaults) or an object of "window", "maxRows", "maxFeatures" and "featureSeries"`}}
	}
	var in monitorJSON
	if err := json.Unmarshal(raw, &in); err != nil {
		var sem *json.SemanticError
		if errors.As(err, &sem) {
			return nil, []problem.FieldError{{Pointer: p + string(sem.JSONPointer), Message: typeMessage(sem)}}
		}
		return nil, []problem.FieldError{{Pointer: p, Message: "must be an object"}}
	}
	faults := unknownMembers(p, in.Unknown)
	m := &registry.Monitor{MaxRows: in.MaxRows, MaxFeatures: in.MaxFeatures, FeatureSeries: in.FeatureSeries}
	if in.Window != "" {
		d, err := time.ParseDuration(in.Window)
		if err != nil || d <= 0 {
			faults = append(faults, problem.FieldError{Pointer: p + "/window", Message: `must be a duration such as "1h" or "30m"`})
		}
		m.Window = d
	}
	return m, faults
}

// payloadLogJSON is an endpoint's payload log (registry.PayloadLog).
type payloadLogJSON struct {
	Rate   float64  `json:"rate"`
	Redact []string `json:"redact"`

	Unknown map[string]jsontext.Value `json:",unknown" validate:"-"`
}

func payloadLogView(l *registry.PayloadLog) *payloadLogJSON {
	if l == nil {
		return nil
	}
	v := &payloadLogJSON{Rate: l.Rate, Redact: l.Redact}
	if v.Redact == nil {
		v.Redact = []string{}
	}
	return v
}
