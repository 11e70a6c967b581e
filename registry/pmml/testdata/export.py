#!/usr/bin/python3
"""Trains scikit-learn models, writes them as PMML 4.4 and records what the Go tests compare.

For every model NAME this writes, into the output directory:

  NAME.pmml       the model as a PMML 4.4 document
  NAME.rows.json  the fixture: the metadata an upload would carry, the schema
                  the Go reader should derive, the input rows as a client
                  would post them and scikit-learn's own answers for them
                  (predict_proba per class and predict for a classifier,
                  predict for a regressor, the cluster predict names for
                  a clustering)

No PMML exporter for scikit-learn is packaged for Debian, so this file is
one: a small writer over xml.etree for the estimators it trains. It writes
what sklearn2pmml writes for them: a tree sends x <= threshold to its left
child (SimplePredicate lessOrEqual), a forest averages its trees, gradient
boosting sums its trees onto its initial estimate (and a binary classifier
chains that sum into a logit RegressionModel), logistic regression is a
RegressionModel, Gaussian naive Bayes a NaiveBayesModel, k-means a
ClusteringModel.

Input rows are rounded to float32 before scikit-learn scores them, as its
trees compare float32 features against float64 thresholds: a float32 row
makes that comparison the same in float64, which PMML uses. Everything is
deterministic (fixed seeds, one thread), so running this again writes the same
models; the Go test TestRegenerate checks that, numbers within its
tolerance, as numpy on another CPU may round the last digit of some sums
otherwise.

Needs scikit-learn 1.2, numpy and pandas (Debian: python3-sklearn
python3-pandas). Run it as

  /usr/bin/python3 export.py [--out DIR]
"""

import os

# One thread for BLAS and OpenMP, set before numpy loads them: a solver's
# sums, and so its last digits, depend on how many threads share them.
for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import sys  # noqa: E402
import xml.etree.ElementTree as ET  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import sklearn  # noqa: E402
from sklearn import datasets  # noqa: E402
from sklearn.cluster import KMeans  # noqa: E402
from sklearn.ensemble import (GradientBoostingClassifier, GradientBoostingRegressor,  # noqa: E402
                              RandomForestClassifier, RandomForestRegressor)
from sklearn.linear_model import LinearRegression, LogisticRegression  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402
from sklearn.naive_bayes import GaussianNB  # noqa: E402
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SEED = 20
ROWS = 40
NS = "http://www.dmg.org/PMML-4_4"


def num(x):
    """x as PMML writes a double: the shortest text that reads back as x."""
    x = float(x)
    if math.isnan(x) or math.isinf(x):
        raise ValueError("export.py: %r has no PMML number" % x)
    return repr(x)


def frame(bunch):
    """The data set's features, rounded to float32, with names usable as columns."""
    names = [n.replace(" ", "_").replace("(", "").replace(")", "") for n in bunch.feature_names]
    x = np.asarray(bunch.data, dtype=np.float32).astype(np.float64)
    return pd.DataFrame(x, columns=names), np.asarray(bunch.target)


def split(x, y, rows=ROWS, stratify=True):
    """Training data and rows test rows, the same on every run."""
    return train_test_split(x, y, test_size=rows, random_state=SEED, stratify=y if stratify else None)


# The document.

def sub(parent, tag, **attrs):
    return ET.SubElement(parent, tag, {k.rstrip("_"): str(v) for k, v in attrs.items()})


def document(description):
    root = ET.Element("PMML", {"xmlns": NS, "version": "4.4"})
    h = sub(root, "Header", description=description)
    sub(h, "Application", name="scikit-learn", version=sklearn.__version__)
    return root


def data_dictionary(root, inputs, target, classes=None, categorical=None):
    """The DataDictionary: continuous double inputs, categorical string
    inputs (categorical maps a name to its values), and the target:
    categorical with classes, else continuous."""
    categorical = categorical or {}
    dd = sub(root, "DataDictionary", numberOfFields=len(inputs) + (target is not None))
    for name in inputs:
        if name in categorical:
            f = sub(dd, "DataField", name=name, optype="categorical", dataType="string")
            for v in categorical[name]:
                sub(f, "Value", value=v)
        else:
            sub(dd, "DataField", name=name, optype="continuous", dataType="double")
    if target is None:
        return
    if classes is not None:
        f = sub(dd, "DataField", name=target, optype="categorical", dataType="string")
        for c in classes:
            sub(f, "Value", value=c)
    else:
        sub(dd, "DataField", name=target, optype="continuous", dataType="double")


