package management

import "testing"

// A downloaded artifact is typed and named by its format and content, as
// the upload detected them.
func TestArtifactType(t *testing.T) {
	tests := []struct {
		name, format, data, contentType, ext string
	}{
		{"JSON", "xgboost", `{"learner":{}}`, "application/json", "json"},
		{"JSON after white space", "xgboost", "\n {\n \"version\": [1, 7]}", "application/json", "json"},
		{"empty JSON object", "xgboost", `{}`, "application/json", "json"},
		{"UBJSON", "xgboost", "{L\x00\x00\x00\x00\x00\x00\x00\x07learner{}}", "application/octet-stream", "ubj"},
		{"UBJSON with a short key", "xgboost", "{i\x07learner{}}", "application/octet-stream", "ubj"},
		{"text", "xgboost", "scorehub-test-linear v1\n", "application/octet-stream", "bin"},
		{"a brace and nothing JSON", "xgboost", "{x", "application/octet-stream", "bin"},
		{"nothing", "xgboost", "", "application/octet-stream", "bin"},
		{"PMML", "pmml", "<?xml version=\"1.0\"?>\n<PMML version=\"4.4\"/>", "application/xml", "pmml"},
		{"ONNX", "onnx", "\x08\x08\x12\x11scorehub testdata", "application/octet-stream", "onnx"},
		{"ONNX that begins as JSON would", "onnx", "{\"x\"", "application/octet-stream", "onnx"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ct, ext := artifactType(tt.format, []byte(tt.data))
			if ct != tt.contentType || ext != tt.ext {
				t.Errorf("artifactType(%q) = %q, %q; want %q, %q", tt.data, ct, ext, tt.contentType, tt.ext)
			}
		})
	}
}
