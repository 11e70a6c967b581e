#!/usr/bin/python3
"""Trains XGBoost models, writes them as ONNX tree ensembles that carry their covers, and records what the Go tests compare.

For every model NAME this writes, into the output directory:

  NAME.onnx       the model as an ONNX graph (ai.onnx opset 13, ai.onnx.ml
                  opset 3) of one TreeEnsembleClassifier or
                  TreeEnsembleRegressor whose nodes_hitrates are XGBoost's
                  covers
  NAME.rows.json  the fixture: the metadata an upload would carry, the schema
                  the Go reader should derive, the input rows as a client
                  would post them (null for a missing value), and XGBoost's
                  own answers for them: its predictions, its margins
                  (output_margin) and its contributions (pred_contribs: per
                  row, per margin, each feature's and then the bias)

No converter of XGBoost models to ONNX is packaged for Debian, so this file
holds a small one over onnx.helper, laid out as onnxmltools lays out an
XGBoost booster, from the model XGBoost saves as JSON:

  - every tree's nodes keep XGBoost's ids, the root first; a split
    "x < split_condition" is BRANCH_LT to the left child (true) and the
    right one (false), missing_value_tracks_true where XGBoost's default
    branch is the left one; a leaf carries its value as its weight;
  - a binary:logistic model is a TreeEnsembleClassifier of one score (every
    weight for class 0) onto base_values [logit(base_score)], with
    post_transform LOGISTIC; multi:softprob weighs tree i for class
    i mod k onto base_values [base_score] * k, with SOFTMAX;
    reg:squarederror is a TreeEnsembleRegressor of one target onto
    [base_score];
  - nodes_hitrates (nodes_hitrates_as_tensor for a double model) is every
    node's cover, XGBoost's sum_hessian: what converters leave at 1.0, and
    what TreeSHAP weighs by.

The graphs read their inputs as converters write them: one [N, F] float
tensor (breast_cancer_logistic), one [N, 1] float input per feature
concatenated before the trees, answered through ZipMap (iris_softprob), or
one [N, F] double tensor with the ensemble's attributes as double tensors
(diabetes_squarederror).

Input rows are rounded to float32, as XGBoost reads them, so that a double
ensemble compares as XGBoost does. Predictions, margins and contributions
are XGBoost's float32 results written as the float64 of that float32.
Everything is deterministic (fixed seeds, one thread), so running this again
writes the same models; the Go test TestRegenerateXGBoost checks that,
numbers within its tolerance.

Needs xgboost 1.7, scikit-learn and onnx 1.12 (Debian: python3-xgboost
python3-sklearn python3-onnx). Run it as

  /usr/bin/python3 export.py [--out DIR]
"""

import os

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import sys  # noqa: E402

import numpy as np  # noqa: E402
import onnx  # noqa: E402
import xgboost as xgb  # noqa: E402
from onnx import TensorProto, helper  # noqa: E402
from sklearn import datasets  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SEED = 38
ROWS = 30
ML = "ai.onnx.ml"
FLOAT, DOUBLE, INT64 = TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.INT64


def f32(v):
    """The float64 of float32 v, or None for NaN."""
    v = float(np.float32(v))
    return None if math.isnan(v) else v


def data(bunch, holes=0.0):
    """The data set's features rounded to float32, with names usable as
    columns, a share holes of them missing (NaN), the same on every run."""
    names = [n.replace(" ", "_").replace("(", "").replace(")", "") for n in bunch.feature_names]
    x = np.asarray(bunch.data, dtype=np.float32).astype(np.float64)
    if holes:
        x[np.random.default_rng(SEED).random(x.shape) < holes] = np.nan
    return names, x, np.asarray(bunch.target)


def train(params, x, y, rounds):
    dm = xgb.DMatrix(x, label=y, nthread=1)
    return xgb.train(dict(params, nthread=1, seed=SEED, tree_method="exact"), dm, rounds)


def trees_of(booster):
    """The booster's trees as XGBoost saves them in JSON, and the class of each."""
    model = json.loads(booster.save_raw("json"))["learner"]["gradient_booster"]["model"]
    return model["trees"], model["tree_info"]


