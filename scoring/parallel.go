package scoring

// parallelRows is the fewest rows scored and encoded in parts, on as many
// goroutines as wire.Parallelism allows (a large body is decoded in parts
// too, see package wire); below it the hand-offs would cost more than
// they save, and the request is handled on its own goroutine alone.
const parallelRows = 2048
