// Package metrics exposes what a scorehub server does as Prometheus
// metrics, registered on a [prometheus.Registerer] the host passes in;
// nothing is registered anywhere by default, and serving the metrics
// (promhttp on a route of the host's choosing) is the host's decision.
//
// The figures come from three places:
//
//	scoring.Handler ──Observer──▶ Metrics.ObserveRequest   requests, latency, rows
//	tokens.Service ───Observer──▶ Metrics.ObserveToken     token requests by outcome
//	scrape ──▶ Queues.Stats, Jobs.Counts                    queue and job figures, read live
//
// Request figures are counted as requests are answered; queue and job
// figures are read when Prometheus scrapes, so they cost nothing between
// scrapes and are never stale.
//
// # Bounded labels
//
// Every label value is a name the registry holds (a web API group,
// deployment path, endpoint alias, model, model version or queue), a job
// state, or one of a fixed
// set (status codes, outcomes, token routes); none is taken from a raw
// request address. A request that does not resolve to an endpoint counts
// under the group, path and alias "_unmatched", so a scan of random URLs
// adds no series. The series of an endpoint go at the first scrape after
// it leaves the registry (its deployment or group deleted, or the alias
// removed), so creating and deleting endpoints does not grow the metrics.
// A model endpoint's series carry the model and version that answered
// (empty for a catalog process), so that moving an alias shows on a
// dashboard; a version's series go once it is deleted or the endpoint
// names another model.
//
// # Metrics
//
//	scorehub_scoring_requests_total          counter    group, path, alias, model, version, status
//	scorehub_scoring_request_duration_seconds histogram group, path, alias, model, version
//	scorehub_scoring_rows_total              counter    group, path, alias, model, version
//	scorehub_queue_running                   gauge      queue
//	scorehub_queue_waiting                   gauge      queue
//	scorehub_queue_max_concurrent            gauge      queue
//	scorehub_queue_max_waiting               gauge      queue
//	scorehub_queue_executions_total          counter    queue, outcome
//	scorehub_jobs                            gauge      state
//	scorehub_token_requests_total            counter    route, outcome
//	scorehub_auth_checks_total               counter    scheme, outcome
//	scorehub_predictions_dropped_total       counter
//	scorehub_payloads_sampled_total          counter
//	scorehub_payloads_dropped_total          counter
//
// Series that exist once endpoints use what they describe:
//
//	scorehub_challenger_*                    per champion and challenger of an endpoint
//	scorehub_model_feedback_rows, scorehub_model_live_*  per model version with outcomes fed back
//	scorehub_drift_rows, scorehub_drift_max_psi, scorehub_drift_features_shifted,
//	scorehub_drift_prediction_psi            gauge      group, path, alias, model
//	scorehub_drift_feature_psi               gauge      group, path, alias, model, feature
//
// scorehub_drift_feature_psi has series only for endpoints whose monitor
// asks for them (registry.Monitor.FeatureSeries), at most
// registry.MaxFeatureSeries inputs each, the most important first.
//
// status is the exact HTTP status for the codes the scoring handler answers
// with (200, 400, 401, 403, 404, 405, 413, 415, 499, 500, 503, 504) and the
// class ("2xx" … "5xx", "other") for any other code a process or an
// Authorize function chose. Queue outcomes are completed, failed, rejected,
// timed_out and cancelled; job states are those of jobs.States; token
// routes are tokens.PathTokenService, tokens.PathExchange and tokens.PathRenew, their outcomes
// the tokens.Outcome constants. Credential checks (middleware.Credentials)
// count by the kind presented (basic, apitoken, bearer, none or other) and
// the middleware.Auth outcome constants.
package metrics