def tree_attrs(trees, double):
    """The nodes_* attributes of XGBoost's trees, tree i being tree id i,
    and the leaves: (tree id, node id, value) in order."""
    a = {k: [] for k in ("treeids", "nodeids", "featureids", "modes", "truenodeids", "falsenodeids",
                         "missing_value_tracks_true")}
    values, hitrates, leaves = [], [], []
    for tid, t in enumerate(trees):
        for i, left in enumerate(t["left_children"]):
            leaf = left == -1
            a["treeids"].append(tid)
            a["nodeids"].append(i)
            a["featureids"].append(0 if leaf else t["split_indices"][i])
            a["modes"].append("LEAF" if leaf else "BRANCH_LT")
            a["truenodeids"].append(0 if leaf else left)
            a["falsenodeids"].append(0 if leaf else t["right_children"][i])
            a["missing_value_tracks_true"].append(0 if leaf else int(t["default_left"][i]))
            values.append(0.0 if leaf else t["split_conditions"][i])
            hitrates.append(t["sum_hessian"][i])
            if leaf:
                leaves.append((tid, i, t["split_conditions"][i]))
    attrs = {"nodes_" + k: v for k, v in a.items()}
    reals(attrs, "nodes_values", values, double)
    reals(attrs, "nodes_hitrates", hitrates, double)
    return attrs, leaves


def reals(attrs, name, values, double):
    """Sets attribute name to float32 values: floats, or (double) a double
    tensor NAME_as_tensor of the same numbers."""
    values = [float(np.float32(v)) for v in values]
    if double:
        attrs[name + "_as_tensor"] = helper.make_tensor("", DOUBLE, [len(values)], values)
    else:
        attrs[name] = values


def graph_model(name, doc, nodes, inputs, outputs):
    """The checked ModelProto of a graph; deterministic bytes."""
    graph = helper.make_graph(nodes, name, inputs, outputs)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid(ML, 3)],
                          producer_name="scorehub testdata", producer_version="1", doc_string=doc)
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


def write(out, name, m, booster, names, x, metadata, task, classes=None):
    """Writes NAME.onnx and NAME.rows.json with XGBoost's answers for x."""
    with open(os.path.join(out, name + ".onnx"), "wb") as f:
        f.write(m.SerializeToString())
    dm = xgb.DMatrix(x, nthread=1)
    pred = np.float32(booster.predict(dm))
    margin = np.float32(booster.predict(dm, output_margin=True))
    contribs = np.float32(booster.predict(dm, pred_contribs=True))
    if contribs.ndim == 2:  # one margin
        contribs = contribs[:, np.newaxis, :]
        margin = margin[:, np.newaxis]
    if task == "classification" and pred.ndim == 1:  # binary: the second class's probability
        pred = np.stack([1 - pred, pred], axis=1)
    schema = {"task": task, "label": metadata["label"], "inputs": names,
              "graph_inputs": [i.name for i in m.graph.input]}
    if classes:
        schema["classes"] = classes
    fixture = {
        "model": name, "metadata": metadata, "schema": schema,
        "rows": [{n: f32(v) for n, v in zip(names, row)} for row in x],
        "predictions": [[f32(p) for p in row] if pred.ndim == 2 else f32(row) for row in pred],
        "margins": [[f32(v) for v in row] for row in margin],
        "contributions": [[[f32(v) for v in g] for g in row] for row in contribs],
    }
    with open(os.path.join(out, name + ".rows.json"), "w") as f:
        json.dump(fixture, f, indent=1, allow_nan=False)
        f.write("\n")


def classifier_node(inp, trees, tree_class, base_values, post, k):
    attrs, leaves = tree_attrs(trees, False)
    attrs.update(class_treeids=[t for t, _, _ in leaves], class_nodeids=[i for _, i, _ in leaves],
                 class_ids=[tree_class[t] for t, _, _ in leaves], classlabels_int64s=list(range(k)),
                 post_transform=post)
    reals(attrs, "class_weights", [v for _, _, v in leaves], False)
    reals(attrs, "base_values", base_values, False)
    return helper.make_node("TreeEnsembleClassifier", [inp], ["label", "probabilities"], domain=ML, **attrs)


