package registry

import (
	"errors"
	"strconv"
	"unicode/utf8"
)

// The rules of groups, deployments and queues. Each record type lists every
// rule a record breaks, so that the management API can answer with all of
// them at once; a write refuses a record that breaks any. The messages are
// the ones the management API shows beside the pointers.

// Messages of the faults the rules find.
const (
	msgName           = "must be a name: 1 to 128 letters, digits, '.', '_' or '-', starting with a letter or digit"
	msgRequired       = "is required"
	msgTwice          = "appears more than once"
	msgMode           = "must be one of: public, token"
	msgScheme         = "must be one of: basic, apitoken, bearer"
	msgPublicGroups   = "must be empty unless mode is token: a public group cannot restrict user groups"
	msgPublicSchemes  = "must be empty unless mode is token: a public group takes no credentials"
	msgModelRef       = `must name a model and one of its aliases or versions: "churn@production" or "churn@3"`
	msgProcessOrModel = "must name either a process or a model, not both or neither"
)

// Faults lists the rules of a web API group that g breaks, each an
// [*InvalidError] whose Pointer names the field as the management API
// shows it; both are empty when g is valid. fields are the faults of single
// fields, in the order of the fields; joint are those of fields taken
// together (a public group that names user groups or credential kinds).
func (g *Group) Faults() (fields, joint []*InvalidError) {
	fields = appendName(fields, "/name", g.Name)
	switch g.Auth.Mode {
	case "", Public, TokenRequired:
	default:
		fields = append(fields, &InvalidError{Pointer: "/auth/mode", Message: msgMode})
	}
	for i, n := range g.Auth.Groups {
		if n == "" {
			fields = append(fields, &InvalidError{Pointer: "/auth/groups/" + strconv.Itoa(i), Message: msgRequired})
		}
	}
	seen := make(map[Scheme]bool, len(g.Auth.Schemes))
	for _, s := range g.Auth.Schemes {
		if seen[s] {
			fields = append(fields, &InvalidError{Pointer: "/auth/schemes", Message: msgTwice})
			break
		}
		seen[s] = true
	}
	for i, s := range g.Auth.Schemes {
		if s != SchemeBasic && s != SchemeAPIToken && s != SchemeBearer {
			fields = append(fields, &InvalidError{Pointer: "/auth/schemes/" + strconv.Itoa(i), Message: msgScheme})
		}
	}
	if g.Auth.Mode != TokenRequired {
		if len(g.Auth.Groups) > 0 {
			joint = append(joint, &InvalidError{Pointer: "/auth/groups", Message: msgPublicGroups})
		}
		if len(g.Auth.Schemes) > 0 {
			joint = append(joint, &InvalidError{Pointer: "/auth/schemes", Message: msgPublicSchemes})
		}
	}
	return fields, joint
}

// Faults lists the rules of a deployment that d breaks, each an
// [*InvalidError] whose Pointer names the field as the management API
// shows it; both are empty when d is valid. fields are the faults of single
// fields, in the order of the fields; joint are those of fields taken
// together (an endpoint naming both or neither of a process and a model,
// an alias used twice). What d names must also exist: see
// [State.CheckReferences].
func (d *Deployment) Faults() (fields, joint []*InvalidError) {
	fields = appendName(fields, "/group", d.Group)
	fields = appendName(fields, "/path", d.Path)
	for i, e := range d.Endpoints {
		p := "/endpoints/" + strconv.Itoa(i)
		fields = appendName(fields, p+"/alias", e.Alias)
		if e.Process != "" {
			fields = appendName(fields, p+"/process", e.Process)
		}
		if e.Model != "" {
			if _, err := ParseModelRef(e.Model); err != nil {
				fields = append(fields, &InvalidError{Pointer: p + "/model", Message: msgModelRef})
			}
		}
		if e.Queue != "" {
			fields = appendName(fields, p+"/queue", e.Queue)
		}
		if e.Timeout < 0 {
			fields = append(fields, &InvalidError{Pointer: p + "/timeoutMs", Message: "must be at least 0"})
		}
		if x := e.Explain; x != nil {
			if x.Method != ExplainTreeSHAP {
				fields = append(fields, &InvalidError{Pointer: p + "/explain/method", Message: "must be " + strconv.Quote(ExplainTreeSHAP)})
			}
			if x.Top < 0 || x.Top > MaxExplainTop {
				fields = append(fields, &InvalidError{Pointer: p + "/explain/top", Message: "must be from 0 (every feature) to " + strconv.Itoa(MaxExplainTop)})
			}
			if x.Class != "" && x.Class != ExplainPredicted && x.Class != ExplainAll {
				fields = append(fields, &InvalidError{Pointer: p + "/explain/class", Message: `must be "predicted" or "all"`})
			}
		}
		fields = appendChallengers(fields, p, e)
		fields = appendMonitoring(fields, p, e)
	}
	seen := make(map[string]bool, len(d.Endpoints))
	for i, e := range d.Endpoints {
		p := "/endpoints/" + strconv.Itoa(i)
		if (e.Process == "") == (e.Model == "") {
			joint = append(joint, &InvalidError{Pointer: p, Message: msgProcessOrModel})
		}
		if e.Explain != nil && e.Model == "" {
			joint = append(joint, &InvalidError{Pointer: p + "/explain", Message: "explains a model's predictions: name a model, not a process"})
		}
		joint = appendChallengersJoint(joint, p, e)
		if e.Model == "" && e.Monitor != nil && !e.Monitor.Off {
			joint = append(joint, &InvalidError{Pointer: p + "/monitor", Message: "measures the drift of a model's inputs: name a model, not a process"})
		}
		if e.Model == "" && e.OutlierColumn {
			joint = append(joint, &InvalidError{Pointer: p + "/outlierColumn", Message: "flags rows outside a model's reference: name a model, not a process"})
		}
		if e.Alias == "" {
			continue // no name at all is a fault of its own
		}
		if seen[e.Alias] {
			joint = append(joint, &InvalidError{Pointer: p + "/alias", Message: msgTwice})
		}
		seen[e.Alias] = true
	}
	return fields, joint
}

