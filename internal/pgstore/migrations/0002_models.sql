-- Models and their artifacts. An artifact is one bytea value (see the
-- package documentation for why not a large object). model_versions lists
-- the artifact of every stored model version, so that the database itself
-- keeps an artifact that a version references (the foreign key) and
-- refuses a version whose artifact another writer deleted.
CREATE TABLE artifacts (
	sha256     text COLLATE "C" PRIMARY KEY CHECK (sha256 ~ '^[0-9a-f]{64}$'),
	data       bytea NOT NULL,
	created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE record_models (
	name text COLLATE "C" PRIMARY KEY,
	body json NOT NULL
);

CREATE TABLE model_versions (
	model   text COLLATE "C" NOT NULL REFERENCES record_models (name) ON DELETE CASCADE,
	version integer NOT NULL,
	sha256  text COLLATE "C" NOT NULL REFERENCES artifacts (sha256),
	PRIMARY KEY (model, version)
);

CREATE INDEX model_versions_sha256 ON model_versions (sha256);
