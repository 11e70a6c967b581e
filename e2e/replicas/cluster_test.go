package replicas

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/scorehub/scorehub/e2e/internal/harness"
	"github.com/scorehub/scorehub/internal/pgtest"
)

// jobLease is the -job-lease of the replicas: short, so that the test of
// a killed replica does not wait long.
const jobLease = 3 * time.Second

// cluster is replicas of the server over one database of a PostgreSQL
// server of the test's own.
type cluster struct {
	pg       *pgtest.Server
	url      string
	replicas []*replica
}

// replica is one server process of a cluster, with an admin token of its
// own token service. client checks every answer against the server's
// OpenAPI document; plain, for streams of requests and for measuring, does
// not.
type replica struct {
	*harness.Server
	token         string
	client, plain *http.Client
}

// startCluster starts a database and n replicas over it, each with a data
// directory of its own.
func startCluster(t *testing.T, n int) *cluster {
	t.Helper()
	c := &cluster{pg: pgtest.New(t)}
	c.url = c.pg.NewDB(t)
	for range n {
		c.start(t)
	}
	return c
}

// start starts one more replica.
func (c *cluster) start(t *testing.T) *replica {
	t.Helper()
	s := harness.Start(t, harness.Options{
		Args: []string{"-store", c.url, "-job-lease", jobLease.String(), "-demo-sleep", "-access-log=false"},
	})
	if strings.Contains(s.Stdout()+s.Stderr(), c.pg.Password()) {
		t.Errorf("the replica shows the database's password:\n%s\n%s", s.Stdout(), s.Stderr())
	}
	r := &replica{Server: s,
		client: &http.Client{Transport: s.Conformance(t).Transport(t, http.DefaultTransport), Timeout: 30 * time.Second},
		plain:  &http.Client{Timeout: 30 * time.Second}}
	r.token = s.AdminToken(t)
	c.replicas = append(c.replicas, r)
	return r
}

// answer is a response read whole.
type answer struct {
	status int
	header http.Header
	body   []byte
	json   map[string]any
}

func (a answer) String() string { return fmt.Sprintf("%d %s", a.status, a.body) }

// do sends a request to r with its admin token and reads the answer,
// which must be one the OpenAPI document allows. err is not nil when no
// complete answer came.
func (r *replica) do(method, path, body string) (answer, error) {
	return r.send(r.client, method, path, body)
}

// serves reports whether r answers a GET of path 200, without checking
// the answer: the probe of a measurement.
func (r *replica) serves(path string) bool {
	a, err := r.send(r.plain, http.MethodGet, path, "")
	return err == nil && a.status == http.StatusOK
}

// send is do through client.
func (r *replica) send(client *http.Client, method, path, body string) (answer, error) {
	req, err := http.NewRequest(method, r.Base+path, strings.NewReader(body))
	if err != nil {
		return answer{}, err
	}
	req.Header.Set("Authorization", "Bearer "+r.token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := client.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer res.Body.Close()
	a := answer{status: res.StatusCode, header: res.Header}
	if a.body, err = io.ReadAll(res.Body); err != nil {
		return a, err
	}
	json.Unmarshal(a.body, &a.json) // an array or no body leaves it nil
	return a, nil
}

// must is do, failing the test unless the answer has status.
func (r *replica) must(t *testing.T, status int, method, path, body string) answer {
	t.Helper()
	a, err := r.do(method, path, body)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	if a.status != status {
		t.Fatalf("%s %s: %s, want %d", method, path, a, status)
	}
	return a
}

// score posts one row to the demo endpoint of r, without a token.
func (r *replica) score() (int, error) {
	res, err := r.plain.Post(r.Base+harness.IrisURL, "application/json", strings.NewReader(`{"data":[`+harness.IrisRow+`]}`))
	if err != nil {
		return 0, err
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode, nil
}
