// Package tokenstest holds the conformance suites of [tokens.KeyStore]
// and [tokens.KeyNotifier]: the contract [tokens.KeySet] relies on, which
// every key store, the ones of package tokens and any other (a database
// store in a package of its own), must keep. Each is the suite every store
// of a state image passes (package internal/image/imagetest), given the
// key set, and what a KeySet makes of a store besides. A store's test
// calls [RunKeyStore]:
//
//	func TestKeyStoreConformance(t *testing.T) {
//		tokenstest.RunKeyStore(t, open)
//	}
//
// The suites of the account stores are in package
// tokens/accounts/accountstest.
package tokenstest
