#!/usr/bin/python3
"""Trains the XGBoost models the Go tests score and writes what they compare.

For every model NAME this writes, into the output directory:

  NAME.json       the model saved as JSON
  NAME.ubj        the same model saved as UBJSON
  NAME.rows.json  the fixture: the metadata an upload would carry, the schema
                  the Go reader should derive, the input rows as a client
                  would post them (null or an absent key for a missing value)
                  and XGBoost's own predictions for them

and, into the examples directory, the iris classifier docs/models.md deploys.

Predictions are XGBoost's float32 results written as the float64 of that
float32, so a reader compares against exactly what XGBoost computed.
Everything is deterministic (fixed seeds, one thread), so running this again
writes the same models; the Go test TestRegenerate checks that, numbers
within its tolerance, as another build may round their last digits
otherwise.

Needs xgboost 1.7, scikit-learn and pandas (Debian: python3-xgboost
python3-sklearn python3-pandas). Run it as

  /usr/bin/python3 gen.py [--out DIR] [--examples DIR]
"""

import argparse
import json
import math
import os
import sys

import numpy as np
import pandas as pd
import xgboost as xgb
from sklearn import datasets
from sklearn.model_selection import train_test_split

HERE = os.path.dirname(os.path.abspath(__file__))
SEED = 20
ROWS = 40


def f32(x):
    """The float64 of float32 x, or None for NaN."""
    v = float(np.float32(x))
    return None if math.isnan(v) else v


def frame(bunch):
    """The data set's features as a DataFrame with names usable as columns."""
    names = [n.replace(" ", "_").replace("(", "").replace(")", "") for n in bunch.feature_names]
    return pd.DataFrame(np.asarray(bunch.data, dtype=np.float64), columns=names), np.asarray(bunch.target)


def split(x, y, rows=ROWS, stratify=True):
    """Training data and at most rows test rows, the same on every run."""
    return train_test_split(x, y, test_size=rows, random_state=SEED, stratify=y if stratify else None)


def sigmoid(m):
    return 1.0 / (1.0 + math.exp(-m))


def softmax(ms):
    top = max(ms)
    es = [math.exp(m - top) for m in ms]
    s = sum(es)
    return [e / s for e in es]


def tree_count(path):
    model = json.load(open(path))["learner"]["gradient_booster"]
    if model["name"] == "gblinear":
        return 0
    if "gbtree" in model:  # dart wraps a gbtree
        model = model["gbtree"]
    return len(model["model"]["trees"])


def rows_of(x, absent_every=0):
    """x as the JSON rows a client posts: NaN becomes null, except that every
    absent_every-th missing value leaves its key out of the row instead."""
    out = []
    seen = 0
    for rec in x.itertuples(index=False):
        row = {}
        for name, v in zip(x.columns, rec):
            v = float(v)
            if math.isnan(v):
                seen += 1
                if absent_every and seen % absent_every == 0:
                    continue
                row[name] = None
            else:
                row[name] = v
        out.append(row)
    return out


def write_model(out, name, booster, x, metadata, task, absent_every=0, file_features=True, rows=None):
    """Saves booster as NAME.json and NAME.ubj and writes NAME.rows.json with
    x's rows (or rows, when given) and XGBoost's predictions for them. A model
    trained without feature names (file_features false) reads its columns by
    the names in metadata, else as f0, f1, …."""
    booster.save_model(os.path.join(out, name + ".json"))
    booster.save_model(os.path.join(out, name + ".ubj"))
    config = json.loads(booster.save_config())
    objective = config["learner"]["objective"]["name"]
    dm = xgb.DMatrix(x if file_features else x.to_numpy(), enable_categorical=True)
    margins = booster.predict(dm, output_margin=True)
    values = booster.predict(dm)

    if task == "classification":
        if objective == "binary:logitraw":
            probs = [[1 - sigmoid(float(m)), sigmoid(float(m))] for m in np.float32(margins)]
        elif objective == "binary:logistic":
            probs = [[1 - float(p), float(p)] for p in np.float32(values)]
        elif objective == "multi:softmax":
            probs = [softmax([float(m) for m in row]) for row in np.float32(margins)]
        else:
            probs = [[float(p) for p in row] for row in np.float32(values)]
        predictions = probs
        classes = metadata.get("classes") or [str(i) for i in range(len(probs[0]))]
    else:
        predictions = [f32(v) for v in values]
        classes = None

    if file_features:
        inputs = list(x.columns)
    else:
        inputs = metadata.get("features") or ["f%d" % i for i in range(x.shape[1])]
        x = x.set_axis(inputs, axis=1)
    schema = {"task": task, "objective": objective, "inputs": inputs, "trees": tree_count(os.path.join(out, name + ".json"))}
    if classes:
        schema["classes"] = classes
    fixture = {
        "model": name,
        "metadata": metadata,
        "schema": schema,
        "rows": rows if rows is not None else rows_of(x, absent_every),
        "predictions": predictions,
        "margins": [f32(m) if np.ndim(m) == 0 else [f32(v) for v in m] for m in margins],
    }
    with open(os.path.join(out, name + ".rows.json"), "w") as f:
        json.dump(fixture, f, indent=1, allow_nan=False)
        f.write("\n")


