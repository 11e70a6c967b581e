package registry

import "time"

// SetNow sets the clock r stamps records with; tests call it before r is
// shared.
func SetNow(r *Registry, now func() time.Time) { r.now = now }
