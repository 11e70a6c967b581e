#!/usr/bin/python3
"""Trains the model of the contribution benchmarks and times XGBoost's own
pred_contribs on it, on one thread, for the Go benchmark
BenchmarkContribs10kXGBoost.

  /usr/bin/python3 pred_contribs.py train MODEL
  /usr/bin/python3 pred_contribs.py time MODEL ROWS FEATURES PASSES

train saves as MODEL (JSON) a binary:logistic model of 100 trees of depth 6
over 20 features f0..f19, trained on 20,000 rows of scikit-learn's
make_classification, enough for most trees to be full; the same model on
every run (fixed seeds, one thread).

time reads ROWS, a file of little-endian float64s, FEATURES to a row, NaN
where a value is missing, and builds a DMatrix of them once. After one
untimed pass it computes predict(..., pred_contribs=True) PASSES times, and
at least for a second, and prints one JSON object: the passes made, the
seconds they took, and the sum of all contributions of one pass (so the
benchmark can check that both sides computed the same).
"""

import json
import os
import sys
import time

import numpy as np
import xgboost as xgb

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen  # noqa: E402


def train(model):
    from sklearn import datasets
    x, y = datasets.make_classification(n_samples=20000, n_features=20, n_informative=12, random_state=gen.SEED)
    b = xgb.train(gen.params(objective="binary:logistic", max_depth=6, eta=0.1), xgb.DMatrix(x, y), 100)
    b.save_model(model)


def timed(model, rows, features, passes):
    booster = xgb.Booster(model_file=model)
    booster.set_param({"nthread": 1})
    x = np.fromfile(rows, dtype="<f8").reshape(-1, features)
    dm = xgb.DMatrix(x, feature_names=booster.feature_names, nthread=1)
    total = float(np.sum(booster.predict(dm, pred_contribs=True), dtype=np.float64))
    done, start = 0, time.perf_counter()
    while done < passes or time.perf_counter() - start < 1:
        booster.predict(dm, pred_contribs=True)
        done += 1
    seconds = time.perf_counter() - start
    json.dump({"passes": done, "seconds": seconds, "sum": total}, sys.stdout)


def main():
    if sys.argv[1] == "train":
        train(sys.argv[2])
    else:
        timed(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))


if __name__ == "__main__":
    main()
