-- What each replica's champions and challengers did: one row per replica,
-- endpoint and pair, the figures as the scoring package's Comparison
-- encodes them, replaced whole by each publication, every second or so.
-- The comparison route sums the rows of the replicas that published
-- lately; a replica that stopped falls out of the sums once its rows are
-- older than that, and its rows are deleted at the next publication of
-- any replica after a day.
CREATE TABLE challenger_figures (
	replica    text NOT NULL,
	grp        text NOT NULL,
	path       text NOT NULL,
	alias      text NOT NULL,
	champion   text NOT NULL,
	challenger text NOT NULL,
	mode       text NOT NULL,
	figures    jsonb NOT NULL,
	updated_at timestamptz NOT NULL,
	PRIMARY KEY (replica, grp, path, alias, champion, challenger, mode)
);
CREATE INDEX challenger_figures_endpoint ON challenger_figures (grp, path, alias, updated_at);
