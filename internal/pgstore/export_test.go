package pgstore

// SetListenHook has db's listener call fn after each connection it makes,
// before it listens. Set it before the first Subscribe.
func SetListenHook(db *DB, fn func()) { db.listenHook = fn }
