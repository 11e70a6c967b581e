package registry_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scorehub/scorehub/internal/tabletest"
	"github.com/scorehub/scorehub/internal/testutil"
	"github.com/scorehub/scorehub/problem"
	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/registry/process"
	"github.com/scorehub/scorehub/registry/registrytest"
)

func TestParseModelRef(t *testing.T) {
	tests := []struct {
		in   string
		want registry.ModelRef
		err  string
	}{
		{in: "churn@production", want: registry.ModelRef{Model: "churn", Alias: "production"}},
		{in: "churn@3", want: registry.ModelRef{Model: "churn", Version: 3}},
		{in: "churn@v3", want: registry.ModelRef{Model: "churn", Alias: "v3"}},
		{in: "a.b-c_d@12", want: registry.ModelRef{Model: "a.b-c_d", Version: 12}},
		{in: "churn", err: "names no version or alias"},
		{in: "churn@", err: `"" is not a valid alias name`},
		{in: "@production", err: `"" is not a valid model name`},
		{in: "churn@0", err: "not a version"},
		{in: "churn@03", err: "not a version"},
		{in: "churn@99999999999999999999999", err: "not a version"},
		{in: "churn@prod@x", err: "not a valid alias name"},
		{in: "../x@1", err: "not a valid model name"},
		{in: "churn@-x", err: "not a valid alias name"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := registry.ParseModelRef(tt.in)
			if tt.err != "" {
				var ie *registry.InvalidError
				if !errors.As(err, &ie) || !strings.Contains(ie.Message, tt.err) {
					t.Fatalf("ParseModelRef(%q) = %v, want an *InvalidError saying %q", tt.in, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("ParseModelRef(%q) = %+v, want %+v", tt.in, got, tt.want)
			}
			if got.String() != tt.in {
				t.Errorf("String() = %q, want %q", got.String(), tt.in)
			}
		})
	}
}

// modelWriter is a writer whose catalog reads the test format.
type modelWriter struct {
	writer
	format *registrytest.LinearFormat
}

func newModelWriter(t testing.TB, s registry.Store) modelWriter {
	t.Helper()
	cat := process.NewCatalog()
	f := &registrytest.LinearFormat{}
	if err := cat.RegisterFormat(f); err != nil {
		t.Fatal(err)
	}
	if err := cat.Register(process.ProcessInfo{Name: "gbm", Process: echo}); err != nil {
		t.Fatal(err)
	}
	r, err := registry.New(context.Background(), cat, s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return modelWriter{writer{r, s}, f}
}

// forEachModelStore runs fn against a Registry reading the test format
// over a new store of every kind; a FileStore is reopened afterwards and
// must hold what it held.
func forEachModelStore(t *testing.T, fn func(t *testing.T, s modelWriter, clk *testutil.Clock)) {
	for _, k := range storeKinds() {
		t.Run(k.name, func(t *testing.T) {
			clk := newClock()
			opts := registry.StoreOptions{Now: clk.Now}
			store, dir := k.open(t, opts)
			if _, ok := store.(registry.ArtifactStore); !ok {
				t.Fatalf("%s is no ArtifactStore", k.name)
			}
			s := newModelWriter(t, store)
			fn(t, s, clk)
			if dir == "" || t.Failed() {
				return
			}
			st := mustState(t, s.writer)
			if err := store.Close(); err != nil {
				t.Fatal(err)
			}
			re := openFileStore(t, dir, opts)
			if diff := cmp.Diff(dump(st), dump(mustState(t, re))); diff != "" {
				t.Errorf("reopened store differs from the one closed (-closed +reopened):\n%s", diff)
			}
		})
	}
}

var (
	churnV1 = registrytest.LinearArtifact(0.5, []string{"age", "income"}, []float64{0.25, -1})
	churnV2 = registrytest.LinearArtifact(-0.5, []string{"age", "income"}, []float64{0.5, 1})
)

func TestModelVersions(t *testing.T) {
	ctx := context.Background()
	forEachModelStore(t, func(t *testing.T, s modelWriter, clk *testutil.Clock) {
		meta := process.ModelMetadata{Label: "churn", Description: "first"}
		v1, created, err := s.AddModelVersion(ctx, "churn", churnV1, meta, nil)
		if err != nil || !created {
			t.Fatalf("first upload: %v, created %v", err, created)
		}
		if v1.Version != 1 || v1.SHA256 != sha(churnV1) || v1.Size != int64(len(churnV1)) || !v1.CreatedAt.Equal(clk.Now()) {
			t.Errorf("first version %+v", v1)
		}
		if v1.Schema.Format != "linear" || v1.Schema.Task != process.Regression || len(v1.Schema.Inputs) != 2 {
			t.Errorf("derived schema %+v", v1.Schema)
		}

		seq := mustState(t, s.writer).Seq()
		clk.Advance(1)
		again, created, err := s.AddModelVersion(ctx, "churn", churnV1, process.ModelMetadata{Label: "churn", Description: "first", Classes: []string{}}, nil)
		if err != nil || created || again.Version != 1 {
			t.Errorf("identical upload: version %d, created %v, %v; want version 1, not created", again.Version, created, err)
		}
		if got := mustState(t, s.writer).Seq(); got != seq {
			t.Errorf("an identical upload wrote: Seq %d → %d", seq, got)
		}

		v2 := must[registry.ModelVersion](t)(added(s.AddModelVersion(ctx, "churn", churnV1, process.ModelMetadata{Label: "churn", Description: "other words"}, nil)))
		v3 := must[registry.ModelVersion](t)(added(s.AddModelVersion(ctx, "churn", churnV2, meta, nil)))
		if v2.Version != 2 || v3.Version != 3 {
			t.Errorf("versions %d, %d; want 2, 3", v2.Version, v3.Version)
		}
		if err := s.DeleteModelVersion(ctx, "churn", 3); err != nil {
			t.Fatal(err)
		}
		v4 := must[registry.ModelVersion](t)(added(s.AddModelVersion(ctx, "churn", churnV2, meta, nil)))
		if v4.Version != 4 {
			t.Errorf("after deleting version 3 the next upload is %d, want 4: numbers are never reused", v4.Version)
		}
		m, _ := mustState(t, s.writer).Model("churn")
		var nums []int
		for _, v := range m.Versions {
			nums = append(nums, v.Version)
		}
		if diff := cmp.Diff([]int{1, 2, 4}, nums); diff != "" {
			t.Errorf("versions (-want +got):\n%s", diff)
		}
		// Four uploads that wrote and one delete.
		if m.Revision != 5 || m.LastVersion != 4 {
			t.Errorf("model revision %d, last version %d; want 5, 4", m.Revision, m.LastVersion)
		}

		// Versions 1 and 2 share an artifact: deleting one keeps it.
		if err := s.DeleteModelVersion(ctx, "churn", 1); err != nil {
			t.Fatal(err)
		}
		if b, err := s.ModelArtifact(ctx, "churn", 2); err != nil || string(b) != string(churnV1) {
			t.Errorf("artifact of version 2 after deleting version 1: %q, %v", b, err)
		}
		if _, err := s.ModelArtifact(ctx, "churn", 1); !errors.Is(err, registry.ErrNotFound) {
			t.Errorf("artifact of a deleted version: %v, want ErrNotFound", err)
		}
		if err := s.DeleteModelVersion(ctx, "churn", 1); !errors.Is(err, registry.ErrNotFound) {
			t.Errorf("deleting a deleted version: %v, want ErrNotFound", err)
		}
		if err := s.DeleteModelVersion(ctx, "nope", 1); !errors.Is(err, registry.ErrNotFound) {
			t.Errorf("deleting a version of no model: %v, want ErrNotFound", err)
		}
	})
}

// added drops AddModelVersion's created flag.
func added(v registry.ModelVersion, _ bool, err error) (registry.ModelVersion, error) { return v, err }

func TestModelUploadRefusals(t *testing.T) {
	ctx := context.Background()
	forEachModelStore(t, func(t *testing.T, s modelWriter, _ *testutil.Clock) {
		tests := []struct {
			name     string
			model    string
			artifact []byte
			meta     process.ModelMetadata
			check    func(t *testing.T, err error)
		}{
			{"invalid name", "../x", churnV1, process.ModelMetadata{}, func(t *testing.T, err error) { wantInvalid(t, err, "/name") }},
			{"no format reads it", "m", []byte("hello"), process.ModelMetadata{}, func(t *testing.T, err error) { wantIs(t, err, process.ErrModelFormat) }},
			{"a pickle", "m", []byte("\x80\x04\x95junk"), process.ModelMetadata{}, func(t *testing.T, err error) { wantIs(t, err, process.ErrModelFormat) }},
			{"invalid for its format", "m", []byte("scorehub-test-linear v1\nbias x\n"), process.ModelMetadata{}, func(t *testing.T, err error) { wantIs(t, err, process.ErrModelInvalid) }},
			{"metadata the model contradicts", "m", churnV1, process.ModelMetadata{Features: []string{"one"}}, func(t *testing.T, err error) { wantIs(t, err, process.ErrModelInvalid) }},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				_, _, err := s.AddModelVersion(ctx, tt.model, tt.artifact, tt.meta, nil)
				tt.check(t, err)
				if got := mustState(t, s.writer).Models(); len(got) != 0 {
					t.Errorf("a refused upload stored %+v", got)
				}
			})
		}
	})
}

