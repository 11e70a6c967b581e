-- The token signing key set that every replica signs and verifies with:
-- one row, absent until the first replica creates the set, holding the set
-- in the key file's format (private keys in PKCS #8 PEM). It is as secret
-- as the key file: no role but the service's should be granted it. A
-- rotation replaces the row conditionally on the seq it was decided on.
CREATE TABLE signing_keys (
	id   boolean PRIMARY KEY DEFAULT true CHECK (id),
	seq  bigint NOT NULL CHECK (seq > 0),
	data bytea NOT NULL
);