// Faults lists the rules of a queue that q breaks, each an [*InvalidError]
// whose Pointer names the field as the management API shows it, in the
// order of the fields; empty when q is valid.
func (q *Queue) Faults() []*InvalidError {
	fields := appendName(nil, "/name", q.Name)
	if q.MaxConcurrent < 1 {
		fields = append(fields, &InvalidError{Pointer: "/maxConcurrent", Message: "must be at least 1"})
	}
	if q.MaxWaiting < 0 {
		fields = append(fields, &InvalidError{Pointer: "/maxWaiting", Message: "must be at least 0"})
	}
	return fields
}

func (g *Group) validate() error      { return joinFaults(g.Faults()) }
func (d *Deployment) validate() error { return joinFaults(d.Faults()) }
func (q *Queue) validate() error      { return joinFaults(q.Faults(), nil) }

// appendName appends to faults the one of a name at pointer, if s is not a
// valid name.
func appendName(faults []*InvalidError, pointer, s string) []*InvalidError {
	if ValidName(s) {
		return faults
	}
	return append(faults, &InvalidError{Pointer: pointer, Message: msgName})
}

// joinFaults returns nil, or every fault joined with [errors.Join], those
// of single fields first.
func joinFaults(fields, joint []*InvalidError) error {
	errs := make([]error, 0, len(fields)+len(joint))
	for _, f := range fields {
		errs = append(errs, f)
	}
	for _, f := range joint {
		errs = append(errs, f)
	}
	return errors.Join(errs...)
}

// appendMonitoring appends to faults those of e's monitor and payload
// log, e at pointer p.
func appendMonitoring(faults []*InvalidError, p string, e Endpoint) []*InvalidError {
	if m := e.Monitor; m != nil {
		if m.Window != 0 && (m.Window < MinMonitorWindow || m.Window > MaxMonitorWindow) {
			faults = append(faults, &InvalidError{Pointer: p + "/monitor/window", Message: "must be from " + MinMonitorWindow.String() + " to " + MaxMonitorWindow.String()})
		}
		if m.MaxRows < 0 || m.MaxRows > MaxMonitorRows {
			faults = append(faults, &InvalidError{Pointer: p + "/monitor/maxRows", Message: "must be from 1 to " + strconv.Itoa(MaxMonitorRows) + ", or 0 for " + strconv.Itoa(DefaultMonitorRows)})
		}
		if m.MaxFeatures < 0 || m.MaxFeatures > MaxMonitorFeatures {
			faults = append(faults, &InvalidError{Pointer: p + "/monitor/maxFeatures", Message: "must be from 1 to " + strconv.Itoa(MaxMonitorFeatures) + ", or 0 for " + strconv.Itoa(DefaultMonitorFeatures)})
		}
	}
	if l := e.PayloadLog; l != nil {
		if !(l.Rate > 0 && l.Rate <= 1) {
			faults = append(faults, &InvalidError{Pointer: p + "/payloadLog/rate", Message: "must be more than 0 and at most 1: the share of rows logged"})
		}
		if len(l.Redact) > MaxRedacted {
			faults = append(faults, &InvalidError{Pointer: p + "/payloadLog/redact", Message: "may name at most " + strconv.Itoa(MaxRedacted) + " columns"})
		}
		seen := make(map[string]bool, len(l.Redact))
		for j, c := range l.Redact {
			switch {
			case c == "" || len(c) > 256:
				faults = append(faults, &InvalidError{Pointer: p + "/payloadLog/redact/" + strconv.Itoa(j), Message: "must name a column: 1 to 256 bytes"})
			case seen[c]:
				faults = append(faults, &InvalidError{Pointer: p + "/payloadLog/redact/" + strconv.Itoa(j), Message: msgTwice})
			}
			seen[c] = true
		}
	}
	return faults
}

