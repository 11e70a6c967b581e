-- What each replica's endpoints counted of the drift of their rows: one
-- row per replica, endpoint and version, the live histograms as the
-- scoring package's SharedDrift encodes them, replaced whole by each
-- publication, every second or so. The drift route adds up the rows of
-- the replicas that published lately and counted in the same bins (the
-- fingerprint); a replica's rows are deleted at the next publication of
-- any replica after a day.
CREATE TABLE drift_figures (
	replica     text NOT NULL,
	grp         text NOT NULL,
	path        text NOT NULL,
	alias       text NOT NULL,
	version     text NOT NULL,
	figures     jsonb NOT NULL,
	updated_at  timestamptz NOT NULL,
	PRIMARY KEY (replica, grp, path, alias, version)
);
CREATE INDEX drift_figures_endpoint ON drift_figures (grp, path, alias, updated_at);
