package main

import (
	"context"
	"fmt"
	"net/http"
)

// challengeShadow is the mode of challenger -challenger measures: one
// that scores the rows after the champion answered, on a goroutine of its
// own, within the server's budget of shadows at once.
const challengeShadow = "shadow"

// Targets of an endpoint with one shadow challenger against the same
// endpoint without it: at 1 row, at least this share of its requests per
// second; at cfg.Large rows, one request at a time, at most this many
// times its wall time per request.
const (
	shadowTargetRatio = 0.9
	shadowLargeTarget = 1.2
)

// shadowChallenger is the challenger of the endpoint -challenger
// measures.
type shadowChallenger struct {
	model   string // name@version
	mode    string
	figures string // the management path of the endpoint's challengers
}

// deployChallenged uploads the model file under moduleDir twice, as two
// versions of a model of its own, and deploys, in the group and under the
// prefix of the endpoint at path, the endpoints shadowed and plain, the
// first with the second version as its challenger in mode, both naming
// the first as their champion; on the server at base, logged in as the
// admin with adminPassword. On an error it deletes what it made.
func deployChallenged(ctx context.Context, c *http.Client, base, path, moduleDir, mode, adminPassword string) (*pair, error) {
	return deployPair(ctx, c, base, path, moduleDir, adminPassword, pairSpec{
		flag: "-challenger", names: [2]string{"shadowed", "plain"}, rpsTarget: shadowTargetRatio, wallTarget: shadowLargeTarget,
		endpoints: func(ctx context.Context, p *pair, artifact []byte) ([2]map[string]any, error) {
			// The same file twice, as two versions: the challenger does
			// the champion's work again, and agrees with it on every row.
			var refs [2]string
			for i, role := range []string{"the champion", "the challenger"} {
				var err error
				if refs[i], _, err = p.upload(ctx, artifact, role, nil); err != nil {
					return [2]map[string]any{}, err
				}
			}
			p.model = refs[0]
			p.challenger = &shadowChallenger{model: refs[1], mode: mode, figures: p.endpoint(0) + "/challengers"}
			return [2]map[string]any{
				{"model": refs[0], "challengers": []map[string]any{{"model": refs[1], "mode": mode}}},
				{"model": refs[0]},
			}, nil
		},
	})
}

// shadowWork is what the challenger of shadowed did, as GET
// …/challengers counts it: the rows it scored and compared with the
// champion's answer, those of them it agreed on, the rows it skipped
// because the server's budget of shadows at once (GOMAXPROCS) was spent,
// and its failed executions.
type shadowWork struct {
	Compared uint64 `json:"compared"`
	Agreed   uint64 `json:"agreed"`
	Skipped  uint64 `json:"skipped"`
	Errors   uint64 `json:"errors"`
}

// since returns what w counts beyond earlier.
func (w shadowWork) since(earlier shadowWork) shadowWork {
	return shadowWork{w.Compared - earlier.Compared, w.Agreed - earlier.Agreed, w.Skipped - earlier.Skipped, w.Errors - earlier.Errors}
}

// text says what the shadow did, and what a skipped row means.
func (w shadowWork) text() string {
	s := fmt.Sprintf("%d rows compared", w.Compared)
	if w.Compared > 0 {
		s += fmt.Sprintf(" (%.1f%% agreed)", 100*float64(w.Agreed)/float64(w.Compared))
	}
	s += fmt.Sprintf(", %d skipped", w.Skipped)
	if offered := w.Compared + w.Skipped; w.Skipped > 0 {
		s += fmt.Sprintf(" (%.1f%% of the rows offered: the server's shadow budget was spent and shed them)", 100*float64(w.Skipped)/float64(offered))
	}
	return s + fmt.Sprintf(", %d failed executions", w.Errors)
}

// work reads what the challenger of p's endpoint measured has done so
// far.
func (p *pair) work(ctx context.Context) (shadowWork, error) {
	c := p.challenger
	var v struct {
		Challengers []struct {
			Model   string `json:"model"`
			Version string `json:"version"`
			Error   string `json:"error"`
			shadowWork
		} `json:"challengers"`
	}
	if err := p.get(ctx, c.figures, &v); err != nil {
		return shadowWork{}, err
	}
	if len(v.Challengers) != 1 || v.Challengers[0].Model != c.model {
		return shadowWork{}, fmt.Errorf("loadtest: GET %s: %d challengers, want %s alone", c.figures, len(v.Challengers), c.model)
	}
	if ch := v.Challengers[0]; ch.Error != "" || ch.Version == "" {
		return shadowWork{}, fmt.Errorf("loadtest: GET %s: the challenger %s cannot score: %s", c.figures, c.model, ch.Error)
	}
	return v.Challengers[0].shadowWork, nil
}
