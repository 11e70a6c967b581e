#!/usr/bin/python3
"""Writes XGBoost's own feature contributions for the fixtures gen.py writes.

For every fixture NAME (NAME.json and NAME.rows.json in the models
directory) this writes NAME.contribs.json into the output directory: per
row, per output group (one per class for softmax, else one), the
contribution of each feature in the model's order and then the bias, as
XGBoost 1.7's predict(..., pred_contribs=True) computes them in float32,
written as the float64 of that float32.

Run it after gen.py, with the same xgboost 1.7 (Debian: python3-xgboost):

  /usr/bin/python3 contribs.py [--models DIR] [--out DIR]
"""

import argparse
import glob
import json
import os
import sys

import numpy as np
import xgboost as xgb

HERE = os.path.dirname(os.path.abspath(__file__))


def matrix(booster, fixture):
    """The fixture's rows as a DMatrix in the model's feature order, NaN
    where a row has null or no key; categorical features as the codes a
    request posts."""
    names = fixture["schema"]["inputs"]
    x = np.array([[np.nan if r.get(n) is None else r[n] for n in names] for r in fixture["rows"]], dtype=np.float64)
    types = booster.feature_types
    return xgb.DMatrix(x, feature_names=booster.feature_names, feature_types=types,
                       enable_categorical=bool(types and "c" in types), nthread=1)


def contribs(models, out, name):
    booster = xgb.Booster(model_file=os.path.join(models, name + ".json"))
    booster.set_param({"nthread": 1})
    with open(os.path.join(models, name + ".rows.json")) as f:
        fixture = json.load(f)
    c = np.float32(booster.predict(matrix(booster, fixture), pred_contribs=True))
    if c.ndim == 2:  # one group
        c = c[:, np.newaxis, :]
    with open(os.path.join(out, name + ".contribs.json"), "w") as f:
        json.dump({"model": name, "contributions": [[[float(v) for v in g] for g in row] for row in c]}, f)
        f.write("\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default=HERE, help="where gen.py wrote the fixtures (default: this directory)")
    ap.add_argument("--out", default=HERE, help="where the contributions go (default: this directory)")
    args = ap.parse_args()
    if not xgb.__version__.startswith("1.7."):
        sys.exit("contribs.py: the fixtures come from xgboost 1.7; this is xgboost %s" % xgb.__version__)
    for path in sorted(glob.glob(os.path.join(args.models, "*.rows.json"))):
        contribs(args.models, args.out, os.path.basename(path)[: -len(".rows.json")])


if __name__ == "__main__":
    main()
