// Package xgboost reads XGBoost model files and scores them in pure Go, as
// a [process.ModelFormat]: a host registers [Format] with
// [process.Catalog.RegisterFormat], and an uploaded file becomes a
// [process.Process] that endpoints run like any compiled one.
//
// # What it reads
//
// The files XGBoost 1.0 to 3.x write with save_model: JSON, and UBJSON (the
// default since 2.1), told apart by content. Both are read by one walker
// into the same typed model, value by value, without building a generic
// tree of the file. UBJSON is read by a small reader of this package's own
// (no well-kept Go library reads it); it checks every count a container
// declares against the bytes left before anything is sized by it, and
// bounds how deep containers nest.
//
// From the file it reads the feature names and types, base_score (a number,
// a string holding one such as "5E-1", or a list, either as a list or as a
// string holding one as XGBoost 3.1 writes it: one value, or one per class
// of a multi-class model),
// num_class, num_feature and num_target, the objective, the booster and
// its trees: gbtree, and dart, whose weight_drop multiplies each tree's
// output (XGBoost 3.3 and later save dart as a gbtree holding
// weight_drop). Boosted forests (num_parallel_tree > 1) and multi-class models
// (tree_info gives each tree its class) are read as they are. A gblinear
// booster is read too: a weight per feature and class, and a bias.
//
// The objectives are binary:logistic, binary:logitraw, binary:hinge,
// multi:softprob, multi:softmax, reg:squarederror (and its old name
// reg:linear), reg:squaredlogerror, reg:pseudohubererror,
// reg:absoluteerror, reg:logistic, count:poisson, reg:gamma and
// reg:tweedie. Anything else — ranking and survival objectives,
// multi-target models, vector leaves, a file of XGBoost 4 or later, a tree
// whose right children do not follow their left ones — is refused by Load
// with an error naming it: the reader never scores a model it might score
// differently from XGBoost.
//
// # What a model answers
//
// A model reads one Number column per feature, named by the upload's
// metadata, else by the file's feature_names, else f0, f1, …; none is
// required. A missing value, a null or an absent column takes each split's
// default branch, as a missing value does in XGBoost.
//
// Classifiers answer prediction(<label>) and one confidence(<class>) per
// class through [process.Classifier]; binary models have two classes,
// confidence of the second being XGBoost's probability. For
// multi:softmax, whose XGBoost prediction is the class alone, the
// confidences are the softmax of the margins, as scikit-learn's
// predict_proba gives them; for binary:logitraw, whose prediction is the
// margin itself, they are the sigmoid of the margin, what binary:logistic
// would predict from the same margin. Regressors answer prediction(<label>)
// as a Number.
//
// # Arithmetic
//
// Predictions match XGBoost's to float32 precision because they are
// computed as XGBoost computes them: each feature value is rounded to
// float32 and compared with the float32 threshold (a value < threshold goes
// left); each output starts from base_score turned into a margin as the
// objective's ProbToMargin does (logit for the logistic objectives, log for
// count:poisson, reg:gamma and reg:tweedie); tree outputs are added in tree
// order in float32 (a linear model's bias, then each present feature times
// its weight, in feature order); and the objective's transform (sigmoid,
// exp, softmax) runs in float32 too.
//
// Categorical splits (XGBoost 1.5 and later, from a pandas categorical
// column and enable_categorical) are evaluated as XGBoost 1.7 does: a
// request carries the category's code (pandas' cat.codes) as a Number; a
// split sends the categories it lists right and every other value left,
// negative and out-of-range ones included, reading the integer part of the
// value as the code.
//
// All the trees in the file are scored, as Booster.predict does: a model
// trained with early stopping answers as if it had not stopped early unless
// its extra trees are dropped before it is saved.
//
// # Explanations
//
// A model's process implements [process.Explainer] when the file holds
// every tree node's cover (sum_hessian, which XGBoost writes), or when it
// is a gblinear model: its contributions are those of XGBoost's
// predict(..., pred_contribs=True). Trees are explained by path-dependent
// TreeSHAP, each split decided as scoring decides it, dart's trees times
// their weights; the bias is the base margin plus each tree's mean leaf
// value weighted by cover. A gblinear feature contributes its value times
// its weight (nothing when missing), and the bias is the model's bias plus
// the base margin. XGBoost computes them in float32, this package in
// float64: they agree to float32 precision, and bias plus contributions is
// the margin scoring computes.
//
// # Limits and speed
//
// [Limits] bounds the file's size, its trees, the nodes and depth of each
// tree, its features and classes; the defaults suit any model XGBoost
// trains in memory. Load checks every tree as it flattens it: child
// indexes in range, no node reached twice, features in range.
//
// Each tree is flattened into an array of 16-byte nodes in breadth-first
// order, a leaf being a node that leads to itself. Rows are scored in
// blocks of 64, tree by tree within a block (faster than row by row, as
// the tree stays in cache), eight rows walking a tree in lockstep with the
// child chosen by a compare rather than a jump; fewer rows, as in a
// one-row request, walk eight trees at a time instead. Scoring works in
// pooled memory and allocates only the result columns. A model is safe
// for concurrent use, and Score checks its context every 2,048 rows.
package xgboost
