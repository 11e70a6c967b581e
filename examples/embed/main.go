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
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"

	"github.com/scorehub/scorehub"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8081", "listen address")
	data := flag.String("data", "", "data directory; empty keeps everything in memory")
	flag.Parse()
	h, svc, err := newHandler(context.Background(), scorehub.Config{
		DataDir:       *data,
		AdminPassword: os.Getenv("SCOREHUB_ADMIN_PASSWORD"),
		Console:       os.Stdout,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer svc.Close()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("listening on http://%s/ (scorehub under /ml/)\n", ln.Addr())
	log.Fatal(http.Serve(ln, h))
}

// newHandler builds the host's mux: its own /hello route beside the whole
// of scorehub under /ml/.
func newHandler(ctx context.Context, cfg scorehub.Config) (http.Handler, *scorehub.Service, error) {
	svc, err := scorehub.New(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /hello", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "hello from the host application")
	})
	mux.Handle("/ml/", http.StripPrefix("/ml", svc.Handler()))
	return mux, svc, nil
}
