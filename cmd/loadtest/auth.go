package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// The kinds of credentials -auth calls a protected endpoint with: the
// schemes a protected web API group may take.
const (
	authBasic    = "basic"    // Authorization: Basic, a user's name and password
	authAPIToken = "apitoken" // Authorization: apitoken, an API token of the user
	authBearer   = "bearer"   // Authorization: Bearer, an idToken the token service issued to the user
)

// authKinds lists the values -auth takes besides none.
var authKinds = []string{authBasic, authAPIToken, authBearer}

// authText names a kind of credentials as its Authorization header does.
func authText(kind string) string {
	switch kind {
	case authBasic:
		return "Basic"
	case authBearer:
		return "Bearer idToken"
	}
	return kind
}

// adminName is the standalone server's built-in admin, whom
// SCOREHUB_ADMIN_PASSWORD sets the password of.
const adminName = "admin"

// protected is a protected copy of the endpoint under test: a user, a web
// API group that only that user's group may call and only with one kind of
// credentials, and the same endpoint deployed in it. The harness creates
// it through the management API and deletes it when done.
type protected struct {
	url  string // of the protected endpoint
	cred *credential
	scaffold
}

// scaffold is what the harness made on a server for one run, through the
// management API as the admin, and deletes when the run ends.
type scaffold struct {
	admin   *manager
	created []string // management paths to DELETE, in the order made
}

// endpointPath splits the path of a scoring endpoint into what it is made of.
var endpointPath = regexp.MustCompile(`^(.*)/([^/]+)/api/v1/services/([^/]+)/([^/]+)$`)

// protect creates, on the server at base logged in as the admin with
// adminPassword, a user, a web API group that takes only kind from that
// user, and in it a deployment of the endpoint at path as the server
// deploys it in its public group: the same process, queue and timeout. On
// an error it deletes what it made.
func protect(ctx context.Context, c *http.Client, base, path, kind, adminPassword string) (p *protected, err error) {
	m := endpointPath.FindStringSubmatch(path)
	if m == nil {
		return nil, fmt.Errorf("loadtest: -path %q is not the path of a scoring endpoint ({prefix}/{group}/api/v1/services/{path}/{alias}), which -auth copies into a protected group", path)
	}
	prefix, group, depPath, alias := m[1], m[2], m[3], m[4]
	admin := &manager{client: c, base: base, user: adminName, password: adminPassword}
	if err := admin.login(ctx); err != nil {
		return nil, err
	}

	// The endpoint as its group deploys it, copied whole so that the
	// protected one runs the same process on the same queue.
	var dep struct {
		Endpoints []json.RawMessage `json:"endpoints"`
	}
	if err := admin.call(ctx, http.MethodGet, "/api/v1/deployments/"+url.PathEscape(group)+"/"+url.PathEscape(depPath), nil, &dep); err != nil {
		return nil, err
	}
	var endpoint json.RawMessage
	for _, e := range dep.Endpoints {
		var v struct {
			Alias string `json:"alias"`
		}
		if json.Unmarshal(e, &v) == nil && v.Alias == alias {
			endpoint = e
		}
	}
	if endpoint == nil {
		return nil, fmt.Errorf("loadtest: the deployment %s/%s has no endpoint %s", group, depPath, alias)
	}

	// Names of their own, so that runs against one server do not meet.
	name := "loadtest-" + strings.ToLower(rand.Text()[:10])
	password := rand.Text()
	p = &protected{url: base + prefix + "/" + name + "/api/v1/services/" + depPath + "/" + alias, scaffold: scaffold{admin: admin}}
	defer func() {
		if err != nil {
			err = errors.Join(err, p.remove(context.WithoutCancel(ctx)))
			p = nil
		}
	}()
	steps := []struct {
		path, made string
		body       any
	}{
		{"/api/v1/users", "/api/v1/users/" + url.PathEscape(name),
			map[string]any{"name": name, "password": password, "groups": []string{name}}},
		{"/api/v1/webapigroups", "/api/v1/webapigroups/" + name,
			map[string]any{"name": name, "description": "made by cmd/loadtest for one run",
				"auth": map[string]any{"mode": "token", "groups": []string{name}, "schemes": []string{kind}}}},
		{"/api/v1/deployments", "/api/v1/deployments/" + name + "/" + url.PathEscape(depPath),
			map[string]any{"group": name, "path": depPath, "endpoints": []json.RawMessage{endpoint}}},
	}
	for _, s := range steps {
		if err := admin.call(ctx, http.MethodPost, s.path, s.body, nil); err != nil {
			return p, err
		}
		p.created = append(p.created, s.made)
	}

	switch kind {
	case authBasic:
		p.cred = &credential{header: "Basic " + base64.StdEncoding.EncodeToString([]byte(name+":"+password))}
	case authAPIToken:
		var tok struct {
			ID    string `json:"id"`
			Token string `json:"token"`
		}
		body := map[string]any{"name": "loadtest", "owner": name, "webApiGroups": []string{name}}
		if err := admin.call(ctx, http.MethodPost, "/api/v1/apitokens", body, &tok); err != nil {
			return p, err
		}
		p.created = append(p.created, "/api/v1/apitokens/"+url.PathEscape(tok.ID))
		p.cred = &credential{header: "apitoken " + tok.Token}
	case authBearer:
		p.cred = &credential{user: &manager{client: c, base: base, user: name, password: password}}
		if _, err := p.cred.fresh(ctx, time.Now()); err != nil {
			return p, err
		}
	default:
		return p, fmt.Errorf("loadtest: -auth %q: no such kind of credentials", kind)
	}
	return p, nil
}

