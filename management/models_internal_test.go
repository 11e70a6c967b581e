package management

import "testing"

// A downloaded artifact is typed and named by its content, as the upload
// detected it.
func TestArtifactType(t *testing.T) {
	tests := []struct {
		name, data, contentType, ext string
	}{
		{"JSON", `{"learner":{}}`, "application/json", "json"},
		{"JSON after white space", "\n {\n \"version\": [1, 7]}", "application/json", "json"},
		{"empty JSON object", `{}`, "application/json", "json"},
		{"UBJSON", "{L\x00\x00\x00\x00\x00\x00\x00\x07learner{}}", "application/octet-stream", "ubj"},
		{"UBJSON with a short key", "{i\x07learner{}}", "application/octet-stream", "ubj"},
		{"text", "scorehub-test-linear v1\n", "application/octet-stream", "bin"},
		{"a brace and nothing JSON", "{x", "application/octet-stream", "bin"},
		{"nothing", "", "application/octet-stream", "bin"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ct, ext := artifactType([]byte(tt.data))
			if ct != tt.contentType || ext != tt.ext {
				t.Errorf("artifactType(%q) = %q, %q; want %q, %q", tt.data, ct, ext, tt.contentType, tt.ext)
			}
		})
	}
}
