// Package pmml reads PMML files (the Predictive Model Markup Language of the
// Data Mining Group, versions 4.0 to 4.4) and scores them in pure Go, as a
// [process.ModelFormat]: a host registers [Format] with
// [process.Catalog.RegisterFormat], and an uploaded file becomes a
// [process.Process] that endpoints run like any compiled one.
//
// # Reading a file
//
// A file is read in two passes. The first walks its XML tokens, bounding
// how deep elements nest and how many there are ([Limits]) and refusing a
// DOCTYPE outright: PMML needs none, and entity declarations are how an XML
// bomb hides. Only then does encoding/xml unmarshal it into typed structs,
// which are compiled into a model that scores rows without touching XML
// again. The root must be PMML in the namespace of version 4.0 to 4.4 (or in
// none, with a version attribute saying one of them).
//
// Every element or attribute value that would change the answer and that
// the reader does not implement is refused by name when the file is loaded
// ("PMML element BaselineModel is not supported"): the reader never scores
// a model differently from its producer. So is every attribute a producer
// names x-… outside an Extension, but for x-mathContext (see Arithmetic).
// Where a producer's slip leaves
// one reading, the file is read as other evaluators read it, and the
// loaded model's [process.ModelSchema] Warnings say so: an Array holding
// fewer values than its n says (R's pmml package writes some) is read as
// the values it holds. One holding more is refused, as a value its
// producer did not quote may have split in two; a cluster's center, whose
// coordinates are read by position, must hold exactly n.
//
// # Fields
//
// The DataDictionary declares the fields: their optype, their dataType
// (string, integer, float, double or boolean; dates are refused) and their
// valid, invalid and missing Values (and Intervals for continuous ones).
// Each model's MiningSchema then says how it treats them: outliers (asIs,
// asMissingValues, asExtremeValues), invalid values (returnInvalid — the
// row gets no prediction —, asIs, asMissing, asValue) and a
// missingValueReplacement. A nested model treats its own copy of a field,
// never the value its parent and siblings read.
//
// Derived fields (TransformationDictionary, LocalTransformations) are
// computed in the order they read each other: NormContinuous, NormDiscrete,
// Discretize, MapValues over an InlineTable, FieldRef, Constant and Apply of
// the built-in functions + - * / min max sum avg product log10 ln exp expm1
// ln1p sqrt abs pow threshold floor ceil round rint isMissing isNotMissing
// equal notEqual lessThan lessOrEqual greaterThan greaterOrEqual and or not
// if isIn isNotIn uppercase lowercase trimBlanks concat. Other functions,
// producers' x- extensions and DefineFunction are refused by name. An
// arithmetic result that is not a finite number is a missing value.
//
// # Models
//
// TreeModel: SimplePredicate (every operator), CompoundPredicate (and, or,
// xor, surrogate), SimpleSetPredicate, True and False, with the
// missingValueStrategy none, lastPrediction, nullPrediction or
// defaultChild (weightedConfidence and aggregateNodes are refused) and
// either noTrueChildStrategy. A classifier's probabilities are its node's
// ScoreDistribution probability attributes, else its confidences, else its
// record counts over their sum.
//
// MiningModel: a Segmentation whose segments' predicates choose which of
// their models answer, combined by sum, weightedSum, average,
// weightedAverage or median (regression); average, weightedAverage
// (averaging the probabilities), majorityVote or weightedMajorityVote (the
// probabilities being shares of the votes) (classification); selectFirst;
// or modelChain, where each segment's Output fields (predictedValue,
// probability, transformedValue) are fields the later segments read and
// the last segment answers. That covers the random forests and gradient
// boosting sklearn2pmml writes. A model's Targets rescale its predicted
// number (rescaleFactor, rescaleConstant, min, max, castInteger).
//
// RegressionModel: RegressionTables of NumericPredictor (with exponent),
// CategoricalPredictor and PredictorTerm, with every normalizationMethod
// (none, simplemax, softmax, logit, probit, cloglog, loglog, cauchit, exp)
// where the spec defines it: a binary classifier's first table decides
// through the link and the second class has the rest (sklearn's logistic
// regression), softmax and simplemax share over all tables, and an ordinal
// target's tables are cumulative. A missing numeric input means no
// prediction; a missing categorical one adds nothing.
//
// NaiveBayesModel: PairCounts for categorical inputs and a Gaussian or
// Poisson distribution per class (TargetValueStats) for continuous ones,
// summed as logarithms; a zero count, or a density below the threshold,
// counts as the threshold. Missing inputs and values the training data never
// saw are ignored. With Gaussian inputs and a threshold of 0 it is
// scikit-learn's GaussianNB.
//
// RuleSetModel: SimpleRule and CompoundRule, chosen by the first
// RuleSelectionMethod: firstHit, weightedSum or weightedMax. The winning
// rule's ScoreDistribution gives the confidences, else its confidence alone;
// with no rule firing, the defaultScore and defaultConfidence answer.
//
// ClusteringModel (centerBased): the euclidean, squaredEuclidean, cityBlock,
// chebychev and minkowski measures with field weights and the absDiff,
// gaussSim, delta and equal comparisons; a missing value leaves its field
// out and scales up the rest. It answers the nearest cluster's name, else
// its id, else its 1-based index.
//
// # Arithmetic
//
// A model element computes in float64 unless it says x-mathContext="float",
// the extension JPMML's producers (JPMML-XGBoost, sklearn2pmml for XGBoost
// and LightGBM) write on every element of a model its library computes in
// float32. Such an element reads every number as a float32 (the field
// values it reads and its own thresholds, scores, weights, coefficients,
// intercepts and Targets' constants) and rounds the result of each
// operation to float32, in the order the element defines: each comparison
// of a predicate, each addition of a Segmentation's sum or average, each
// product and sum of a RegressionTable, each step of a normalization
// (1/(1+exp(-y)) for logit; exp(y-max) summed for softmax), the steps of
// a NaiveBayesModel's log densities and a ClusteringModel's distances. A
// nested model computes in its own context, and derived fields in
// float64, rounded where a float element reads them. So an XGBoost model
// exported by JPMML-XGBoost answers what XGBoost does: the same float32
// leaves, reached by the same float32 comparisons, summed in the order the
// document gives. Any other x-mathContext is refused.
//
// # What a model answers
//
// A model reads one column per active field of its top-level MiningSchema:
// a Number column for a field whose dataType is numeric, a Text column for
// the others. The schema's Domains are what the DataDictionary declares
// of them: the bounds of a continuous field's Intervals, a categorical or
// ordinal field's valid Values. A column absent from a request, or a null, is a missing
// value. A classifier answers prediction(<label>) and one
// confidence(<class>) per class, in the order of the target field's Values
// (or, when it lists none, the order the model names them in), named by
// those values: the metadata may rename them only where the target's
// dataType is integer and its values are 0..k-1 in that order (XGBoost's
// classes as JPMML-XGBoost writes them), and may only repeat others
// ([process.ClassNames]); a
// regression answers prediction(<label>); a clustering model answers a
// text column "cluster". The label is the metadata's, else
// the target field's name. The top-level Output's predicted value and
// probabilities are those columns; its other fields are not answered. A
// row the model has no prediction for (a null prediction, an invalid
// value) answers missing values.
//
// # Explanations
//
// A model whose margin is a sum of regression trees carrying every Node's
// recordCount is a [process.Explainer]: path-dependent TreeSHAP
// (internal/treeshap), each split decided by the reader's own walk, each
// node weighted by its records, the bias the margin's constants plus each
// tree's leaves' mean by record count. The margin of a regression
// TreeModel is its prediction; of a sum or weightedSum MiningModel, the
// weighted sum of its segments' margins (whose predicates must be True);
// Targets may rescale it, not bound or round it. The modelChain
// JPMML-XGBoost writes explains the sums its closing RegressionModel reads
// as they are: the margin before the logit, exp or softmax, one per class
// for softmax. A classification TreeModel has no margin: its leaves answer
// probabilities, no transform of a sum. TreeSHAP attributes a split to one
// feature: a node of more than two children is a chain of binary splits
// on the one input its children's predicates read (through derived fields
// too), and a split reading more than one input, or none, leaves the
// model without explanations.
//
// # Limits and speed
//
// [Limits] bounds the file's size, its nesting and elements, its fields,
// segments and classes. A loaded model is a tree of compiled closures over
// a row of values held in slots (one per field, derived field and output
// field); scoring works in pooled memory and is safe for concurrent use.
package pmml
