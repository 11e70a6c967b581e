#!/usr/bin/env node
// Scores rows with ONNX Runtime, the oracle the ONNX format's tests compare
// the Go evaluator with.
//
//   node run.js score MODEL.onnx ROWS.json
//   node run.js bench MODEL.onnx ROWS.json PASSES
//
// ROWS.json is a fixture (NAME.rows.json) or anything with its two fields:
// "rows", a list of objects with a number (null where missing) or a string
// per column, and "schema": {"inputs": [...]}, the columns in the model's
// order. A model with one graph input that is not a column's name reads
// the rows as one [N, F] tensor of those columns; otherwise every graph input
// is the column of its name, an [N, 1] (or [N]) tensor of the input's type.
//
// score prints {"outputs": {NAME: [...]}}: every graph output, one entry
// per row (a number, a string, or a row's list of them; NaN prints as
// null). ONNX Runtime's
// Node binding returns tensors only, so an output ZipMap makes (a sequence
// of maps) is answered with the probability tensor that ZipMap reads: the
// runner appends that tensor to the model's outputs in memory before
// loading it. ZipMap only pairs those numbers with the class labels.
//
// bench scores all rows in one run PASSES times on one thread and prints
// {"rows", "passes", "seconds", "rows_per_second", "sums"}, sums holding
// per output the sum of each of its columns over the rows in the last pass
// (a check that both sides of a comparison scored the same), a ZipMap's
// under the name of the tensor it reads.
"use strict";

const fs = require("node:fs");
const ort = require("onnxruntime-node");

function fail(msg) {
  process.stderr.write("run.js: " + msg + "\n");
  process.exit(2);
}

// Protocol buffer reading, just enough to list a graph's nodes.

function varint(buf, pos) {
  let v = 0n;
  let shift = 0n;
  for (;;) {
    if (pos >= buf.length) throw new Error("truncated varint");
    const b = buf[pos++];
    v |= BigInt(b & 0x7f) << shift;
    if (b < 0x80) return [v, pos];
    shift += 7n;
  }
}

// fields calls fn(number, wireType, value) for each field of the message in
// buf; value is a Buffer for length-delimited fields.
function fields(buf, fn) {
  let pos = 0;
  while (pos < buf.length) {
    let key;
    [key, pos] = varint(buf, pos);
    const num = Number(key >> 3n);
    const wire = Number(key & 7n);
    switch (wire) {
      case 0: {
        let v;
        [v, pos] = varint(buf, pos);
        fn(num, wire, v);
        break;
      }
      case 1:
        pos += 8;
        break;
      case 2: {
        let n;
        [n, pos] = varint(buf, pos);
        const end = pos + Number(n);
        if (end > buf.length) throw new Error("truncated field");
        fn(num, wire, buf.subarray(pos, end));
        pos = end;
        break;
      }
      case 5:
        pos += 4;
        break;
      default:
        throw new Error("wire type " + wire);
    }
  }
}

// nodes lists the graph's nodes: {op, inputs, outputs}.
function nodes(model) {
  const out = [];
  fields(model, (num, wire, graph) => {
    if (num !== 7 || wire !== 2) return; // ModelProto.graph
    fields(graph, (num, wire, node) => {
      if (num !== 1 || wire !== 2) return; // GraphProto.node
      const n = { op: "", inputs: [], outputs: [] };
      fields(node, (num, wire, v) => {
        if (wire !== 2) return;
        if (num === 1) n.inputs.push(v.toString("utf8"));
        else if (num === 2) n.outputs.push(v.toString("utf8"));
        else if (num === 4) n.op = v.toString("utf8");
      });
      out.push(n);
    });
  });
  return out;
}

function lengthDelimited(num, body) {
  const head = [];
  let key = (num << 3) | 2;
  head.push(key);
  let n = body.length;
  const len = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n > 0) b |= 0x80;
    len.push(b);
  } while (n > 0);
  return Buffer.concat([Buffer.from(head), Buffer.from(len), body]);
}

// withOutputs returns model with the named tensors added to its graph's
// outputs: a second ModelProto.graph field holding only outputs, which a
// protocol buffer parser merges into the first.
function withOutputs(model, names) {
  const outs = names.map((name) =>
    lengthDelimited(12, lengthDelimited(1, Buffer.from(name, "utf8"))),
  );
  return Buffer.concat([model, lengthDelimited(7, Buffer.concat(outs))]);
}