def params(**kw):
    p = {"nthread": 1, "seed": SEED, "max_depth": 3, "eta": 0.3}
    p.update(kw)
    return p


def linear_params(**kw):
    """params for a gblinear booster, which has no trees to limit."""
    p = params(booster="gblinear", updater="coord_descent", **kw)
    del p["max_depth"]
    return p


def iris(out):
    bunch = datasets.load_iris()
    x, y = frame(bunch)
    x.columns = ["sepal_length", "sepal_width", "petal_length", "petal_width"]
    classes = list(bunch.target_names)
    xtr, xte, ytr, yte = split(x, y, 30)
    dtrain = xgb.DMatrix(xtr, ytr)
    meta = {"label": "species", "classes": classes}

    b = xgb.train(params(objective="multi:softprob", num_class=3), dtrain, 20)
    write_model(out, "iris_softprob", b, xte, meta, "classification")

    # From a numpy array: the file has no feature names, the upload gives them.
    b = xgb.train(params(objective="multi:softmax", num_class=3), xgb.DMatrix(xtr.to_numpy(), ytr), 20)
    write_model(out, "iris_softmax", b, xte, dict(meta, features=list(x.columns)), "classification", file_features=False)

    # A random forest: several trees per class and round.
    b = xgb.train(params(objective="multi:softprob", num_class=3, num_parallel_tree=4, subsample=0.8,
                         colsample_bynode=0.8, eta=1, max_depth=4), dtrain, 3)
    write_model(out, "iris_forest", b, xte, meta, "classification")

    b = xgb.train(linear_params(objective="multi:softprob", num_class=3), dtrain, 20)
    write_model(out, "iris_linear", b, xte, meta, "classification")


def breast_cancer(out):
    x, y = frame(datasets.load_breast_cancer())
    xtr, xte, ytr, yte = split(x, y)
    dtrain = xgb.DMatrix(xtr, ytr)
    classes = ["malignant", "benign"]

    b = xgb.train(params(objective="binary:logistic", max_depth=4, eta=0.1), dtrain, 100)
    write_model(out, "breast_cancer_logistic", b, on_splits(b, xte), {"label": "diagnosis", "classes": classes}, "classification")

    # From a numpy array without metadata: classes "0", "1", features f0...
    b = xgb.train(params(objective="binary:logitraw"), xgb.DMatrix(xtr.to_numpy(), ytr), 30)
    write_model(out, "breast_cancer_logitraw", b, xte, {}, "classification", file_features=False)

    b = xgb.train(params(objective="binary:logistic", booster="dart", rate_drop=0.2, skip_drop=0.1,
                         sample_type="weighted", normalize_type="forest"), dtrain, 30)
    write_model(out, "breast_cancer_dart", b, xte, {"label": "diagnosis", "classes": classes}, "classification")

    # About one value in ten missing, in training and in the rows scored.
    rng = np.random.default_rng(SEED)
    holes = lambda d: d.mask(rng.random(d.shape) < 0.1)
    b = xgb.train(params(objective="binary:logistic", tree_method="hist"), xgb.DMatrix(holes(xtr), ytr), 40)
    write_model(out, "breast_cancer_missing", b, holes(xte), {"label": "diagnosis", "classes": classes},
                "classification", absent_every=2)


def on_splits(booster, x):
    """x with, in its last rows, values exactly at split thresholds and one
    float32 step either side, where float64 and float32 comparisons part."""
    x = x.copy()
    trees = json.loads(booster.save_raw("json"))["learner"]["gradient_booster"]["model"]["trees"]
    picks = []
    for t in trees[:8]:
        if t["left_children"][0] != -1:
            picks.append((t["split_indices"][0], t["split_conditions"][0]))
    for i, (feature, cond) in enumerate(picks):
        row = len(x) - 1 - i
        c = np.float32(cond)
        v = [c, np.nextafter(c, np.float32(-np.inf)), np.nextafter(c, np.float32(np.inf))][i % 3]
        # The float64 just below a float32 threshold rounds to it.
        if i % 4 == 3:
            v = float(c) - float(c) * 1e-12
        x.iat[row, feature] = float(v)
    return x