def mining_schema(model, inputs, target=None):
    ms = sub(model, "MiningSchema")
    if target is not None:
        sub(ms, "MiningField", name=target, usageType="target")
    for name in inputs:
        sub(ms, "MiningField", name=name)


def probability_output(model, target, classes):
    out = sub(model, "Output")
    sub(out, "OutputField", name="predicted_" + target, optype="categorical", dataType="string",
        feature="predictedValue")
    for c in classes:
        sub(out, "OutputField", name="probability_" + c, optype="continuous", dataType="double",
            feature="probability", value=c)


# Trees.

def tree_model(parent, tree, inputs, target, classes=None, scale=1.0, with_schema=True, output=False):
    """A TreeModel for a fitted sklearn tree (tree_ of an estimator): a
    classifier when classes are given, its leaves' ScoreDistributions
    the class weights sklearn's predict_proba normalizes; else a regressor
    whose leaves score scale times sklearn's value."""
    t = tree.tree_
    function = "classification" if classes is not None else "regression"
    m = sub(parent, "TreeModel", functionName=function, splitCharacteristic="binarySplit",
            missingValueStrategy="none", noTrueChildStrategy="returnNullPrediction")
    used = sorted({int(f) for f in t.feature if f >= 0})
    if with_schema:
        mining_schema(m, inputs, target)
    else:
        mining_schema(m, [inputs[f] for f in used], target)
    if output:
        probability_output(m, target, classes)

    def node(parent, i, predicate):
        n = sub(parent, "Node", id=i)
        if classes is not None:
            weights = [float(w) for w in t.value[i][0]]
            total = sum(weights)
            probs = [w / total for w in weights]
            n.set("score", classes[int(np.argmax(probs))])
            n.set("recordCount", num(total))
        else:
            n.set("score", num(scale * float(t.value[i][0][0])))
        if predicate is None:
            sub(n, "True")
        else:
            field, op, threshold = predicate
            sub(n, "SimplePredicate", field=field, operator=op, value=num(threshold))
        if classes is not None:
            for c, w, p in zip(classes, weights, probs):
                sub(n, "ScoreDistribution", value=c, recordCount=num(w), probability=num(p))
        left, right = t.children_left[i], t.children_right[i]
        if left >= 0:
            field = inputs[t.feature[i]]
            node(n, left, (field, "lessOrEqual", t.threshold[i]))
            node(n, right, (field, "greaterThan", t.threshold[i]))

    node(m, 0, None)
    return m


def constant_tree(parent, value, field):
    """A TreeModel of one leaf: gradient boosting's initial estimate. Its
    MiningSchema names field, as PMML's schema wants one MiningField at
    least."""
    m = sub(parent, "TreeModel", functionName="regression")
    mining_schema(m, [field])
    n = sub(m, "Node", score=num(value))
    sub(n, "True")
    return m


def segment(segmentation, i):
    s = sub(segmentation, "Segment", id=i)
    sub(s, "True")
    return s


def forest(root, est, inputs, target, classes=None):
    function = "classification" if classes is not None else "regression"
    m = sub(root, "MiningModel", functionName=function)
    mining_schema(m, inputs, target)
    if classes is not None:
        probability_output(m, target, classes)
    seg = sub(m, "Segmentation", multipleModelMethod="average")
    for i, tree in enumerate(est.estimators_):
        tree_model(segment(seg, i + 1), tree, inputs, target, classes, with_schema=False)


def boosted_sum(parent, est, inputs, target, output=None):
    """A MiningModel that sums gradient boosting's initial estimate and its
    trees' values times the learning rate, in sklearn's order."""
    m = sub(parent, "MiningModel", functionName="regression")
    mining_schema(m, inputs, target)
    if output is not None:
        out = sub(m, "Output")
        sub(out, "OutputField", name=output, optype="continuous", dataType="double", feature="predictedValue")
    seg = sub(m, "Segmentation", multipleModelMethod="sum")
    init = float(est._raw_predict_init(np.zeros((1, len(inputs))))[0, 0])
    constant_tree(segment(seg, 1), init, inputs[0])
    for i, stage in enumerate(est.estimators_):
        tree_model(segment(seg, i + 2), stage[0], inputs, target, scale=est.learning_rate, with_schema=False)
    return m