// remove deletes what was made, newest first, logged in afresh: the
// admin's idToken may have expired during the run.
func (s *scaffold) remove(ctx context.Context) error {
	if len(s.created) == 0 {
		return nil
	}
	if err := s.admin.login(ctx); err != nil {
		return fmt.Errorf("%w; left on the server: %s", err, strings.Join(s.created, ", "))
	}
	var errs []error
	for i := len(s.created) - 1; i >= 0; i-- {
		if err := s.admin.call(ctx, http.MethodDelete, s.created[i], nil, nil); err != nil {
			errs = append(errs, err)
		}
	}
	s.created = nil
	return errors.Join(errs...)
}

// credential is the Authorization header a protected endpoint is called
// with. It is not safe for concurrent use.
type credential struct {
	header string
	// user, for an idToken, is whom the token service issues it to; nil
	// for credentials that do not expire.
	user *manager
}

// fresh returns the Authorization header's value, valid at least until
// until: an idToken that expires sooner is replaced by a new one.
func (c *credential) fresh(ctx context.Context, until time.Time) (string, error) {
	if c.user == nil {
		return c.header, nil
	}
	if c.header == "" || !until.Before(c.user.expires) {
		if err := c.user.login(ctx); err != nil {
			return "", err
		}
		c.header = "Bearer " + c.user.token
	}
	if !until.Before(c.user.expires) {
		return "", fmt.Errorf("loadtest: the server's idTokens expire at %s, before the run ending at %s does; give the server a longer -token-validity or the harness a shorter -duration",
			c.user.expires.UTC().Format(time.RFC3339), until.UTC().Format(time.RFC3339))
	}
	return c.header, nil
}

// manager calls the management API of the server at base as one user,
// with the idToken the token service issues for the user's password. It
// is not safe for concurrent use.
type manager struct {
	client         *http.Client
	base           string
	user, password string
	token          string    // the last idToken
	expires        time.Time // the token's expiry
}

// login asks the token service for an idToken.
func (m *manager) login(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, m.base+"/api/rest/tokenservice", nil)
	if err != nil {
		return fmt.Errorf("loadtest: %w", err)
	}
	req.SetBasicAuth(m.user, m.password)
	req.Header.Set("Accept", "application/json")
	var v struct {
		IDToken        string    `json:"idToken"`
		ExpirationDate time.Time `json:"expirationDate"`
	}
	err = m.do(req, &v)
	var se *statusError
	switch {
	case errors.As(err, &se) && se.status == http.StatusUnauthorized && m.user == adminName:
		return fmt.Errorf("loadtest: the server refused the admin password (%v); -admin-password must be the one the server was started with", err)
	case err != nil:
		return fmt.Errorf("loadtest: log in as %s: %w", m.user, err)
	case v.IDToken == "":
		return fmt.Errorf("loadtest: log in as %s: the token service answered no idToken", m.user)
	}
	m.token, m.expires = v.IDToken, v.ExpirationDate
	return nil
}

// call sends body, when not nil, as JSON to path with the method and
// decodes the answer into out, when not nil.
func (m *manager) call(ctx context.Context, method, path string, body, out any) error {
	if body == nil {
		return m.send(ctx, method, path, "", nil, out)
	}
	b, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("loadtest: %w", err)
	}
	return m.send(ctx, method, path, "application/json", b, out)
}

// send sends body, when contentType is not empty, to path with the
// method and decodes the answer into out, when not nil.
func (m *manager) send(ctx context.Context, method, path, contentType string, body []byte, out any) error {
	var r io.Reader
	if contentType != "" {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, m.base+path, r)
	if err != nil {
		return fmt.Errorf("loadtest: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+m.token)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if err := m.do(req, out); err != nil {
		return fmt.Errorf("loadtest: %s %s: %w", method, path, err)
	}
	return nil
}

// do sends req and decodes a 2xx answer into out, when not nil; any other
// status is a *statusError.
func (m *manager) do(req *http.Request, out any) error {
	resp, err := m.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return &statusError{status: resp.StatusCode, body: body}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("the answer is not the JSON expected: %w", err)
	}
	return nil
}

// statusError is an answer of the management API other than 2xx.
type statusError struct {
	status int
	body   []byte
}

// Error says the status and the server's own error, as scorehub writes it
// ({"error":{"type":…,"message":…}}), else the start of the body.
func (e *statusError) Error() string {
	var v struct {
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(e.body, &v) == nil && v.Error.Type != "" {
		return fmt.Sprintf("status %d: %s: %s", e.status, v.Error.Type, v.Error.Message)
	}
	return fmt.Sprintf("status %d: %.300s", e.status, bytes.TrimSpace(e.body))
}
