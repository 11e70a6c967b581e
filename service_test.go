package scorehub

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/jobs"
	"github.com/scorehub/scorehub/tokens"
	"github.com/scorehub/scorehub/tokens/accounts"
)

// quiet is a Config's logging for tests: nothing.
func quiet(c Config) Config {
	c.AccessLogOff = true
	c.Logger = slog.New(slog.DiscardHandler)
	return c
}

func newService(t testing.TB, c Config) *Service {
	t.Helper()
	svc, err := New(context.Background(), quiet(c))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	return svc
}

// get sends GET path to h, with Basic credentials when user is not "".
func get(h http.Handler, path, user, password string) *httptest.ResponseRecorder {
	r := httptest.NewRequest("GET", path, nil)
	if user != "" {
		r.SetBasicAuth(user, password)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// TestDataDirKeepsTheAdminAndTheRecords: with a data directory and no
// password, the service makes one up, shows it once on the Console and
// keeps only its hash; a restart keeps the admin and the records.
func TestDataDirKeepsTheAdminAndTheRecords(t *testing.T) {
	dir := t.TempDir()
	if _, err := New(context.Background(), quiet(Config{DataDir: dir})); err == nil || !strings.Contains(err.Error(), "Console") {
		t.Fatalf("a data directory without a password or a Console: %v, want an error naming Console", err)
	}
	var console bytes.Buffer
	svc, err := New(context.Background(), quiet(Config{DataDir: dir, Console: &console}))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`admin password \(shown once[^)]*\): (\S+)\n`).FindStringSubmatch(console.String())
	if m == nil {
		t.Fatalf("the Console shows %q, want the admin password", console.String())
	}
	stored, err := os.ReadFile(filepath.Join(dir, adminHashFile))
	if err != nil || bytes.Contains(stored, []byte(m[1])) {
		t.Fatalf("the stored admin hash %q, %v; want a hash, not the password", stored, err)
	}
	if w := get(svc.Handler(), "/api/rest/tokenservice", "admin", m[1]); w.Code != 200 {
		t.Errorf("the admin's password shown was refused: %d %s", w.Code, w.Body)
	}
	if _, err := svc.Registry().PutGroup(context.Background(), groupNamed("kept")); err != nil {
		t.Fatal(err)
	}
	svc.Close()

	console.Reset()
	svc = newService(t, Config{DataDir: dir, Console: &console})
	// A restart shows no password, but where its hash is and how to
	// replace it.
	if shown := console.String(); strings.Contains(shown, m[1]) || !strings.Contains(shown, filepath.Join(dir, adminHashFile)) ||
		!strings.Contains(shown, "to replace it") {
		t.Errorf("a restart showed %q, want where the admin's hash is kept and how to replace it, and no password", shown)
	}
	if w := get(svc.Handler(), "/api/rest/tokenservice", "admin", m[1]); w.Code != 200 {
		t.Errorf("after a restart the admin's password was refused: %d %s", w.Code, w.Body)
	}
	if _, ok := svc.Registry().Snapshot().State().Group("kept"); !ok {
		t.Error("after a restart the group made before is gone")
	}
}

// TestMemoryServiceForgets: without a data directory, nothing outlives the
// service, and the admin is the one of AdminPassword.
func TestMemoryServiceForgets(t *testing.T) {
	svc := newService(t, Config{AdminPassword: "first password"})
	if w := get(svc.Handler(), "/api/rest/tokenservice", "admin", "wrong password"); w.Code != http.StatusUnauthorized {
		t.Errorf("a wrong password answered %d, want 401", w.Code)
	}
	if _, err := svc.Registry().PutGroup(context.Background(), groupNamed("gone")); err != nil {
		t.Fatal(err)
	}
	svc.Close()
	svc = newService(t, Config{AdminPassword: "first password"})
	if _, ok := svc.Registry().Snapshot().State().Group("gone"); ok {
		t.Error("a service in memory found the group of the one before")
	}
}

// TestParts: a host that mounts the parts apart gets scoring, management
// and metrics each on their own, and each refuses what is not its part.
func TestParts(t *testing.T) {
	svc := newService(t, Config{AdminPassword: "pw-for-parts", MetricsApart: true})
	if w := get(svc.Handler(), "/metrics", "", ""); w.Code != http.StatusNotFound {
		t.Errorf("with MetricsApart the service's handler serves /metrics: %d", w.Code)
	}
	if w := get(svc.MetricsHandler(), "/anywhere", "", ""); w.Code != 200 || !strings.Contains(w.Body.String(), "scorehub_") {
		t.Errorf("the metrics handler answered %d", w.Code)
	}
	if w := get(svc.ManagementHandler(), "/api/rest/tokenservice", "admin", "pw-for-parts"); w.Code != 200 {
		t.Errorf("the management handler's token service answered %d %s", w.Code, w.Body)
	}
	if w := get(svc.ManagementHandler(), "/webapi/DEFAULT/api/v1/services/a/b", "", ""); w.Code != http.StatusNotFound {
		t.Errorf("the management handler answered scoring with %d, want 404", w.Code)
	}
	r := httptest.NewRequest("POST", "/webapi/DEFAULT/api/v1/services/a/b", strings.NewReader(`{"data":[]}`))
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	svc.ScoringHandler().ServeHTTP(w, r)
	var e struct{ Error struct{ Type string } }
	if json.Unmarshal(w.Body.Bytes(), &e); w.Code != http.StatusNotFound || e.Error.Type != "not_found" {
		t.Errorf("the scoring handler answered an unknown endpoint %d %s, want 404 not_found", w.Code, w.Body)
	}
	if w := get(svc.ScoringHandler(), "/api/rest/tokenservice", "admin", "pw-for-parts"); w.Code == http.StatusOK {
		t.Error("the scoring handler issued a token")
	}

	off := newService(t, Config{AdminPassword: "pw-for-metrics-off", MetricsOff: true})
	if off.MetricsHandler() != nil {
		t.Error("with MetricsOff there is a metrics handler")
	}
	if w := get(off.Handler(), "/metrics", "", ""); w.Code != http.StatusNotFound {
		t.Errorf("with MetricsOff /metrics answered %d", w.Code)
	}
}

// TestHostUsers: a host's own users replace the built-in admin: the name
// admin is nobody unless the host's users say so.
func TestHostUsers(t *testing.T) {
	svc := newService(t, Config{Users: noUsers{}})
	if w := get(svc.Handler(), "/api/rest/tokenservice", "admin", "admin"); w.Code != http.StatusUnauthorized {
		t.Errorf("admin without a built-in admin answered %d, want 401", w.Code)
	}
}

func groupNamed(name string) registry.Group {
	return registry.Group{Name: name, Auth: registry.AuthPolicy{Mode: registry.Public}}
}

// TestHostStores: a service over a host's own stores keeps its records
// there, and leaves them open at Close for the host to close.
func TestHostStores(t *testing.T) {
	records := registry.NewMemStore(registry.StoreOptions{})
	jobs := jobs.NewMemStore(registry.StoreOptions{})
	book := accounts.NewMemoryStore()
	keys := &memKeys{}
	defer records.Close()
	defer jobs.Close()
	defer book.Close()
	stores := &Stores{Records: records, Jobs: jobs, Accounts: book, Keys: keys}
	svc, err := New(context.Background(), quiet(Config{Stores: stores, AdminPassword: "pw-host-stores"}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Registry().PutGroup(context.Background(), groupNamed("hosted")); err != nil {
		t.Fatal(err)
	}
	if err := svc.Close(); err != nil {
		t.Fatal(err)
	}
	st, err := records.Load(context.Background())
	if err != nil {
		t.Fatalf("the host's store after Close: %v, want it open", err)
	}
	if _, ok := st.Group("hosted"); !ok {
		t.Error("the host's store does not hold the group the service made")
	}
	again := newService(t, Config{Stores: stores, AdminPassword: "pw-host-stores"})
	if _, ok := again.Registry().Snapshot().State().Group("hosted"); !ok {
		t.Error("a second service over the same stores does not see the group")
	}
}

// memKeys is a host's key store, in memory.
type memKeys struct {
	mu  sync.Mutex
	set tokens.StoredKeySet
}

func (m *memKeys) Load(context.Context) (*tokens.StoredKeySet, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	set := m.set
	return &set, nil
}

func (m *memKeys) Commit(_ context.Context, base uint64, next *tokens.StoredKeySet) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if base != m.set.Seq {
		return tokens.ErrStale
	}
	m.set = *next
	return nil
}
