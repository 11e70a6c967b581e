package tokens

import (
	"context"
	"crypto"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/scorehub/scorehub/internal/image"
)

// keyFileVersion is the format version written to and required of key files.
const keyFileVersion = 1

// maxKeyFile bounds what LoadOrCreateKeySet reads: a few keys take a few KiB.
const maxKeyFile = 1 << 20

// keyFile is the JSON document a key set is kept in. Private keys are PKCS #8
// PEM; HS256 secrets are base64url. signsFrom, set only on a key rotated
// into a shared set, was added to version 1 without changing it: files
// without it read as before, and a reader that ignores it signs with that
// key at once, as sets did before handovers.
type keyFile struct {
	Version int            `json:"version"`
	Keys    []keyFileEntry `json:"keys"`
}

type keyFileEntry struct {
	ID         string     `json:"kid"`
	Algorithm  Algorithm  `json:"alg"`
	Created    time.Time  `json:"created"`
	SignsFrom  *time.Time `json:"signsFrom,omitempty"`
	Retired    *time.Time `json:"retired,omitempty"`
	NotAfter   *time.Time `json:"notAfter,omitempty"`
	PrivateKey string     `json:"privateKey,omitempty"`
	Secret     string     `json:"secret,omitempty"`
}

// LoadOrCreateKeySet returns the key set kept in the file at path, creating
// the file with a new set (cfg.Signing, or a generated key of cfg.Algorithm)
// when there is none, so tokens survive a restart. Every later
// [KeySet.Rotate], [KeySet.RotateTo] and [KeySet.Prune] writes the file
// before the change takes effect. It is [OpenKeySet] over the file.
//
// The file holds private keys. It is written with mode 0600 (its directory is
// created with 0700 if missing), replaced atomically, and refused at load if
// group or others may read or write it: fix that with chmod 600, as ssh asks
// for its keys. On Windows the mode is not checked. Each key's ID is checked
// against its key material at load. One file serves one process: two
// processes rotating the same file overwrite each other's keys; replicas
// share a set through a [KeyNotifier] store instead.
func LoadOrCreateKeySet(path string, cfg KeySetConfig) (*KeySet, error) {
	f, err := openFileKeyStore(path)
	if err != nil {
		return nil, err
	}
	return openKeySet(context.Background(), f, cfg, "key file "+path)
}

// openFileKeyStore opens the [KeyStore] of LoadOrCreateKeySet: one key
// file, of one process, written by the first commit when it does not
// exist, and never locked, as a file on a read-only mount may be read.
// The file keeps no commit count, so the store counts the commits it made
// since it found the file: one when it did.
func openFileKeyStore(path string) (*image.File[StoredKeySet], error) {
	return image.OpenFile(image.FileConfig[StoredKeySet]{
		MemConfig:  image.MemConfig[StoredKeySet]{Seq: storedSeq, Closed: errKeyStoreClosed},
		Path:       path,
		TempPrefix: "." + filepath.Base(path) + ".tmp-",
		Empty:      func() *StoredKeySet { return &StoredKeySet{} },
		Encode:     func(st *StoredKeySet) ([]byte, error) { return st.Data, nil },
		Decode:     func(data []byte) (*StoredKeySet, error) { return &StoredKeySet{Seq: 1, Data: data}, nil },
		Secret:     "private keys",
		MaxSize:    maxKeyFile,
		Prefix:     "tokens",
		What:       "key file",
	})
}

// errKeyStoreClosed is what a closed key store of this package fails
// with; a KeySet never closes its store.
var errKeyStoreClosed = errors.New("tokens: key store closed")

func decodeKeyFile(data []byte) (*keyState, error) {
	var kf keyFile
	if err := json.Unmarshal(data, &kf); err != nil {
		return nil, err
	}
	if kf.Version != keyFileVersion {
		return nil, fmt.Errorf("version %d, want %d", kf.Version, keyFileVersion)
	}
	st := &keyState{}
	seen := map[string]bool{}
	for i, fe := range kf.Keys {
		e, err := fe.entry()
		if err != nil {
			return nil, fmt.Errorf("key %d: %w", i, err)
		}
		if seen[e.key.id] {
			return nil, fmt.Errorf("key %d: kid %s appears twice", i, e.key.id)
		}
		seen[e.key.id] = true
		if e.retired.IsZero() {
			if len(st.entries) > 0 && st.entries[0].retired.IsZero() {
				return nil, errors.New("more than one signing (unretired) key")
			}
			st.entries = append([]*keyEntry{e}, st.entries...)
		} else {
			st.entries = append(st.entries, e)
		}
	}
	if len(st.entries) == 0 || !st.entries[0].retired.IsZero() {
		return nil, errors.New("no signing (unretired) key")
	}
	st.index()
	return st, nil
}

func (fe keyFileEntry) entry() (*keyEntry, error) {
	var (
		k   *Key
		err error
	)
	switch {
	case fe.Algorithm == HS256:
		secret, derr := decodeB64(fe.Secret)
		if derr != nil {
			return nil, fmt.Errorf("bad HS256 secret: %w", derr)
		}
		k, err = NewHMACKey(secret)
	default:
		block, rest := pem.Decode([]byte(fe.PrivateKey))
		if block == nil || block.Type != "PRIVATE KEY" || len(rest) != 0 {
			return nil, errors.New("privateKey is not one PKCS #8 PEM block")
		}
		priv, perr := x509.ParsePKCS8PrivateKey(block.Bytes)
		if perr != nil {
			return nil, perr
		}
		signer, ok := priv.(crypto.Signer)
		if !ok {
			return nil, fmt.Errorf("unsupported private key type %T", priv)
		}
		k, err = NewKey(signer)
	}
	if err != nil {
		return nil, err
	}
	if k.alg != fe.Algorithm {
		return nil, fmt.Errorf("alg %q does not fit a %s key", fe.Algorithm, k.alg)
	}
	if k.id != fe.ID {
		return nil, fmt.Errorf("kid %q does not match the key's thumbprint %s", fe.ID, k.id)
	}
	e := &keyEntry{key: k, created: fe.Created}
	if fe.SignsFrom != nil {
		e.signsFrom = *fe.SignsFrom
	}
	if (fe.Retired == nil) != (fe.NotAfter == nil) {
		return nil, errors.New("retired and notAfter must be set together")
	}
	if fe.Retired != nil {
		e.retired, e.notAfter = *fe.Retired, *fe.NotAfter
	}
	return e, nil
}

func encodeKeyFile(st *keyState) ([]byte, error) {
	kf := keyFile{Version: keyFileVersion}
	for _, e := range st.entries {
		fe := keyFileEntry{ID: e.key.id, Algorithm: e.key.alg, Created: e.created}
		if !e.signsFrom.IsZero() {
			f := e.signsFrom
			fe.SignsFrom = &f
		}
		if !e.retired.IsZero() {
			r, n := e.retired, e.notAfter
			fe.Retired, fe.NotAfter = &r, &n
		}
		if e.key.alg == HS256 {
			fe.Secret = b64(e.key.secret)
		} else {
			der, err := x509.MarshalPKCS8PrivateKey(e.key.signer)
			if err != nil {
				return nil, fmt.Errorf("tokens: encode key %s: %w", e.key.id, err)
			}
			fe.PrivateKey = string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
		}
		kf.Keys = append(kf.Keys, fe)
	}
	b, err := json.MarshalIndent(kf, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("tokens: encode key file: %w", err)
	}
	return append(b, '\n'), nil
}
