package standalone

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scorehub/scorehub/internal/testutil"
	"github.com/scorehub/scorehub/tokens"
)

// irisRow is one row the demo classifier scores.
const irisRow = `{"sepal_length":5.1,"sepal_width":3.5,"petal_length":1.4,"petal_width":0.2}`

// api is a client of one test server.
type api struct {
	t    *testing.T
	base string
}

// call sends a request with the Authorization header auth ("" for none)
// and returns the status, the WWW-Authenticate header and the decoded
// JSON body.
func (a api) call(method, path, auth, body string) (int, string, map[string]any) {
	a.t.Helper()
	req, err := http.NewRequest(method, a.base+path, strings.NewReader(body))
	if err != nil {
		a.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
		if method == http.MethodPatch {
			req.Header.Set("Content-Type", "application/merge-patch+json")
		}
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var out map[string]any
	if len(bytes.TrimSpace(raw)) > 0 && raw[0] == '{' {
		if err := json.Unmarshal(raw, &out); err != nil {
			a.t.Fatalf("%s %s: answer is not JSON: %v\n%s", method, path, err, raw)
		}
	}
	return res.StatusCode, res.Header.Get("WWW-Authenticate"), out
}

// must sends a request that must answer want.
func (a api) must(want int, method, path, auth, body string) map[string]any {
	a.t.Helper()
	status, _, out := a.call(method, path, auth, body)
	if status != want {
		a.t.Fatalf("%s %s: %d %v, want %d", method, path, status, out, want)
	}
	return out
}

func basicHeader(user, password string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+password))
}

// credentialsServer starts a server with users ann (in analysts) and bob
// (in sales), and one web API group per policy, each with the iris demo at
// iris/classify.
func credentialsServer(t *testing.T, args ...string) (a api, admin string) {
	t.Helper()
	base, stop := startInProcess(t, io.Discard, args...)
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Error(err)
		}
	})
	a = api{t: t, base: base}
	admin = "Bearer " + login(t, base, "admin", smokePassword)
	a.must(201, "POST", "/api/v1/users", admin, `{"name":"ann","password":"ann-password-1","groups":["analysts"]}`)
	a.must(201, "POST", "/api/v1/users", admin, `{"name":"bob","password":"bob-password-1","groups":["sales"]}`)
	for name, schemes := range policies {
		kinds, _ := json.Marshal(schemes)
		a.must(201, "POST", "/api/v1/webapigroups", admin,
			fmt.Sprintf(`{"name":%q,"auth":{"mode":"token","groups":["analysts"],"schemes":%s}}`, name, kinds))
		a.must(201, "POST", "/api/v1/deployments", admin,
			fmt.Sprintf(`{"group":%q,"path":"iris","enabled":true,"endpoints":[{"alias":"classify","process":"iris"}]}`, name))
	}
	return a, admin
}

// policies are the web API groups credentialsServer makes: the kinds each
// takes, all of them to the group of analysts.
var policies = map[string][]string{
	"all":      {"basic", "apitoken", "bearer"},
	"basic":    {"basic"},
	"apitoken": {"apitoken"},
	"bearer":   {"bearer"},
	"nobasic":  {"apitoken", "bearer"},
}

// score calls group's iris endpoint with auth and returns the status and
// the challenge.
func (a api) score(group, auth string) (int, string) {
	a.t.Helper()
	status, challenge, _ := a.call("POST", "/webapi/"+group+"/api/v1/services/iris/classify", auth, `{"data":[`+irisRow+`]}`)
	return status, challenge
}

// submitJob submits a job for group's iris endpoint with auth and returns
// the status and the challenge.
func (a api) submitJob(group, auth string) (int, string) {
	a.t.Helper()
	status, challenge, _ := a.call("POST", "/executions/jobs", auth,
		fmt.Sprintf(`{"endpoint":{"group":%q,"path":"iris","alias":"classify"},"data":[%s]}`, group, irisRow))
	return status, challenge
}

// apiToken creates an API token for owner and returns its header and id.
func (a api) apiToken(admin, owner, extra string) (header, id string) {
	a.t.Helper()
	out := a.must(201, "POST", "/api/v1/apitokens", admin, fmt.Sprintf(`{"name":"t","owner":%q%s}`, owner, extra))
	secret, _ := out["token"].(string)
	if !strings.HasPrefix(secret, "scorehub_") {
		a.t.Fatalf("API token %q lacks its prefix", secret)
	}
	id, _ = out["id"].(string)
	return "apitoken " + secret, id
}

