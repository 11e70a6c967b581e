// Command scorehub is scorehub's reference server: the whole service
// (scoring, tokens, the management API, the endpoint test pages and
// metrics) over a data directory or a shared PostgreSQL database, with a
// demo endpoint. Install and run it with
//
//	go install github.com/scorehub/scorehub/cmd/scorehub@latest
//	scorehub -h
//	scorehub -version
//
// Flags and SCOREHUB_* environment variables configure it;
// docs/configuration.md lists them. SIGINT or SIGTERM drains the requests
// in flight and exits 0.
package main

import (
	"os"

	"github.com/scorehub/scorehub/internal/standalone"
)

func main() { os.Exit(standalone.Main()) }