def diabetes(out):
    x, y = frame(datasets.load_diabetes())
    xtr, xte, ytr, yte = split(x, y, stratify=False)
    dtrain = xgb.DMatrix(xtr, ytr)
    meta = {"label": "progression"}

    for name, objective in [("diabetes_squarederror", "reg:squarederror"),
                            ("diabetes_absoluteerror", "reg:absoluteerror"),
                            ("diabetes_poisson", "count:poisson"),
                            ("diabetes_tweedie", "reg:tweedie"),
                            ("diabetes_gamma", "reg:gamma")]:
        # All but one start from the mean: from XGBoost's default 0.5 they
        # would need hundreds of rounds to reach targets near 150.
        start = {} if objective == "reg:squarederror" else {"base_score": float(ytr.mean())}
        b = xgb.train(params(objective=objective, eta=0.1, **start), dtrain, 30)
        write_model(out, name, b, xte, meta, "regression")

    # A target in [0, 1].
    lo, hi = y.min(), y.max()
    b = xgb.train(params(objective="reg:logistic", eta=0.1), xgb.DMatrix(xtr, (ytr - lo) / (hi - lo)), 30)
    write_model(out, "diabetes_logistic", b, xte, {"label": "progression_scaled"}, "regression")

    # A linear booster: a weight per feature and a bias.
    b = xgb.train(linear_params(objective="reg:squarederror", eta=0.5, reg_lambda=0.01), dtrain, 30)
    write_model(out, "diabetes_linear", b, xte, meta, "regression")

    # Many deep trees.
    b = xgb.train(params(objective="reg:squarederror", max_depth=10, min_child_weight=12, eta=0.05), dtrain, 300)
    write_model(out, "diabetes_deep", b, xte.iloc[:20], meta, "regression")

    # Categorical features (pandas categories; a request posts their codes).
    cat = x.copy()
    cat["sex"] = pd.Categorical.from_codes((x["sex"] > 0).astype(int), ["female", "male"])
    cat["age"] = pd.Categorical.from_codes(pd.qcut(x["age"], 6, labels=False), ["a%d" % i for i in range(6)])
    ctr, cte = cat.loc[xtr.index], cat.loc[xte.index]
    b = xgb.train(params(objective="reg:squarederror", tree_method="hist", max_cat_to_onehot=1, eta=0.1),
                  xgb.DMatrix(ctr, ytr, enable_categorical=True), 30)
    codes = cte.copy()
    for c in ["sex", "age"]:
        codes[c] = cte[c].cat.codes.astype(np.float64)
    write_model(out, "diabetes_categorical", b, cte, meta, "regression", rows=rows_of(codes))


def example(dir):
    """The iris classifier docs/models.md deploys, its metadata and a verification upload."""
    bunch = datasets.load_iris()
    x, y = frame(bunch)
    x.columns = ["sepal_length", "sepal_width", "petal_length", "petal_width"]
    b = xgb.train(params(objective="multi:softprob", num_class=3), xgb.DMatrix(x, y), 10)
    b.save_model(os.path.join(dir, "iris.json"))
    meta = {"label": "species", "classes": list(bunch.target_names), "features": list(x.columns),
            "description": "XGBoost iris classifier: 10 rounds of depth-3 trees on the iris data set"}
    with open(os.path.join(dir, "iris.metadata.json"), "w") as f:
        json.dump(meta, f, indent=2)
        f.write("\n")
    sample = x.iloc[[0, 50, 100, 149]]
    probs = b.predict(xgb.DMatrix(sample))
    verification = dict(meta, verification={
        "rows": rows_of(sample),
        "expected": [[f32(p) for p in row] for row in probs],
        "tolerance": 1e-6,
    })
    with open(os.path.join(dir, "iris.verification.json"), "w") as f:
        json.dump(verification, f, indent=2)
        f.write("\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=HERE, help="where the fixtures go (default: this directory)")
    ap.add_argument("--examples", default=os.path.join(HERE, "..", "..", "..", "examples", "models"),
                    help="where the example model goes (default: examples/models)")
    args = ap.parse_args()
    if not xgb.__version__.startswith("1.7."):
        sys.exit("gen.py: the fixtures come from xgboost 1.7; this is xgboost %s" % xgb.__version__)
    os.makedirs(args.out, exist_ok=True)
    os.makedirs(args.examples, exist_ok=True)
    iris(args.out)
    breast_cancer(args.out)
    diabetes(args.out)
    example(args.examples)


if __name__ == "__main__":
    main()
