-- The users and API tokens of tokens.Accounts. account_seq holds the one
-- sequence number a commit advances (UPDATE ... WHERE seq = its base), so
-- that a write decided on an outdated state fails whoever decided it. A
-- user's body holds the bcrypt hash of the password, an API token's only
-- the SHA-256 of the token: no secret is stored in the clear.
CREATE TABLE account_seq (
	id  boolean PRIMARY KEY DEFAULT true CHECK (id),
	seq bigint NOT NULL CHECK (seq >= 0)
);
INSERT INTO account_seq (seq) VALUES (0);

CREATE TABLE account_users (
	name text COLLATE "C" PRIMARY KEY,
	body json NOT NULL
);

-- An API token's owner may be a user kept elsewhere (the users file), so
-- owner is no foreign key; removing a stored user removes the user's
-- tokens in the same transaction. No two tokens share a hash.
CREATE TABLE account_api_tokens (
	id    text COLLATE "C" PRIMARY KEY,
	owner text COLLATE "C" NOT NULL,
	hash  text NOT NULL UNIQUE,
	body  json NOT NULL
);
CREATE INDEX account_api_tokens_owner ON account_api_tokens (owner);
