package tokens

// FileAccountStore is a durable [AccountStore]. It keeps every user and API
// token in one JSON file, accounts.json (mode 0600), in its directory, and
// commits by writing the whole new state atomically (see package
// internal/atomicfile), so a crash leaves exactly the state before a
// commit or after it. One FileAccountStore at a time, in any process, may
// have a directory open. It is safe for concurrent use.
type FileAccountStore struct{ memoryImage }

var _ AccountStore = (*FileAccountStore)(nil)

// OpenFileAccountStore opens the store kept in dir, creating dir (mode
// 0700) and an empty store when they do not exist. A file that cannot be
// read, is of an unknown format version or breaks a rule is an error naming
// it; it is never replaced. Another open of dir fails until Close.
func OpenFileAccountStore(dir string) (*FileAccountStore, error) {
	return nil, errAccountsUnbuilt
}

// Close implements [AccountStore]. It waits for a commit in progress and
// releases the directory.
func (s *FileAccountStore) Close() error {
	s.close()
	return nil
}