def boosting_classifier(root, est, inputs, target, classes):
    """A binary GradientBoostingClassifier as sklearn2pmml writes one: a
    modelChain whose first model sums the trees into the log odds, which
    a logit RegressionModel turns into the probabilities."""
    m = sub(root, "MiningModel", functionName="classification")
    mining_schema(m, inputs, target)
    seg = sub(m, "Segmentation", multipleModelMethod="modelChain")
    boosted_sum(segment(seg, 1), est, inputs, None, output="decision_function")
    r = sub(segment(seg, 2), "RegressionModel", functionName="classification", normalizationMethod="logit")
    ms = sub(r, "MiningSchema")
    sub(ms, "MiningField", name=target, usageType="target")
    sub(ms, "MiningField", name="decision_function")
    probability_output(r, target, classes)
    t = sub(r, "RegressionTable", intercept="0.0", targetCategory=classes[1])
    sub(t, "NumericPredictor", name="decision_function", coefficient="1.0")
    sub(r, "RegressionTable", intercept="0.0", targetCategory=classes[0])


# Linear models and naive Bayes.

def logistic(root, est, inputs, target, classes):
    binary = len(classes) == 2
    m = sub(root, "RegressionModel", functionName="classification",
            normalizationMethod="logit" if binary else "softmax")
    mining_schema(m, inputs, target)
    probability_output(m, target, classes)
    if binary:
        tables = [(classes[1], est.intercept_[0], est.coef_[0])]
    else:
        tables = [(c, est.intercept_[k], est.coef_[k]) for k, c in enumerate(classes)]
    for c, intercept, coefs in tables:
        t = sub(m, "RegressionTable", intercept=num(intercept), targetCategory=c)
        for name, w in zip(inputs, coefs):
            sub(t, "NumericPredictor", name=name, coefficient=num(w))
    if binary:
        sub(m, "RegressionTable", intercept="0.0", targetCategory=classes[0])


def gaussian_nb(root, est, inputs, target, classes):
    """A NaiveBayesModel: sklearn's var_ already holds var_smoothing's
    epsilon, so the variances are written as they are."""
    m = sub(root, "NaiveBayesModel", functionName="classification", threshold="1e-300")
    mining_schema(m, inputs, target)
    probability_output(m, target, classes)
    bis = sub(m, "BayesInputs")
    for j, name in enumerate(inputs):
        bi = sub(bis, "BayesInput", fieldName=name)
        stats = sub(bi, "TargetValueStats")
        for k, c in enumerate(classes):
            s = sub(stats, "TargetValueStat", value=c)
            sub(s, "GaussianDistribution", mean=num(est.theta_[k, j]), variance=num(est.var_[k, j]))
    bo = sub(m, "BayesOutput", fieldName=target)
    counts = sub(bo, "TargetValueCounts")
    for k, c in enumerate(classes):
        sub(counts, "TargetValueCount", value=c, count=num(est.class_count_[k]))


def one_hot_regression(root, est, inputs, target, categorical, columns):
    """A LinearRegression over numeric inputs and one-hot encoded text
    inputs: each column is a DerivedField (NormDiscrete) in the
    TransformationDictionary, as sklearn2pmml writes a OneHotEncoder."""
    td = sub(root, "TransformationDictionary")
    for field, value in columns:
        if value is None:
            continue
        d = sub(td, "DerivedField", name="%s=%s" % (field, value), optype="continuous", dataType="double")
        sub(d, "NormDiscrete", field=field, value=value)
    m = sub(root, "RegressionModel", functionName="regression")
    mining_schema(m, inputs, target)
    t = sub(m, "RegressionTable", intercept=num(est.intercept_))
    for (field, value), w in zip(columns, est.coef_):
        name = field if value is None else "%s=%s" % (field, value)
        sub(t, "NumericPredictor", name=name, coefficient=num(w))


def kmeans(root, est, inputs):
    """A ClusteringModel: KMeans assigns a row to the center nearest in
    squared Euclidean distance; each cluster is named by its index."""
    m = sub(root, "ClusteringModel", functionName="clustering", modelClass="centerBased",
            numberOfClusters=len(est.cluster_centers_))
    mining_schema(m, inputs)
    cm = sub(m, "ComparisonMeasure", kind="distance")
    sub(cm, "squaredEuclidean")
    for name in inputs:
        sub(m, "ClusteringField", field=name)
    for k, center in enumerate(est.cluster_centers_):
        c = sub(m, "Cluster", id=k, name=k)
        a = sub(c, "Array", type="real", n=len(center))
        a.text = " ".join(num(v) for v in center)


# Fixtures.