func TestModelAliases(t *testing.T) {
	ctx := context.Background()
	forEachModelStore(t, func(t *testing.T, s modelWriter, clk *testutil.Clock) {
		must[registry.ModelVersion](t)(added(s.AddModelVersion(ctx, "churn", churnV1, process.ModelMetadata{}, nil)))
		must[registry.ModelVersion](t)(added(s.AddModelVersion(ctx, "churn", churnV2, process.ModelMetadata{}, nil)))

		prod := must[registry.ModelAlias](t)(s.PutModelAlias(ctx, "churn", registry.ModelAlias{Name: "production", Version: 1}))
		if prod.Revision != 1 || prod.Version != 1 || !prod.CreatedAt.Equal(clk.Now()) {
			t.Errorf("new alias %+v", prod)
		}
		_, err := s.PutModelAlias(ctx, "churn", registry.ModelAlias{Name: "production", Version: 2})
		wantConflict(t, err, registry.ConflictError{Kind: "alias", Name: "churn@production", Want: 0, Current: 1})
		_, err = s.PutModelAlias(ctx, "churn", registry.ModelAlias{Name: "production", Version: 2, Revision: 7})
		wantConflict(t, err, registry.ConflictError{Kind: "alias", Name: "churn@production", Want: 7, Current: 1})
		_, err = s.PutModelAlias(ctx, "churn", registry.ModelAlias{Name: "staging", Version: 2, Revision: 3})
		wantIs(t, err, registry.ErrNotFound) // a revision of an alias that does not exist

		created := clk.Now()
		clk.Advance(1)
		moved := must[registry.ModelAlias](t)(s.PutModelAlias(ctx, "churn", registry.ModelAlias{Name: "production", Version: 2, Revision: 1}))
		if moved.Revision != 2 || moved.Version != 2 || !moved.CreatedAt.Equal(created) || !moved.UpdatedAt.Equal(clk.Now()) {
			t.Errorf("moved alias %+v", moved)
		}
		must[registry.ModelAlias](t)(s.PutModelAlias(ctx, "churn", registry.ModelAlias{Name: "staging", Version: 1, Revision: registry.AnyRevision}))

		_, err = s.PutModelAlias(ctx, "churn", registry.ModelAlias{Name: "canary", Version: 9})
		wantInvalid(t, err, "/version")
		_, err = s.PutModelAlias(ctx, "churn", registry.ModelAlias{Name: "42", Version: 1})
		wantInvalid(t, err, "/name")
		_, err = s.PutModelAlias(ctx, "nope", registry.ModelAlias{Name: "production", Version: 1})
		wantIs(t, err, registry.ErrNotFound)

		m, _ := mustState(t, s.writer).Model("churn")
		if diff := cmp.Diff([]string{"production", "staging"}, aliasNames(m)); diff != "" {
			t.Errorf("aliases (-want +got):\n%s", diff)
		}
		if m.Revision != 5 {
			t.Errorf("model revision %d after two uploads and three alias writes, want 5", m.Revision)
		}

		// Aliases hold their versions.
		wantIs(t, s.DeleteModelVersion(ctx, "churn", 2), registry.ErrInUse)
		wantIs(t, s.DeleteModelVersion(ctx, "churn", 1), registry.ErrInUse)

		wantConflict(t, s.DeleteModelAlias(ctx, "churn", "staging", 5), registry.ConflictError{Kind: "alias", Name: "churn@staging", Want: 5, Current: 1})
		wantIs(t, s.DeleteModelAlias(ctx, "churn", "nope", registry.AnyRevision), registry.ErrNotFound)
		wantIs(t, s.DeleteModelAlias(ctx, "nope", "staging", registry.AnyRevision), registry.ErrNotFound)
		if err := s.DeleteModelAlias(ctx, "churn", "staging", 1); err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteModelVersion(ctx, "churn", 1); err != nil {
			t.Errorf("deleting a version no alias points at any more: %v", err)
		}
	})
}

