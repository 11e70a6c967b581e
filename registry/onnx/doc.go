// Package onnx reads ONNX model files and scores them in pure Go, as a
// [process.ModelFormat]: a host registers [Format] with
// [process.Catalog.RegisterFormat], and an uploaded .onnx file becomes a
// [process.Process] that endpoints run like any compiled one.
//
// # What it reads
//
// An ONNX ModelProto (IR versions 3 to 11) whose graph uses the default
// domain (opsets 1 to 23) and ai.onnx.ml (opsets 1 to 5). The protobuf is
// read by a small reader of just the messages and fields scoring needs,
// built on google.golang.org/protobuf/encoding/protowire: the ONNX schema is
// not published as a Go module. Every length is checked against the bytes
// left before anything is allocated, and [Limits] bounds the file's size,
// nodes, tree nodes, trees, tree depth, widths, classes and the values its
// tensors and attributes hold. Tensors kept in external files, sparse
// initializers, subgraphs and functions are refused.
//
// The graph is evaluated as a graph: Load orders its nodes so that each
// follows the producers of its inputs, refusing a cycle, an input nothing
// produces or a value produced twice, infers every value's type and shape,
// and compiles each node once into a step of a plan. The operators are:
//
//   - ai.onnx.ml: TreeEnsembleClassifier and TreeEnsembleRegressor (float
//     attributes and the *_as_tensor ones of opset 3; aggregate functions
//     SUM, AVERAGE, MIN and MAX; post-transforms NONE, LOGISTIC, SOFTMAX,
//     SOFTMAX_ZERO and PROBIT; base values; every branch mode;
//     missing_value_tracks_true), the TreeEnsemble of opset 5 (with
//     BRANCH_MEMBER nodes; it answers the input's type, float or double,
//     as ONNX Runtime does), LinearClassifier, LinearRegressor,
//     Scaler, Normalizer, Imputer, OneHotEncoder, LabelEncoder (the forms
//     of opsets 1 and 2), ZipMap and ArrayFeatureExtractor;
//   - the default domain: Identity, Cast, Concat, Add, Sub, Mul, Div,
//     MatMul (by a constant matrix), Reshape and Flatten (keeping the batch
//     axis), Softmax and Sigmoid.
//
// Anything else — another operator, a
// domain, opset, element type, shape or attribute the evaluator does not
// support — is refused by Load with an error naming it, so that a model is
// never scored differently from ONNX Runtime.
//
// # What a model answers
//
// A graph with one input reads its F values per row from the columns
// named by the metadata's features (exactly F of them), else f0, f1, …;
// a graph with several inputs takes one value per row in each, read from
// the column named as the input. The first dimension of every input is the
// batch, whatever the file says it is. A missing number given to a float
// or double input is NaN, which an Imputer replaces and a tree's
// missing_value_tracks_true sends down its true branch, as in ONNX
// Runtime. ONNX has no missing value for integers, booleans and strings:
// a row missing one (or giving a fraction to an integer input, or a value
// other than 0 and 1 to a bool one) answers no prediction, and so does a
// row whose category a OneHotEncoder with zeros=0 does not know, where
// ONNX Runtime would fail the whole batch; the other rows are scored.
//
// A graph whose output carries a classifier's scores (a
// TreeEnsembleClassifier's or LinearClassifier's, directly or through
// ZipMap, Identity or Cast; or a ZipMap's) is a classifier: it answers
// prediction(<label>) and one confidence(<class>) per class through
// [process.Classifier], the classes named as the classifier's
// classlabels_strings or classlabels_int64s (integers in decimal), the
// prediction being the most probable class. The upload's metadata may name
// classes the file labels by the integers 0..k-1 in that order (a
// scikit-learn classifier trained on such labels), one name per class, as
// it names an XGBoost classifier's; it may only repeat any other labels
// (text, or other integers), and a different count is refused
// ([process.ClassNames]). Otherwise the first graph
// output holding one number per row is a regressor's prediction(<label>).
//
// # Explanations
//
// A model whose answer is the scores of one TreeEnsembleClassifier or
// TreeEnsembleRegressor explains its predictions ([process.Explainer])
// when the file supplies its trees' covers, how much training data
// reached each node, in the attribute ONNX has for them: nodes_hitrates
// (or nodes_hitrates_as_tensor). Writing XGBoost's cover (sum_hessian)
// or LightGBM's count there makes a converted model explainable.
// Converters write 1.0 for every node, which are not covers: hitrates are
// taken as covers only when every node's is positive and each split's is
// its children's sum within 1e-3 (float32 storage rounds them by far
// less). A file whose hitrates are absent or not covers loads and scores
// as any other, and its schema's Unexplained says why it cannot explain,
// so that an endpoint that asks for explanations is refused at deploy
// time rather than answered with an approximation.
//
// Explain computes path-dependent TreeSHAP, each split decided by the
// function scoring decides it with (its branch mode, BRANCH_EQ and
// BRANCH_NEQ included, in the ensemble's float or double, a missing value
// as nodes_missing_value_tracks_true sends it). The ensemble must read the
// model's inputs as they are, through Identity, Cast, Concat, Reshape,
// Flatten or ArrayFeatureExtractor only (a feature read twice is one input
// to TreeSHAP): a Scaler, Imputer, encoder or arithmetic before the trees
// makes its inputs something the graph computes, which is not explained.
// Its scores must be the answer, copied (Identity, Cast, Reshape, Flatten,
// ZipMap) but not transformed by another operator. The margins explained
// are the ensemble's raw scores before its post_transform, as scoring
// computes them: a regressor's value; one per class for more than two
// classes; for two, the score the second class's confidence is computed
// from (the one score for the first class that converters write for
// boosting, with LOGISTIC its log-odds; the second class's score of two,
// less the first's with SOFTMAX). AVERAGE divides each tree's
// contributions by the number of trees. MIN and MAX, two base values for
// two classes (ONNX Runtime makes the second class's score from the
// first's), a row's scores that ONNX Runtime reads as one or two by which
// leaves it reaches, and the TreeEnsemble of ai.onnx.ml 5 (whose
// nodes_hitrates cover its branches but not its leaves) are not explained,
// each with its reason in Unexplained.
//
// # Arithmetic
//
// Predictions match ONNX Runtime's because they are computed as it
// computes them: a tree ensemble with a float input compares the float32
// input with float32 thresholds and sums float32 weights; with a double
// input it uses double thresholds and sums; scores are written as float32
// after ONNX Runtime's post-transforms, in float32 too, with its special
// cases of two-class models kept. Linear models read float32 inputs and
// weights. A forest whose thresholds are float32 (nodes_values) can
// therefore differ from scikit-learn's own prediction by up to 0.15 in a
// probability, when an input falls between a threshold and its float32
// rounding: ONNX Runtime and any faithful evaluator answer so, and this
// package matches the runtime, not scikit-learn. Double thresholds
// (nodes_values_as_tensor with a double input) match scikit-learn.
//
// # Speed
//
// A request is scored in chunks of 2,048 rows, each evaluated through the
// plan a whole tensor at a time; tree ensembles walk blocks of 128 rows
// tree by tree, without allocating per row, and trees of BRANCH_LEQ nodes
// alone (scikit-learn's) walk eight rows at once without branching. A
// model is safe for concurrent use, and Score checks its context between
// chunks. Every model is RowWise (see [process.LoadedModel]): each row is
// answered from that row alone, so the scoring engine scores a large
// request's row ranges on every processor at once.
package onnx
