// Command embed shows scorehub inside a server that already has routes of
// its own: the host keeps its mux and mounts the whole service (scoring,
// tokens, the management API, the test page and the metrics) under /ml/
// with http.StripPrefix. Every link the service writes carries /ml.
//
//	SCOREHUB_ADMIN_PASSWORD=correct-horse go run ./examples/embed
//	curl -s localhost:8081/hello
//	TOKEN=$(curl -s -u admin:correct-horse localhost:8081/ml/api/rest/tokenservice | jq -r .idToken)
//	curl -s localhost:8081/ml/api/v1/endpoints -H "Authorization: Bearer $TOKEN"
//
// and the test page is at http://localhost:8081/ml/ui/.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/scorehub/scorehub"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8081", "listen address")
	data := flag.String("data", "", "data directory; empty keeps everything in memory")
	flag.Parse()
	svc, err := scorehub.New(context.Background(), scorehub.Config{
		DataDir:       *data, // empty keeps everything in memory
		AdminPassword: os.Getenv("SCOREHUB_ADMIN_PASSWORD"),
		Console:       os.Stdout,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer svc.Close()
	mux := newHandler(svc)

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("listening on http://%s/ (scorehub under /ml/)\n", ln.Addr())
	// A client that sends its headers slowly must not hold a connection.
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 2 * time.Minute}
	go func() {
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			log.Fatal(err)
		}
	}()

	// On SIGINT or SIGTERM: the requests in flight and the running jobs
	// get half a minute to end, then the service closes its stores.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	drain, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv.Shutdown(drain)
	svc.Shutdown(drain)
}

// newHandler builds the host's mux: its own /hello route beside the whole
// of scorehub under /ml/.
func newHandler(svc *scorehub.Service) *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /hello", hello) // the host's own routes stay as they are
	mux.Handle("/ml/", http.StripPrefix("/ml", svc.Handler()))
	return mux
}

// hello is one of the host's own routes.
func hello(w http.ResponseWriter, _ *http.Request) {
	fmt.Fprintln(w, "hello from the host application")
}
