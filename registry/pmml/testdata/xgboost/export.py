#!/usr/bin/python3
"""Trains XGBoost models, writes them as PMML in float arithmetic and records what the Go tests compare.

For every model NAME this writes, into the output directory:

  NAME.pmml       the model as a PMML 4.4 document, each model element
                  marked x-mathContext="float"
  NAME.rows.json  the fixture: the metadata an upload would carry, the schema
                  the Go reader should derive, the input rows as a client
                  would post them (null for a missing value), XGBoost's
                  own predictions for them and its contributions
                  (pred_contribs: per row, per margin, each feature's
                  and then the bias)

JPMML-XGBoost (and sklearn2pmml, which calls it) is not packaged for Debian,
so this file writes PMML the way it does, from the model XGBoost saves as
JSON:

  - every feature is a continuous DataField of dataType float (or, as
    sklearn2pmml writes a pipeline's double columns, of dataType double,
    cast by a DerivedField "float(NAME)" of the TransformationDictionary
    that the splits read), the target a
    categorical integer field of the classes 0..k-1 (a classifier) or a
    continuous float field (a regressor);
  - every tree is a TreeModel (functionName regression, binarySplit,
    missingValueStrategy defaultChild) whose nodes carry their XGBoost
    index as id, split "f < split_condition" (SimplePredicate lessThan) to
    the left child and greaterOrEqual to the right, and name the child a
    missing value goes to in defaultChild; a leaf scores its value, a
    branch its base weight times the learning rate; every node's
    recordCount is its cover (sum_hessian), the weights TreeSHAP takes
    its expectations against;
  - the trees of one output are a MiningModel summing them
    (multipleModelMethod sum) whose Target adds the base margin
    (rescaleConstant), answering the OutputField "xgbValue" (a multi-class
    model: "xgbValue(k)" per class k); a tree that is one leaf is no
    segment: a leaf of 0 is dropped, another leaf's value is added to the
    base margin, in float32, in the trees' order;
  - a classifier or a model with a link function chains that sum into a
    RegressionModel (multipleModelMethod modelChain): logit for
    binary:logistic and reg:logistic, softmax over the classes' sums for
    multi:softprob, exp for count:poisson, reg:gamma and reg:tweedie;
  - every model element computes in float32: x-mathContext="float".

Numbers are written as the shortest text that reads back as the float32
XGBoost holds. Predictions are XGBoost's float32 results written as the
float64 of that float32. Beside them, "document_predictions" are what the
PMML document itself computes in float32, step by step in its own order:
the leaves XGBoost's own walk reaches (pred_leaf), summed segment by
segment, then the Target's base margin, then the RegressionModel's
normalization. XGBoost sums in another order (the base margin first, the
one-leaf trees where they stand), so its answers may differ from the
document's in the last float32 digits; the Go tests hold the reader to the
document's exactly and to XGBoost's within a stated bound. Everything is deterministic (fixed seeds, one
thread), so running this again writes the same models; the Go test
TestRegenerateXGBoost checks that.

Needs xgboost 1.7, scikit-learn and pandas (Debian: python3-xgboost
python3-sklearn python3-pandas). Run it as

  /usr/bin/python3 export.py [--out DIR]
"""

import os

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import sys  # noqa: E402
import xml.etree.ElementTree as ET  # noqa: E402

import numpy as np  # noqa: E402
import xgboost as xgb  # noqa: E402
from sklearn import datasets  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SEED = 20
ROWS = 40
NS = "http://www.dmg.org/PMML-4_4"
# The share of input values made missing, in training (so that trees learn
# a default direction each way) and in the rows scored.
MISSING = 0.08


def f32text(x):
    """x as a float32 in its shortest text."""
    v = np.float32(x)
    if not np.isfinite(v):
        raise ValueError("export.py: %r has no PMML number" % x)
    s = np.format_float_positional(v, unique=True, trim="0") if 1e-4 <= abs(v) < 1e7 or v == 0 \
        else np.format_float_scientific(v, unique=True, trim="0")
    assert np.float32(s) == v, (s, v)
    return s


def f32(x):
    """The float64 of float32 x."""
    return float(np.float32(x))


