package readme

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/scorehub/scorehub/e2e/internal/harness"
)

// TestReadmeTokenWalkthrough does what the Tokens section of
// docs/security.md shows: get a token with the admin password, call a
// protected route with it, and see the same call refused once the token has
// expired. The server issues tokens valid for three seconds so the test
// need not wait five minutes.
func TestReadmeTokenWalkthrough(t *testing.T) {
	t.Parallel()
	s := harness.Start(t, harness.Options{Args: []string{"-token-validity", "3s"}})

	status, tok := s.Token(t, "admin", harness.AdminPassword)
	token, _ := tok["idToken"].(string)
	if status != http.StatusOK || token == "" {
		t.Fatalf("token service: %d %v", status, tok)
	}
	exp, err := time.Parse(time.RFC3339, tok["expirationDate"].(string))
	if err != nil {
		t.Fatalf("expirationDate %v is not RFC 3339: %v", tok["expirationDate"], err)
	}

	call := func(auth string) (*http.Response, map[string]any, []map[string]any) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, s.Base+"/executions/queues", nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		res, err := s.Client(t).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var raw json.RawMessage
		if err := json.NewDecoder(res.Body).Decode(&raw); err != nil {
			t.Fatalf("GET /executions/queues: %d with no JSON", res.StatusCode)
		}
		var obj map[string]any
		var arr []map[string]any
		if json.Unmarshal(raw, &arr) != nil {
			json.Unmarshal(raw, &obj)
		}
		return res, obj, arr
	}

	res, _, queues := call("Bearer " + token)
	if res.StatusCode != http.StatusOK || len(queues) == 0 || queues[0]["name"] != "DEFAULT" {
		t.Fatalf("with a fresh token: %d %v, want 200 and the DEFAULT queue", res.StatusCode, queues)
	}

	res, body, _ := call("")
	if res.StatusCode != http.StatusUnauthorized || res.Header.Get("WWW-Authenticate") != `Bearer realm="scorehub"` {
		t.Errorf("without a token: %d %q %v", res.StatusCode, res.Header.Get("WWW-Authenticate"), body)
	}

	// Wait out the token's validity; the verifier allows no leeway.
	time.Sleep(time.Until(exp) + 1100*time.Millisecond)
	res, body, _ = call("Bearer " + token)
	challenge := res.Header.Get("WWW-Authenticate")
	if res.StatusCode != http.StatusUnauthorized || !strings.Contains(challenge, `error="invalid_token"`) {
		t.Errorf("with an expired token: %d, challenge %q; want 401 invalid_token", res.StatusCode, challenge)
	}
	if e, _ := body["error"].(map[string]any); e["type"] != "invalid_token" || !strings.Contains(e["message"].(string), "expired") {
		t.Errorf("expired token answer %v, want type invalid_token saying it expired", body)
	}
}
