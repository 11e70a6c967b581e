-- Jobs and the results of finished ones. The columns beside body are the
-- ones a list filters and sorts on; body is the job's JSON form and the
-- truth. created_s and created_ns keep CreatedAt to the nanosecond, which
-- timestamptz would round to the microsecond, for the newest-first order.
-- runner and lease_until are for a job claimed by one of several server
-- replicas: which one runs it, and until when its claim holds unless
-- renewed.
CREATE TABLE jobs (
	id          text COLLATE "C" PRIMARY KEY,
	state       text NOT NULL,
	owner       text COLLATE "C" NOT NULL,
	queue       text COLLATE "C" NOT NULL,
	created_s   bigint NOT NULL,
	created_ns  integer NOT NULL,
	body        json NOT NULL,
	result      bytea,
	runner      text,
	lease_until timestamptz
);

CREATE INDEX jobs_newest ON jobs (created_s DESC, created_ns DESC, id DESC);
CREATE INDEX jobs_state ON jobs (state) WHERE state IN ('PENDING', 'RUNNING');
