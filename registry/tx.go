package registry

import (
	"context"
	"errors"
	"time"
)

// Update decides one write of the records with fn, on the state the write
// commits on, and commits it: fn reads tx.State() and makes at most one
// write through tx. When another writer commits first, fn runs again on
// the newer state, and over a [Notifier] a refusal on a state older than
// the store's is decided again on the store's, as for every write of the
// Registry. So a caller that reads a record and writes it back under a
// condition of its own (an HTTP If-Match) has the condition checked on the
// state its write commits on, and needs no retry of its own.
//
// An error fn returns is Update's, and nothing is written; so is nothing
// when fn makes no write. fn runs holding the Registry's write lock: it
// must be quick and must not call the Registry's write methods.
func (r *Registry) Update(ctx context.Context, fn func(tx *Tx) error) error {
	var drop []string
	err := r.w.Write(ctx, func(cur *Snapshot) (*State, error) {
		tx := &Tx{r: r, st: cur.state, now: r.now().UTC()}
		if err := fn(tx); err != nil {
			return nil, err
		}
		if tx.next != nil {
			tx.next.change = &tx.change
		}
		drop = tx.drop
		return tx.next, nil
	})
	if err == nil {
		r.dropArtifacts(ctx, drop)
	}
	return err
}

// update is Update of one write that returns a record as stored.
func update[T any](ctx context.Context, r *Registry, write func(tx *Tx) (T, error)) (T, error) {
	var out T
	err := r.Update(ctx, func(tx *Tx) (err error) {
		out, err = write(tx)
		return err
	})
	return out, err
}

// Tx is one write of the records as [Registry.Update] decides it: the
// state it is decided on, and the one write decided there. Its write
// methods apply the rules of the Registry's methods of the same names and
// return what those would. A Tx is valid only during the call of the
// function Update gave it to, and is not safe for concurrent use.
type Tx struct {
	r      *Registry
	st     *State
	now    time.Time
	next   *State
	change Change
	drop   []string // artifacts of the versions the write removes
}

// errSecondWrite refuses a second write through one Tx.
var errSecondWrite = errors.New("registry: one Update makes one write")

// State returns the state the write is decided on.
func (tx *Tx) State() *State { return tx.st }

// set takes the write decided as next and c, unless err refuses it.
func (tx *Tx) set(next *State, c Change, err error) error {
	if err != nil {
		return err
	}
	if tx.next != nil {
		return errSecondWrite
	}
	tx.next, tx.change = next, c
	return nil
}

// PutGroup writes g as [Registry.PutGroup] does.
func (tx *Tx) PutGroup(g Group) (Group, error) {
	next, c, err := tx.st.withGroup(g, tx.now)
	if err := tx.set(next, c, err); err != nil {
		return Group{}, err
	}
	out := *c.Group
	out.Auth = out.Auth.clone()
	return out, nil
}

// DeleteGroup removes a group as [Registry.DeleteGroup] does.
func (tx *Tx) DeleteGroup(name string, revision uint64) error {
	return tx.set(tx.st.withoutGroup(name, revision))
}

// PutDeployment writes d as [Registry.PutDeployment] does, without
// loading the model versions its endpoints name first: the requests load
// them.
func (tx *Tx) PutDeployment(d Deployment) (Deployment, error) {
	next, c, err := tx.st.withDeployment(d, tx.now)
	if err := tx.set(next, c, err); err != nil {
		return Deployment{}, err
	}
	return c.Deployment.clone(), nil
}

// DeleteDeployment removes a deployment as [Registry.DeleteDeployment]
// does.
func (tx *Tx) DeleteDeployment(group, path string, revision uint64) error {
	return tx.set(tx.st.withoutDeployment(group, path, revision))
}

// PutQueue writes q as [Registry.PutQueue] does.
func (tx *Tx) PutQueue(q Queue) (Queue, error) {
	next, c, err := tx.st.withQueue(q, tx.now)
	if err := tx.set(next, c, err); err != nil {
		return Queue{}, err
	}
	return *c.Queue, nil
}

