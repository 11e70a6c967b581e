package postgres

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/scorehub/scorehub/registry"
)

// Subscribe implements [registry.Notifier]. The first subscription starts
// the DB's listener: one connection of its own, outside the pool, that
// LISTENs for the commits of every DB on the database, loads the records
// after each and calls fn with them. After a lost connection it
// reconnects, with a pause that doubles up to Config.RetryMax, and loads
// the records at once, so a commit whose notification it missed is not
// missed; every Config.PollInterval it also compares the stored Seq with
// the last one it delivered. fn runs on the listener's goroutine, one call
// at a time, never while the listener waits on the database.
func (db *DB) Subscribe(fn func(*registry.State)) (cancel func()) {
	db.lmu.Lock()
	defer db.lmu.Unlock()
	if db.closed.Load() {
		return func() {}
	}
	if db.lis == nil {
		db.lis = newListener(db)
	}
	return db.lis.add(fn)
}

// listener delivers the records to the subscribers of a DB.
type listener struct {
	db *DB
	wg sync.WaitGroup

	mu   sync.Mutex // guards subs, next
	subs map[int]func(*registry.State)
	next int

	dmu  sync.Mutex // serialises reloads and deliveries; guards last
	last uint64     // the Seq last delivered
	// delivered counts every state delivered; a test waits on it.
	delivered uint64
}

func newListener(db *DB) *listener {
	l := &listener{db: db, subs: map[int]func(*registry.State){}}
	l.wg.Add(2)
	go l.listen(db.ctx)
	go l.poll(db.ctx)
	return l
}

func (l *listener) add(fn func(*registry.State)) func() {
	l.mu.Lock()
	defer l.mu.Unlock()
	id := l.next
	l.next++
	l.subs[id] = fn
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		delete(l.subs, id)
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
		l.db.log.Warn("postgres: record notifications interrupted; reconnecting", "err", redact(err, l.db.secret), "after", pause)
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

// session connects, listens and reloads, then delivers the records after
// every notification until the connection fails. It returns nil when it
// had listened before it failed, so that the next pause starts short.
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
	if _, err := conn.Exec(ctx, "LISTEN "+recordsChannel); err != nil {
		return err
	}
	// Whatever was committed while no connection listened.
	if err := l.reload(ctx); err != nil {
		return err
	}
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		if seq, perr := strconv.ParseUint(n.Payload, 10, 64); perr == nil && seq <= l.lastSeq() {
			continue // delivered already, by a reload that came after it
		}
		if err := l.reload(ctx); err != nil {
			l.db.log.Warn("postgres: reload records after a notification", "err", err)
		}
	}
}

// poll compares the stored Seq with the delivered one every PollInterval.
func (l *listener) poll(ctx context.Context) {
	defer l.wg.Done()
	t := time.NewTicker(l.db.cfg.PollInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		var seq int64
		if err := l.db.pool.QueryRow(ctx, "SELECT seq FROM record_seq").Scan(&seq); err != nil {
			if ctx.Err() == nil {
				l.db.log.Warn("postgres: poll the records' seq", "err", l.db.wrap(err))
			}
			continue
		}
		if uint64(seq) > l.lastSeq() {
			if err := l.reload(ctx); err != nil && ctx.Err() == nil {
				l.db.log.Warn("postgres: reload records", "err", err)
			}
		}
	}
}

func (l *listener) lastSeq() uint64 {
	l.dmu.Lock()
	defer l.dmu.Unlock()
	return l.last
}

// reload loads the records and delivers them unless they are no newer
// than the last delivered.
func (l *listener) reload(ctx context.Context) error {
	l.dmu.Lock()
	defer l.dmu.Unlock()
	st, err := l.db.Load(ctx)
	if err != nil {
		return err
	}
	if st.Seq() <= l.last && l.delivered > 0 {
		return nil
	}
	l.last = st.Seq()
	l.delivered++
	l.mu.Lock()
	subs := make([]func(*registry.State), 0, len(l.subs))
	for _, fn := range l.subs {
		subs = append(subs, fn)
	}
	l.mu.Unlock()
	for _, fn := range subs {
		fn(st)
	}
	return nil
}