func aliasNames(m registry.Model) []string {
	var out []string
	for _, a := range m.Aliases {
		out = append(out, a.Name)
	}
	return out
}

func TestModelEndpoints(t *testing.T) {
	ctx := context.Background()
	forEachModelStore(t, func(t *testing.T, s modelWriter, _ *testutil.Clock) {
		must[registry.ModelVersion](t)(added(s.AddModelVersion(ctx, "churn", churnV1, process.ModelMetadata{}, nil)))
		must[registry.ModelVersion](t)(added(s.AddModelVersion(ctx, "churn", churnV2, process.ModelMetadata{}, nil)))
		must[registry.ModelAlias](t)(s.PutModelAlias(ctx, "churn", registry.ModelAlias{Name: "production", Version: 1}))

		refused := []struct {
			name    string
			e       registry.Endpoint
			pointer string
		}{
			{"no such model", registry.Endpoint{Alias: "a", Model: "nope@1"}, "/endpoints/0/model"},
			{"no such alias", registry.Endpoint{Alias: "a", Model: "churn@staging"}, "/endpoints/0/model"},
			{"no such version", registry.Endpoint{Alias: "a", Model: "churn@3"}, "/endpoints/0/model"},
			{"not a reference", registry.Endpoint{Alias: "a", Model: "churn"}, "/endpoints/0/model"},
			{"process and model", registry.Endpoint{Alias: "a", Model: "churn@1", Process: "gbm"}, "/endpoints/0"},
			{"neither", registry.Endpoint{Alias: "a"}, "/endpoints/0"},
		}
		for _, tt := range refused {
			t.Run(tt.name, func(t *testing.T) {
				_, err := s.PutDeployment(ctx, deployment("DEFAULT", "churn", tt.e))
				wantInvalid(t, err, tt.pointer)
			})
		}

		must[registry.Deployment](t)(s.PutDeployment(ctx, deployment("DEFAULT", "churn",
			registry.Endpoint{Alias: "prod", Model: "churn@production"},
			registry.Endpoint{Alias: "pinned", Model: "churn@2"},
			registry.Endpoint{Alias: "iris", Process: "gbm"},
		)))
		row := tabletest.Must(1, process.NumberColumn("age", []float64{4}, nil), process.NumberColumn("income", []float64{1}, nil))
		score := func(alias string) (string, float64) {
			t.Helper()
			tg, err := s.Snapshot().Resolve("DEFAULT", "churn", alias)
			if err != nil {
				t.Fatal(err)
			}
			out, err := tg.Process.Process.Score(ctx, process.Input{Table: row})
			if err != nil {
				t.Fatal(err)
			}
			c, _ := out.Lookup("prediction(label)")
			v, _ := c.Number(0)
			return tg.Process.Name, v
		}
		if name, v := score("prod"); name != "churn@1" || v != 0.5 {
			t.Errorf("churn@production scores as %s: %v, want churn@1: 0.5+0.25*4-1 = 0.5", name, v)
		}
		if name, v := score("pinned"); name != "churn@2" || v != 2.5 {
			t.Errorf("churn@2 scores as %s: %v, want churn@2: -0.5+0.5*4+1 = 2.5", name, v)
		}
		p, err := s.Snapshot().EndpointProcess(registry.Endpoint{Alias: "x", Process: "gbm"})
		if err != nil || p.Name != "gbm" {
			t.Errorf("EndpointProcess of a process endpoint: %q, %v", p.Name, err)
		}
		if _, err := s.Snapshot().EndpointProcess(registry.Endpoint{Alias: "x", Model: "churn@9"}); !errors.Is(err, registry.ErrUnavailable) {
			t.Errorf("EndpointProcess of a missing version: %v, want ErrUnavailable", err)
		}

		must[registry.ModelAlias](t)(s.PutModelAlias(ctx, "churn", registry.ModelAlias{Name: "production", Version: 2, Revision: 1}))
		if name, v := score("prod"); name != "churn@2" || v != 2.5 {
			t.Errorf("after the move churn@production scores as %s: %v, want churn@2: 2.5", name, v)
		}

		// What endpoints use cannot be deleted.
		wantIs(t, s.DeleteModelAlias(ctx, "churn", "production", registry.AnyRevision), registry.ErrInUse)
		wantIs(t, s.DeleteModelVersion(ctx, "churn", 2), registry.ErrInUse)
		wantIs(t, s.DeleteModel(ctx, "churn", registry.AnyRevision), registry.ErrInUse)
		if err := s.DeleteModelVersion(ctx, "churn", 1); err != nil {
			t.Errorf("deleting a version no endpoint or alias uses: %v", err)
		}

		must[registry.Deployment](t)(s.PutDeployment(ctx, registry.Deployment{Group: "DEFAULT", Path: "churn", Revision: registry.AnyRevision}))
		m, _ := mustState(t, s.writer).Model("churn")
		wantConflict(t, s.DeleteModel(ctx, "churn", m.Revision+1), registry.ConflictError{Kind: "model", Name: "churn", Want: m.Revision + 1, Current: m.Revision})
		if err := s.DeleteModel(ctx, "churn", m.Revision); err != nil {
			t.Fatal(err)
		}
		if _, ok := mustState(t, s.writer).Model("churn"); ok {
			t.Error("the deleted model is still stored")
		}
		as := s.store.(registry.ArtifactStore)
		for _, art := range [][]byte{churnV1, churnV2} {
			if _, err := as.Artifact(ctx, sha(art)); !errors.Is(err, registry.ErrNotFound) {
				t.Errorf("artifact of a deleted model: %v, want ErrNotFound", err)
			}
		}
		wantIs(t, s.DeleteModel(ctx, "churn", registry.AnyRevision), registry.ErrNotFound)
		v := must[registry.ModelVersion](t)(added(s.AddModelVersion(ctx, "churn", churnV2, process.ModelMetadata{}, nil)))
		if v.Version != 1 {
			t.Errorf("a model created again starts at version %d, want 1", v.Version)
		}
	})
}

