-- The prediction log of package registry/outcomes: what models predicted
-- for rows that carry an ID, and the outcomes fed back for them.
--
-- outcome_predictions holds one row per endpoint, row ID and model, the
-- first appended kept. id is the order of appending, by which the oldest
-- leave first once more than MaxRecords are held; at is when the row was
-- scored, by which they leave once older than the retention.
CREATE TABLE outcome_predictions (
	id          bigserial PRIMARY KEY,
	grp         text COLLATE "C" NOT NULL,
	path        text COLLATE "C" NOT NULL,
	alias       text COLLATE "C" NOT NULL,
	row_id      text COLLATE "C" NOT NULL,
	model       text COLLATE "C" NOT NULL,
	role        text NOT NULL,
	label       text NOT NULL,
	classes     text[],
	confidences double precision[],
	value       double precision NOT NULL,
	at          timestamptz NOT NULL,
	UNIQUE (grp, path, alias, row_id, model)
);
CREATE INDEX outcome_predictions_at ON outcome_predictions (at);

-- outcome_actuals holds the outcome of a row (an endpoint's row ID), the
-- first fed back kept: it is joined with every prediction of the row and
-- deleted with the last of them. id is the order of recording, which
-- orders outcomes fed back at the same time.
CREATE TABLE outcome_actuals (
	grp      text COLLATE "C" NOT NULL,
	path     text COLLATE "C" NOT NULL,
	alias    text COLLATE "C" NOT NULL,
	row_id   text COLLATE "C" NOT NULL,
	id       bigserial NOT NULL UNIQUE,
	is_label boolean NOT NULL,
	label    text NOT NULL,
	value    double precision NOT NULL,
	fed_at   timestamptz NOT NULL,
	PRIMARY KEY (grp, path, alias, row_id)
);
CREATE INDEX outcome_actuals_fed ON outcome_actuals (grp, path, alias, fed_at, id);
