// Package models tests model files deployed on the reference server as a
// data scientist deploys them: every XGBoost fixture of registry/xgboost,
// every PMML fixture of registry/pmml, every ONNX fixture of registry/onnx
// and every LightGBM fixture of registry/lightgbm uploaded through the
// management API, put behind an alias, named by a deployment's endpoint
// and scored over HTTP with the body pandas writes, each prediction
// compared with XGBoost's, scikit-learn's, ONNX Runtime's or LightGBM's
// own; explained endpoints called and read as AI Hub's Python client
// does; an alias moved while clients score; a restart on the same data.
package models

import (
	"os"
	"testing"

	"github.com/scorehub/scorehub/e2e/internal/harness"
)

func TestMain(m *testing.M) { os.Exit(harness.Main(m)) }