def rows_of(x):
    out = []
    for rec in x.itertuples(index=False):
        out.append({name: (v if isinstance(v, str) else float(v)) for name, v in zip(x.columns, rec)})
    return out


def write(out, name, root, model_element, est, x, metadata, target, classes=None, trees=0, encode=None):
    """Writes NAME.pmml and NAME.rows.json with sklearn's answers for x,
    which encode (default: DataFrame.to_numpy) turns into est's input."""
    ET.indent(root, space=" ")
    with open(os.path.join(out, name + ".pmml"), "wb") as f:
        f.write(b'<?xml version="1.0" encoding="UTF-8"?>\n')
        f.write(ET.tostring(root, encoding="utf-8"))
        f.write(b"\n")
    encode = encode or (lambda d: d.to_numpy())
    inputs = list(x.columns)
    task = "clustering" if target is None else "classification" if classes is not None else "regression"
    schema = {"task": task,
              "model": model_element, "label": target, "inputs": inputs, "trees": trees}
    text = [c for c in inputs if x[c].dtype == object]
    if text:
        schema["text_inputs"] = text
    fixture = {"model": name, "metadata": metadata, "schema": schema, "rows": rows_of(x)}
    if classes is not None:
        schema["classes"] = classes
        fixture["predictions"] = [[float(p) for p in row] for row in est.predict_proba(encode(x))]
        fixture["classes"] = [classes[int(k)] for k in est.predict(encode(x))]
    elif target is None:
        fixture["predictions"] = [str(k) for k in est.predict(encode(x))]
    else:
        fixture["predictions"] = [float(v) for v in est.predict(encode(x))]
    # The answer's columns are named for the label, which is the target's
    # name unless the metadata gives another.
    assert target is None or metadata.get("label", target) == target, "export.py: %s: the label is the PMML target's name" % name
    with open(os.path.join(out, name + ".rows.json"), "w") as f:
        json.dump(fixture, f, indent=1, allow_nan=False)
        f.write("\n")


def iris(out):
    bunch = datasets.load_iris()
    x, y = frame(bunch)
    x.columns = inputs = ["sepal_length", "sepal_width", "petal_length", "petal_width"]
    classes = [str(c) for c in bunch.target_names]
    xtr, xte, ytr, yte = split(x, y, 30)
    target = "species"

    est = DecisionTreeClassifier(max_depth=4, random_state=SEED).fit(xtr.to_numpy(), ytr)
    root = document("DecisionTreeClassifier on the iris data set")
    data_dictionary(root, inputs, target, classes)
    tree_model(root, est, inputs, target, classes, output=True)
    write(out, "iris_tree", root, "TreeModel", est, xte, {}, target, classes, trees=1)

    est = RandomForestClassifier(n_estimators=10, max_depth=4, random_state=SEED, n_jobs=1).fit(xtr.to_numpy(), ytr)
    root = document("RandomForestClassifier on the iris data set: 10 trees of depth 4")
    data_dictionary(root, inputs, target, classes)
    forest(root, est, inputs, target, classes)
    write(out, "iris_forest", root, "MiningModel", est, xte, {"label": target}, target, classes, trees=10)

    # Newton's method to a tight tolerance, so that the solver stops at
    # the optimum and not at a point its arithmetic happened to reach:
    # lbfgs, even at tol=1e-10, stopped 1e-4 apart on two CPUs.
    est = LogisticRegression(solver="newton-cg", max_iter=1000, tol=1e-12).fit(xtr.to_numpy(), ytr)
    root = document("multinomial LogisticRegression on the iris data set")
    data_dictionary(root, inputs, target, classes)
    logistic(root, est, inputs, target, classes)
    write(out, "iris_logistic", root, "RegressionModel", est, xte, {}, target, classes)

    est = KMeans(n_clusters=3, n_init=10, random_state=SEED).fit(xtr.to_numpy())
    root = document("KMeans of three clusters on the iris data set")
    data_dictionary(root, inputs, None)
    kmeans(root, est, inputs)
    write(out, "iris_kmeans", root, "ClusteringModel", est, xte, {}, None)

    est = GaussianNB().fit(xtr.to_numpy(), ytr)
    root = document("GaussianNB on the iris data set")
    data_dictionary(root, inputs, target, classes)
    gaussian_nb(root, est, inputs, target, classes)
    write(out, "iris_naivebayes", root, "NaiveBayesModel", est, xte, {}, target, classes)


