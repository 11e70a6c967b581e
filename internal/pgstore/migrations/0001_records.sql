-- The registry's records. record_seq holds the one sequence number a
-- commit advances (UPDATE ... WHERE seq = its base), so that a write decided
-- on an outdated state fails whoever decided it; each record is one row
-- whose body is the record's JSON form, the form the file store keeps.
CREATE TABLE record_seq (
	id  boolean PRIMARY KEY DEFAULT true CHECK (id),
	seq bigint NOT NULL CHECK (seq >= 0)
);

CREATE TABLE record_groups (
	name text COLLATE "C" PRIMARY KEY,
	body json NOT NULL
);

CREATE TABLE record_queues (
	name text COLLATE "C" PRIMARY KEY,
	body json NOT NULL
);

CREATE TABLE record_deployments (
	grp  text COLLATE "C" NOT NULL,
	path text COLLATE "C" NOT NULL,
	body json NOT NULL,
	PRIMARY KEY (grp, path)
);