// TestEveryKindOfCredentialAgainstEveryPolicy calls scoring and submits
// jobs with each kind of credential, of a user in the allowed user group
// and of one outside it, at groups taking each set of kinds: a kind the
// group takes lets the allowed user through and refuses the other with
// 403; a kind it does not take is 401 with a challenge naming only the
// kinds it takes.
func TestEveryKindOfCredentialAgainstEveryPolicy(t *testing.T) {
	a, admin := credentialsServer(t)
	annToken, _ := a.apiToken(admin, "ann", "")
	bobToken, _ := a.apiToken(admin, "bob", "")
	creds := map[string]map[string]string{
		"basic":    {"ann": basicHeader("ann", "ann-password-1"), "bob": basicHeader("bob", "bob-password-1")},
		"apitoken": {"ann": annToken, "bob": bobToken},
		"bearer":   {"ann": "Bearer " + login(t, a.base, "ann", "ann-password-1"), "bob": "Bearer " + login(t, a.base, "bob", "bob-password-1")},
	}
	for _, door := range []struct {
		name string
		call func(group, auth string) (int, string)
		ok   int
	}{{"scoring", a.score, 200}, {"jobs", a.submitJob, 201}} {
		for group, schemes := range policies {
			for kind, users := range creds {
				for user, auth := range users {
					t.Run(fmt.Sprintf("%s/%s/%s/%s", door.name, group, kind, user), func(t *testing.T) {
						status, challenge := door.call(group, auth)
						takes := strings.Contains(strings.Join(schemes, " "), kind)
						switch {
						case !takes:
							if status != 401 {
								t.Errorf("%d, want 401: the group does not take %s", status, kind)
							}
							for _, s := range []string{"basic", "apitoken", "bearer"} {
								named := strings.Contains(strings.ToLower(challenge), s+" realm=")
								if named != strings.Contains(strings.Join(schemes, " "), s) {
									t.Errorf("challenge %q: names %s %v, want %v", challenge, s, named, !named)
								}
							}
						case user == "ann":
							if status != door.ok {
								t.Errorf("%d, want %d", status, door.ok)
							}
						default:
							if status != 403 {
								t.Errorf("%d, want 403: bob is not in analysts", status)
							}
						}
					})
				}
			}
		}
	}
	// Without credentials, a challenge for each kind the group takes.
	if status, challenge := a.score("nobasic", ""); status != 401 ||
		challenge != `apitoken realm="scorehub", Bearer realm="scorehub"` {
		t.Errorf("no credentials: %d %q", status, challenge)
	}
}

