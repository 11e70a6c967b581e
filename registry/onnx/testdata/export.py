#!/usr/bin/python3
"""Trains scikit-learn models, writes them as ONNX and records what the Go tests compare.

For every model NAME this writes, into the output directory:

  NAME.onnx       the model as an ONNX graph (ai.onnx opset 13 with the
                  ai.onnx.ml operators of opset 1 or 3)
  NAME.rows.json  the fixture: the metadata an upload would carry, the schema
                  the Go reader should derive, the input rows as a client
                  would post them, scikit-learn's own answers for them
                  (predict_proba per class and predict for a classifier,
                  predict for a regressor) and ONNX Runtime's answers for the
                  same rows (the probabilities or values and the labels)

No ONNX converter for scikit-learn is packaged for Debian, so this file holds
a small one over onnx.helper for the estimators it trains, laid out the way
converters lay out tabular pipelines:

  - a tree, forest or gradient boosting model is one TreeEnsembleClassifier
    or TreeEnsembleRegressor: a tree sends x <= threshold to its true
    (left) branch; a forest's leaves carry their class shares or values over
    the number of trees (or the regressor averages); boosting carries the
    learning rate times its leaf values onto base_values, the initial raw
    prediction, and LOGISTIC or SOFTMAX turns the sum into probabilities.
    Thresholds are float32 attributes (ai.onnx.ml opset 1) or double
    tensors (*_as_tensor, opset 3) read from a double input.
  - logistic regression is Scaler -> LinearClassifier, its scores made
    probabilities by Sigmoid and an L1 Normalizer (binary) or Softmax
    (multinomial); linear regression is a LinearRegressor, or MatMul + Add
    and a Reshape.
  - a pipeline with one graph input per column (numbers as [N, 1] float or
    double, text as [N, 1] string) imputes, encodes (OneHotEncoder,
    LabelEncoder), casts, concatenates and picks (ArrayFeatureExtractor)
    its features before the model.
  - a classifier answers its label and its probabilities, as a tensor or
    as ZipMap's sequence of maps from class to probability.

The newer TreeEnsemble operator (ai.onnx.ml opset 5) is not among them:
onnx 1.12, the one Debian packages, registers no such operator, so its
checker refuses a graph that uses it ("No Op registered for TreeEnsemble").

Input rows are rounded to float32 before scikit-learn scores them, as its
trees compare float32 features against float64 thresholds: with a float32
row, a double-threshold ONNX tree compares exactly as scikit-learn does. A
float-threshold tree compares against the threshold rounded to float32 and
so may take the other branch where a value lies between the two roundings;
ONNX Runtime does, and its answers then differ from scikit-learn's (by up to
0.15 in a probability here). Everything is deterministic (fixed seeds, one
thread), so running this again writes the same models; the Go test
TestRegenerate checks that, numbers within its tolerance, as numpy on
another CPU (one with AVX-512) rounds the last digit of some sums
otherwise.

ONNX Runtime's answers come from ort/run.js, which needs the npm project in
ort/ installed (see its package.json):

  ONNXRUNTIME_NODE_INSTALL=skip npm ci --prefix ort --ignore-scripts

Needs scikit-learn 1.2, numpy, pandas and onnx 1.12 (Debian: python3-sklearn
python3-pandas python3-onnx) and node. Run it as

  /usr/bin/python3 export.py [--out DIR]
"""

import os

# One thread for BLAS and OpenMP, set before numpy loads them: a solver's
# sums, and so its last digits, depend on how many threads share them.
for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402

import numpy as np  # noqa: E402
import onnx  # noqa: E402
import pandas as pd  # noqa: E402
import sklearn  # noqa: E402
from onnx import TensorProto, TypeProto, helper, numpy_helper  # noqa: E402
from sklearn import datasets  # noqa: E402
from sklearn.ensemble import (GradientBoostingClassifier, GradientBoostingRegressor,  # noqa: E402
                              RandomForestClassifier, RandomForestRegressor)
from sklearn.linear_model import LinearRegression, LogisticRegression, Ridge  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SEED = 21
ROWS = 40
ML = "ai.onnx.ml"
OPSET = 13
FLOAT, DOUBLE, INT64, STRING = TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.INT64, TensorProto.STRING


