package registry

import (
	"errors"
	"fmt"
	"sort"
	"time"
)

// State is an immutable, consistent view of every record in a [Store].
// Accessors return copies; a State is safe for concurrent use.
type State struct {
	groups      map[string]Group
	deployments map[deploymentKey]Deployment
	queues      map[string]Queue
	models      map[string]Model
	// keys names the loaded form of every model version (see modelCache).
	keys map[versionKey]versionInfo
	seq  uint64
	// change is what the write that made the state changed; nil for a
	// state no write made.
	change *Change
}

type deploymentKey struct{ group, path string }

// NewState returns the state of a new store: the built-in DEFAULT group and
// queue, created at now.
func NewState(now time.Time) *State {
	return &State{
		groups: map[string]Group{DefaultGroup: {
			Name: DefaultGroup, Description: "The default web API group", Auth: AuthPolicy{Mode: Public},
			Revision: 1, CreatedAt: now, UpdatedAt: now,
		}},
		deployments: map[deploymentKey]Deployment{},
		queues: map[string]Queue{DefaultQueue: {
			Name: DefaultQueue, MaxConcurrent: DefaultMaxConcurrent, MaxWaiting: DefaultMaxWaiting,
			Revision: 1, CreatedAt: now, UpdatedAt: now,
		}},
		models: map[string]Model{},
		keys:   map[versionKey]versionInfo{},
	}
}

// BuildStateWithModels returns a state holding the given records as they
// are (revisions and times included), after checking every rule a write
// would: valid records, unique names, existing groups and queues, the
// built-in DEFAULT group and queue present; models with valid names,
// versions in ascending order and at most the model's LastVersion, SHA-256
// sums in lower-case hex, aliases in order of name pointing at versions
// that exist, and endpoints naming models, aliases and versions that
// exist. A revision must be one a write can store (neither 0 nor
// AnyRevision). seq is the state's [State.Seq]. A store uses it to load
// what it kept.
func BuildStateWithModels(seq uint64, groups []Group, deployments []Deployment, queues []Queue, models []Model) (*State, error) {
	s := &State{
		groups:      make(map[string]Group, len(groups)),
		deployments: make(map[deploymentKey]Deployment, len(deployments)),
		queues:      make(map[string]Queue, len(queues)),
		models:      make(map[string]Model, len(models)),
		keys:        make(map[versionKey]versionInfo),
		seq:         seq,
	}
	for i, m := range models {
		if err := m.validate(); err != nil {
			return nil, fmt.Errorf("model %d: %w", i, err)
		}
		if _, dup := s.models[m.Name]; dup {
			return nil, fmt.Errorf("registry: model %q appears twice", m.Name)
		}
		m = m.clone()
		for j, v := range m.Versions {
			// A store may keep it indented; the state holds what was stored.
			m.Versions[j].Sample = compactSample(v.Sample)
		}
		s.models[m.Name] = m
		for _, v := range m.Versions {
			s.keys[versionKey{m.Name, v.Version}] = newVersionInfo(m.Name, v)
		}
	}
	for i, g := range groups {
		if err := g.validate(); err != nil {
			return nil, fmt.Errorf("group %d: %w", i, err)
		}
		if err := checkStoredRevision(g.Revision); err != nil {
			return nil, fmt.Errorf("group %q: %w", g.Name, err)
		}
		if _, dup := s.groups[g.Name]; dup {
			return nil, fmt.Errorf("registry: group %q appears twice", g.Name)
		}
		g.Auth = g.Auth.clone()
		s.groups[g.Name] = g
	}
	for i, q := range queues {
		if err := q.validate(); err != nil {
			return nil, fmt.Errorf("queue %d: %w", i, err)
		}
		if err := checkStoredRevision(q.Revision); err != nil {
			return nil, fmt.Errorf("queue %q: %w", q.Name, err)
		}
		if _, dup := s.queues[q.Name]; dup {
			return nil, fmt.Errorf("registry: queue %q appears twice", q.Name)
		}
		s.queues[q.Name] = q
	}
	if _, ok := s.groups[DefaultGroup]; !ok {
		return nil, fmt.Errorf("registry: the built-in group %q is missing", DefaultGroup)
	}
	if _, ok := s.queues[DefaultQueue]; !ok {
		return nil, fmt.Errorf("registry: the built-in queue %q is missing", DefaultQueue)
	}
	for i, d := range deployments {
		if err := d.validate(); err != nil {
			return nil, fmt.Errorf("deployment %d: %w", i, err)
		}
		if err := checkStoredRevision(d.Revision); err != nil {
			return nil, fmt.Errorf("deployment %s/%s: %w", d.Group, d.Path, err)
		}
		if _, ok := s.groups[d.Group]; !ok {
			return nil, fmt.Errorf("registry: deployment %s/%s: no group %q", d.Group, d.Path, d.Group)
		}
		for _, e := range d.Endpoints {
			if _, ok := s.queues[e.QueueName()]; !ok {
				return nil, fmt.Errorf("registry: deployment %s/%s: no queue %q", d.Group, d.Path, e.QueueName())
			}
			for _, ref := range e.Models() {
				if err := s.checkModelRef(ref); err != nil {
					return nil, fmt.Errorf("registry: deployment %s/%s: endpoint %q: %w", d.Group, d.Path, e.Alias, err)
				}
			}
		}
		key := deploymentKey{d.Group, d.Path}
		if _, dup := s.deployments[key]; dup {
			return nil, fmt.Errorf("registry: deployment %s/%s appears twice", d.Group, d.Path)
		}
		d = d.clone()
		if d.Endpoints == nil {
			d.Endpoints = []Endpoint{}
		}
		s.deployments[key] = d
	}
	return s, nil
}

