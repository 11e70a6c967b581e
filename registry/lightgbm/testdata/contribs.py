#!/usr/bin/python3
"""Record LightGBM's own feature contributions for the fixtures gen.py writes.

usage: contribs.py LIGHTGBM_DIR [MODELS [OUT]]

LIGHTGBM_DIR holds lib_lightgbm.so of LightGBM 4.6.0 (see gen.py). For every
fixture NAME in MODELS (default: this directory), NAME.txt and
NAME.rows.json, OUT (default: MODELS) gets NAME.contribs.json: for each row,
for each raw score (one per class for a multiclass model, else one), the
contribution of each feature in the model's order and then the bias, as
LGBM_BoosterPredictForMat with C_API_PREDICT_CONTRIB computes them on one
thread, written in as many digits as identify each double. Models of linear
trees are left out: LightGBM computes no contributions for them.

A row's value is what gen.py gave LightGBM for it: null is NaN, "Infinity"
an infinity, and a text value the code of its name among the model's
pandas_categorical names, the i-th text feature of the row the i-th list
(NaN for a name not listed).
"""
import ctypes as C
import glob
import json
import math
import os
import sys

import numpy as np

LGBM = sys.argv[1]
MODELS = sys.argv[2] if len(sys.argv) > 2 else os.path.dirname(os.path.abspath(__file__))
OUT = sys.argv[3] if len(sys.argv) > 3 else MODELS
C_API_PREDICT_CONTRIB = 3

lib = C.CDLL(os.path.join(LGBM, "lib_lightgbm.so"))
lib.LGBM_GetLastError.restype = C.c_char_p


def ok(rc):
    if rc != 0:
        raise RuntimeError(lib.LGBM_GetLastError().decode())


def pandas_names(model_text):
    for line in model_text.splitlines():
        if line.startswith("pandas_categorical:"):
            return json.loads(line[len("pandas_categorical:"):]) or []
    return []


def matrix(doc, pandas):
    feats = doc["schema"]["inputs"]
    X = np.zeros((len(doc["rows"]), len(feats)))
    for i, row in enumerate(doc["rows"]):
        text = 0
        for j, f in enumerate(feats):
            v = row.get(f)
            if v is None:
                v = math.nan
            elif v in ("Infinity", "-Infinity"):
                v = float(v.replace("Infinity", "inf"))
            elif isinstance(v, str):
                names = pandas[text]
                text += 1
                v = float(names.index(v)) if v in names else math.nan
            X[i, j] = v
    return X


def contribs(name):
    model = os.path.join(MODELS, name + ".txt")
    text = open(model).read()
    if "is_linear=1" in text:
        return
    doc = json.load(open(os.path.join(MODELS, name + ".rows.json")))
    X = np.ascontiguousarray(matrix(doc, pandas_names(text)), dtype=np.float64)
    h, it, k = C.c_void_p(), C.c_int(), C.c_int()
    ok(lib.LGBM_BoosterCreateFromModelfile(model.encode(), C.byref(it), C.byref(h)))
    ok(lib.LGBM_BoosterGetNumClasses(h, C.byref(k)))
    width = X.shape[1] + 1
    out = np.zeros(X.shape[0] * k.value * width)
    n = C.c_int64()
    ok(lib.LGBM_BoosterPredictForMat(h, X.ctypes.data_as(C.c_void_p), 1, X.shape[0], X.shape[1], 1,
                                     C_API_PREDICT_CONTRIB, 0, -1, b"num_threads=1", C.byref(n),
                                     out.ctypes.data_as(C.POINTER(C.c_double))))
    lib.LGBM_BoosterFree(h)
    assert n.value == out.size, (name, n.value, out.size)
    c = out.reshape(X.shape[0], k.value, width)
    with open(os.path.join(OUT, name + ".contribs.json"), "w") as fh:
        json.dump({"model": name, "contributions": c.tolist()}, fh, separators=(",", ":"), allow_nan=False)
        fh.write("\n")


for path in sorted(glob.glob(os.path.join(MODELS, "*.rows.json"))):
    contribs(os.path.basename(path)[: -len(".rows.json")])
