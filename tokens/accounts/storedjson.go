package accounts

import (
	"bytes"
	"encoding/json"
	"time"
)

// The JSON form of the stored users and API tokens: the accounts file
// (FileStore) holds them in it, and so does a database store's row, so
// that a row reads as the file does and one form serves every store.

// storedUserJSON is a [StoredUser] in the accounts file's form.
type storedUserJSON struct {
	Name              string    `json:"name"`
	PasswordHash      string    `json:"passwordHash"`
	Admin             bool      `json:"admin"`
	Groups            []string  `json:"groups"`
	CredentialVersion string    `json:"credentialVersion"`
	Revision          uint64    `json:"revision"`
	CreatedAt         time.Time `json:"createdAt"`
	UpdatedAt         time.Time `json:"updatedAt"`
}

// storedAPITokenJSON is a [StoredAPIToken] in the accounts file's form:
// never the secret, its SHA-256.
type storedAPITokenJSON struct {
	ID                string     `json:"id"`
	Name              string     `json:"name"`
	Owner             string     `json:"owner"`
	WebAPIGroups      []string   `json:"webApiGroups"`
	CreatedAt         time.Time  `json:"createdAt"`
	ExpiresAt         *time.Time `json:"expiresAt,omitempty"`
	LastUsedAt        *time.Time `json:"lastUsedAt,omitempty"`
	Hash              string     `json:"sha256"`
	CredentialVersion string     `json:"credentialVersion"`
}

// MarshalJSON writes u in the form the accounts file and a database row
// keep it in: the bcrypt hash as text, no groups as [].
func (u StoredUser) MarshalJSON() ([]byte, error) {
	return json.Marshal(storedUserJSON{Name: u.Name, PasswordHash: string(u.PasswordHash), Admin: u.Admin,
		Groups: nonNil(u.Groups), CredentialVersion: u.CredentialVersion, Revision: u.Revision,
		CreatedAt: u.CreatedAt, UpdatedAt: u.UpdatedAt})
}

// UnmarshalJSON reads what MarshalJSON writes, refusing a member it does
// not know.
func (u *StoredUser) UnmarshalJSON(b []byte) error {
	var j storedUserJSON
	if err := strictJSON(b, &j); err != nil {
		return err
	}
	*u = StoredUser{Name: j.Name, PasswordHash: []byte(j.PasswordHash), Admin: j.Admin,
		Groups: cloneNames(j.Groups), CredentialVersion: j.CredentialVersion, Revision: j.Revision,
		CreatedAt: j.CreatedAt, UpdatedAt: j.UpdatedAt}
	return nil
}

// MarshalJSON writes t in the form the accounts file and a database row
// keep it in; times never set are left out.
func (t StoredAPIToken) MarshalJSON() ([]byte, error) {
	return json.Marshal(storedAPITokenJSON{ID: t.ID, Name: t.Name, Owner: t.Owner, WebAPIGroups: nonNil(t.WebAPIGroups),
		CreatedAt: t.CreatedAt, ExpiresAt: timeOrNil(t.ExpiresAt), LastUsedAt: timeOrNil(t.LastUsedAt),
		Hash: t.Hash, CredentialVersion: t.CredentialVersion})
}

// UnmarshalJSON reads what MarshalJSON writes, refusing a member it does
// not know.
func (t *StoredAPIToken) UnmarshalJSON(b []byte) error {
	var j storedAPITokenJSON
	if err := strictJSON(b, &j); err != nil {
		return err
	}
	*t = StoredAPIToken{
		APIToken: APIToken{ID: j.ID, Name: j.Name, Owner: j.Owner, WebAPIGroups: cloneNames(j.WebAPIGroups),
			CreatedAt: j.CreatedAt, ExpiresAt: derefTime(j.ExpiresAt), LastUsedAt: derefTime(j.LastUsedAt)},
		Hash: j.Hash, CredentialVersion: j.CredentialVersion}
	return nil
}

// strictJSON decodes b into v, refusing a member v does not know.
func strictJSON(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func timeOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func derefTime(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return *t
}