// appendChallengers appends to faults those of e's challengers' own
// fields, e at pointer p.
func appendChallengers(faults []*InvalidError, p string, e Endpoint) []*InvalidError {
	if len(e.Challengers) > MaxChallengers {
		faults = append(faults, &InvalidError{Pointer: p + "/challengers", Message: "may name at most " + strconv.Itoa(MaxChallengers) + " challengers"})
	}
	for j, c := range e.Challengers {
		cp := p + "/challengers/" + strconv.Itoa(j)
		if _, err := ParseModelRef(c.Model); err != nil {
			faults = append(faults, &InvalidError{Pointer: cp + "/model", Message: msgModelRef})
		}
		switch c.Mode {
		case ChallengeShadow:
			if c.Percent != 0 {
				faults = append(faults, &InvalidError{Pointer: cp + "/percent", Message: "is for split challengers: a shadow answers no rows"})
			}
		case ChallengeSplit:
			if !(c.Percent >= 0 && c.Percent <= 100) {
				faults = append(faults, &InvalidError{Pointer: cp + "/percent", Message: "must be from 0 to 100"})
			}
		default:
			faults = append(faults, &InvalidError{Pointer: cp + "/mode", Message: `must be "shadow" or "split"`})
		}
	}
	if e.RowID != "" && !validColumn(e.RowID) {
		faults = append(faults, &InvalidError{Pointer: p + "/rowId", Message: "must be a column name of 1 to 1024 bytes"})
	}
	if e.SplitKey != "" && !validColumn(e.SplitKey) {
		faults = append(faults, &InvalidError{Pointer: p + "/splitKey", Message: "must be a column name of 1 to 1024 bytes"})
	}
	return faults
}

// appendChallengersJoint appends to faults those of e's challengers
// taken together and with e.
func appendChallengersJoint(faults []*InvalidError, p string, e Endpoint) []*InvalidError {
	if e.RowID != "" && e.Model == "" {
		faults = append(faults, &InvalidError{Pointer: p + "/rowId", Message: "keeps a model's predictions for feedback: name a model, not a process"})
	}
	if e.AnsweredBy && e.Model == "" {
		faults = append(faults, &InvalidError{Pointer: p + "/answeredBy", Message: "names the model version that answered: name a model, not a process"})
	}
	if len(e.Challengers) == 0 {
		if e.SplitKey != "" {
			faults = append(faults, &InvalidError{Pointer: p + "/splitKey", Message: "assigns rows to split challengers: the endpoint has none"})
		}
		return faults
	}
	if e.Model == "" {
		return append(faults, &InvalidError{Pointer: p + "/challengers", Message: "challenge a model: name a model, not a process"})
	}
	seen := map[string]bool{e.Model: true}
	split, percent := false, 0.0
	for j, c := range e.Challengers {
		if seen[c.Model] {
			faults = append(faults, &InvalidError{Pointer: p + "/challengers/" + strconv.Itoa(j) + "/model", Message: "is the endpoint's model or another challenger's: each model is scored once"})
		}
		seen[c.Model] = true
		if c.Mode == ChallengeSplit {
			split = true
			percent += c.Percent
		}
	}
	if percent > 100 {
		faults = append(faults, &InvalidError{Pointer: p + "/challengers", Message: "split challengers answer more than 100 percent of the rows together"})
	}
	if e.SplitKey != "" && !split {
		faults = append(faults, &InvalidError{Pointer: p + "/splitKey", Message: "assigns rows to split challengers: the endpoint has none"})
	}
	return faults
}

// validColumn reports whether s can name a column: not empty, valid
// UTF-8, at most 1024 bytes.
func validColumn(s string) bool {
	return s != "" && len(s) <= 1024 && utf8.ValidString(s)
}
