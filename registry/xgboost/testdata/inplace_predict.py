#!/usr/bin/python3
"""Times XGBoost's own inplace_predict, on one thread, for the Go benchmark
BenchmarkBreastCancer10kXGBoost.

  /usr/bin/python3 inplace_predict.py MODEL ROWS FEATURES PASSES

ROWS is a file of little-endian float64s, FEATURES to a row, NaN where a
value is missing. After one untimed pass it predicts all rows PASSES times,
and at least for a second, and prints one JSON object: the passes made, the
seconds they took, and the sum of the predictions of one pass (so the
benchmark can check that both sides scored the same rows).
"""

import json
import sys
import time

import numpy as np
import xgboost as xgb


def main():
    model, rows, features, passes = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    booster = xgb.Booster(model_file=model)
    booster.set_param({"nthread": 1})
    x = np.fromfile(rows, dtype="<f8").reshape(-1, features)
    total = float(np.sum(booster.inplace_predict(x), dtype=np.float64))
    done, start = 0, time.perf_counter()
    while done < passes or time.perf_counter() - start < 1:
        booster.inplace_predict(x)
        done += 1
    seconds = time.perf_counter() - start
    json.dump({"passes": done, "seconds": seconds, "sum": total}, sys.stdout)


if __name__ == "__main__":
    main()
