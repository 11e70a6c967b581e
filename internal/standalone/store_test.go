package standalone

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/scorehub/scorehub/internal/pgtest"
	"github.com/scorehub/scorehub/internal/testutil"
)

func TestStoreFlags(t *testing.T) {
	const secretURL = "postgres://scorehub:s3cret-pw@127.0.0.1:5432/scorehub"
	env := func(vars map[string]string) func(string) string {
		return func(k string) string { return vars[k] }
	}
	t.Run("files by default", func(t *testing.T) {
		cfg, err := parseConfig(nil, env(nil), io.Discard)
		if err != nil || cfg.Store != "" || cfg.Replica != "" {
			t.Errorf("default: store %q, replica %q, %v; want files, no replica", cfg.Store, cfg.Replica, err)
		}
	})
	t.Run("SCOREHUB_STORE names a database, -replica the replica", func(t *testing.T) {
		cfg, err := parseConfig(nil, env(map[string]string{"SCOREHUB_STORE": secretURL}), io.Discard)
		if err != nil || cfg.Store != secretURL {
			t.Fatalf("store %q, %v", cfg.Store, err)
		}
		sc, err := cfg.service(env(nil))
		if err != nil || sc.StoreURL != secretURL || sc.DataDir != "" {
			t.Fatalf("the service's store %q, data directory %q, %v; want the database alone", sc.StoreURL, sc.DataDir, err)
		}
		named, err := parseConfig([]string{"-store", secretURL, "-replica", "east-1"}, env(nil), io.Discard)
		if err != nil || named.Replica != "east-1" {
			t.Errorf("-replica east-1: %q, %v", named.Replica, err)
		}
	})
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
	}{
		{"a store of another kind", []string{"-store", "mysql://scorehub:s3cret-pw@db/scorehub"}, nil},
		{"another kind from the environment", nil, map[string]string{"SCOREHUB_STORE": "s3cret-pw"}},
		{"a replica without a shared store", []string{"-replica", "a"}, nil},
		{"a replica name with a slash", []string{"-store", secretURL, "-replica", "a/b"}, nil},
		{"a lease too short to renew", []string{"-store", secretURL, "-job-lease", "2s"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			_, err := parseConfig(tc.args, env(tc.env), &stderr)
			if err == nil {
				t.Fatal("accepted")
			}
			if strings.Contains(err.Error()+stderr.String(), "s3cret-pw") {
				t.Errorf("the refusal shows the password: %v %s", err, stderr.String())
			}
		})
	}
}

// TestPostgresStore: with -store postgres://…, everything the records,
// jobs and model files hold is in the database, not the data directory: a
// second server over an empty data directory serves what the first stored.
// The connection string's password shows in no output, even when the
// database cannot be reached.
func TestPostgresStore(t *testing.T) {
	srv := pgtest.New(t)
	url := srv.NewDB(t)
	if !strings.Contains(url, srv.Password()) {
		t.Fatalf("the test database's connection string %q holds no password", url)
	}
	artifact, meta := exampleModel(t)

	var logs testutil.LockedBuffer
	first := newServerOver(t, url, &logs)
	token := handlerToken(t, first)
	if w := upload(t, first, token, artifact, meta); w.Code != http.StatusCreated {
		t.Fatalf("the upload answered %d %s, want 201", w.Code, w.Body)
	}
	for _, r := range []struct{ method, path, body string }{
		{"PUT", "/api/v1/models/iris/aliases/production", `{"version":1}`},
		{"POST", "/api/v1/deployments", `{"group":"DEFAULT","path":"flowers","endpoints":[{"alias":"species","model":"iris@production"}]}`},
		{"POST", "/executions/jobs", `{"endpoint":{"group":"DEFAULT","path":"flowers","alias":"species"},"data":[` + irisRow + `]}`},
	} {
		if w := serve(first, r.method, r.path, token, "application/json", []byte(r.body)); w.Code != http.StatusCreated {
			t.Fatalf("%s %s: %d %s", r.method, r.path, w.Code, w.Body)
		}
	}
	first.Close()

	second := newServerOver(t, url, &logs)
	defer second.Close()
	// The signing keys and the admin are the database's: the first
	// server's token is good on the second.
	if w := serve(second, "GET", "/api/v1/queues", token, "", nil); w.Code != http.StatusOK {
		t.Errorf("the first server's token on the second: %d %s", w.Code, w.Body)
	}
	w := serve(second, "POST", "/webapi/DEFAULT/api/v1/services/flowers/species", "", "application/json", []byte(`{"data":[`+irisRow+`]}`))
	if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"prediction(species)":"setosa"`) {
		t.Errorf("a server over another data directory answered %d %s, want setosa", w.Code, w.Body)
	}
	token = handlerToken(t, second)
	if w := serve(second, "GET", "/api/v1/models/iris/versions/1/artifact", token, "", nil); w.Code != http.StatusOK || !bytes.Equal(w.Body.Bytes(), artifact) {
		t.Errorf("the model file from the database: %d, %d bytes; want the %d uploaded", w.Code, w.Body.Len(), len(artifact))
	}
	if jobs := serve(second, "GET", "/executions/jobs", token, "", nil); jobs.Code != http.StatusOK || !strings.Contains(jobs.Body.String(), `"totalElements":1`) {
		t.Errorf("the job the first server ran: %d %s", jobs.Code, jobs.Body)
	}

	// A database that cannot be reached: the error, logged and returned,
	// names no password.
	srv.Stop(t)
	var out, errOut bytes.Buffer
	err := run(context.Background(), []string{"-addr", "127.0.0.1:0", "-data", t.TempDir(), "-gc-min-heap", "0", "-store", url}, smokeEnv, &out, &errOut, nil)
	if err == nil {
		t.Fatal("run over a stopped database succeeded")
	}
	for what, text := range map[string]string{"the logs": logs.String(), "stdout": out.String(), "stderr": errOut.String(), "the error": err.Error()} {
		if strings.Contains(text, srv.Password()) {
			t.Errorf("%s show the password:\n%s", what, text)
		}
	}
}

// newServerOver builds a server, without listening, over the database url
// and an empty data directory of its own, logging to logs. It closes when
// the test ends; closing it twice is harmless.
func newServerOver(t *testing.T, url string, logs io.Writer) *server {
	t.Helper()
	cfg, err := parseConfig([]string{"-data", t.TempDir(), "-store", url}, smokeEnv, logs)
	if err != nil {
		t.Fatal(err)
	}
	s, err := newServer(context.Background(), cfg, smokeEnv, logs, slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})), logs)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
