// Package ui is the endpoint management menu of scorehub with a test page
// per endpoint, as AI Hub has one: a person signs in, finds an endpoint,
// reads its URL, sends it a request and copies a ready-made curl command.
//
// The page is plain HTML, CSS and JavaScript embedded in the binary (no
// build step, nothing fetched from elsewhere: it works without internet).
// [Handler] only serves those files; everything the page shows it reads
// from the APIs beside it, in the browser:
//
//	browser ── GET  /ui/                          Handler: page, app.css, app.js
//	        ── GET  /api/rest/tokenservice        HTTP Basic → idToken (tokens)
//	        ── GET  /api/v1/endpoints             the menu: groups → deployments → endpoints
//	           GET  /api/v1/endpoints/{group}/{path}/{alias}/process
//	                                              what the endpoint runs (catalog process
//	                                              or model version) and the sample input
//	                                              the body starts from (both without a
//	                                              token for the public groups' endpoints)
//	           GET  /api/v1/webapigroups          (management, Bearer idToken)
//	           GET  /executions/queues            queue figures
//	        ── POST {endpoint URL}                Run Test (scoring; for a protected
//	                                              group, the credential chosen)
//	        ── GET  /api/v1/deployments/{group}/{path}
//	                                              a model endpoint's challengers, then
//	           GET  /api/v1/endpoints/{group}/{path}/{alias}/challengers
//	           GET  /api/v1/endpoints/{group}/{path}/{alias}/performance
//	                                              how they compare with its model
//	        ── PUT  /api/v1/models/{name}/aliases/{alias}
//	                                              Promote (administrators, If-Match)
//
// The idToken is kept in the page's memory only, never in storage or a
// cookie. When it expires, or any call with it answers 401, the page
// forgets it and asks for a sign-in again, saying why. A link to an
// endpoint the menu does not list asks a visitor to sign in, or tells a
// tester signed in that it does not exist or is not theirs to see.
//
// For an endpoint of a protected group the page offers, under "Call as",
// the kinds of credentials the group takes (the endpoint list's schemes):
// the signed-in user's idToken (Bearer), a user name and password (Basic)
// or a pasted API token (apitoken). The password and the API token live in
// their form fields only and are cleared when another endpoint is opened or
// the session ends. A 401 or 403 answer is shown with which credential was
// refused and, from the answer's WWW-Authenticate challenges, what the
// group takes.
//
// Run Test sends the editor's text as it is, so the server's own errors
// (such as 400 malformed_json for a trailing comma) are shown with their
// type and message. The answer is shown as a table, the result columns
// first, highlighted and pinned at its left edge while the echoed input
// columns scroll past (so that a model of many features shows its
// prediction at once), and as JSON laid out without changing a single
// number. "Show curl command" gives the same request for a POSIX
// shell: the exact URL, headers and body, the body in single quotes with
// each single quote in it closed, escaped and reopened:
//
//	--data-raw '{"data":[{"note":"it'\''s"}]}'
//
// The command holds no secret unless the user ticks the box for it: with
// an idToken it reads it from $TOKEN and first shows how to get one; with
// Basic it names the user and curl asks for the password; with an API
// token it reads it from $SCOREHUB_API_TOKEN.
//
// A model endpoint whose deployment names challengers shows, to a tester
// signed in, its champion and each challenger: how often a shadow agreed
// with the champion, the distribution of the difference of their answers
// (one bar per bucket, each count also written for screen readers), the
// mean latency of both, and, once outcomes are fed back, how well each
// predicts (nothing when the server measures none). An administrator may
// promote a challenger that is another version of the champion's model
// behind an alias: after a confirm dialog that says what will change, the
// page moves the alias with If-Match, the ETag it read, so that an alias
// someone moved since is left alone and the page says so.
//
// A host mounts the Handler with http.StripPrefix; the standalone server
// does so at /ui/. If the management API or the token service is elsewhere
// than beside the page's parent, or the scoring endpoints are on another
// origin (which must then allow the page's origin through
// middleware.CORS), say so in [Config].
package ui
