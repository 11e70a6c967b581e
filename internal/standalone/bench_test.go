package standalone

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/scorehub/scorehub/internal/pgtest"
	"github.com/scorehub/scorehub/middleware"
	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/tokens/accounts"
)

// BenchmarkProtectedScoring measures a one-row request to the iris demo
// through the whole server's handler (access log off, metrics on), at a
// public group and at a protected one with each kind of credential: the
// steady state of a client that sends the same credentials on every
// request, Basic ones remembered by the password cache.
func BenchmarkProtectedScoring(b *testing.B) {
	ctx := context.Background()
	srv := newTestServer(b, b.TempDir())
	defer srv.Close()
	if _, err := srv.svc.Registry().PutGroup(ctx, registry.Group{Name: "secure", Auth: registry.AuthPolicy{Mode: registry.TokenRequired,
		Groups: []string{"analysts"}, Schemes: registry.AllSchemes()}}); err != nil {
		b.Fatal(err)
	}
	if _, err := srv.svc.Registry().PutDeployment(ctx, registry.Deployment{Group: "secure", Path: demoPath, Enabled: true,
		Endpoints: []registry.Endpoint{{Alias: demoAlias, Process: "iris"}}}); err != nil {
		b.Fatal(err)
	}
	book := srv.svc.Accounts()
	if _, err := book.CreateUser(ctx, accounts.NewUser{Name: "ann", Password: "ann-password-1", Groups: []string{"analysts"}}); err != nil {
		b.Fatal(err)
	}
	_, secret, err := book.CreateAPIToken(ctx, accounts.NewAPIToken{Name: "bench", Owner: "ann"})
	if err != nil {
		b.Fatal(err)
	}
	idToken := idTokenOf(b, srv.handler, "ann", "ann-password-1")

	body := `{"data":[` + irisRow + `]}`
	for _, c := range []struct{ name, group, auth string }{
		{"public", registry.DefaultGroup, ""},
		{"basic", "secure", "Basic " + base64.StdEncoding.EncodeToString([]byte("ann:ann-password-1"))},
		{"apitoken", "secure", "apitoken " + secret},
		{"bearer", "secure", "Bearer " + idToken},
	} {
		b.Run(c.name, func(b *testing.B) {
			url := "/webapi/" + c.group + "/api/v1/services/" + demoPath + "/" + demoAlias
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					r := httptest.NewRequest(http.MethodPost, url, strings.NewReader(body))
					r.Header.Set("Content-Type", "application/json")
					if c.auth != "" {
						r.Header.Set("Authorization", c.auth)
					}
					w := httptest.NewRecorder()
					srv.handler.ServeHTTP(w, r)
					if w.Code != http.StatusOK {
						b.Fatalf("%d %s", w.Code, w.Body)
					}
				}
			})
		})
	}
}

