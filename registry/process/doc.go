// Package process is the vocabulary every part of scorehub shares: what a
// scoring request becomes and what answers it. The scoring handler decodes
// a request's rows into a columnar [Table] and hands it, as an [Input], to
// a [Process], with the [ResultLimits] its result is held to; the process
// returns a table of result columns. A [Catalog] names the processes a host
// can run ([ProcessInfo], with the [ColumnSpec]s it reads and writes), and
// [Classifier] builds a process from a classifier's probabilities with the
// column names AI Hub clients read.
//
// A trained model is a process too. A [ModelFormat] (one sub-package of
// registry per format: xgboost, lightgbm, pmml, onnx) turns a file into a
// [LoadedModel]: the [ModelSchema] it derives and its Process. A host
// registers formats with [Catalog.RegisterFormat]; [Catalog.LoadModel]
// detects a file's format by its content (never its name), refuses files
// that run code when loaded (Python pickles, joblib), and a host program
// may serve the result from disk as a catalog process
// ([LoadedModel.ProcessInfo]). Package registry keeps model versions and
// aliases as records and resolves endpoints to them.
//
//	request body → scoring: Table → Process.Score(Input) → Table → response
//	model file   → Catalog.LoadModel → ModelFormat.Load → LoadedModel.Process
//
// The package sits beneath package registry, which holds the records, their
// rules and stores: it imports only the standard library and package
// problem, so that a model format, which needs nothing else, depends on
// nothing else but internal/treeshap, the arithmetic of the tree formats'
// explanations (a test in this package checks the formats' imports).
// Errors are [*problem.Error] values or wrap one; match them with
// [errors.Is] against the sentinels. ErrExists and ErrInvalid are also
// package registry's.
package process
