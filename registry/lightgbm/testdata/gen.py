#!/usr/bin/python3
"""Train the LightGBM fixtures of package lightgbm and record LightGBM's answers.

usage: gen.py LIGHTGBM_DIR [OUT [LIGHTGBM3_DIR]]

LIGHTGBM_DIR holds the command-line program `lightgbm` and `lib_lightgbm.so`
of LightGBM 4.6.0 (built from source: see BENCHMARKS.md). Models are trained
with the command-line program; every answer comes from lib_lightgbm.so's
LGBM_BoosterPredictForMat on one thread, the predictor a program embedding
LightGBM calls. For each model NAME, OUT (default: this directory) gets
NAME.txt, the model file, and NAME.rows.json: the rows, LightGBM's raw scores
and predictions for them, written in as many digits as identify each double,
and the schema and predictions in the shape the end-to-end suite reads for
every format.

LIGHTGBM3_DIR, when given, holds the same two files of LightGBM 3.3.5, which
writes model version v3: it trains and answers the fixtures named v3_*.
"""
import ctypes as C
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
from sklearn.datasets import load_breast_cancer, load_diabetes, load_iris

LGBM = sys.argv[1]
OUT = sys.argv[2] if len(sys.argv) > 2 else os.path.dirname(os.path.abspath(__file__))
LGBM3 = sys.argv[3] if len(sys.argv) > 3 else None
os.makedirs(OUT, exist_ok=True)
WORK = tempfile.mkdtemp(prefix="lgbm-fixtures-")


def load(d):
    lib = C.CDLL(os.path.join(d, "lib_lightgbm.so"))
    lib.LGBM_GetLastError.restype = C.c_char_p
    return lib


lib = load(LGBM)
rng = np.random.default_rng(7)

COMMON = ["num_leaves=7", "learning_rate=0.2", "min_data_in_leaf=5", "seed=1", "deterministic=true",
          "force_row_wise=true", "num_threads=1", "verbosity=-1", "precise_float_parser=true"]


def ok(rc, lib=None):
    if rc != 0:
        raise RuntimeError((lib or globals()["lib"]).LGBM_GetLastError().decode())


def cell(v):
    return "nan" if np.isnan(v) else repr(float(v))


def write_csv(path, y, X, names):
    with open(path, "w") as fh:
        if names is not None:
            fh.write(",".join(["label"] + names) + "\n")
        for yi, row in zip(y, X):
            fh.write(",".join([repr(float(yi))] + [cell(v) for v in row]) + "\n")


def predict(model, X, ptype, lib):
    h, it = C.c_void_p(), C.c_int()
    ok(lib.LGBM_BoosterCreateFromModelfile(model.encode(), C.byref(it), C.byref(h)), lib)
    k = C.c_int()
    ok(lib.LGBM_BoosterGetNumClasses(h, C.byref(k)), lib)
    X = np.ascontiguousarray(X, dtype=np.float64)
    out = np.zeros(X.shape[0] * k.value)
    n = C.c_int64()
    ok(lib.LGBM_BoosterPredictForMat(h, X.ctypes.data_as(C.c_void_p), 1, X.shape[0], X.shape[1], 1, ptype, 0, -1,
                                     b"num_threads=1", C.byref(n), out.ctypes.data_as(C.POINTER(C.c_double))), lib)
    lib.LGBM_BoosterFree(h)
    return out.reshape(X.shape[0], k.value)


def number(v):
    """A row's value: null where missing, an infinity as a string (JSON has none)."""
    v = float(v)
    if np.isnan(v):
        return None
    if np.isinf(v):
        return "Infinity" if v > 0 else "-Infinity"
    return v