// TestRefusedUploadHoldsNothing: an upload that is refused (its model
// cannot be read, or disagrees with its verification rows) keeps nothing
// once it is answered, not even until the next write: the same upload
// again parses the file again. An upload that is stored keeps its parse.
func TestRefusedUploadHoldsNothing(t *testing.T) {
	ctx := context.Background()
	s := newModelWriter(t, registry.NewMemStore(registry.StoreOptions{}))
	rows := tabletest.Must(1, process.NumberColumn("age", []float64{4}, nil))
	wrong := &registry.Verification{Rows: rows, Expected: []any{-1.0}}
	broken := []byte(string(churnV1) + "weight age 1\n") // weighs age twice
	for i := range 3 {
		if _, _, err := s.AddModelVersion(ctx, "churn", churnV1, process.ModelMetadata{}, &registry.Upload{Verification: wrong}); err == nil {
			t.Fatal("an upload whose verification fails was stored")
		}
		if _, _, err := s.AddModelVersion(ctx, "churn", broken, process.ModelMetadata{}, nil); !errors.Is(err, process.ErrModelInvalid) {
			t.Fatalf("a broken file: %v, want ErrModelInvalid", err)
		}
		if n, want := s.format.Loads(), int64(2*(i+1)); n != want {
			t.Fatalf("%d loads after %d pairs of refused uploads, want %d: a refused upload's parse was kept", n, i+1, want)
		}
	}
	must[registry.ModelVersion](t)(added(s.AddModelVersion(ctx, "churn", churnV1, process.ModelMetadata{}, nil)))
	must[registry.ModelVersion](t)(added(s.AddModelVersion(ctx, "churn", churnV1, process.ModelMetadata{}, nil)))
	if n := s.format.Loads(); n != 7 {
		t.Errorf("%d loads after a stored upload and its repeat, want 7: a stored upload keeps its parse", n)
	}
}

