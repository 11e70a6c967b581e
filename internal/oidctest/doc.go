// Package oidctest runs a real OpenID Connect provider (the certified npm
// oidc-provider, scripted by tokens/testdata/oidc/server.mjs) on 127.0.0.1
// for the length of a test, and plays its users: a login through the
// authorization-code flow with PKCE that grants offline_access, and the
// refresh_token grant that turns the offline token into a JWT access token,
// as the AI Hub clients get theirs from Keycloak. Tests of several packages
// use it; where Node.js or the provider's packages are missing it skips, or
// fails when every test must run (see internal/testenv).
package oidctest
