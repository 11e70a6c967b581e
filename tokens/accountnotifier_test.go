package tokens_test

import (
	"testing"

	"github.com/scorehub/scorehub/internal/image"
	"github.com/scorehub/scorehub/internal/image/imagetest"
	"github.com/scorehub/scorehub/tokens"
	"github.com/scorehub/scorehub/tokens/tokenstest"
)

// TestAccountNotifierConformance runs the suite of a shared store on one
// state in memory that two handles share, each telling its subscribers
// what any handle commits, as a database store does for the replicas on
// it.
func TestAccountNotifierConformance(t *testing.T) {
	tokenstest.RunAccountNotifier(t, func(t *testing.T) (a, b tokens.AccountNotifier) {
		s := imagetest.NewShared(&tokens.AccountState{}, image.MemConfig[tokens.AccountState]{
			Seq: func(st *tokens.AccountState) uint64 { return st.Seq }, Closed: tokens.ErrAccountsClosed})
		return s.Handle(), s.Handle()
	})
}