async function open(path) {
  const model = fs.readFileSync(path);
  const opts = {
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
    executionMode: "sequential",
    graphOptimizationLevel: "all",
  };
  let session = await ort.InferenceSession.create(model, opts);
  const graphOutputs = session.outputNames;
  // Non-tensor outputs (ZipMap's) are read through the tensor ZipMap reads.
  const via = {};
  for (const m of session.outputMetadata) {
    if (m.isTensor) continue;
    const zm = nodes(model).find((n) => n.outputs.includes(m.name));
    if (!zm || zm.op !== "ZipMap") {
      fail(path + ": output " + m.name + " is no tensor and not ZipMap's");
    }
    via[m.name] = zm.inputs[0];
  }
  if (Object.keys(via).length > 0) {
    const extra = Object.values(via);
    session = await ort.InferenceSession.create(withOutputs(model, extra), opts);
  }
  const fetches = graphOutputs.filter((n) => !(n in via));
  return { session, via, fetches, names: fetches.concat(Object.values(via)) };
}

const arrays = {
  float32: Float32Array,
  float64: Float64Array,
};

function tensor(type, values, dims) {
  switch (type) {
    case "float32":
    case "float64":
      return new ort.Tensor(type, arrays[type].from(values, (v) => (v === null ? NaN : v)), dims);
    case "int64":
      return new ort.Tensor(type, BigInt64Array.from(values, (v) => BigInt(v)), dims);
    case "string":
      return new ort.Tensor(type, values.map(String), dims);
    default:
      fail("input type " + type + " is not one the runner feeds");
  }
}

function feeds(session, doc) {
  const rows = doc.rows;
  const cols = doc.schema.inputs;
  const n = rows.length;
  const meta = session.inputMetadata;
  const out = {};
  if (meta.length === 1 && !cols.includes(meta[0].name)) {
    const values = [];
    for (const r of rows) for (const c of cols) values.push(r[c] === undefined ? null : r[c]);
    out[meta[0].name] = tensor(meta[0].type, values, [n, cols.length]);
    return out;
  }
  for (const m of meta) {
    if (!cols.includes(m.name)) fail("graph input " + m.name + " is no column of the rows");
    const values = rows.map((r) => (r[m.name] === undefined ? null : r[m.name]));
    out[m.name] = tensor(m.type, values, m.shape.length === 1 ? [n] : [n, 1]);
  }
  return out;
}

function plain(v) {
  return typeof v === "bigint" ? Number(v) : v;
}

// perRow splits a result tensor into one entry per row: a value, or a
// list of them where a row has several.
function perRow(t, n) {
  const data = Array.from(t.data, plain);
  const width = n === 0 ? 0 : data.length / n;
  if (width === 1) return data; // [N] or [N, 1]: a value per row
  const out = [];
  for (let i = 0; i < n; i++) out.push(data.slice(i * width, (i + 1) * width));
  return out;
}

async function score(modelPath, rowsPath) {
  const doc = JSON.parse(fs.readFileSync(rowsPath, "utf8"));
  const { session, via, fetches, names } = await open(modelPath);
  const res = await session.run(feeds(session, doc), names);
  const n = doc.rows.length;
  const outputs = {};
  for (const name of fetches) outputs[name] = perRow(res[name], n);
  for (const [name, src] of Object.entries(via)) outputs[name] = perRow(res[src], n);
  process.stdout.write(JSON.stringify({ outputs }) + "\n");
}

async function bench(modelPath, rowsPath, passes) {
  const doc = JSON.parse(fs.readFileSync(rowsPath, "utf8"));
  const { session, fetches, names } = await open(modelPath);
  const input = feeds(session, doc);
  await session.run(input, names); // warm up
  let res;
  const start = process.hrtime.bigint();
  for (let i = 0; i < passes; i++) res = await session.run(input, names);
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  const rows = doc.rows.length;
  const sums = {};
  for (const name of names) {
    const t = res[name];
    const width = t.data.length / rows;
    const s = new Array(width).fill(0);
    for (let i = 0; i < t.data.length; i++) s[i % width] += Number(t.data[i]);
    sums[name] = s;
  }
  process.stdout.write(
    JSON.stringify({ rows, passes, seconds, rows_per_second: (rows * passes) / seconds, sums }) + "\n",
  );
}

async function main() {
  const [mode, model, rows, passes] = process.argv.slice(2);
  if (mode === "score" && model && rows) return score(model, rows);
  if (mode === "bench" && model && rows && Number(passes) >= 1) return bench(model, rows, Number(passes));
  fail("usage: node run.js score MODEL.onnx ROWS.json | node run.js bench MODEL.onnx ROWS.json PASSES");
}

main().catch((e) => fail(e && e.message ? e.message : String(e)));
