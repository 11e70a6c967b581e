-- The sampled payload log of package registry/payloads: rows endpoints
-- scored, with their results, kept for a while and within a size.
--
-- seq numbers the records in the order they were appended. Append holds
-- a transaction-level advisory lock while it inserts, so records commit
-- in seq order: a reader paging by seq never passes a record that
-- commits later. bytes is a record's size as the bounds count it (its
-- JSON line), start_bytes the total of the bytes appended before it (its
-- offset, were the log one file), by which a prune finds the oldest
-- record to keep in one index look-up.
-- row is json, not jsonb: the row's text as appended, its names in their
-- order and its numbers' digits, which jsonb would normalise.
CREATE TABLE payload_records (
	seq         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	grp         text COLLATE "C" NOT NULL,
	path        text COLLATE "C" NOT NULL,
	alias       text COLLATE "C" NOT NULL,
	model       text NOT NULL,
	at          timestamptz NOT NULL,
	row         json NOT NULL,
	bytes       integer NOT NULL,
	start_bytes bigint NOT NULL
);
CREATE INDEX payload_records_endpoint ON payload_records (grp, path, alias, seq);
CREATE INDEX payload_records_at ON payload_records (at);
CREATE INDEX payload_records_start ON payload_records (start_bytes);
