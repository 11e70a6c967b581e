// Package lightgbm reads LightGBM model files and scores them in pure Go,
// as a [process.ModelFormat]: a host registers [Format] with
// [process.Catalog.RegisterFormat], and an uploaded file becomes a
// [process.Process] that endpoints run like any compiled one.
//
// # What it reads
//
// The text model LightGBM writes (Booster.save_model, model_to_string, the
// command-line program's output_model), versions v2, v3 and v4: the
// header (num_class, num_tree_per_iteration, max_feature_idx, objective,
// average_output, feature_names, feature_infos, tree_sizes), the tree
// blocks up to "end of trees", and the pandas_categorical line the Python
// package appends. Feature importances and the parameters section are
// skipped: nothing in them changes a prediction. The JSON dump
// (dump_model) is not a model file and is not read.
//
// The objectives are regression, regression_l1, huber, fair, quantile and
// mape (their predictions are the raw score, squared back with its sign
// where the file says sqrt), poisson, gamma and tweedie (exp of the raw
// score), binary (1/(1+exp(-σ·score)) with the file's sigmoid σ),
// multiclass (softmax over the classes), multiclassova (the binary
// sigmoid per class, not normalised, as LightGBM predicts it),
// cross_entropy (the logistic of the score) and cross_entropy_lambda
// (log(1+exp(score))). The ranking objectives lambdarank and rank_xendcg
// answer the raw score, which only orders rows within a query. A custom
// objective is refused: what its predictions mean is in the training
// code, not in the file. Boosted trees, DART (whose trees the file holds
// already scaled) and random forests (average_output: the raw score is
// the sum of the trees divided by the number of iterations) are read
// alike; a multi-class model's trees come one per class in each
// iteration.
//
// # What a model answers
//
// A model reads one Number column per feature, named by the upload's
// metadata, else by the file's feature_names (LightGBM writes Column_0,
// Column_1, … for data without names). A missing value, a null or an
// absent column is NaN, LightGBM's missing value. A categorical feature
// takes its category's integer code as a Number; where the file carries
// pandas_categorical, the column is Text instead and holds the category
// as pandas knew it (a string; a number or a boolean as JSON spells it),
// turned into its code as pandas did when training: its place in the
// column's list of categories. A category pandas did not know is missing,
// as pandas' code -1 becomes NaN in the Python package; an empty list
// means the categorical features take codes. The lists of
// pandas_categorical belong to the categorical features in order, as the
// Python package makes them; a file where their counts differ is refused.
//
// Classifiers (binary, multiclass, multiclassova) answer
// prediction(<label>) and one confidence(<class>) per class through
// [process.Classifier], classes named 0..k-1 unless the metadata names
// them; a binary model has two classes, the confidence of the second
// being LightGBM's prediction. Every other objective answers
// prediction(<label>) as a Number.
//
// The model's sample row holds the middle of each numerical feature's
// training range and the first category of each categorical one, as
// feature_infos records them. The schema's Domains declare the same: a
// numerical feature's training range, a categorical one's codes (or, with
// pandas_categorical, its names), nothing for a feature training found
// nothing to split on.
//
// # Arithmetic
//
// Predictions are LightGBM's to the last bit, because they are computed as
// LightGBM's predictor computes them, in float64: an input within
// kZeroThreshold (the float 1e-35) of zero is zero; at a numerical split,
// NaN reads as 0 unless the split's missing type is NaN, a missing value
// (NaN for missing type NaN, 0 for missing type Zero) takes the default
// branch its decision_type names, and any other value goes left when it
// is at most the threshold. A categorical split truncates the value to an
// integer and sends it left when the split's bitset holds it; NaN, a
// negative value, one beyond the bitset and one beyond the range of a C
// int go right. A tree of a file without categories is read as all
// numerical, as LightGBM does. A linear tree's leaf answers its constant
// plus each coefficient times its feature, rounded one product at a time,
// or the leaf's value when one of those features is missing. Tree outputs
// are summed in file order, one sum per class; the objective's transform
// then runs on them in float64 as LightGBM's ConvertOutput does, with an
// exp of this package's own, correctly rounded but in cases too rare to
// meet, as the C library's is and Go's math.Exp (off by one bit for about
// one argument in seven) is not. Every raw score and prediction of the
// fixtures, LightGBM 4.6.0's own (and 3.3.5's for three v3 models), is
// matched to the last bit.
//
// All the trees in the file are scored, as LightGBM's predictor does with
// its default num_iteration.
//
// # Explanations
//
// A model's process implements [process.Explainer] when the file holds
// the training counts of its splits and leaves (internal_count and
// leaf_count, which LightGBM writes): its contributions are those of
// LightGBM's predict_contrib, path-dependent TreeSHAP weighted by those
// counts, each split decided as scoring decides it, the bias the sum of
// every tree's count-weighted mean leaf value. They are the contributions
// of the raw score, which for a random forest is the sum of its trees, as
// LightGBM's are. A model of linear trees is refused with
// [process.ErrModelInvalid], as LightGBM refuses it.
//
// # Limits and speed
//
// [Limits] bounds the file's size, its trees, the leaves and depth of each
// tree, its features and classes, and the words of a tree's category
// bitsets, each checked while the file is read. Every malformed file is
// an error matching [process.ErrModelInvalid], [process.ErrModelLimit] or
// [process.ErrModelFormat] that names the part at fault. Load checks
// every tree as it reads it: each split and leaf reached once from the
// root, features, category sets and linear models in range.
//
// Rows are scored in blocks of 64, tree by tree within a block, so that a
// tree stays in cache. A model is safe for concurrent use, and Score
// checks its context every 2,048 rows.
package lightgbm