def sub(parent, tag, **attrs):
    return ET.SubElement(parent, tag, {k.replace("__", "-").rstrip("_"): str(v) for k, v in attrs.items()})


def with_missing(x, rng):
    """x with a share MISSING of its values NaN."""
    x = x.copy()
    x[rng.random(x.shape) < MISSING] = np.nan
    return x


def data(bunch, stratify):
    names = [n.replace(" ", "_").replace("(", "").replace(")", "") for n in bunch.feature_names]
    x = np.asarray(bunch.data, dtype=np.float64)
    y = np.asarray(bunch.target)
    xtr, xte, ytr, yte = train_test_split(x, y, test_size=ROWS, random_state=SEED, stratify=y if stratify else None)
    rng = np.random.default_rng(SEED)
    return names, with_missing(xtr, rng), ytr, with_missing(xte, rng)


# The model as XGBoost saves it.

class Model:
    def __init__(self, booster, eta):
        learner = json.loads(booster.save_raw("json"))["learner"]
        self.objective = learner["objective"]["name"]
        param = learner["learner_model_param"]
        self.num_class = int(param["num_class"])
        self.base_score = np.float32(float(param["base_score"]))
        gbm = learner["gradient_booster"]
        if gbm["name"] != "gbtree":
            raise ValueError("export.py: booster %s" % gbm["name"])
        self.trees = gbm["model"]["trees"]
        self.tree_info = gbm["model"]["tree_info"]
        self.eta = np.float32(eta)
        # Whether the features are double DataFields the trees read
        # through a cast to float.
        self.double_inputs = False

    def base_margin(self):
        """The base score as a margin, as JPMML-XGBoost computes it."""
        b = self.base_score
        if self.objective in ("binary:logistic", "reg:logistic"):
            return np.float32(-math.log(float(np.float32(1) / b - np.float32(1))))
        if self.objective in ("count:poisson", "reg:gamma", "reg:tweedie"):
            return np.float32(math.log(float(b)))
        return b


def tree_model(parent, tree, names, split_names, eta):
    """A TreeModel of one XGBoost tree, its MiningSchema naming the
    DataFields names, its splits the fields split_names."""
    m = sub(parent, "TreeModel", functionName="regression", missingValueStrategy="defaultChild",
            splitCharacteristic="binarySplit", x__mathContext="float")
    used = sorted({f for f, left in zip(tree["split_indices"], tree["left_children"]) if left >= 0})
    ms = sub(m, "MiningSchema")
    for f in used:
        sub(ms, "MiningField", name=names[f])
    left, right = tree["left_children"], tree["right_children"]
    cond, index = tree["split_conditions"], tree["split_indices"]

    def node(parent, i, predicate):
        n = sub(parent, "Node", id=i)
        if left[i] < 0:
            n.set("score", f32text(cond[i]))
        else:
            n.set("score", f32text(eta * np.float32(tree["base_weights"][i])))
        n.set("recordCount", f32text(tree["sum_hessian"][i]))
        if left[i] >= 0:
            n.set("defaultChild", str(left[i] if tree["default_left"][i] else right[i]))
        if predicate is None:
            sub(n, "True")
        else:
            field, op, value = predicate
            sub(n, "SimplePredicate", field=field, operator=op, value=value)
        if left[i] >= 0:
            field, value = split_names[index[i]], f32text(cond[i])
            node(n, left[i], (field, "lessThan", value))
            node(n, right[i], (field, "greaterOrEqual", value))

    node(m, 0, None)
    return m


