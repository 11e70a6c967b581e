package pgstore

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/scorehub/scorehub/registry"
	"github.com/scorehub/scorehub/tokens"
	"github.com/scorehub/scorehub/tokens/accounts"
)

// Subscribe implements [registry.Notifier]. The first subscription starts
// the DB's listener: one connection of its own, outside the pool, that
// LISTENs for the commits of every DB on the database, loads the records
// after each and calls fn with them. After a lost connection it
// reconnects, with a pause that doubles up to Config.RetryMax, and loads
// the records at once, so a commit whose notification it missed is not
// missed; every Config.PollInterval it also compares the stored Seq with
// the last one it delivered. fn runs on the listener's goroutine, one call
// at a time, never while the listener waits on the database. Once cancel
// has returned, fn is not called again; fn must not call cancel.
func (db *DB) Subscribe(fn func(*registry.State)) (cancel func()) {
	return subscribe(db, func(l *listener) *feed[registry.State] { return l.records }, fn)
}

// subscribe adds fn to the feed of db's listener that pick names, starting
// the listener on the first subscription of any feed.
func subscribe[T any](db *DB, pick func(*listener) *feed[T], fn func(*T)) (cancel func()) {
	db.lmu.Lock()
	defer db.lmu.Unlock()
	if db.closed.Load() {
		return func() {}
	}
	if db.lis == nil {
		db.lis = newListener(db)
	}
	f := pick(db.lis)
	cancel = f.add(fn)
	// A feed subscribed to after the listener connected starts from what
	// is stored now; one subscribed before is loaded when it connects.
	db.lis.wake()
	return cancel
}

// listener delivers what the DBs on the database commit to the
// subscribers of a DB: one connection LISTENs on the channel of every
// feed, and each notification reloads the feed it names.
type listener struct {
	db *DB
	wg sync.WaitGroup

	records  *feed[registry.State]
	accounts *feed[accounts.State]
	keys     *feed[tokens.StoredKeySet]
	feeds    []feedLoader

	kick chan struct{} // wake asks the poller to look at once
}

// feedLoader is a feed, whatever it delivers.
type feedLoader interface {
	channel() string
	// reload loads the feed and delivers it when it is newer than the
	// last delivered; it does nothing without subscribers.
	reload(ctx context.Context) error
	// stale reports whether the stored Seq is newer than the last
	// delivered, or the feed has subscribers it has delivered nothing to.
	stale(ctx context.Context) (bool, error)
	lastSeq() uint64
	what() string
}

func newListener(db *DB) *listener {
	l := &listener{db: db, kick: make(chan struct{}, 1)}
	l.records = newFeed(db, "records", recordsChannel, "SELECT seq FROM record_seq", db.Load, (*registry.State).Seq)
	l.accounts = newFeed(db, "accounts", accountsChannel, accountSeqQuery, db.loadAccounts,
		func(st *accounts.State) uint64 { return st.Seq })
	l.keys = newFeed(db, "signing keys", keysChannel, keySeqQuery, db.loadKeys,
		func(st *tokens.StoredKeySet) uint64 { return st.Seq })
	l.feeds = []feedLoader{l.records, l.accounts, l.keys}
	l.wg.Add(2)
	go l.listen(db.ctx)
	go l.poll(db.ctx)
	return l
}

// wake has the poller look at every feed at once.
func (l *listener) wake() {
	select {
	case l.kick <- struct{}{}:
	default:
	}
}

// wait returns once the listener's goroutines have ended (the DB's context
// is cancelled).
func (l *listener) wait() { l.wg.Wait() }

// listen keeps one connection listening, reconnecting while ctx lasts.
func (l *listener) listen(ctx context.Context) {
	defer l.wg.Done()
	pause := retryMin
	for ctx.Err() == nil {
		err := l.session(ctx)
		if ctx.Err() != nil {
			return
		}
		l.db.log.Warn("postgres: notifications interrupted; reconnecting", "err", redact(err, l.db.secret), "after", pause)
		select {
		case <-ctx.Done():
			return
		case <-time.After(pause):
		}
		pause = min(pause*2, l.db.cfg.RetryMax)
		if err == nil {
			pause = retryMin
		}
	}
}

// session connects, listens and reloads, then reloads a feed after every
// notification of its channel until the connection fails. It returns nil
// when it had listened before it failed, so that the next pause starts
// short.
func (l *listener) session(ctx context.Context) error {
	cc := l.db.pool.Config().ConnConfig.Copy()
	conn, err := pgx.ConnectConfig(ctx, cc)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	if l.db.listenHook != nil {
		l.db.listenHook()
	}
	for _, f := range l.feeds {
		if _, err := conn.Exec(ctx, "LISTEN "+f.channel()); err != nil {
			return err
		}
	}
	// Whatever was committed while no connection listened.
	for _, f := range l.feeds {
		if err := f.reload(ctx); err != nil {
			return err
		}
	}
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		for _, f := range l.feeds {
			if f.channel() != n.Channel {
				continue
			}
			if seq, perr := strconv.ParseUint(n.Payload, 10, 64); perr == nil && seq <= f.lastSeq() {
				continue // delivered already, by a reload that came after it
			}
			if err := f.reload(ctx); err != nil {
				l.db.log.Warn("postgres: reload after a notification", "of", f.what(), "err", err)
			}
		}
	}
}