# The data.

def frame(bunch):
    """The data set's features, rounded to float32, with names usable as columns."""
    names = [n.replace(" ", "_").replace("(", "").replace(")", "") for n in bunch.feature_names]
    x = np.asarray(bunch.data, dtype=np.float32).astype(np.float64)
    return pd.DataFrame(x, columns=names), np.asarray(bunch.target)


def split(x, y, rows=ROWS, stratify=True):
    """Training data and rows test rows, the same on every run."""
    return train_test_split(x, y, test_size=rows, random_state=SEED, stratify=y if stratify else None)


def rows_of(x):
    """x's rows as a client posts them: a number (null where missing) or a string per column."""
    out = []
    for rec in x.itertuples(index=False):
        row = {}
        for name, v in zip(x.columns, rec):
            if isinstance(v, str):
                row[name] = v
            else:
                row[name] = None if np.isnan(v) else float(v)
        out.append(row)
    return out


# The graph.

def tensor_input(name, elem, width):
    return helper.make_tensor_value_info(name, elem, [None, width])


def zipmap_type(key):
    """seq(map(key, float)), what ZipMap answers."""
    t = TypeProto()
    m = t.sequence_type.elem_type.map_type
    m.key_type = key
    m.value_type.tensor_type.elem_type = FLOAT
    return t


def graph_model(name, doc, nodes, inputs, outputs, ml_opset, initializers=()):
    """The checked ModelProto of a graph; deterministic bytes."""
    graph = helper.make_graph(nodes, name, inputs, outputs, initializer=list(initializers))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET), helper.make_opsetid(ML, ml_opset)],
                          producer_name="scorehub testdata", producer_version="1", doc_string=doc)
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


def reals(attrs, name, values, double):
    """Sets attribute name to values: floats, or (double) a double tensor NAME_as_tensor."""
    values = [float(v) for v in values]
    if double:
        attrs[name + "_as_tensor"] = helper.make_tensor("", DOUBLE, [len(values)], values)
    else:
        attrs[name] = values


def labels(attrs, classes):
    """Sets classlabels_int64s or classlabels_strings."""
    if all(isinstance(c, (int, np.integer)) for c in classes):
        attrs["classlabels_int64s"] = [int(c) for c in classes]
    else:
        attrs["classlabels_strings"] = [str(c) for c in classes]


def tree_nodes(trees, double):
    """The nodes_* attributes of sklearn trees (tree_ objects), tree i being tree id i."""
    a = {k: [] for k in ("treeids", "nodeids", "featureids", "modes", "values", "truenodeids", "falsenodeids")}
    for tid, t in enumerate(trees):
        for i in range(t.node_count):
            leaf = t.children_left[i] == -1
            a["treeids"].append(tid)
            a["nodeids"].append(i)
            a["featureids"].append(0 if leaf else int(t.feature[i]))
            a["modes"].append("LEAF" if leaf else "BRANCH_LEQ")
            a["values"].append(0.0 if leaf else float(t.threshold[i]))
            a["truenodeids"].append(0 if leaf else int(t.children_left[i]))
            a["falsenodeids"].append(0 if leaf else int(t.children_right[i]))
    attrs = {"nodes_" + k: v for k, v in a.items() if k != "values"}
    reals(attrs, "nodes_values", a["values"], double)
    return attrs


def leaves(t):
    return [i for i in range(t.node_count) if t.children_left[i] == -1]


def forest_classifier(trees, classes, double):
    """TreeEnsembleClassifier attributes of trees whose leaves hold class
    counts (a decision tree or a forest): each tree's class shares over the
    number of trees, leaving out shares of 0. A binary model carries one
    score, the second class's share, in every leaf (as class id 0): ONNX
    Runtime reads two classes as that one score and its complement."""
    attrs = tree_nodes(trees, double)
    ids, nodes, cls, w = [], [], [], []
    for tid, t in enumerate(trees):
        for i in leaves(t):
            counts = t.value[i][0]
            if len(classes) == 2:
                ids.append(tid)
                nodes.append(i)
                cls.append(0)
                w.append(counts[1] / counts.sum() / len(trees))
                continue
            for k, c in enumerate(counts):
                if c:
                    ids.append(tid)
                    nodes.append(i)
                    cls.append(k)
                    w.append(c / counts.sum() / len(trees))
    attrs.update(class_treeids=ids, class_nodeids=nodes, class_ids=cls, post_transform="NONE")
    reals(attrs, "class_weights", w, double)
    labels(attrs, classes)
    return attrs


