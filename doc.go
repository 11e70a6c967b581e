// Package scorehub is an embeddable model-scoring service, wire-compatible
// with the scoring agents and the management and token APIs of RapidMiner /
// Altair AI Hub: analytical processes and uploaded models (XGBoost,
// LightGBM, PMML, ONNX) scored behind POST {prefix}/{group}/api/v1/services/{path}/{alias},
// managed through a REST API that JWTs guard, tested in a browser.
//
// [New] builds the whole service from a [Config], in dependency order, and
// [Service.Handler] serves it, the edge defences and the access log
// included:
//
//	svc, err := scorehub.New(ctx, scorehub.Config{DataDir: "./data", AdminPassword: pw})
//	if err != nil { … }
//	defer svc.Close()
//	mux.Handle("/ml/", http.StripPrefix("/ml", svc.Handler()))
//
// Mounted under a prefix, every link the service writes carries it. A host
// that wants the parts apart mounts [Service.ScoringHandler],
// [Service.ManagementHandler] and [Service.MetricsHandler] itself; a host
// that wants to compose its own service from the packages below does what
// New does:
//
//	registry     the domain: tables, processes, the catalog, groups, deployments,
//	             endpoints, queues, models, jobs; stores in memory and files
//	scoring      the scoring handler, the execution queues, the jobs runner
//	tokens       JWTs, signing keys, the token service, users and API tokens
//	middleware   credentials, access log, CORS and the edge defences
//	management   the management API, its OpenAPI document, the test pages
//	metrics      Prometheus figures
//
// cmd/scorehub is the reference server (go install
// github.com/scorehub/scorehub/cmd/scorehub@latest): flags and environment
// turned into a Config; go run ./examples/standalone runs it from a
// checkout.
package scorehub
