package tokens

import (
	"time"
)

// What the external tests read of a value's configuration, which hosts
// have no need to read back.

func (i *Issuer) Validity() time.Duration { return i.validity }

func (s *KeySet) Retention() time.Duration { return s.retention }

// NewFileKeyStore is the store LoadOrCreateKeySet keeps the file at path
// in, for a path where no file is yet.
func NewFileKeyStore(path string) KeyStore {
	s, err := openFileKeyStore(path)
	if err != nil {
		panic(err) // nothing is read: there is no file
	}
	return s
}