// poll compares each feed's stored Seq with the delivered one every
// PollInterval, and at once when woken.
func (l *listener) poll(ctx context.Context) {
	defer l.wg.Done()
	t := time.NewTicker(l.db.cfg.PollInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-l.kick:
		}
		for _, f := range l.feeds {
			stale, err := f.stale(ctx)
			if err != nil {
				if ctx.Err() == nil {
					l.db.log.Warn("postgres: poll the stored seq", "of", f.what(), "err", l.db.wrap(err))
				}
				continue
			}
			if stale {
				if err := f.reload(ctx); err != nil && ctx.Err() == nil {
					l.db.log.Warn("postgres: reload", "of", f.what(), "err", err)
				}
			}
		}
	}
}

// feed is one state image the listener delivers: the channel its commits
// notify, how its stored Seq is read, how it is loaded, and who is given
// it.
type feed[T any] struct {
	db       *DB
	name     string
	ch       string
	seqQuery string
	load     func(ctx context.Context) (*T, error)
	seq      func(*T) uint64

	mu    sync.Mutex // guards subs, fresh, next
	subs  map[int]func(*T)
	fresh map[int]bool // subscribers given nothing yet
	next  int

	dmu  sync.Mutex // serialises reloads and deliveries; guards last, delivered
	cmu  sync.Mutex // held while a reload calls the subscribers; a cancel waits for it
	last uint64     // the Seq last delivered
	// delivered counts every state delivered; a test waits on it.
	delivered uint64
}

func newFeed[T any](db *DB, name, ch, seqQuery string, load func(context.Context) (*T, error), seq func(*T) uint64) *feed[T] {
	return &feed[T]{db: db, name: name, ch: ch, seqQuery: seqQuery, load: load, seq: seq}
}

func (f *feed[T]) channel() string { return f.ch }
func (f *feed[T]) what() string    { return f.name }

func (f *feed[T]) add(fn func(*T)) func() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.subs == nil {
		f.subs, f.fresh = map[int]func(*T){}, map[int]bool{}
	}
	id := f.next
	f.next++
	f.subs[id] = fn
	f.fresh[id] = true
	return func() {
		f.mu.Lock()
		delete(f.subs, id)
		delete(f.fresh, id)
		f.mu.Unlock()
		// A reload calling the subscribers may have found this one still
		// there: wait for it, so that fn is not called once cancel has
		// returned. (fn must not cancel its own subscription.)
		f.cmu.Lock()
		defer f.cmu.Unlock()
	}
}

// has reports whether the subscription id is still there.
func (f *feed[T]) has(id int) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, ok := f.subs[id]
	return ok
}

// subscriber is one subscription as a reload found it.
type subscriber[T any] struct {
	id    int
	fn    func(*T)
	fresh bool // given nothing yet
}

// subscribers returns the subscriptions, and whether any is fresh.
func (f *feed[T]) subscribers() (subs []subscriber[T], fresh bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	subs = make([]subscriber[T], 0, len(f.subs))
	for id, fn := range f.subs {
		subs = append(subs, subscriber[T]{id, fn, f.fresh[id]})
	}
	return subs, len(f.fresh) > 0
}

// waiting reports whether the feed has subscribers, and whether any of
// them has been given nothing yet.
func (f *feed[T]) waiting() (subscribed, fresh bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.subs) > 0, len(f.fresh) > 0
}

func (f *feed[T]) lastSeq() uint64 {
	f.dmu.Lock()
	defer f.dmu.Unlock()
	return f.last
}

func (f *feed[T]) stale(ctx context.Context) (bool, error) {
	subscribed, fresh := f.waiting()
	if !subscribed {
		return false, nil
	}
	if fresh {
		return true, nil
	}
	var seq int64
	if err := f.db.pool.QueryRow(ctx, f.seqQuery).Scan(&seq); err != nil {
		return false, err
	}
	return uint64(seq) > f.lastSeq(), nil
}

// reload loads the feed and delivers it to every subscriber when it is
// newer than the last delivered, and otherwise to the subscribers given
// nothing yet, so that one who subscribes late starts from what is stored
// rather than from the next commit.
func (f *feed[T]) reload(ctx context.Context) error {
	f.dmu.Lock()
	defer f.dmu.Unlock()
	subs, fresh := f.subscribers()
	if len(subs) == 0 {
		return nil
	}
	v, err := f.load(ctx)
	if err != nil {
		return err
	}
	seq := f.seq(v)
	newer := seq > f.last || f.delivered == 0
	if !newer && !fresh {
		return nil
	}
	if newer {
		f.last = seq
		f.delivered++
	}
	f.cmu.Lock()
	for _, sub := range subs {
		if (newer || sub.fresh) && f.has(sub.id) {
			sub.fn(v)
		}
	}
	f.cmu.Unlock()
	f.mu.Lock()
	for _, sub := range subs {
		delete(f.fresh, sub.id)
	}
	f.mu.Unlock()
	return nil
}
