// Package wire is the scoring endpoint's JSON codec: it reads a request's
// body under the request limits, decodes it in one pass into a columnar
// process.Table, checks that table against the process's input schema,
// and writes the answer, every input value echoed exactly as it was sent
// and the process's results after it. It belongs to the scoring handler
// and is internal so that its types can change with the handler's needs;
// a host decodes rows through scoring.Decode.
//
// In the flow of one scoring request:
//
//	scoring.Handler → Pool.Get
//	  → State.Read: the body, at most Limits.MaxBodyBytes
//	  → State.Decode: a scanner made for {"data":[{...},...]} that leaves
//	    any other shape, and every fault, to the strict jsontext decoder;
//	    a body of 128 KiB or more in parts on several goroutines
//	  → Request.Conform: the process's input schema
//	  → (the handler runs the process)
//	  → Request.Encoder → Encoder.AppendRow, row after row, which the
//	    handler writes as its buffer fills
//	  → Pool.Put
//
// There is no reflection and no map per row: the body is kept, and what
// the answer echoes of each value and each row is a span of it. Numbers
// are read (number.go) and written (ftoa.go) by hand, both held bit for
// bit to strconv by tests and fuzz targets.
//
// Every refusal is a [*problem.Error] the handler sends as it is; errors
// meant for the log begin "scoring:", as the handler's own do.
package wire