def boosting_classifier(est, classes, base, double):
    """TreeEnsembleClassifier attributes of a GradientBoostingClassifier: one
    score per class (one for a binary model) from the learning rate times the
    trees' leaves, onto base, then LOGISTIC or SOFTMAX."""
    stages = est.estimators_
    trees = [stages[s][k].tree_ for s in range(stages.shape[0]) for k in range(stages.shape[1])]
    attrs = tree_nodes(trees, double)
    ids, nodes, cls, w = [], [], [], []
    for tid, t in enumerate(trees):
        for i in leaves(t):
            ids.append(tid)
            nodes.append(i)
            cls.append(tid % stages.shape[1])
            w.append(est.learning_rate * t.value[i][0][0])
    attrs.update(class_treeids=ids, class_nodeids=nodes, class_ids=cls,
                 post_transform="LOGISTIC" if stages.shape[1] == 1 else "SOFTMAX")
    reals(attrs, "class_weights", w, double)
    reals(attrs, "base_values", base, double)
    labels(attrs, classes)
    return attrs


def tree_regressor(trees, scale, double, aggregate="SUM", base=None):
    """TreeEnsembleRegressor attributes: each leaf's value times scale."""
    attrs = tree_nodes(trees, double)
    ids, nodes, w = [], [], []
    for tid, t in enumerate(trees):
        for i in leaves(t):
            ids.append(tid)
            nodes.append(i)
            w.append(scale * t.value[i][0][0])
    attrs.update(target_treeids=ids, target_nodeids=nodes, target_ids=[0] * len(ids), n_targets=1,
                 aggregate_function=aggregate, post_transform="NONE")
    reals(attrs, "target_weights", w, double)
    if base is not None:
        reals(attrs, "base_values", [base], double)
    return attrs


def classifier_outputs(nodes, scores, classes, zipmap):
    """The graph outputs of a classifier whose node wrote label and scores:
    label and probabilities, or output_label and ZipMap's output_probability."""
    ints = all(isinstance(c, (int, np.integer)) for c in classes)
    label_type = INT64 if ints else STRING
    if not zipmap:
        return ["label", scores], [helper.make_tensor_value_info("label", label_type, [None]),
                                   helper.make_tensor_value_info(scores, FLOAT, [None, len(classes)])]
    attrs = {}
    labels(attrs, classes)
    nodes.append(helper.make_node("ZipMap", [scores], ["output_probability"], domain=ML, **attrs))
    return ["label", "output_probability"], [helper.make_tensor_value_info("label", label_type, [None]),
                                             helper.make_value_info("output_probability", zipmap_type(label_type))]


# The fixture.