// DeleteQueue removes a queue as [Registry.DeleteQueue] does.
func (tx *Tx) DeleteQueue(name string, revision uint64) error {
	return tx.set(tx.st.withoutQueue(name, revision))
}

// PutModelAlias points an alias as [Registry.PutModelAlias] does. The
// version is loaded before the alias moves, here under the write lock
// when nothing loaded it before.
func (tx *Tx) PutModelAlias(model string, a ModelAlias) (ModelAlias, error) {
	if err := tx.r.ready(tx.st, model, a.Version); err != nil {
		return ModelAlias{}, err
	}
	next, c, stored, err := tx.st.withModelAlias(model, a, tx.now)
	if err := tx.set(next, c, err); err != nil {
		return ModelAlias{}, err
	}
	return stored, nil
}

// SwapModelAliases moves model's aliases a and b each to the version the
// other names, in one write of the model: so that promoting a challenger
// named by one alias of a model makes the champion named by the other
// the challenger at the same moment. revision, when not
// [AnyRevision], is the revision a must be at. It returns both as stored.
func (tx *Tx) SwapModelAliases(model, a, b string, revision uint64) (ModelAlias, ModelAlias, error) {
	m, ok := tx.st.Model(model)
	if !ok {
		return ModelAlias{}, ModelAlias{}, errorf(ErrNotFound, "model %q does not exist", model)
	}
	x, okA := m.Alias(a)
	y, okB := m.Alias(b)
	if !okA || !okB || a == b {
		return ModelAlias{}, ModelAlias{}, invalid("", "model %q has no two aliases %q and %q to swap", model, a, b)
	}
	if revision != AnyRevision && revision != x.Revision {
		return ModelAlias{}, ModelAlias{}, checkRevision("alias", model+"@"+a, revision, x.Revision, true)
	}
	for _, v := range []int{x.Version, y.Version} {
		if err := tx.r.ready(tx.st, model, v); err != nil {
			return ModelAlias{}, ModelAlias{}, err
		}
	}
	cur := m
	m = cur.clone()
	for k := range m.Aliases {
		switch al := &m.Aliases[k]; al.Name {
		case a:
			al.Version = y.Version
		case b:
			al.Version = x.Version
		default:
			continue
		}
		m.Aliases[k].Revision++
		m.Aliases[k].UpdatedAt = tx.now
	}
	next, c := tx.st.withModel(m, cur, true, tx.now)
	if err := tx.set(next, c, nil); err != nil {
		return ModelAlias{}, ModelAlias{}, err
	}
	movedA, _ := m.Alias(a)
	movedB, _ := m.Alias(b)
	return movedA, movedB, nil
}

// DeleteModelAlias removes an alias as [Registry.DeleteModelAlias] does.
func (tx *Tx) DeleteModelAlias(model, alias string, revision uint64) error {
	return tx.set(tx.st.withoutModelAlias(model, alias, revision, tx.now))
}

// DeleteModelVersion removes a version as [Registry.DeleteModelVersion]
// does; its artifact is deleted after the commit when no other version
// uses it.
func (tx *Tx) DeleteModelVersion(model string, version int) error {
	if err := tx.set(tx.st.withoutModelVersion(model, version, tx.now)); err != nil {
		return err
	}
	if v, ok := tx.st.models[model].Version(version); ok {
		tx.drop = []string{v.SHA256}
	}
	return nil
}

// DeleteModel removes a model as [Registry.DeleteModel] does; its
// artifacts are deleted after the commit when no other version uses them.
func (tx *Tx) DeleteModel(name string, revision uint64) error {
	if err := tx.set(tx.st.withoutModel(name, revision)); err != nil {
		return err
	}
	for _, v := range tx.st.models[name].Versions {
		tx.drop = append(tx.drop, v.SHA256)
	}
	return nil
}