def fixture(name, y, X, params, names=None, rows=None, iterations=5, pandas=None, text_rows=None, note="",
            lgbm=LGBM, lib=lib):
    """Trains NAME on (y, X) and records LightGBM's answers for rows (default: the first 40 of X)."""
    data = os.path.join(WORK, name + ".csv")
    write_csv(data, y, X, names)
    model = os.path.join(OUT, name + ".txt")
    args = [os.path.join(lgbm, "lightgbm"), "task=train", "data=" + data, "label_column=0",
            "header=" + ("true" if names is not None else "false"), "output_model=" + model,
            "num_iterations=%d" % iterations] + COMMON + params
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
    if pandas is not None:
        # What the Python package's save_model appends after the model
        # (basic.py, _dump_pandas_categorical): a newline, the key and the
        # JSON of the categories of each pandas categorical column, in
        # column order.
        with open(model, "a") as fh:
            fh.write("\npandas_categorical:" + json.dumps(pandas) + "\n")
    R = X[:30] if rows is None else rows
    raw, pred = predict(model, R, 1, lib), predict(model, R, 0, lib)
    # Without a header, LightGBM names the features Column_0, Column_1, … in
    # the order they come after the label.
    feats = names if names is not None else ["Column_%d" % i for i in range(X.shape[1])]
    out_rows = []
    for i, r in enumerate(R):
        row = {f: number(v) for f, v in zip(feats, r)}
        if text_rows is not None:
            row.update(text_rows[i])
        out_rows.append(row)
    objective = next(p for p in params if p.startswith("objective=")).split("=")[1]
    classifier = objective in ("binary", "multiclass", "multiclassova")
    k = pred.shape[1]
    schema = {"task": "classification" if classifier else "regression", "inputs": feats}
    if classifier:
        schema["classes"] = [str(c) for c in range(max(k, 2))]
    # "predictions" are in the shape every format's fixtures share (the
    # confidences in class order, or a value), for the end-to-end suite;
    # "lightgbm" holds LightGBM's own raw scores and predictions, exactly.
    if classifier and k == 1:
        common = [[1 - p[0], p[0]] for p in pred.tolist()]
    elif classifier:
        common = pred.tolist()
    else:
        common = [p[0] for p in pred.tolist()]
    doc = {"model": name, "params": params, "iterations": iterations, "note": note, "schema": schema,
           "rows": out_rows, "predictions": [finite(p) for p in common],
           "lightgbm": {"raw": answers(raw), "predictions": answers(pred)}}
    with open(os.path.join(OUT, name + ".rows.json"), "w") as fh:
        json.dump(doc, fh, indent=None, separators=(",", ":"), allow_nan=False)
        fh.write("\n")
    print("wrote", name, X.shape, "rows", len(R))


def answers(a):
    """LightGBM's answers for each row, exact: 17 significant digits, an infinity or NaN as a string."""
    def one(v):
        v = float(v)
        return v if np.isfinite(v) else str(v).replace("inf", "Infinity").replace("nan", "NaN")
    return [[one(v) for v in row] for row in a]


def finite(p):
    """A common prediction, or null where LightGBM answers no finite number."""
    if isinstance(p, list):
        return p if all(np.isfinite(p)) else None
    return p if np.isfinite(p) else None


def edge_rows(X):
    """Rows of X's first row with one feature set to a value at an edge of a split rule."""
    rows = []
    for f in range(min(X.shape[1], 3)):
        for v in [np.nan, 0.0, -0.0, 1e-36, -1e-36, 1e-35, 1e300, -1e300, np.inf, -np.inf]:
            r = X[f].copy()
            r[f] = v
            rows.append(r)
    return np.array(rows)


bc = load_breast_cancer()
Xb, yb = bc.data[:300, :8], bc.target[:300]
nb = ["mean_radius", "mean_texture", "mean_perimeter", "mean_area", "mean_smoothness", "mean_compactness",
      "mean_concavity", "mean_concave_points"]
Rb = np.vstack([Xb[:20], edge_rows(Xb)])
fixture("binary", yb, Xb, ["objective=binary"], nb, Rb)
fixture("binary_sigmoid", yb, Xb, ["objective=binary", "sigmoid=0.5"], nb, Rb[:20])
fixture("cross_entropy", yb, Xb, ["objective=cross_entropy"], nb, Rb[:20])
fixture("cross_entropy_lambda", yb, Xb, ["objective=cross_entropy_lambda"], nb, Rb[:20])
fixture("rf", yb, Xb, ["objective=binary", "boosting=rf", "bagging_fraction=0.7", "bagging_freq=1",
                       "feature_fraction=0.8"], nb, Rb[:20])
fixture("dart", yb, Xb, ["objective=binary", "boosting=dart", "drop_rate=0.3", "skip_drop=0"], nb, Rb[:20],
        iterations=8)
# No header: LightGBM names the features itself.
fixture("no_names", yb, Xb[:, :4], ["objective=binary"], None, Xb[:30, :4])

ir = load_iris()
Xi = ir.data
Ri = np.vstack([Xi[::8], edge_rows(Xi)[:20]])
ni = ["sepal_length", "sepal_width", "petal_length", "petal_width"]
fixture("multiclass", ir.target, Xi, ["objective=multiclass", "num_class=3"], ni, Ri)
fixture("multiclassova", ir.target, Xi, ["objective=multiclassova", "num_class=3"], ni, Ri[:20])

