package onnx

// ModelTree is modelTree for the external tests.
var ModelTree = modelTree
