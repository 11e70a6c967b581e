#!/usr/bin/python3
"""Time LightGBM's own predictor on the rows the Go benchmarks score.

usage: bench.py LIGHTGBM_DIR [MODEL]

Without MODEL, trains the benchmark's larger model (100 iterations of
31-leaf trees on the binary fixture's data) with LIGHTGBM_DIR/lightgbm into
/tmp/lgbm-bench.txt and prints the Go command that scores it. Then scores
10,000 rows, made from testdata/binary.rows.json as bench_test.go makes
them, with LGBM_BoosterPredictForMat on one thread (normal predictions), and
prints the mean wall and CPU time of 50 runs, as go test's ns/op and
cpu-ns/op are means of its runs.
"""
import ctypes as C
import json
import os
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
LGBM = sys.argv[1]
lib = C.CDLL(os.path.join(LGBM, "lib_lightgbm.so"))
lib.LGBM_GetLastError.restype = C.c_char_p


def ok(rc):
    if rc != 0:
        raise RuntimeError(lib.LGBM_GetLastError().decode())


fx = json.load(open(os.path.join(HERE, "binary.rows.json")))
names = list(fx["rows"][0].keys())
base = [r for r in fx["rows"] if all(isinstance(r[k], float) for k in names)]
n = len(base)
X = np.array([[base[i % n][k] * (1 + (i // n) * 1e-3) for k in names] for i in range(10_000)], dtype=np.float64)

if len(sys.argv) > 2:
    model = sys.argv[2]
else:
    # The binary fixture's training data, as gen.py makes it.
    from sklearn.datasets import load_breast_cancer
    bc = load_breast_cancer()
    data = "/tmp/lgbm-bench.csv"
    with open(data, "w") as fh:
        fh.write(",".join(["label"] + names) + "\n")
        for y, row in zip(bc.target[:300], bc.data[:300, :8]):
            fh.write(",".join([repr(float(y))] + [repr(float(v)) for v in row]) + "\n")
    model = "/tmp/lgbm-bench.txt"
    subprocess.run([os.path.join(LGBM, "lightgbm"), "task=train", "data=" + data, "header=true", "label_column=0",
                    "objective=binary", "num_iterations=100", "num_leaves=31", "min_data_in_leaf=5",
                    "learning_rate=0.1", "seed=1", "deterministic=true", "num_threads=1", "verbosity=-1",
                    "precise_float_parser=true", "output_model=" + model], check=True)
    print("model:", model)
    print("go:    SCOREHUB_LIGHTGBM_BENCH_MODEL=%s go test -run XXX -bench . -benchtime 2s ./registry/lightgbm/" % model)

h, it = C.c_void_p(), C.c_int()
ok(lib.LGBM_BoosterCreateFromModelfile(model.encode(), C.byref(it), C.byref(h)))
out = np.zeros(X.shape[0])
m = C.c_int64()
RUNS = 50
t0, c0 = time.perf_counter(), time.process_time()
for _ in range(RUNS):
    ok(lib.LGBM_BoosterPredictForMat(h, X.ctypes.data_as(C.c_void_p), 1, X.shape[0], X.shape[1], 1, 0, 0, -1,
                                     b"num_threads=1", C.byref(m), out.ctypes.data_as(C.POINTER(C.c_double))))
mean = (time.perf_counter() - t0) / RUNS
cpu = (time.process_time() - c0) / RUNS
lib.LGBM_BoosterFree(h)
print("LightGBM 4.6.0 LGBM_BoosterPredictForMat, 1 thread, %d rows: %.0f rows/s, %.0f cpu-ns/op (mean of %d runs)"
      % (X.shape[0], X.shape[0] / mean, cpu * 1e9, RUNS))
