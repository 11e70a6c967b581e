package testutil

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Page is one page of a list answer of the management API, in the shape of
// a Spring page, its items left as JSON objects.
type Page struct {
	Content       []map[string]any `json:"content"`
	TotalElements int              `json:"totalElements"`
	TotalPages    int              `json:"totalPages"`
	Number        int              `json:"number"`
	Size          int              `json:"size"`
}

// DecodeList reads a list answer of the management API: a page (an
// object) or, for the routes that answer a bare array as AI Hub does, an
// array. It returns the items and the page, which is nil for an array.
func DecodeList(raw []byte) ([]map[string]any, *Page, error) {
	raw = bytes.TrimSpace(raw)
	if bytes.HasPrefix(raw, []byte("{")) {
		var p Page
		if err := json.Unmarshal(raw, &p); err != nil {
			return nil, nil, fmt.Errorf("testutil: a page: %w", err)
		}
		return p.Content, &p, nil
	}
	var items []map[string]any
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, nil, fmt.Errorf("testutil: a list: %w", err)
	}
	return items, nil, nil
}