db = load_diabetes()
Xd, yd = db.data[:, :6], db.target
nd = ["age", "sex", "bmi", "bp", "s1", "s2"]
Rd = np.vstack([Xd[:20], edge_rows(Xd)[:20]])
fixture("regression", yd, Xd, ["objective=regression"], nd, Rd)
fixture("regression_sqrt", yd, Xd, ["objective=regression", "reg_sqrt=true"], nd, Rd[:20])
fixture("regression_l1", yd, Xd, ["objective=regression_l1"], nd, Rd[:20])
fixture("huber", yd, Xd, ["objective=huber"], nd, Rd[:20])
fixture("poisson", yd, Xd, ["objective=poisson"], nd, Rd[:20])
fixture("gamma", yd, Xd, ["objective=gamma"], nd, Rd[:20])
fixture("tweedie", yd, Xd, ["objective=tweedie", "tweedie_variance_power=1.3"], nd, Rd[:20])
Rl = Rd.copy()
Rl[3, 2] = np.nan  # a missing value in a leaf's linear model: the leaf's constant value
fixture("linear", yd, Xd, ["objective=regression", "linear_tree=true", "linear_lambda=0.01"], nd, Rl)

# Missing values of each type: NaN (use_missing, NaN in training), Zero
# (zero_as_missing) and None (use_missing=false).
Xm = Xb.copy()
Xm[rng.random(Xm.shape) < 0.2] = np.nan
Rm = np.vstack([Xm[:20], edge_rows(Xm)])
fixture("missing_nan", yb, Xm, ["objective=binary"], nb, Rm)
Xz = np.where(np.isnan(Xm), 0.0, Xm)
fixture("missing_zero", yb, Xz, ["objective=binary", "zero_as_missing=true"], nb, Rm)
fixture("missing_none", yb, Xm, ["objective=binary", "use_missing=false"], nb, Rm)

# Categorical: a feature of 40 levels with level-specific effects, sent
# as codes; and the same data as a pandas categorical column of names.
n = 600
cat = rng.integers(0, 40, n).astype(float)
x1, x2 = rng.normal(size=n), rng.uniform(-1, 1, n)
effect = rng.normal(scale=2, size=40)
yc = effect[cat.astype(int)] + 1.5 * x1 - x2 ** 2 + rng.normal(scale=0.3, size=n)
cat[rng.random(n) < 0.05] = np.nan
Xc = np.column_stack([cat, x1, x2])
nc = ["shop", "x1", "x2"]
catp = ["categorical_feature=0", "min_data_per_group=5", "cat_smooth=1", "max_cat_to_onehot=4",
        "min_data_in_leaf=3"]
Rc = Xc[:25].copy()
extra = []
for v in [np.nan, -1, -0.5, 0.7, 3.99, 39, 40, 63, 64, 1000, 2147483647, 2147483648, 1e20, -1e20, np.inf]:
    r = Xc[0].copy()
    r[0] = v
    extra.append(r)
Rc = np.vstack([Rc, extra])
fixture("categorical", yc, Xc, ["objective=regression"] + catp, nc, Rc)
levels = ["shop_%02d" % i for i in range(40)]
text = []
Rp = Xc[:25].copy()
for i, r in enumerate(Rp):
    text.append({"shop": None if np.isnan(r[0]) else levels[int(r[0])]})
# A category pandas did not see when training has the code -1, then NaN.
Rp = np.vstack([Rp, Xc[:2]])
Rp[25:, 0] = np.nan
text += [{"shop": "shop_99"}, {"shop": ""}]
fixture("categorical_pandas", yc, Xc, ["objective=regression"] + catp, nc, Rp,
        pandas=[levels], text_rows=text)
fixture("categorical_multiclass", (yc > 0).astype(int) + (yc > 2).astype(int), Xc,
        ["objective=multiclass", "num_class=3"] + catp, nc, Rc)

if LGBM3:
    # LightGBM 3.3.5 writes model version v3: a binary model with missing
    # values, a categorical one, and a linear one.
    lib3 = load(LGBM3)
    fixture("v3_missing_nan", yb, Xm, ["objective=binary"], nb, Rm, lgbm=LGBM3, lib=lib3)
    fixture("v3_categorical", yc, Xc, ["objective=regression"] + catp, nc, Rc, lgbm=LGBM3, lib=lib3)
    fixture("v3_linear", yd, Xd, ["objective=regression", "linear_tree=true", "linear_lambda=0.01"], nd, Rl,
            lgbm=LGBM3, lib=lib3)
