// Package loginlimit is the one policy on wrong passwords, which the token
// service and the Basic credentials of protected groups both apply: limits
// on failures per client address, per user name and address, and per user
// name across addresses, the last waived for an address the user has
// logged in from before, so that guessing one user's password from many
// addresses is slowed without locking the user out.
//
// A [Guard] is made from the limits of tokens.ServiceConfig or
// middleware.CredentialsConfig; the caller checks it before a password,
// charges it after a wrong one and tells it of a right one.
package loginlimit