def ort_answers(out, name, rows_doc):
    """ONNX Runtime's outputs for the fixture's rows, by ort/run.js."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(rows_doc, f)
    try:
        res = subprocess.run(["node", os.path.join(HERE, "ort", "run.js"), "score",
                              os.path.join(out, name + ".onnx"), f.name],
                             capture_output=True, text=True)
    finally:
        os.unlink(f.name)
    if res.returncode != 0:
        sys.exit("export.py: %s: ort/run.js failed (install it: ONNXRUNTIME_NODE_INSTALL=skip "
                 "npm ci --prefix %s --ignore-scripts): %s" % (name, os.path.join(HERE, "ort"), res.stderr.strip()))
    return json.loads(res.stdout)["outputs"]


def write(out, name, m, est, x, metadata, label, threshold, classes=None, encode=None):
    """Writes NAME.onnx and NAME.rows.json with scikit-learn's and ONNX
    Runtime's answers for x, which encode (default: DataFrame.to_numpy)
    turns into est's input. threshold is the precision of the trees'
    thresholds ("float", "double"), None for a model without trees."""
    with open(os.path.join(out, name + ".onnx"), "wb") as f:
        f.write(m.SerializeToString())
    encode = encode or (lambda d: d.to_numpy())
    inputs = list(x.columns)
    graph_inputs = [i.name for i in m.graph.input]
    schema = {"task": "classification" if classes is not None else "regression", "label": label,
              "inputs": inputs, "graph_inputs": graph_inputs}
    if threshold:
        schema["threshold"] = threshold
    text = [c for c in inputs if x[c].dtype == object]
    if text:
        schema["text_inputs"] = text
    fixture = {"model": name, "metadata": metadata, "schema": schema, "rows": rows_of(x)}
    ort = ort_answers(out, name, {"schema": {"inputs": inputs}, "rows": fixture["rows"]})
    outs = [o.name for o in m.graph.output]
    if classes is not None:
        # The metadata may name integer labels 0..k-1; the answers then
        # carry its names, and model_classes keeps the file's labels.
        labels = [str(c) for c in classes]
        names = metadata.get("classes", labels)
        schema["classes"] = names
        if names != labels:
            schema["model_classes"] = labels
        name_of = dict(zip(labels, names))
        fixture["predictions"] = [[float(p) for p in row] for row in est.predict_proba(encode(x))]
        fixture["classes"] = [name_of[str(k)] for k in est.predict(encode(x))]
        fixture["onnxruntime"] = {"predictions": ort[outs[1]], "classes": [name_of[str(k)] for k in ort[outs[0]]]}
    else:
        fixture["predictions"] = [float(v) for v in est.predict(encode(x))]
        fixture["onnxruntime"] = {"predictions": ort[outs[0]]}
    with open(os.path.join(out, name + ".rows.json"), "w") as f:
        json.dump(fixture, f, indent=1, allow_nan=False)
        f.write("\n")


# The models.

def tree_classifier_model(name, doc, est, trees, classes, width, double, zipmap, ml_opset):
    elem = DOUBLE if double else FLOAT
    nodes = [helper.make_node("TreeEnsembleClassifier", ["input"], ["label", "probabilities"], domain=ML,
                              **forest_classifier(trees, classes, double))]
    names, outputs = classifier_outputs(nodes, "probabilities", classes, zipmap)
    return graph_model(name, doc, nodes, [tensor_input("input", elem, width)], outputs, ml_opset)


def iris(out):
    bunch = datasets.load_iris()
    x, y = frame(bunch)
    names = [str(n) for n in bunch.target_names]
    xtr, xte, ytr, yte = split(x, y)
    width = x.shape[1]
    features = list(x.columns)
    meta = {"label": "species", "features": features}

    # A decision tree with float thresholds and string classes.
    est = DecisionTreeClassifier(max_depth=4, random_state=SEED).fit(xtr.to_numpy(), np.array(names)[ytr])
    m = tree_classifier_model("iris_tree", "DecisionTreeClassifier on the iris data set, float thresholds",
                              est, [est.tree_], list(est.classes_), width, False, False, 1)
    write(out, "iris_tree", m, est, xte, meta, "species", "float", classes=list(est.classes_))

    # A forest with double thresholds, answering through ZipMap.
    est = RandomForestClassifier(n_estimators=8, max_depth=4, random_state=SEED, n_jobs=1)
    est.fit(xtr.to_numpy(), np.array(names)[ytr])
    m = tree_classifier_model("iris_forest", "RandomForestClassifier on the iris data set: 8 trees, double thresholds",
                              est, [e.tree_ for e in est.estimators_], list(est.classes_), width, True, True, 3)
    write(out, "iris_forest", m, est, xte, meta, "species", "double", classes=list(est.classes_))

    # A tree trained on the labels 0..2, as a converter writes it
    # (classlabels_int64s, ZipMap keyed by int64), uploaded with metadata
    # naming the classes.
    est = DecisionTreeClassifier(max_depth=3, random_state=SEED).fit(xtr.to_numpy(), ytr)
    m = tree_classifier_model("iris_tree_int_labels", "DecisionTreeClassifier on the iris data set, trained on "
                              "the labels 0..2, double thresholds", est, [est.tree_], [0, 1, 2], width, True, True, 3)
    write(out, "iris_tree_int_labels", m, est, xte, dict(meta, classes=names), "species", "double",
          classes=[0, 1, 2])

    # Multiclass gradient boosting: SOFTMAX over a score per class, int64 labels.
    est = GradientBoostingClassifier(n_estimators=10, max_depth=2, learning_rate=0.3, random_state=SEED)
    est.fit(xtr.to_numpy(), ytr)
    base = est._raw_predict_init(xtr.to_numpy()[:1])[0]
    nodes = [helper.make_node("TreeEnsembleClassifier", ["input"], ["label", "probabilities"], domain=ML,
                              **boosting_classifier(est, list(est.classes_), base, True))]
    _, outputs = classifier_outputs(nodes, "probabilities", list(est.classes_), False)
    m = graph_model("iris_boosting", "GradientBoostingClassifier on the iris data set: 10 stages of 3 trees, "
                    "double thresholds, SOFTMAX", nodes, [tensor_input("input", DOUBLE, width)], outputs, 3)
    write(out, "iris_boosting", m, est, xte, {"label": "species", "features": features}, "species", "double",
          classes=list(est.classes_))

    # Multinomial logistic regression: Scaler -> LinearClassifier -> Softmax.
    # Uploaded without feature names, its columns are f0..f3.
    xtr, xte = (d.set_axis(["f%d" % j for j in range(width)], axis=1) for d in (xtr, xte))
    mean, std = xtr.mean().to_numpy(), xtr.std(ddof=0).to_numpy()
    est = LogisticRegression(max_iter=1000).fit(((xtr - mean) / std).to_numpy(), ytr)
    nodes = [
        helper.make_node("Scaler", ["input"], ["scaled"], domain=ML, offset=[float(v) for v in mean],
                         scale=[float(1 / v) for v in std]),
        helper.make_node("LinearClassifier", ["scaled"], ["label", "scores"], domain=ML,
                         coefficients=[float(v) for v in est.coef_.ravel()],
                         intercepts=[float(v) for v in est.intercept_], classlabels_ints=[0, 1, 2],
                         post_transform="NONE"),
        helper.make_node("Softmax", ["scores"], ["probabilities"], axis=-1),
    ]
    _, outputs = classifier_outputs(nodes, "probabilities", [0, 1, 2], False)
    m = graph_model("iris_logistic", "LogisticRegression (multinomial) on the standardized iris data set",
                    nodes, [tensor_input("input", FLOAT, width)], outputs, 1)
    write(out, "iris_logistic", m, est, xte, {"label": "species"}, "species", None, classes=[0, 1, 2],
          encode=lambda d: ((d - mean) / std).to_numpy())


def breast_cancer(out):
    bunch = datasets.load_breast_cancer()
    x, y = frame(bunch)
    xtr, xte, ytr, yte = split(x, y)
    width = x.shape[1]
    features = list(x.columns)
    meta = {"label": "diagnosis", "features": features}

    # Binary gradient boosting: one score onto the initial log-odds, LOGISTIC,
    # int64 labels through ZipMap, float thresholds.
    est = GradientBoostingClassifier(n_estimators=20, max_depth=3, learning_rate=0.2, random_state=SEED)
    est.fit(xtr.to_numpy(), ytr)
    base = est._raw_predict_init(xtr.to_numpy()[:1])[0]
    nodes = [helper.make_node("TreeEnsembleClassifier", ["input"], ["label", "probabilities"], domain=ML,
                              **boosting_classifier(est, [0, 1], base, False))]
    _, outputs = classifier_outputs(nodes, "probabilities", [0, 1], True)
    m = graph_model("breast_cancer_boosting", "GradientBoostingClassifier on the breast cancer data set: "
                    "20 trees, float thresholds, LOGISTIC", nodes, [tensor_input("input", FLOAT, width)], outputs, 1)
    write(out, "breast_cancer_boosting", m, est, xte, meta, "diagnosis", "float", classes=[0, 1])

    # The same with double thresholds.
    nodes = [helper.make_node("TreeEnsembleClassifier", ["input"], ["label", "probabilities"], domain=ML,
                              **boosting_classifier(est, [0, 1], base, True))]
    _, outputs = classifier_outputs(nodes, "probabilities", [0, 1], False)
    m = graph_model("breast_cancer_boosting_double", "GradientBoostingClassifier on the breast cancer data set: "
                    "20 trees, double thresholds, LOGISTIC", nodes, [tensor_input("input", DOUBLE, width)], outputs, 3)
    write(out, "breast_cancer_boosting_double", m, est, xte, meta, "diagnosis", "double", classes=[0, 1])

    # A forest of scikit-learn's default size with float thresholds and
    # int64 labels.
    est = RandomForestClassifier(n_estimators=100, max_depth=8, random_state=SEED, n_jobs=1).fit(xtr.to_numpy(), ytr)
    m = tree_classifier_model("breast_cancer_forest", "RandomForestClassifier on the breast cancer data set: "
                              "100 trees of depth 8 at most, float thresholds", est, [e.tree_ for e in est.estimators_], [0, 1],
                              width, False, False, 1)
    write(out, "breast_cancer_forest", m, est, xte, meta, "diagnosis", "float", classes=[0, 1])

    # Binary logistic regression: Scaler -> LinearClassifier (a score per
    # class, -z and z) -> Sigmoid -> Normalizer (L1), string labels.
    mean, std = xtr.mean().to_numpy(), xtr.std(ddof=0).to_numpy()
    names = [str(n) for n in bunch.target_names]
    est = LogisticRegression(max_iter=2000).fit(((xtr - mean) / std).to_numpy(), np.array(names)[ytr])
    w, b = est.coef_.ravel(), float(est.intercept_[0])
    nodes = [
        helper.make_node("Scaler", ["input"], ["scaled"], domain=ML, offset=[float(v) for v in mean],
                         scale=[float(1 / v) for v in std]),
        helper.make_node("LinearClassifier", ["scaled"], ["label", "scores"], domain=ML,
                         coefficients=[float(-v) for v in w] + [float(v) for v in w], intercepts=[-b, b],
                         classlabels_strings=[str(c) for c in est.classes_], post_transform="NONE"),
        helper.make_node("Sigmoid", ["scores"], ["sigmoid"]),
        helper.make_node("Normalizer", ["sigmoid"], ["probabilities"], domain=ML, norm="L1"),
    ]
    _, outputs = classifier_outputs(nodes, "probabilities", list(est.classes_), False)
    m = graph_model("breast_cancer_logistic", "LogisticRegression on the standardized breast cancer data set",
                    nodes, [tensor_input("input", FLOAT, width)], outputs, 1)
    write(out, "breast_cancer_logistic", m, est, xte, meta, "diagnosis", None, classes=list(est.classes_),
          encode=lambda d: ((d - mean) / std).to_numpy())


def diabetes(out):
    x, y = frame(datasets.load_diabetes())
    xtr, xte, ytr, yte = split(x, y, stratify=False)
    width = x.shape[1]
    features = list(x.columns)
    target = "progression"
    meta = {"label": target, "features": features}

    def regressor(name, doc, attrs, elem, ml_opset):
        nodes = [helper.make_node("TreeEnsembleRegressor", ["input"], ["variable"], domain=ML, **attrs)]
        return graph_model(name, doc, nodes, [tensor_input("input", elem, width)],
                           [helper.make_tensor_value_info("variable", FLOAT, [None, 1])], ml_opset)

    est = DecisionTreeRegressor(max_depth=5, min_samples_leaf=5, random_state=SEED).fit(xtr.to_numpy(), ytr)
    m = regressor("diabetes_tree", "DecisionTreeRegressor on the diabetes data set, double thresholds",
                  tree_regressor([est.tree_], 1.0, True), DOUBLE, 3)
    write(out, "diabetes_tree", m, est, xte, meta, target, "double")

    est = RandomForestRegressor(n_estimators=10, max_depth=5, random_state=SEED, n_jobs=1).fit(xtr.to_numpy(), ytr)
    m = regressor("diabetes_forest", "RandomForestRegressor on the diabetes data set: 10 trees averaged, "
                  "float thresholds", tree_regressor([e.tree_ for e in est.estimators_], 1.0, False, "AVERAGE"),
                  FLOAT, 1)
    write(out, "diabetes_forest", m, est, xte, meta, target, "float")

    est = GradientBoostingRegressor(n_estimators=30, max_depth=3, learning_rate=0.1, random_state=SEED)
    est.fit(xtr.to_numpy(), ytr)
    m = regressor("diabetes_boosting", "GradientBoostingRegressor on the diabetes data set: 30 trees onto the "
                  "mean, double thresholds",
                  tree_regressor([e.tree_ for e in est.estimators_[:, 0]], est.learning_rate, True,
                                 base=float(est.init_.constant_[0][0])), DOUBLE, 3)
    write(out, "diabetes_boosting", m, est, xte, meta, target, "double")

    # Linear regression as a LinearRegressor.
    est = LinearRegression().fit(xtr.to_numpy(), ytr)
    nodes = [helper.make_node("LinearRegressor", ["input"], ["variable"], domain=ML,
                              coefficients=[float(v) for v in est.coef_], intercepts=[float(est.intercept_)])]
    m = graph_model("diabetes_linear", "LinearRegression on the diabetes data set", nodes,
                    [tensor_input("input", FLOAT, width)],
                    [helper.make_tensor_value_info("variable", FLOAT, [None, 1])], 1)
    write(out, "diabetes_linear", m, est, xte, meta, target, None)

    # Ridge on standardized features, all in double: the standardizing as
    # Add and Mul, the model as MatMul and Add, reshaped to a value per row.
    mean, std = xtr.mean().to_numpy(), xtr.std(ddof=0).to_numpy()
    est = Ridge(alpha=0.1).fit(((xtr - mean) / std).to_numpy(), ytr)
    inits = [numpy_helper.from_array(-mean.astype(np.float64), "neg_mean"),
             numpy_helper.from_array((1 / std).astype(np.float64), "inv_std"),
             numpy_helper.from_array(est.coef_.astype(np.float64).reshape(width, 1), "coef"),
             numpy_helper.from_array(np.array([est.intercept_], dtype=np.float64), "intercept"),
             numpy_helper.from_array(np.array([-1], dtype=np.int64), "shape")]
    nodes = [helper.make_node("Add", ["input", "neg_mean"], ["centered"]),
             helper.make_node("Mul", ["centered", "inv_std"], ["scaled"]),
             helper.make_node("MatMul", ["scaled", "coef"], ["product"]),
             helper.make_node("Add", ["product", "intercept"], ["sum"]),
             helper.make_node("Reshape", ["sum", "shape"], ["variable"])]
    m = graph_model("diabetes_ridge", "Ridge on the standardized diabetes data set as Add, Mul, MatMul and Add "
                    "in double", nodes, [tensor_input("input", DOUBLE, width)],
                    [helper.make_tensor_value_info("variable", DOUBLE, [None])], 1, inits)
    write(out, "diabetes_ridge", m, est, xte, meta, target, None, encode=lambda d: ((d - mean) / std).to_numpy())

    diabetes_columns(out, x, y, xtr.index, xte.index, ytr)


def diabetes_columns(out, x, y, train, test, ytr):
    """A pipeline with a graph input per column, two of them text: numbers
    imputed where missing, sex one-hot encoded, an age band label-encoded,
    the features picked and fed to gradient boosting with double thresholds."""
    target = "progression"
    numbers = ["bmi", "bp", "s1", "s2", "s3", "s4", "s5", "s6"]
    d = x[["age"] + numbers].copy()
    d.insert(1, "sex", np.where(x["sex"] > 0, "male", "female").astype(object))
    cut = np.quantile(x["age"], [1 / 3, 2 / 3])
    bands = ["young", "middle", "old"]
    d.insert(2, "age_band", np.array(bands, dtype=object)[np.searchsorted(cut, x["age"], side="right")])
    # One in eight numbers missing, the same on every run.
    rng = np.random.default_rng(SEED)
    holes = rng.random((len(d), len(numbers))) < 1 / 8
    for j, c in enumerate(numbers):
        d.loc[holes[:, j], c] = np.nan
    dtr, dte = d.loc[train], d.loc[test]
    fill = np.float32(dtr[numbers].mean().to_numpy())

    # What the graph computes, in numpy: [numbers imputed, sex one-hot
    # (female, male), age band 0..2, age], then the columns picked.
    pick = [0, 1, 2, 3, 4, 5, 6, 7, 9, 10, 11]  # drops the one-hot "female"

    def encode(frame):
        num = frame[numbers].to_numpy(dtype=np.float32)
        num = np.where(np.isnan(num), fill, num)
        sex = np.stack([(frame["sex"] == "female").to_numpy(), (frame["sex"] == "male").to_numpy()], axis=1)
        band = frame["age_band"].map({b: i for i, b in enumerate(bands)}).to_numpy()[:, None]
        age = frame["age"].to_numpy(dtype=np.float32)[:, None]
        full = np.hstack([num, sex.astype(np.float32), band.astype(np.float32), age])
        return full[:, pick].astype(np.float64)

    est = GradientBoostingRegressor(n_estimators=20, max_depth=3, learning_rate=0.15, random_state=SEED)
    est.fit(encode(dtr), ytr)

    inputs = [helper.make_tensor_value_info("age", DOUBLE, [None, 1]),
              helper.make_tensor_value_info("sex", STRING, [None, 1]),
              helper.make_tensor_value_info("age_band", STRING, [None, 1])]
    inputs += [helper.make_tensor_value_info(c, FLOAT, [None, 1]) for c in numbers]
    inits = [numpy_helper.from_array(np.array(pick, dtype=np.int64), "pick")]
    nodes = [
        helper.make_node("Concat", numbers, ["numbers"], axis=1),
        helper.make_node("Imputer", ["numbers"], ["imputed"], domain=ML,
                         imputed_value_floats=[float(v) for v in fill], replaced_value_float=float("nan")),
        helper.make_node("OneHotEncoder", ["sex"], ["sex_onehot"], domain=ML, cats_strings=["female", "male"],
                         zeros=1),
        helper.make_node("Flatten", ["sex_onehot"], ["sex_columns"], axis=1),
        helper.make_node("LabelEncoder", ["age_band"], ["band_code"], domain=ML, keys_strings=bands,
                         values_int64s=[0, 1, 2], default_int64=-1),
        helper.make_node("Cast", ["band_code"], ["band"], to=FLOAT),
        helper.make_node("Cast", ["age"], ["age_float"], to=FLOAT),
        helper.make_node("Concat", ["imputed", "sex_columns", "band", "age_float"], ["features"], axis=1),
        helper.make_node("ArrayFeatureExtractor", ["features", "pick"], ["picked"], domain=ML),
        helper.make_node("Cast", ["picked"], ["picked_double"], to=DOUBLE),
        helper.make_node("Identity", ["picked_double"], ["model_input"]),
        helper.make_node("TreeEnsembleRegressor", ["model_input"], ["variable"], domain=ML,
                         **tree_regressor([e.tree_ for e in est.estimators_[:, 0]], est.learning_rate, True,
                                          base=float(est.init_.constant_[0][0]))),
    ]
    m = graph_model("diabetes_columns", "GradientBoostingRegressor on the diabetes data set behind a column "
                    "pipeline: numbers imputed, sex one-hot, age band label-encoded", nodes, inputs,
                    [helper.make_tensor_value_info("variable", FLOAT, [None, 1])], 3, inits)
    write(out, "diabetes_columns", m, est, dte, {"label": target}, target, "double", encode=encode)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=HERE, help="where the fixtures go (default: this directory)")
    args = ap.parse_args()
    if not sklearn.__version__.startswith("1.2."):
        sys.exit("export.py: the fixtures come from scikit-learn 1.2; this is scikit-learn %s" % sklearn.__version__)
    if not onnx.__version__.startswith("1.12."):
        sys.exit("export.py: the fixtures come from onnx 1.12; this is onnx %s" % onnx.__version__)
    os.makedirs(args.out, exist_ok=True)
    iris(args.out)
    breast_cancer(args.out)
    diabetes(args.out)


if __name__ == "__main__":
    main()