def output_group(parent, model, trees, names, target, output):
    """A MiningModel summing trees onto the base margin."""
    m = sub(parent, "MiningModel", functionName="regression", x__mathContext="float")
    ms = sub(m, "MiningSchema")
    if target is not None:
        sub(ms, "MiningField", name=target, usageType="target")
    used = sorted({f for t in trees if t["left_children"][0] >= 0
                   for f, left in zip(t["split_indices"], t["left_children"]) if left >= 0})
    for f in used:
        sub(ms, "MiningField", name=names[f])
    if output is not None:
        out = sub(m, "Output")
        sub(out, "OutputField", name=output, optype="continuous", dataType="float", isFinalResult="false")
    intercept = model.base_margin()
    grown = []
    for t in trees:
        if t["left_children"][0] >= 0:
            grown.append(t)
        elif t["split_conditions"][0] != 0:
            intercept = np.float32(intercept + np.float32(t["split_conditions"][0]))
    trees = grown
    if intercept != 0:
        tg = sub(sub(m, "Targets"), "Target", rescaleConstant=f32text(intercept))
        if target is not None:
            tg.set("field", target)
    seg = sub(m, "Segmentation", multipleModelMethod="sum", missingPredictionTreatment="returnMissing")
    for i, t in enumerate(trees):
        s = sub(seg, "Segment", id=i + 1)
        sub(s, "True")
        split_names = ["float(%s)" % n for n in names] if model.double_inputs else names
        tree_model(s, t, names, split_names, model.eta)
    return m


def chain(root, function, target, names):
    m = sub(root, "MiningModel", functionName=function, algorithmName="XGBoost (GBTree)", x__mathContext="float")
    ms = sub(m, "MiningSchema")
    sub(ms, "MiningField", name=target, usageType="target")
    for n in names:
        sub(ms, "MiningField", name=n)
    return sub(m, "Segmentation", multipleModelMethod="modelChain", missingPredictionTreatment="returnMissing")


def segment(seg, i):
    s = sub(seg, "Segment", id=i)
    sub(s, "True")
    return s


def probability_output(model, classes):
    out = sub(model, "Output")
    for c in classes:
        sub(out, "OutputField", name="probability(%s)" % c, optype="continuous", dataType="float",
            feature="probability", value=c)


def document(model, names, target, classes):
    root = ET.Element("PMML", {"xmlns": NS, "version": "4.4"})
    h = sub(root, "Header")
    sub(h, "Application", name="JPMML-XGBoost", version="1.8")
    dd = sub(root, "DataDictionary")
    if classes is not None:
        f = sub(dd, "DataField", name=target, optype="categorical", dataType="integer")
        for c in classes:
            sub(f, "Value", value=c)
    else:
        sub(dd, "DataField", name=target, optype="continuous", dataType="float")
    for n in names:
        sub(dd, "DataField", name=n, optype="continuous", dataType="double" if model.double_inputs else "float")
    if model.double_inputs:
        used = sorted({f for t in model.trees for f, left in zip(t["split_indices"], t["left_children"]) if left >= 0})
        td = sub(root, "TransformationDictionary")
        for f in used:
            d = sub(td, "DerivedField", name="float(%s)" % names[f], optype="continuous", dataType="float")
            sub(d, "FieldRef", field=names[f])
    return root


def encode(model, names, target):
    """The PMML document of model, as JPMML-XGBoost writes it."""
    obj = model.objective
    if obj == "binary:logistic":
        classes = ["0", "1"]
        root = document(model, names, target, classes)
        seg = chain(root, "classification", target, names)
        output_group(segment(seg, 1), model, model.trees, names, None, "xgbValue")
        r = sub(segment(seg, 2), "RegressionModel", functionName="classification", normalizationMethod="logit",
                x__mathContext="float")
        ms = sub(r, "MiningSchema")
        sub(ms, "MiningField", name=target, usageType="target")
        sub(ms, "MiningField", name="xgbValue")
        probability_output(r, classes)
        t = sub(r, "RegressionTable", intercept="0.0", targetCategory=classes[1])
        sub(t, "NumericPredictor", name="xgbValue", coefficient="1.0")
        sub(r, "RegressionTable", intercept="0.0", targetCategory=classes[0])
        return root, classes
    if obj == "multi:softprob":
        classes = [str(k) for k in range(model.num_class)]
        root = document(model, names, target, classes)
        seg = chain(root, "classification", target, names)
        for k in range(model.num_class):
            trees = [t for t, g in zip(model.trees, model.tree_info) if g == k]
            output_group(segment(seg, k + 1), model, trees, names, None, "xgbValue(%d)" % k)
        r = sub(segment(seg, model.num_class + 1), "RegressionModel", functionName="classification",
                normalizationMethod="softmax", x__mathContext="float")
        ms = sub(r, "MiningSchema")
        sub(ms, "MiningField", name=target, usageType="target")
        for k in range(model.num_class):
            sub(ms, "MiningField", name="xgbValue(%d)" % k)
        probability_output(r, classes)
        for k in range(model.num_class):
            t = sub(r, "RegressionTable", intercept="0.0", targetCategory=classes[k])
            sub(t, "NumericPredictor", name="xgbValue(%d)" % k, coefficient="1.0")
        return root, classes
    root = document(model, names, target, None)
    links = {"reg:logistic": "logit", "count:poisson": "exp", "reg:gamma": "exp", "reg:tweedie": "exp"}
    if obj == "reg:squarederror":
        output_group(root, model, model.trees, names, target, None).set("algorithmName", "XGBoost (GBTree)")
        return root, None
    if obj not in links:
        raise ValueError("export.py: objective %s" % obj)
    seg = chain(root, "regression", target, names)
    output_group(segment(seg, 1), model, model.trees, names, None, "xgbValue")
    r = sub(segment(seg, 2), "RegressionModel", functionName="regression", normalizationMethod=links[obj],
            x__mathContext="float")
    ms = sub(r, "MiningSchema")
    sub(ms, "MiningField", name=target, usageType="target")
    sub(ms, "MiningField", name="xgbValue")
    t = sub(r, "RegressionTable", intercept="0.0")
    sub(t, "NumericPredictor", name="xgbValue", coefficient="1.0")
    return root, None


