package tokens

import "time"

// What the external tests read of a value's configuration, which hosts
// have no need to read back.

func (i *Issuer) Validity() time.Duration { return i.validity }

func (s *KeySet) Retention() time.Duration { return s.retention }

func (s *StaticUsers) Len() int { return len(s.users) }
