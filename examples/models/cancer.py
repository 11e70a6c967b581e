import json

import xgboost as xgb
from sklearn.datasets import load_breast_cancer

data = load_breast_cancer(as_frame=True)
features = ["mean radius", "mean texture", "mean concave points", "worst area"]
x = data.data[features].set_axis([f.replace(" ", "_") for f in features], axis=1)
model = xgb.XGBClassifier(n_estimators=20, max_depth=3).fit(x, data.target)
model.save_model("cancer.json")

# Rows the server must score as XGBoost does before it takes the model.
rows = x.iloc[[0, 19, 30]]
upload = {
    "label": "diagnosis",
    "classes": list(data.target_names),  # malignant, benign: the target's 0 and 1
    "description": "XGBoost on four features of the breast cancer data set",
    "verification": {"rows": rows.to_dict("records"), "expected": model.predict_proba(rows).tolist()},
}
with open("cancer.upload.json", "w") as f:
    json.dump(upload, f, indent=1)

# Rows like those the model will score, which its drift is measured against.
x.to_csv("cancer.reference.csv", index=False)