# Fixtures.

def r32(x):
    """x rounded to float32, as every step of a float model is."""
    return np.float32(x)


def sigmoid32(x):
    return r32(1 / r32(1 + r32(math.exp(-float(x)))))


def group_sum(model, trees, leaves):
    """What an output group's MiningModel answers: its grown trees' leaves
    summed in order, then the base margin (with the one-leaf trees') added,
    in float32."""
    intercept = model.base_margin()
    total = None
    for t, leaf in zip(trees, leaves):
        v = np.float32(t["split_conditions"][leaf])
        if t["left_children"][0] < 0:
            if v != 0:
                intercept = r32(intercept + v)
            continue
        total = v if total is None else r32(total + v)
    return r32((total if total is not None else np.float32(0)) + intercept)


def document_predictions(model, booster, x):
    """What the PMML document answers for the rows x, in float32."""
    leaves = booster.predict(xgb.DMatrix(x, missing=np.nan), pred_leaf=True).astype(int)
    out = []
    for row in leaves:
        if model.objective == "multi:softprob":
            sums = []
            for k in range(model.num_class):
                idx = [i for i, g in enumerate(model.tree_info) if g == k]
                sums.append(group_sum(model, [model.trees[i] for i in idx], [row[i] for i in idx]))
            top = max(sums)
            e = [r32(math.exp(float(r32(s - top)))) for s in sums]
            total = np.float32(0)
            for v in e:
                total = r32(total + v)
            out.append([f32(r32(v / total)) for v in e])
            continue
        y = group_sum(model, model.trees, row)
        if model.objective == "binary:logistic":
            p = sigmoid32(y)
            out.append([f32(r32(1 - p)), f32(p)])
        elif model.objective == "reg:logistic":
            out.append(f32(sigmoid32(y)))
        elif model.objective in ("count:poisson", "reg:gamma", "reg:tweedie"):
            out.append(f32(r32(math.exp(float(y)))))
        else:
            out.append(f32(y))
    return out