// checkStoredRevision rejects revisions no write can have stored: 0 means
// "create" and AnyRevision "whatever is stored" to the next writer, so a
// record holding either could never be updated by revision.
func checkStoredRevision(rev uint64) error {
	if rev == 0 || rev == AnyRevision {
		return invalid("/revision", "stored revision %d is out of range", rev)
	}
	return nil
}

// Seq counts the changes committed to the store before this state; it grows
// by one with every committed write.
func (s *State) Seq() uint64 { return s.seq }

// Change returns the one record the write that made s (from the state at
// Seq-1) stores or removes, and true; false for a state no write of a
// [Registry] made, such as one a store loaded. A store that keeps rows
// writes it.
func (s *State) Change() (Change, bool) {
	if s.change == nil {
		return Change{}, false
	}
	return *s.change, true
}

// Group returns the group named name.
func (s *State) Group(name string) (Group, bool) {
	g, ok := s.groups[name]
	g.Auth = g.Auth.clone()
	return g, ok
}

// Groups returns every group, sorted by name.
func (s *State) Groups() []Group {
	out := make([]Group, 0, len(s.groups))
	for name := range s.groups {
		g, _ := s.Group(name)
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Deployment returns the deployment at group/path.
func (s *State) Deployment(group, path string) (Deployment, bool) {
	d, ok := s.deployments[deploymentKey{group, path}]
	return d.clone(), ok
}

// Deployments returns every deployment, sorted by group, then path.
func (s *State) Deployments() []Deployment {
	out := make([]Deployment, 0, len(s.deployments))
	for _, d := range s.deployments {
		out = append(out, d.clone())
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Group != out[j].Group {
			return out[i].Group < out[j].Group
		}
		return out[i].Path < out[j].Path
	})
	return out
}

// Queue returns the queue named name.
func (s *State) Queue(name string) (Queue, bool) {
	q, ok := s.queues[name]
	return q, ok
}

// Queues returns every queue, sorted by name.
func (s *State) Queues() []Queue {
	out := make([]Queue, 0, len(s.queues))
	for _, q := range s.queues {
		out = append(out, q)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// next returns a shallow copy of s, one commit later, sharing the maps; the
// write that calls it replaces the map it changes.
func (s *State) next() *State {
	n := *s
	n.seq++
	n.change = nil
	return &n
}

func copyMap[K comparable, V any](m map[K]V) map[K]V {
	out := make(map[K]V, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}

// checkRevision applies the revision rules of a write: want is the revision
// the writer read (0: create only; AnyRevision: whatever is stored).
func checkRevision(kind, name string, want uint64, cur uint64, exists bool) error {
	switch {
	case want == AnyRevision:
		return nil
	case want == 0 && !exists:
		return nil
	case !exists:
		return errorf(ErrNotFound, "%s %q does not exist", kind, name)
	case want != cur:
		return &ConflictError{Kind: kind, Name: name, Want: want, Current: cur}
	}
	return nil
}

// The with and without methods apply one write to s under the rules
// documented on [Registry] and return the next state and the change a
// [Store] commits, leaving s as it was.

// withGroup returns s with g written, the change, and g as stored.
func (s *State) withGroup(g Group, now time.Time) (*State, Change, error) {
	if err := g.validate(); err != nil {
		return nil, Change{}, err
	}
	cur, exists := s.groups[g.Name]
	if err := checkRevision("group", g.Name, g.Revision, cur.Revision, exists); err != nil {
		return nil, Change{}, err
	}
	if g.Auth.Mode == "" {
		g.Auth.Mode = Public
	}
	g.Auth = g.Auth.clone()
	g.Revision, g.CreatedAt, g.UpdatedAt = cur.Revision+1, now, now
	if exists {
		g.CreatedAt = cur.CreatedAt
	}
	n := s.next()
	n.groups = copyMap(s.groups)
	n.groups[g.Name] = g
	g.Auth = g.Auth.clone() // the change's copy
	return n, Change{Group: &g, Revision: cur.Revision}, nil
}

// withoutGroup returns s without the group name.
func (s *State) withoutGroup(name string, rev uint64) (*State, Change, error) {
	cur, exists := s.groups[name]
	if !exists {
		return nil, Change{}, errorf(ErrNotFound, "group %q does not exist", name)
	}
	if err := checkRevision("group", name, rev, cur.Revision, true); err != nil {
		return nil, Change{}, err
	}
	if name == DefaultGroup {
		return nil, Change{}, errorf(ErrInUse, "group %q is built in and cannot be deleted", name)
	}
	for k := range s.deployments {
		if k.group == name {
			return nil, Change{}, errorf(ErrInUse, "group %q still has deployments (%s)", name, k.path)
		}
	}
	n := s.next()
	n.groups = copyMap(s.groups)
	delete(n.groups, name)
	cur.Auth = cur.Auth.clone()
	return n, Change{Group: &cur, Delete: true, Revision: cur.Revision}, nil
}

// CheckReferences reports every reference of d to a record s does not
// hold: its group, its endpoints' queues and the models, aliases and
// versions they name, each as an [*InvalidError]
// pointing at the field, joined with [errors.Join] in the order of the
// fields. It returns nil when every reference holds. It is the rule
// [Registry.PutDeployment] applies; a caller that checks more (such as
// processes against a catalog) calls it to report every fault at once.
func (s *State) CheckReferences(d Deployment) error {
	var errs []error
	if _, ok := s.groups[d.Group]; !ok {
		errs = append(errs, invalid("/group", "names no web API group: %q", d.Group))
	}
	for i, e := range d.Endpoints {
		if _, ok := s.queues[e.QueueName()]; !ok {
			errs = append(errs, invalid(fmt.Sprintf("/endpoints/%d/queue", i), "names no queue: %q", e.QueueName()))
		}
		if e.Model != "" {
			if err := s.checkModelRef(e.Model); err != nil {
				errs = append(errs, invalid(fmt.Sprintf("/endpoints/%d/model", i), "%s", err.(*InvalidError).Message))
			}
		}
		for j, c := range e.Challengers {
			if err := s.checkModelRef(c.Model); err != nil {
				errs = append(errs, invalid(fmt.Sprintf("/endpoints/%d/challengers/%d/model", i, j), "%s", err.(*InvalidError).Message))
			}
		}
	}
	return errors.Join(errs...)
}

// withDeployment returns s with d written, the change, and d as stored.
func (s *State) withDeployment(d Deployment, now time.Time) (*State, Change, error) {
	if err := d.validate(); err != nil {
		return nil, Change{}, err
	}
	if err := s.CheckReferences(d); err != nil {
		return nil, Change{}, err
	}
	key := deploymentKey{d.Group, d.Path}
	name := d.Group + "/" + d.Path
	cur, exists := s.deployments[key]
	if err := checkRevision("deployment", name, d.Revision, cur.Revision, exists); err != nil {
		return nil, Change{}, err
	}
	d = d.clone()
	d.Revision, d.CreatedAt, d.UpdatedAt = cur.Revision+1, now, now
	if exists {
		d.CreatedAt = cur.CreatedAt
	}
	n := s.next()
	n.deployments = copyMap(s.deployments)
	n.deployments[key] = d
	d = d.clone() // the change's copy
	return n, Change{Deployment: &d, Revision: cur.Revision}, nil
}

// withoutDeployment returns s without the deployment group/path.
func (s *State) withoutDeployment(group, path string, rev uint64) (*State, Change, error) {
	key := deploymentKey{group, path}
	cur, exists := s.deployments[key]
	if !exists {
		return nil, Change{}, errorf(ErrNotFound, "deployment %q does not exist", group+"/"+path)
	}
	if err := checkRevision("deployment", group+"/"+path, rev, cur.Revision, true); err != nil {
		return nil, Change{}, err
	}
	n := s.next()
	n.deployments = copyMap(s.deployments)
	delete(n.deployments, key)
	cur = cur.clone()
	return n, Change{Deployment: &cur, Delete: true, Revision: cur.Revision}, nil
}

// withQueue returns s with q written, the change, and q as stored.
func (s *State) withQueue(q Queue, now time.Time) (*State, Change, error) {
	if err := q.validate(); err != nil {
		return nil, Change{}, err
	}
	cur, exists := s.queues[q.Name]
	if err := checkRevision("queue", q.Name, q.Revision, cur.Revision, exists); err != nil {
		return nil, Change{}, err
	}
	q.Revision, q.CreatedAt, q.UpdatedAt = cur.Revision+1, now, now
	if exists {
		q.CreatedAt = cur.CreatedAt
	}
	n := s.next()
	n.queues = copyMap(s.queues)
	n.queues[q.Name] = q
	return n, Change{Queue: &q, Revision: cur.Revision}, nil
}

// withoutQueue returns s without the queue name.
func (s *State) withoutQueue(name string, rev uint64) (*State, Change, error) {
	cur, exists := s.queues[name]
	if !exists {
		return nil, Change{}, errorf(ErrNotFound, "queue %q does not exist", name)
	}
	if err := checkRevision("queue", name, rev, cur.Revision, true); err != nil {
		return nil, Change{}, err
	}
	if name == DefaultQueue {
		return nil, Change{}, errorf(ErrInUse, "queue %q is built in and cannot be deleted", name)
	}
	for _, d := range s.deployments {
		for _, e := range d.Endpoints {
			if e.QueueName() == name {
				return nil, Change{}, errorf(ErrInUse, "queue %q is used by endpoint %s/%s/%s", name, d.Group, d.Path, e.Alias)
			}
		}
	}
	n := s.next()
	n.queues = copyMap(s.queues)
	delete(n.queues, name)
	return n, Change{Queue: &cur, Delete: true, Revision: cur.Revision}, nil
}
