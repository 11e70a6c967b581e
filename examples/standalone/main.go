// Command standalone is scorehub's reference server, the same program as
// cmd/scorehub, kept here so that a checkout runs it with
//
//	go run ./examples/standalone
//
// Install it as scorehub with go install github.com/scorehub/scorehub/cmd/scorehub@latest.
package main

import (
	"os"

	"github.com/scorehub/scorehub/internal/standalone"
)

func main() { os.Exit(standalone.Main()) }