def breast_cancer(out):
    x, y = frame(datasets.load_breast_cancer())
    inputs = list(x.columns)
    xtr, xte, ytr, yte = split(x, y)
    classes = ["malignant", "benign"]
    target = "diagnosis"

    est = GradientBoostingClassifier(n_estimators=30, max_depth=3, learning_rate=0.2, random_state=SEED)
    est.fit(xtr.to_numpy(), ytr)
    root = document("binary GradientBoostingClassifier on the breast cancer data set: 30 trees of depth 3")
    data_dictionary(root, inputs, target, classes)
    boosting_classifier(root, est, inputs, target, classes)
    write(out, "breast_cancer_boosting", root, "MiningModel", est, xte, {}, target, classes, trees=31)

    # Scaled, so that the solver converges on the raw features.
    scale = xtr.std().to_numpy()
    est = LogisticRegression(solver="newton-cholesky", max_iter=1000, tol=1e-12).fit(xtr.to_numpy() / scale, ytr)
    wrapped = Scaled(est, scale)
    root = document("binary LogisticRegression on the breast cancer data set")
    data_dictionary(root, inputs, target, classes)
    logistic(root, wrapped, inputs, target, classes)
    write(out, "breast_cancer_logistic", root, "RegressionModel", wrapped, xte, {}, target, classes)


class Scaled:
    """A logistic regression fitted on x / scale, as one on x."""

    def __init__(self, est, scale):
        self.est = est
        self.scale = scale
        self.coef_ = est.coef_ / scale
        self.intercept_ = est.intercept_

    def predict_proba(self, x):
        return self.est.predict_proba(x / self.scale)

    def predict(self, x):
        return self.est.predict(x / self.scale)


def diabetes(out):
    x, y = frame(datasets.load_diabetes())
    inputs = list(x.columns)
    xtr, xte, ytr, yte = split(x, y, stratify=False)
    target = "progression"
    meta = {"label": target}

    est = DecisionTreeRegressor(max_depth=5, min_samples_leaf=5, random_state=SEED).fit(xtr.to_numpy(), ytr)
    root = document("DecisionTreeRegressor on the diabetes data set")
    data_dictionary(root, inputs, target)
    tree_model(root, est, inputs, target)
    write(out, "diabetes_tree", root, "TreeModel", est, xte, meta, target, trees=1)

    est = RandomForestRegressor(n_estimators=10, max_depth=4, random_state=SEED, n_jobs=1).fit(xtr.to_numpy(), ytr)
    root = document("RandomForestRegressor on the diabetes data set: 10 trees of depth 4")
    data_dictionary(root, inputs, target)
    forest(root, est, inputs, target)
    write(out, "diabetes_forest", root, "MiningModel", est, xte, meta, target, trees=10)

    est = GradientBoostingRegressor(n_estimators=30, max_depth=3, learning_rate=0.1, random_state=SEED)
    est.fit(xtr.to_numpy(), ytr)
    root = document("GradientBoostingRegressor on the diabetes data set: 30 trees of depth 3")
    data_dictionary(root, inputs, target)
    boosted_sum(root, est, inputs, target)
    write(out, "diabetes_boosting", root, "MiningModel", est, xte, meta, target, trees=31)

    # A text input, one-hot encoded in the TransformationDictionary.
    cat = x.copy()
    cat["sex"] = np.where(x["sex"] > 0, "male", "female").astype(object)
    levels = ["female", "male"]
    columns = [(c, None) for c in inputs if c != "sex"] + [("sex", v) for v in levels]

    def encode(d):
        enc = d[[c for c in inputs if c != "sex"]].to_numpy()
        return np.hstack([enc] + [(d["sex"].to_numpy() == v).astype(np.float64)[:, None] for v in levels])

    ctr, cte = cat.loc[xtr.index], cat.loc[xte.index]
    est = LinearRegression().fit(encode(ctr), ytr)
    root = document("LinearRegression on the diabetes data set with sex one-hot encoded")
    data_dictionary(root, inputs, target, categorical={"sex": levels})
    one_hot_regression(root, est, inputs, target, {"sex": levels}, columns)
    write(out, "diabetes_onehot", root, "RegressionModel", est, cte, meta, target, encode=encode)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=HERE, help="where the fixtures go (default: this directory)")
    args = ap.parse_args()
    if not sklearn.__version__.startswith("1.2."):
        sys.exit("export.py: the fixtures come from scikit-learn 1.2; this is scikit-learn %s" % sklearn.__version__)
    os.makedirs(args.out, exist_ok=True)
    iris(args.out)
    breast_cancer(args.out)
    diabetes(args.out)


if __name__ == "__main__":
    main()
