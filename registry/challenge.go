package registry

import (
	"github.com/scorehub/scorehub/registry/drift"
	"slices"

	"github.com/scorehub/scorehub/registry/process"
)

// ChallengerTarget is one of a [Target]'s challengers as it scores now.
type ChallengerTarget struct {
	Challenger
	// Process is the challenger's version's process, named
	// "model@version", with the endpoint's explanations when it has them.
	Process process.ProcessInfo
	// Err says why the challenger cannot score now, nil when it can: its
	// model cannot be had ([ErrUnavailable]), or its version answers other
	// columns than the champion's, as after an alias moved to a model of
	// other classes. A challenger that cannot score is skipped: the
	// champion answers its rows.
	Err error
}

// challengers resolves e's challengers beside the champion, whose schema
// is champion.
func (s *Snapshot) challengers(e Endpoint, champion *process.ModelSchema, p process.ProcessInfo) []ChallengerTarget {
	if len(e.Challengers) == 0 {
		return nil
	}
	out := make([]ChallengerTarget, len(e.Challengers))
	for i, c := range e.Challengers {
		ce := Endpoint{Model: c.Model, Explain: e.Explain}
		cp, schema, err := s.endpointProcess(ce)
		if err == nil && !sameAnswers(champion, schema, p, cp) {
			err = errorf(ErrUnavailable, "challenger %s answers other columns than the endpoint's model", cp.Name)
		}
		out[i] = ChallengerTarget{Challenger: c, Process: cp, Err: err}
	}
	return out
}

// sameAnswers reports whether a challenger of schema b, whose process is
// bp, answers as the champion of schema a, whose process is ap, does: the
// same task, classes and result columns, so that a split row reads alike
// whichever answered it and a shadow's answers compare.
func sameAnswers(a, b *process.ModelSchema, ap, bp process.ProcessInfo) bool {
	return a != nil && b != nil && a.Task == b.Task && slices.Equal(a.Classes, b.Classes) &&
		slices.Equal(ap.Output, bp.Output)
}

// EndpointChallengers returns e's challengers as a [Target] of e would
// hold them, resolved on s beside e's model: each with its process, or
// the Err that keeps it from scoring. It fails as [Snapshot.EndpointProcess]
// does when e's own model cannot be had.
func (s *Snapshot) EndpointChallengers(e Endpoint) ([]ChallengerTarget, error) {
	p, schema, err := s.endpointProcess(e)
	if err != nil {
		return nil, err
	}
	return s.challengers(e, schema, p), nil
}

// reference returns the profile drift is measured against for model
// endpoint e: that of the version its model names now; nil for none.
func (s *Snapshot) reference(e Endpoint) *drift.Profile {
	if e.Model == "" {
		return nil
	}
	return s.state.Reference(e.Model)
}