def write(out, name, booster, params, names, target, x, metadata, double_inputs=False):
    model = Model(booster, params["eta"])
    model.double_inputs = double_inputs
    root, classes = encode(model, names, target)
    ET.indent(root, space=" ")
    with open(os.path.join(out, name + ".pmml"), "wb") as f:
        f.write(b'<?xml version="1.0" encoding="UTF-8"?>\n')
        f.write(ET.tostring(root, encoding="utf-8"))
        f.write(b"\n")
    pred = booster.predict(xgb.DMatrix(x, missing=np.nan))
    assert pred.dtype == np.float32
    task = "classification" if classes is not None else "regression"
    schema = {"task": task, "model": "MiningModel", "label": target, "inputs": names,
              "trees": len(model.trees)}
    rows = [{n: (None if math.isnan(v) else float(v)) for n, v in zip(names, r)} for r in x]
    fixture = {"model": name, "objective": model.objective, "metadata": metadata, "schema": schema, "rows": rows}
    if classes is not None:
        schema["classes"] = metadata.get("classes", classes)
        if model.objective == "binary:logistic":
            # What XGBClassifier.predict_proba answers: 1 - p beside p, in float32.
            pred = np.vstack([np.float32(1) - pred, pred]).T
        fixture["predictions"] = [[f32(p) for p in r] for r in pred]
        fixture["classes"] = [schema["classes"][int(np.argmax(r))] for r in pred]
    else:
        fixture["predictions"] = [f32(p) for p in pred]
    fixture["document_predictions"] = document_predictions(model, booster, x)
    # XGBoost's own path-dependent TreeSHAP: per row (and per class of a
    # multi-class model) each feature's contribution to the margin, then
    # the bias.
    contribs = booster.predict(xgb.DMatrix(x, missing=np.nan), pred_contribs=True)
    assert contribs.dtype == np.float32
    if contribs.ndim == 3:
        fixture["contributions"] = [[[f32(v) for v in g] for g in r] for r in contribs]
    else:
        fixture["contributions"] = [[[f32(v) for v in r]] for r in contribs]
    with open(os.path.join(out, name + ".rows.json"), "w") as f:
        json.dump(fixture, f, indent=1, allow_nan=False)
        f.write("\n")


def train(params, x, y, rounds):
    params = dict(params, seed=SEED, nthread=1, tree_method="exact")
    return xgb.train(params, xgb.DMatrix(x, label=y, missing=np.nan), num_boost_round=rounds)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=HERE, help="where the fixtures go (default: this directory)")
    args = ap.parse_args()
    if not xgb.__version__.startswith("1.7."):
        sys.exit("export.py: the fixtures come from XGBoost 1.7; this is XGBoost %s" % xgb.__version__)
    os.makedirs(args.out, exist_ok=True)

    names, xtr, ytr, xte = data(datasets.load_breast_cancer(), True)
    p = {"objective": "binary:logistic", "eta": 0.3, "max_depth": 3}
    write(args.out, "breast_cancer_logistic", train(p, xtr, ytr, 20), p, names, "diagnosis", xte, {})

    names, xtr, ytr, xte = data(datasets.load_iris(), True)
    names = ["sepal_length", "sepal_width", "petal_length", "petal_width"]
    p = {"objective": "multi:softprob", "num_class": 3, "eta": 0.3, "max_depth": 3}
    # Uploaded with metadata naming the integer classes 0..2.
    species = [str(n) for n in datasets.load_iris().target_names]
    write(args.out, "iris_softprob", train(p, xtr, ytr, 10), p, names, "species", xte, {"classes": species})

    names, xtr, ytr, xte = data(datasets.load_diabetes(), False)
    p = {"objective": "reg:squarederror", "eta": 0.1, "max_depth": 4}
    booster = train(p, xtr, ytr, 30)
    write(args.out, "diabetes_squarederror", booster, p, names, "progression", xte, {})
    # The same model as sklearn2pmml writes it for a pipeline of double
    # columns.
    write(args.out, "diabetes_double_inputs", booster, p, names, "progression", xte, {}, double_inputs=True)
    # Counts of a smaller scale, which max_delta_step lets the trees reach.
    p = {"objective": "count:poisson", "eta": 0.5, "max_depth": 3}
    write(args.out, "diabetes_poisson", train(p, xtr, np.round(ytr / 25.0), 30), p, names, "progression", xte, {})
    p = {"objective": "reg:gamma", "eta": 0.5, "max_depth": 3}
    write(args.out, "diabetes_gamma", train(p, xtr, ytr, 30), p, names, "progression", xte, {})
    p = {"objective": "reg:logistic", "eta": 0.2, "max_depth": 3}
    write(args.out, "diabetes_logistic", train(p, xtr, ytr / 400.0, 30), p, names, "progression", xte, {})


if __name__ == "__main__":
    main()