def breast_cancer(out):
    """Binary logistic on 30 features, one in ten values missing: one score
    for class 0 onto logit(base_score), LOGISTIC."""
    bunch = datasets.load_breast_cancer()
    names, x, y = data(bunch, holes=0.1)
    xtr, xte, ytr, _ = train_test_split(x, y, test_size=ROWS, random_state=SEED, stratify=y)
    base = 0.3
    booster = train({"objective": "binary:logistic", "max_depth": 4, "eta": 0.3, "base_score": base}, xtr, ytr, 20)
    trees, _ = trees_of(booster)
    node = classifier_node("input", trees, [0] * len(trees), [math.log(base / (1 - base))], "LOGISTIC", 2)
    m = graph_model("breast_cancer_logistic", "XGBoost binary:logistic on the breast cancer data set, 20 trees of "
                    "depth 4, covers as nodes_hitrates", [node],
                    [helper.make_tensor_value_info("input", FLOAT, [None, len(names)])],
                    [helper.make_tensor_value_info("label", INT64, [None]),
                     helper.make_tensor_value_info("probabilities", FLOAT, [None, 2])])
    classes = [str(c) for c in bunch.target_names]
    write(out, "breast_cancer_logistic", m, booster, names, xte,
          {"label": "diagnosis", "features": names, "classes": classes}, "classification", classes)


def iris(out):
    """multi:softprob of three classes, one [N, 1] input per feature
    concatenated before the trees, answered through ZipMap."""
    bunch = datasets.load_iris()
    names, x, y = data(bunch)
    xtr, xte, ytr, _ = train_test_split(x, y, test_size=ROWS, random_state=SEED, stratify=y)
    booster = train({"objective": "multi:softprob", "num_class": 3, "max_depth": 3, "eta": 0.3}, xtr, ytr, 10)
    trees, tree_class = trees_of(booster)
    nodes = [helper.make_node("Concat", names, ["features"], axis=1),
             classifier_node("features", trees, tree_class, [0.5] * 3, "SOFTMAX", 3),
             helper.make_node("ZipMap", ["probabilities"], ["output_probability"], domain=ML,
                              classlabels_int64s=[0, 1, 2])]
    zipmap = onnx.TypeProto()
    zipmap.sequence_type.elem_type.map_type.key_type = INT64
    zipmap.sequence_type.elem_type.map_type.value_type.tensor_type.elem_type = FLOAT
    m = graph_model("iris_softprob", "XGBoost multi:softprob on the iris data set, 10 rounds of three trees of "
                    "depth 3, one input per feature, covers as nodes_hitrates", nodes,
                    [helper.make_tensor_value_info(n, FLOAT, [None, 1]) for n in names],
                    [helper.make_tensor_value_info("label", INT64, [None]),
                     helper.make_value_info("output_probability", zipmap)])
    classes = [str(c) for c in bunch.target_names]
    write(out, "iris_softprob", m, booster, names, xte, {"label": "species", "classes": classes},
          "classification", classes)


def diabetes(out):
    """reg:squarederror on a double input, every real attribute a double
    tensor (nodes_hitrates_as_tensor too)."""
    names, x, y = data(datasets.load_diabetes())
    xtr, xte, ytr, _ = train_test_split(x, y, test_size=ROWS, random_state=SEED)
    base = float(np.float32(ytr.mean()))
    booster = train({"objective": "reg:squarederror", "max_depth": 3, "eta": 0.2, "base_score": base}, xtr, ytr, 30)
    trees, _ = trees_of(booster)
    attrs, leaves = tree_attrs(trees, True)
    attrs.update(target_treeids=[t for t, _, _ in leaves], target_nodeids=[i for _, i, _ in leaves],
                 target_ids=[0] * len(leaves), n_targets=1, aggregate_function="SUM", post_transform="NONE")
    reals(attrs, "target_weights", [v for _, _, v in leaves], True)
    reals(attrs, "base_values", [base], True)
    m = graph_model("diabetes_squarederror", "XGBoost reg:squarederror on the diabetes data set, 30 trees of depth 3 "
                    "in double, covers as nodes_hitrates_as_tensor",
                    [helper.make_node("TreeEnsembleRegressor", ["input"], ["variable"], domain=ML, **attrs)],
                    [helper.make_tensor_value_info("input", DOUBLE, [None, len(names)])],
                    [helper.make_tensor_value_info("variable", FLOAT, [None, 1])])
    write(out, "diabetes_squarederror", m, booster, names, xte, {"label": "progression", "features": names},
          "regression")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=HERE, help="where the fixtures go (default: this directory)")
    args = ap.parse_args()
    if not xgb.__version__.startswith("1.7."):
        sys.exit("export.py: the fixtures come from xgboost 1.7; this is xgboost %s" % xgb.__version__)
    if not onnx.__version__.startswith("1.12."):
        sys.exit("export.py: the fixtures come from onnx 1.12; this is onnx %s" % onnx.__version__)
    os.makedirs(args.out, exist_ok=True)
    breast_cancer(args.out)
    iris(args.out)
    diabetes(args.out)


if __name__ == "__main__":
    main()
