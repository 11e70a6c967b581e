package problem_test

import (
	"errors"
	"fmt"

	"github.com/scorehub/scorehub/problem"
)

// errNoSuchModel is a sentinel of a package of its own: its text for Go
// callers and the log, its code and a sentence for a client.
var errNoSuchModel = &problem.Error{Code: problem.NotFound, Text: "models: not found",
	Message: "nothing is stored under that name"}

// A package says which record one of its sentinels is about with Detail;
// a caller matches the sentinel with errors.Is and reads the code and the
// sentence for the client with errors.As.
func ExampleError_Detail() {
	err := fmt.Errorf("load churn: %w",
		errNoSuchModel.Detail(`models: model "churn" does not exist`, `model "churn" does not exist`))

	fmt.Println(err)
	fmt.Println(errors.Is(err, errNoSuchModel))
	var p *problem.Error
	if errors.As(err, &p) {
		fmt.Println(p.Code, p.Message)
	}
	// Output:
	// load churn: models: model "churn" does not exist
	// true
	// not_found model "churn" does not exist
}

// An answer composed for a client reads as its code and sentence, with its
// cause for the log.
func ExampleError_Wrap() {
	e := &problem.Error{Code: problem.InvalidValue, Message: "a nested object is not a value"}
	err := e.At("/data/3/age").Wrap(errors.New("decode: '{' at byte 48"))
	fmt.Println(err)
	fmt.Println(e.Pointer == "", e.Err == nil) // e itself is unchanged
	// Output:
	// invalid_value: a nested object is not a value (at /data/3/age): decode: '{' at byte 48
	// true true
}
