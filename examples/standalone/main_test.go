package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestSmoke runs the server in-process for a moment: it listens, the demo
// endpoint classifies a row, the token service issues a token for the admin
// password, and it stops cleanly when its context ends. The end-to-end
// suites, which run the built server as a process, are in the e2e module.
func TestSmoke(t *testing.T) {
	const password = "correct horse battery staple"
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr := make(chan string, 1)
	done := make(chan error, 1)
	getenv := func(k string) string {
		if k == "SCOREHUB_ADMIN_PASSWORD" {
			return password
		}
		return ""
	}
	go func() {
		done <- run(ctx, []string{"-addr", "127.0.0.1:0", "-data", t.TempDir()}, getenv, io.Discard, io.Discard, func(a string) { addr <- a })
	}()
	var base string
	select {
	case a := <-addr:
		base = "http://" + a
	case err := <-done:
		t.Fatalf("the server stopped before listening: %v", err)
	case <-time.After(time.Minute):
		t.Fatal("the server did not listen within a minute")
	}

	res, err := http.Post(base+"/webapi/DEFAULT/api/v1/services/iris/classify", "application/json",
		strings.NewReader(`{"data":[{"sepal_length":5.1,"sepal_width":3.5,"petal_length":1.4,"petal_width":0.2}]}`))
	if err != nil {
		t.Fatal(err)
	}
	var scored struct{ Data []map[string]any }
	err = json.NewDecoder(res.Body).Decode(&scored)
	res.Body.Close()
	if err != nil || res.StatusCode != http.StatusOK || len(scored.Data) != 1 || scored.Data[0]["prediction(species)"] != "setosa" {
		t.Errorf("the demo endpoint answered %d %v (%v), want one setosa row", res.StatusCode, scored.Data, err)
	}

	req, _ := http.NewRequest(http.MethodGet, base+"/api/rest/tokenservice", nil)
	req.SetBasicAuth("admin", password)
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var tok struct{ IDToken string }
	err = json.NewDecoder(res.Body).Decode(&tok)
	res.Body.Close()
	if err != nil || res.StatusCode != http.StatusOK || tok.IDToken == "" {
		t.Errorf("the token service answered %d (%v), want an idToken", res.StatusCode, err)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("run returned %v after its context ended, want nil", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the server did not stop within a minute of its context ending")
	}
}