// TestRefusedCredentialsOfEveryKind: a wrong password, an expired or
// deleted API token, an API token restricted to other groups, an expired
// idToken, and every kind after its user's password changed are refused,
// at the scoring endpoint and on the job route alike.
func TestRefusedCredentialsOfEveryKind(t *testing.T) {
	data := t.TempDir()
	a, admin := credentialsServer(t, "-data", data)
	deleted, deletedID := a.apiToken(admin, "ann", "")
	elsewhere, _ := a.apiToken(admin, "ann", `,"webApiGroups":["basic"]`)
	a.must(204, "DELETE", "/api/v1/apitokens/"+deletedID, admin, "")

	// ok stands for success: 200 at the scoring endpoint, 201 for a job.
	const ok = 0
	check := func(name, auth string, want int) {
		t.Helper()
		wantScore, wantJob := want, want
		if want == ok {
			wantScore, wantJob = 200, 201
		}
		if status, _ := a.score("all", auth); status != wantScore {
			t.Errorf("%s: scoring %d, want %d", name, status, wantScore)
		}
		if status, _ := a.submitJob("all", auth); status != wantJob {
			t.Errorf("%s: job %d, want %d", name, status, wantJob)
		}
	}
	check("wrong password", basicHeader("ann", "not-her-password"), 401)
	check("deleted API token", deleted, 401)
	check("API token for other groups", elsewhere, 403)
	check("unknown API token", "apitoken scorehub_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", 401)

	expiry := time.Now().Add(2 * time.Second)
	expiring, _ := a.apiToken(admin, "ann", `,"expiresAt":"`+expiry.UTC().Format(time.RFC3339Nano)+`"`)
	check("API token before it expires", expiring, ok)
	time.Sleep(time.Until(expiry) + 100*time.Millisecond)
	check("expired API token", expiring, 401)

	// An idToken signed with the server's own key (the data directory's
	// keys.json), expired a minute ago.
	keys, err := tokens.LoadOrCreateKeySet(filepath.Join(data, "keys.json"), tokens.KeySetConfig{})
	if err != nil {
		t.Fatal(err)
	}
	issuer, err := tokens.NewIssuer(tokens.IssuerConfig{Keys: keys, Issuer: "scorehub", Audience: []string{"scorehub"},
		Now: func() time.Time { return time.Now().Add(-6 * time.Minute) }})
	if err != nil {
		t.Fatal(err)
	}
	old, _, err := issuer.Issue(tokens.Principal{Subject: "ann", Groups: []string{"analysts"}})
	if err != nil {
		t.Fatal(err)
	}
	check("expired idToken", "Bearer "+old, 401)
	if _, challenge := a.score("all", "Bearer "+old); !strings.Contains(challenge, `error_description="the token expired"`) {
		t.Errorf("expired idToken: challenge %q does not say it expired", challenge)
	}

	// A password change ends every credential of its user: the old
	// password, the idTokens and the API tokens issued before it.
	basic := basicHeader("ann", "ann-password-1")
	token, _ := a.apiToken(admin, "ann", "")
	fresh := "Bearer " + login(t, a.base, "ann", "ann-password-1")
	check("Basic before the change", basic, ok) // now remembered by the cache
	a.must(200, "PATCH", "/api/v1/users/ann", admin, `{"password":"ann-password-2"}`)
	check("old password", basic, 401)
	check("API token of before the change", token, 401)
	check("idToken of before the change", fresh, 401)
	check("new password", basicHeader("ann", "ann-password-2"), ok)
}

// TestRevocationOfEveryKindWithinASecond: deleting a user, changing their
// password or groups and deleting an API token each end, within a second,
// every credential they should end, of every kind, even those the Basic
// cache had just remembered.
func TestRevocationOfEveryKindWithinASecond(t *testing.T) {
	a, admin := credentialsServer(t)
	// kinds returns a fresh credential of every kind for ann, each proved
	// to work (so that the Basic one is remembered).
	kinds := func(password string) map[string]string {
		token, _ := a.apiToken(admin, "ann", "")
		out := map[string]string{
			"basic":    basicHeader("ann", password),
			"apitoken": token,
			"bearer":   "Bearer " + login(t, a.base, "ann", password),
		}
		for kind, auth := range out {
			if status, _ := a.score("all", auth); status != 200 {
				t.Fatalf("fresh %s credential: %d, want 200", kind, status)
			}
		}
		return out
	}
	refusedWithin := func(what, auth string) {
		t.Helper()
		var status int
		if !testutil.Poll(time.Second, func() bool { status, _ = a.score("all", auth); return status == 401 }) {
			t.Errorf("%s: still %d a second later, want 401", what, status)
		}
	}

	before := kinds("ann-password-1")
	a.must(200, "PATCH", "/api/v1/users/ann", admin, `{"password":"ann-password-2"}`)
	for kind, auth := range before {
		refusedWithin("password changed, "+kind, auth)
	}

	after := kinds("ann-password-2")
	token, id := a.apiToken(admin, "ann", "")
	a.must(204, "DELETE", "/api/v1/apitokens/"+id, admin, "")
	refusedWithin("API token deleted", token)
	for kind, auth := range after {
		if status, _ := a.score("all", auth); status != 200 {
			t.Errorf("after another token's deletion, %s: %d, want 200", kind, status)
		}
	}

	// Out of analysts: her tokens end, and her password, still right, no
	// longer gets her in, though the cache had remembered her groups.
	a.must(200, "PATCH", "/api/v1/users/ann", admin, `{"groups":["risk"]}`)
	refusedWithin("groups changed, apitoken", after["apitoken"])
	refusedWithin("groups changed, bearer", after["bearer"])
	if status, _ := a.score("all", after["basic"]); status != 403 {
		t.Errorf("groups changed, basic: %d, want 403", status)
	}
	a.must(200, "PATCH", "/api/v1/users/ann", admin, `{"groups":["analysts"]}`)

	last := kinds("ann-password-2")
	a.must(204, "DELETE", "/api/v1/users/ann", admin, "")
	for kind, auth := range last {
		refusedWithin("user deleted, "+kind, auth)
	}
}