// BenchmarkModelEndpoint compares, over loopback HTTP with 8 keep-alive
// clients per CPU, one-row requests to the built-in iris demo and to an
// endpoint naming the example XGBoost iris model (examples/models) through
// an alias, both in one server (access log off, metrics on). req/s is the
// figure BENCHMARKS.md records; the target is the model endpoint at 0.8× the
// demo's or better.
func BenchmarkModelEndpoint(b *testing.B) {
	ctx := context.Background()
	srv := newTestServer(b, b.TempDir())
	defer srv.Close()
	artifact, meta := exampleModel(b)
	if _, _, err := srv.svc.Registry().AddModelVersion(ctx, "iris", artifact, meta, nil); err != nil {
		b.Fatal(err)
	}
	if _, err := srv.svc.Registry().PutModelAlias(ctx, "iris", registry.ModelAlias{Name: "production", Version: 1}); err != nil {
		b.Fatal(err)
	}
	if _, err := srv.svc.Registry().PutDeployment(ctx, registry.Deployment{Group: registry.DefaultGroup, Path: "iris-xgboost", Enabled: true,
		Endpoints: []registry.Endpoint{{Alias: demoAlias, Model: "iris@production"}}}); err != nil {
		b.Fatal(err)
	}
	hs := httptest.NewServer(srv.handler)
	defer hs.Close()

	body := `{"data":[` + irisRow + `]}`
	for _, c := range []struct{ name, path string }{{"demo", demoPath}, {"xgboost", "iris-xgboost"}} {
		b.Run(c.name, func(b *testing.B) {
			url := hs.URL + "/webapi/" + registry.DefaultGroup + "/api/v1/services/" + c.path + "/" + demoAlias
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
			defer client.CloseIdleConnections()
			b.ReportAllocs()
			b.SetParallelism(8)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					res, err := client.Post(url, "application/json", strings.NewReader(body))
					if err != nil {
						b.Fatal(err)
					}
					out, _ := io.ReadAll(res.Body)
					res.Body.Close()
					if res.StatusCode != http.StatusOK || !strings.Contains(string(out), `"prediction(species)":"setosa"`) {
						b.Fatalf("%d %s", res.StatusCode, out)
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
		})
	}
}

// BenchmarkStores compares the file store (the default) with PostgreSQL
// (-store, a server of the benchmark's own on loopback) on what the choice
// may change: a management write (PUT of a queue's limits through the
// whole handler, with an admin token: validation, the commit, and for
// PostgreSQL the notification) and, for contrast, a one-row scoring
// request to the iris demo, which reads the in-memory snapshot whatever
// the store.
func BenchmarkStores(b *testing.B) {
	for _, kind := range []string{"file", "postgres"} {
		b.Run(kind, func(b *testing.B) {
			var args []string
			if kind == "postgres" {
				args = []string{"-store", pgtest.New(b).NewDB(b)}
			}
			srv := newTestServer(b, b.TempDir(), args...)
			defer srv.Close()
			token := handlerToken(b, srv)
			b.Run("write", func(b *testing.B) {
				for i := range b.N {
					body := fmt.Sprintf(`{"maxConcurrent":2,"maxWaiting":%d}`, i%1000+1)
					if w := serve(srv, http.MethodPut, "/api/v1/queues/bench", token, "application/json", []byte(body)); w.Code != http.StatusOK && w.Code != http.StatusCreated {
						b.Fatalf("%d %s", w.Code, w.Body)
					}
				}
			})
			b.Run("score", func(b *testing.B) {
				url := "/webapi/" + registry.DefaultGroup + "/api/v1/services/" + demoPath + "/" + demoAlias
				body := []byte(`{"data":[` + irisRow + `]}`)
				b.ReportAllocs()
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if w := serve(srv, http.MethodPost, url, "", "application/json", body); w.Code != http.StatusOK {
							b.Fatalf("%d %s", w.Code, w.Body)
						}
					}
				})
			})
		})
	}
}

// BenchmarkOneRow measures the server's own work for a one-row request to
// the iris demo, as the reference server runs it (access log on, written
// by AccessLog to a LogWriter, metrics on): the handler chain with the
// request already parsed and the answer going nowhere, so that what
// remains is what scorehub adds to net/http's work. allocs/op and B/op
// are what the collector must take back per request. "serial" sends one
// request at a time; "parallel" sends from every core at once, as a busy
// server does, so that state the requests share (locks, counters) costs
// what moving it between cores costs: its ns/op times GOMAXPROCS is CPU
// time per request.
func BenchmarkOneRow(b *testing.B) {
	cfg, err := parseConfig([]string{"-data", b.TempDir()}, smokeEnv, io.Discard)
	if err != nil {
		b.Fatal(err)
	}
	srv, err := newServer(context.Background(), cfg, smokeEnv, io.Discard, slog.New(slog.DiscardHandler), middleware.NewLogWriter(io.Discard))
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	body := `{"data":[` + irisRow + `]}`
	// send is one client's loop: its own request and writer, reused.
	send := func(b *testing.B, next func() bool) {
		r := httptest.NewRequest(http.MethodPost, "/webapi/DEFAULT/api/v1/services/"+demoPath+"/"+demoAlias, nil)
		r.Header.Set("Content-Type", "application/json")
		r.ContentLength = int64(len(body))
		r.RemoteAddr = "127.0.0.1:40000"
		var rd strings.Reader
		w := &nopWriter{h: http.Header{}}
		for next() {
			rd.Reset(body)
			r.Body = io.NopCloser(&rd)
			clear(w.h)
			w.status = 0
			srv.handler.ServeHTTP(w, r)
			if w.status != http.StatusOK {
				b.Errorf("status %d", w.status)
				return
			}
		}
	}
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		send(b, b.Loop)
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) { send(b, pb.Next) })
	})
}

// nopWriter is a ResponseWriter that keeps only the status.
type nopWriter struct {
	h      http.Header
	status int
}

func (w *nopWriter) Header() http.Header         { return w.h }
func (w *nopWriter) WriteHeader(status int)      { w.status = status }
func (w *nopWriter) Write(p []byte) (int, error) { return len(p), nil }
