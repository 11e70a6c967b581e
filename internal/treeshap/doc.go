// Package treeshap attributes a tree's output for one row to the row's
// features exactly: path-dependent TreeSHAP (Lundberg, Erion and Lee
// 2018, "Consistent Individualized Feature Attribution for Tree
// Ensembles", Algorithm 2), the Shapley values of the tree's output when
// a feature that is not known is taken as the training data's cover
// would spread it.
//
// The tree model formats (registry/xgboost, registry/lightgbm,
// registry/pmml) implement process.Explainer with it: each describes its
// trees as a [Tree] — the children, features and covers of its nodes, its
// leaves' values — and decides a row's splits itself, as its scoring
// does, by the function it hands [Walker.Add]. This package only attributes; it knows nothing of
// missing values, categories or file formats. [Exact] computes the same
// values by their definition, in time exponential in the features, to
// check the walk.
//
// The package depends on the standard library only.
package treeshap