// TestModelLoadedOnce checks an upload's parse serves its endpoints, a
// registry opened over stored models loads each used version once before
// its first request, and one that cannot be loaded answers ErrUnavailable
// naming the model.
func TestModelLoadedOnce(t *testing.T) {
	ctx := context.Background()
	store := registry.NewMemStore(registry.StoreOptions{})
	s := newModelWriter(t, store)
	must[registry.ModelVersion](t)(added(s.AddModelVersion(ctx, "churn", churnV1, process.ModelMetadata{}, nil)))
	must[registry.ModelVersion](t)(added(s.AddModelVersion(ctx, "churn", churnV2, process.ModelMetadata{}, nil)))
	must[registry.ModelVersion](t)(added(s.AddModelVersion(ctx, "unused", churnV2, process.ModelMetadata{Label: "x"}, nil)))
	must[registry.ModelAlias](t)(s.PutModelAlias(ctx, "churn", registry.ModelAlias{Name: "production", Version: 1}))
	must[registry.Deployment](t)(s.PutDeployment(ctx, deployment("DEFAULT", "churn",
		registry.Endpoint{Alias: "prod", Model: "churn@production"}, registry.Endpoint{Alias: "pinned", Model: "churn@2"})))
	if _, err := s.Snapshot().Resolve("DEFAULT", "churn", "prod"); err != nil {
		t.Fatal(err)
	}
	if n := s.format.Loads(); n != 3 {
		t.Errorf("%d loads after three uploads and a request, want 3: the upload's parse is reused", n)
	}

	// The next start of the server, over what the store holds.
	re := newModelWriter(t, store)
	if n := re.format.Loads(); n != 2 {
		t.Errorf("a new registry loaded %d models, want the 2 endpoints use", n)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for _, alias := range []string{"prod", "pinned"} {
				if _, err := re.Snapshot().Resolve("DEFAULT", "churn", alias); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if n := re.format.Loads(); n != 2 {
		t.Errorf("%d loads after requests, want still 2", n)
	}
	// A version nothing used yet is loaded once, by its first users at once.
	for range 8 {
		wg.Go(func() {
			if _, err := re.Snapshot().EndpointProcess(registry.Endpoint{Alias: "x", Model: "unused@1"}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := re.format.Loads(); n != 3 {
		t.Errorf("%d loads after using another version from 8 goroutines, want 3", n)
	}
	// A deployment naming a version loads it before it is stored.
	must[registry.Deployment](t)(re.PutDeployment(ctx, deployment("DEFAULT", "two", registry.Endpoint{Alias: "a", Model: "churn@1"},
		registry.Endpoint{Alias: "b", Model: "unused@1"})))
	if n := re.format.Loads(); n != 3 {
		t.Errorf("%d loads after deploying loaded versions, want 3", n)
	}
	must[registry.ModelVersion](t)(added(re.AddModelVersion(ctx, "later", churnV1, process.ModelMetadata{Label: "later"}, nil)))
	// Another replica's upload, or the next start: this registry has not parsed it.
	third := newModelWriter(t, store)
	base := third.format.Loads()
	must[registry.Deployment](t)(third.PutDeployment(ctx, deployment("DEFAULT", "later", registry.Endpoint{Alias: "a", Model: "later@1"})))
	if n := third.format.Loads() - base; n != 1 {
		t.Errorf("deploying a version not loaded loaded %d models, want 1", n)
	}
	if _, err := third.Snapshot().Resolve("DEFAULT", "later", "a"); err != nil || third.format.Loads()-base != 1 {
		t.Errorf("first request after the deployment: %v, %d loads", err, third.format.Loads()-base)
	}

	// A server that reads no such format.
	plain, err := registry.New(ctx, process.NewCatalog(), store)
	if err != nil {
		t.Fatalf("New over models of a format it does not read: %v", err)
	}
	defer plain.Close()
	_, err = plain.Snapshot().Resolve("DEFAULT", "churn", "prod")
	if !errors.Is(err, registry.ErrUnavailable) || !errors.Is(err, process.ErrModelFormat) {
		t.Fatalf("Resolve of an unreadable model: %v, want ErrUnavailable wrapping the cause", err)
	}
	var ce *problem.Error
	if !errors.As(err, &ce) || !strings.Contains(ce.Message, "churn@1") {
		t.Errorf("client message does not name the model: %v", err)
	}
	_, err = plain.PutModelAlias(ctx, "churn", registry.ModelAlias{Name: "production", Version: 2, Revision: 1})
	wantIs(t, err, registry.ErrUnavailable)
	if a, _ := mustModel(t, plain, "churn").Alias("production"); a.Version != 1 {
		t.Errorf("an alias moved to a version that cannot be loaded: %+v", a)
	}
}

func mustModel(t *testing.T, r *registry.Registry, name string) registry.Model {
	t.Helper()
	m, ok := r.Snapshot().State().Model(name)
	if !ok {
		t.Fatalf("no model %q", name)
	}
	return m
}

// TestModelWritesNeedArtifactStore checks a store that keeps no artifacts
// refuses models plainly.
func TestModelWritesNeedArtifactStore(t *testing.T) {
	s := newModelWriter(t, recordsOnly{registry.NewMemStore(registry.StoreOptions{})})
	_, _, err := s.AddModelVersion(context.Background(), "churn", churnV1, process.ModelMetadata{}, nil)
	if err == nil || !strings.Contains(err.Error(), "ArtifactStore") {
		t.Errorf("upload over a store without artifacts: %v", err)
	}
}

// recordsOnly is a Store that is no ArtifactStore.
type recordsOnly struct{ registry.Store }

// TestModelResolveDuringMoves scores through an alias while it moves
// between versions and uploads go on: no request fails, and every answer
// is one of a version's.
func TestModelResolveDuringMoves(t *testing.T) {
	ctx := context.Background()
	s := newModelWriter(t, registry.NewMemStore(registry.StoreOptions{}))
	must[registry.ModelVersion](t)(added(s.AddModelVersion(ctx, "churn", churnV1, process.ModelMetadata{}, nil)))
	must[registry.ModelVersion](t)(added(s.AddModelVersion(ctx, "churn", churnV2, process.ModelMetadata{}, nil)))
	must[registry.ModelAlias](t)(s.PutModelAlias(ctx, "churn", registry.ModelAlias{Name: "production", Version: 1}))
	must[registry.Deployment](t)(s.PutDeployment(ctx, deployment("DEFAULT", "churn", registry.Endpoint{Alias: "prod", Model: "churn@production"})))
	row := tabletest.Must(1, process.NumberColumn("age", []float64{4}, nil), process.NumberColumn("income", []float64{1}, nil))
	want := map[string]float64{"churn@1": 0.5, "churn@2": 2.5}

	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				tg, err := s.Snapshot().Resolve("DEFAULT", "churn", "prod")
				if err != nil {
					t.Errorf("Resolve during a move: %v", err)
					return
				}
				out, err := tg.Process.Process.Score(ctx, process.Input{Table: row})
				if err != nil {
					t.Error(err)
					return
				}
				c, _ := out.Lookup("prediction(label)")
				if v, _ := c.Number(0); v != want[tg.Process.Name] {
					t.Errorf("%s scored %v, want %v", tg.Process.Name, v, want[tg.Process.Name])
					return
				}
			}
		})
	}
	wg.Go(func() {
		for i := range 20 {
			art := registrytest.LinearArtifact(float64(i), []string{"age"}, []float64{1})
			if _, _, err := s.AddModelVersion(ctx, "other", art, process.ModelMetadata{}, nil); err != nil {
				t.Error(err)
				return
			}
		}
	})
	for i := range 100 {
		a := registry.ModelAlias{Name: "production", Version: 1 + (i+1)%2, Revision: registry.AnyRevision}
		if _, err := s.PutModelAlias(ctx, "churn", a); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
}

func TestVerification(t *testing.T) {
	ctx := context.Background()
	rows := tabletest.Must(3,
		process.NumberColumn("age", []float64{4, 0, 2}, nil),
		process.NumberColumn("income", []float64{1, 0, 0}, []bool{false, true, false}))
	// churnV1 scores 0.5, 0.5 and 1.0.
	cls := process.ModelMetadata{Label: "churn", Classes: []string{"no", "yes"}}
	tests := []struct {
		name string
		meta process.ModelMetadata
		v    registry.Verification
		err  string // "" means accepted
	}{
		{"regression agrees", process.ModelMetadata{}, registry.Verification{Rows: rows, Expected: []any{0.5, 0.5, 1.0}}, ""},
		{"within the tolerance", process.ModelMetadata{}, registry.Verification{Rows: rows, Expected: []any{0.5000001, 0.5, 1}, Tolerance: 1e-3}, ""},
		{"relative to large values", process.ModelMetadata{}, registry.Verification{Rows: rows, Expected: []any{0.5, 0.5, 1.0000005}}, ""},
		{"past the default tolerance", process.ModelMetadata{}, registry.Verification{Rows: rows, Expected: []any{0.5, 0.5001, 1}},
			"differ from the expected ones in 1 of 3 rows: row 1, prediction(label): got 0.5, want 0.5001"},
		{"every row listed up to five", process.ModelMetadata{}, registry.Verification{Rows: rows, Expected: []any{0.0, 0.0, 0.0}},
			"in 3 of 3 rows: row 0, prediction(label): got 0.5, want 0; row 1, prediction(label): got 0.5, want 0; row 2, prediction(label): got 1, want 0"},
		{"classes", cls, registry.Verification{Rows: rows, Expected: []any{"yes", "yes", "yes"}}, ""},
		{"a wrong class", cls, registry.Verification{Rows: rows, Expected: []any{"yes", "no", "yes"}},
			`in 1 of 3 rows: row 1, prediction(churn): got "yes", want "no"`},
		{"confidences", cls, registry.Verification{Rows: rows, Expected: []any{[]float64{0.3775406687981454, 0.6224593312018546}, []any{0.3775406687981454, 0.6224593312018546}, []float64{0.2689414213699951, 0.7310585786300049}}}, ""},
		{"wrong confidences", cls, registry.Verification{Rows: rows, Expected: []any{[]float64{0.6224593312018546, 0.3775406687981454}, []float64{0.3775406687981454, 0.6224593312018546}, []float64{0.2689414213699951, 0.7310585786300049}}},
			"in 1 of 3 rows: row 0, confidence(no): got 0.3775406687981454, want 0.6224593312018546; row 0, confidence(yes)"},
		{"named columns", cls, registry.Verification{Rows: rows, Expected: []any{map[string]any{"prediction(churn)": "yes"}, map[string]any{"confidence(yes)": 0.6224593312018546}, map[string]any{}}}, ""},
		{"a column the model does not answer", cls, registry.Verification{Rows: rows, Expected: []any{map[string]any{"score": 1.0}, "yes", "yes"}},
			"row 0, score: got no such column, want 1"},
		{"too few expectations", process.ModelMetadata{}, registry.Verification{Rows: rows, Expected: []any{0.5}}, "1 expected predictions for 3 rows"},
		{"an unreadable expectation", process.ModelMetadata{}, registry.Verification{Rows: rows, Expected: []any{true, 0.5, 1}}, "row 0 is a bool"},
		{"confidences of too few classes", cls, registry.Verification{Rows: rows, Expected: []any{[]float64{1}, "yes", "yes"}}, "row 0 expects 1 confidences; the model has 2 classes"},
		{"a negative tolerance", process.ModelMetadata{}, registry.Verification{Rows: rows, Expected: []any{0.5, 0.5, 1}, Tolerance: -1}, "tolerance"},
		{"a column of the wrong kind", process.ModelMetadata{}, registry.Verification{
			Rows: tabletest.Must(1, process.TextColumn("age", []string{"old"}, nil)), Expected: []any{0.5}}, `column "age" holds text values`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newModelWriter(t, registry.NewMemStore(registry.StoreOptions{}))
			_, _, err := s.AddModelVersion(ctx, "churn", churnV1, tt.meta, &registry.Upload{Verification: &tt.v})
			if tt.err == "" {
				if err != nil {
					t.Fatalf("verification refused: %v", err)
				}
				return
			}
			var ce *problem.Error
			if !errors.Is(err, registry.ErrVerification) || !errors.As(err, &ce) || !strings.Contains(ce.Message, tt.err) {
				t.Fatalf("error = %v, want ErrVerification saying %q", err, tt.err)
			}
			if len(mustState(t, s.writer).Models()) != 0 {
				t.Error("a version that failed verification was stored")
			}
		})
	}
}

func TestVerificationListsFirstFive(t *testing.T) {
	n := 12
	ages := make([]float64, n)
	want := make([]any, n)
	for i := range want {
		want[i] = 99.0
	}
	s := newModelWriter(t, registry.NewMemStore(registry.StoreOptions{}))
	_, _, err := s.AddModelVersion(context.Background(), "churn", churnV1, process.ModelMetadata{},
		&registry.Upload{Verification: &registry.Verification{Rows: tabletest.Must(n, process.NumberColumn("age", ages, nil)), Expected: want}})
	msg := fmt.Sprint(err)
	if !strings.Contains(msg, "in 12 of 12 rows") || !strings.Contains(msg, "row 4,") || strings.Contains(msg, "row 5,") || !strings.Contains(msg, "and 7 more values") {
		t.Errorf("error = %s; want the first five rows listed and the count of the rest", msg)
	}
}

func TestModelSample(t *testing.T) {
	ctx := context.Background()
	forEachModelStore(t, func(t *testing.T, s modelWriter, _ *testutil.Clock) {
		// churnV1 scores 0.5 + 0.25*age - income, a missing value as 0.
		rows := tabletest.Must(4,
			process.TextColumn("id", []string{"a", "b", "c", "d"}, nil),
			process.NumberColumn("income", []float64{1, 0, 0, 3}, []bool{false, true, false, false}),
			process.NumberColumn("age", []float64{4, 0, 2, 8}, nil))
		v1 := must[registry.ModelVersion](t)(added(s.AddModelVersion(ctx, "churn", churnV1, process.ModelMetadata{},
			&registry.Upload{Verification: &registry.Verification{Rows: rows, Expected: []any{0.5, 0.5, 1.0, -0.5}}})))
		v2 := must[registry.ModelVersion](t)(added(s.AddModelVersion(ctx, "churn", churnV2, process.ModelMetadata{}, nil)))
		// The first rows, every input in the model's order, a missing value
		// null, the column the model does not read left out.
		want := `[{"age":4,"income":1},{"age":0,"income":null},{"age":2,"income":0}]`
		if string(v1.Sample) != want {
			t.Errorf("version 1's sample = %s; want %s", v1.Sample, want)
		}
		if v2.Sample != nil {
			t.Errorf("version 2, uploaded without verification, has the sample %s", v2.Sample)
		}
		m, _ := s.Snapshot().State().Model("churn")
		if got, _ := m.Version(1); string(got.Sample) != want {
			t.Errorf("stored version 1's sample = %s; want %s", got.Sample, want)
		}
		for _, tt := range []struct{ model, sample string }{
			{"churn@1", want},
			{"churn@2", `[{"age":0,"income":0}]`},
		} {
			p, err := s.Snapshot().EndpointProcess(registry.Endpoint{Alias: "a", Model: tt.model})
			if err != nil {
				t.Fatal(err)
			}
			if string(p.Sample) != tt.sample {
				t.Errorf("the process of %s has the sample %s; want %s", tt.model, p.Sample, tt.sample)
			}
		}
	})
}

func sha(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func TestBuildStateWithModels(t *testing.T) {
	now := newClock().Now()
	groups := []registry.Group{{Name: "DEFAULT", Revision: 1}}
	queues := []registry.Queue{{Name: "DEFAULT", MaxConcurrent: 1, Revision: 1}}
	version := func(v int, art []byte) registry.ModelVersion {
		return registry.ModelVersion{Version: v, SHA256: sha(art), Size: int64(len(art)), CreatedAt: now}
	}
	valid := func() registry.Model {
		return registry.Model{Name: "churn", Versions: []registry.ModelVersion{version(1, churnV1), version(3, churnV2)},
			Aliases:     []registry.ModelAlias{{Name: "production", Version: 3, Revision: 1}, {Name: "staging", Version: 1, Revision: 2}},
			LastVersion: 4, Revision: 6}
	}
	tests := []struct {
		name  string
		edit  func(m *registry.Model)
		model string // an endpoint's model reference
		want  string // "" means accepted
	}{
		{"valid", func(*registry.Model) {}, "churn@production", ""},
		{"endpoint on a version", func(*registry.Model) {}, "churn@3", ""},
		{"a sample", func(m *registry.Model) { m.Versions[0].Sample = []byte(`[{"age":1,"income":null}]`) }, "", ""},
		{"a sample not of rows", func(m *registry.Model) { m.Versions[0].Sample = []byte(`{"age":1}`) }, "", "the sample is not a JSON array of row objects"},
		{"a sample not JSON", func(m *registry.Model) { m.Versions[0].Sample = []byte(`[{"age":`) }, "", "the sample is not a JSON array of row objects"},
		{"invalid name", func(m *registry.Model) { m.Name = "a/b" }, "", "not a valid name"},
		{"revision 0", func(m *registry.Model) { m.Revision = 0 }, "", "revision 0 is out of range"},
		{"versions out of order", func(m *registry.Model) { m.Versions[0].Version = 5 }, "", "version 3 is not above the one before it (5)"},
		{"version twice", func(m *registry.Model) { m.Versions[1].Version = 1 }, "", "version 1 is not above"},
		{"version 0", func(m *registry.Model) { m.Versions[0].Version = 0 }, "", "version 0 is not above"},
		{"last version below a version", func(m *registry.Model) { m.LastVersion = 2 }, "", "last version 2 is below version 3"},
		{"sum not hex", func(m *registry.Model) { m.Versions[0].SHA256 = strings.ToUpper(m.Versions[0].SHA256) }, "", "not a SHA-256"},
		{"short sum", func(m *registry.Model) { m.Versions[0].SHA256 = "abc" }, "", "not a SHA-256"},
		{"alias to no version", func(m *registry.Model) { m.Aliases[0].Version = 2 }, "", "points at version 2, which does not exist"},
		{"aliases out of order", func(m *registry.Model) { m.Aliases[0], m.Aliases[1] = m.Aliases[1], m.Aliases[0] }, "", "out of order"},
		{"alias all digits", func(m *registry.Model) { m.Aliases[0].Name = "7" }, "", "all digits"},
		{"alias revision 0", func(m *registry.Model) { m.Aliases[1].Revision = 0 }, "", "revision 0 is out of range"},
		{"endpoint on no alias", func(*registry.Model) {}, "churn@canary", `names no alias of model "churn": "canary"`},
		{"endpoint on a deleted version", func(*registry.Model) {}, "churn@2", `names no version of model "churn": 2`},
		{"endpoint on no model", func(*registry.Model) {}, "fraud@1", `names no model: "fraud"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := valid()
			tt.edit(&m)
			var deps []registry.Deployment
			if tt.model != "" {
				deps = append(deps, registry.Deployment{Group: "DEFAULT", Path: "p", Revision: 1,
					Endpoints: []registry.Endpoint{{Alias: "a", Model: tt.model}}})
			}
			st, err := registry.BuildStateWithModels(3, groups, deps, queues, []registry.Model{m})
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if got, _ := st.Model("churn"); !cmp.Equal(got, m) {
					t.Errorf("state holds %+v, want %+v", got, m)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one saying %q", err, tt.want)
			}
		})
	}
	if _, err := registry.BuildStateWithModels(1, groups, nil, queues, []registry.Model{valid(), valid()}); err == nil || !strings.Contains(err.Error(), `model "churn" appears twice`) {
		t.Errorf("a model twice: %v", err)
	}
}

// TestModelResolveAllocatesNothing checks resolving a model endpoint costs
// a scoring request no allocation, as a process endpoint's does not.
func TestModelResolveAllocatesNothing(t *testing.T) {
	ctx := context.Background()
	s := newModelWriter(t, registry.NewMemStore(registry.StoreOptions{}))
	must[registry.ModelVersion](t)(added(s.AddModelVersion(ctx, "churn", churnV1, process.ModelMetadata{}, nil)))
	must[registry.ModelAlias](t)(s.PutModelAlias(ctx, "churn", registry.ModelAlias{Name: "production", Version: 1}))
	must[registry.Deployment](t)(s.PutDeployment(ctx, deployment("DEFAULT", "churn", registry.Endpoint{Alias: "prod", Model: "churn@production"})))
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := s.Snapshot().Resolve("DEFAULT", "churn", "prod"); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("Resolve of a model endpoint allocates %v times", allocs)
	}
}

// TestModelCacheDropsDeleted checks a deleted version's loaded model is
// not kept: the same file uploaded again is parsed again.
func TestModelCacheDropsDeleted(t *testing.T) {
	ctx := context.Background()
	s := newModelWriter(t, registry.NewMemStore(registry.StoreOptions{}))
	must[registry.ModelVersion](t)(added(s.AddModelVersion(ctx, "churn", churnV1, process.ModelMetadata{}, nil)))
	must[registry.ModelVersion](t)(added(s.AddModelVersion(ctx, "churn", churnV2, process.ModelMetadata{}, nil)))
	if err := s.DeleteModelVersion(ctx, "churn", 1); err != nil {
		t.Fatal(err)
	}
	must[registry.ModelVersion](t)(added(s.AddModelVersion(ctx, "churn", churnV2, process.ModelMetadata{}, nil)))
	if n := s.format.Loads(); n != 2 {
		t.Errorf("%d loads after two uploads and an identical one, want 2", n)
	}
	must[registry.ModelVersion](t)(added(s.AddModelVersion(ctx, "churn", churnV1, process.ModelMetadata{}, nil)))
	if n := s.format.Loads(); n != 3 {
		t.Errorf("%d loads after uploading a deleted version's file again, want 3: its model was dropped", n)
	}
}
