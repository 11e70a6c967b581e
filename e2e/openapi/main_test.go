// Package openapi checks the reference server's OpenAPI document against
// the server: the document is valid OpenAPI 3.0, and real answers of every
// operation it lists, successes and errors, are answers it allows. The
// harness checks the answers of every other suite against it too.
package openapi

import (
	"os"
	"testing"

	"github.com/scorehub/scorehub/e2e/internal/harness"
)

func TestMain(m *testing.M) { os.Exit(harness.Main(m)) }

// mediaJSONLines is the media type of the payload log's export, whose
// answers the harness decodes as the array of their lines.
const mediaJSONLines = harness.MediaJSONLines
