// Package tokens issues and verifies the JWTs that guard scorehub's
// management API, and serves the routes through which clients get them,
// wire-compatible with the token service of RapidMiner / Altair AI Hub.
//
// # Data flow
//
// A client gets a token in one of two ways, both served by [Service]:
//
//	GET /api/rest/tokenservice        HTTP Basic → Authenticator → Issuer → {"idToken","expirationDate"}
//	GET /api/rest/saml/tokenservice   Bearer access token of an OpenID Connect provider
//	                                  → Provider (provider's JWKS, claim mapping) → Issuer → JWT
//
// and then sends it as "Authorization: Bearer <idToken>" on every management
// request, where the middleware package calls [Verifier.Verify] and hands
// the [Claims] on. The public keys are published at GET /api/rest/jwks.json
// for verifiers in other processes. Before it expires, a client that
// wants to stay signed in without keeping the password trades it for a
// fresh one:
//
//	GET /api/rest/tokenservice/renew  Bearer idToken → Verifier → Issuer → {"idToken","expirationDate"}
//
// served when [ServiceConfig.Renewer] is set; a changed password ends the
// chain.
//
// # Keys
//
// A [KeySet] holds one signing key and the retired keys that still verify
// what they signed. Every key's ID ("kid") is its RFC 7638 thumbprint.
// Ed25519 ([EdDSA]) is the default; [ES256] and [RS256] are supported, and
// [HS256] with a random secret of at least 32 bytes, never published.
// [KeySet.Rotate] makes a new signing key; the old one keeps verifying, and
// stays in the JWKS, for the set's retention, which [NewIssuer] makes sure
// covers a token's validity. A retired key verifies only tokens issued
// before it was retired.
//
// A set kept in a [KeyStore] survives a restart: [LoadOrCreateKeySet]
// keeps it in a file (mode 0600) of one process, [OpenKeySet] in any
// store. The store keeps no rule of its own: the KeySet decides a
// rotation or a prune on the set it holds and commits it conditionally on
// that set, so that over a store several replicas share (a
// [KeyNotifier], such as the service's PostgreSQL store,
// internal/pgstore) one replica at a time changes the set, and a replica
// whose commit meets another's reloads the store and decides afresh:
// replicas that find the signing key old at once rotate it once. Every
// replica installs each set the store reports, so each verifies what the
// others sign and serves the same JWKS from the moment it hears of a
// rotation (within a second; milliseconds on one host). So that no
// replica signs with a key another does not know yet, a rotation of a
// shared set publishes the new key first: it verifies and is in the JWKS
// at once, while every replica keeps signing with the replaced key for
// [KeyHandover], until the new key's "signs from" time kept in the stored
// set, and then all switch to it. A replica that heard late signs with
// the replaced key a little longer, so that key verifies tokens issued up
// to KeyHandover after its retirement, and stays published that much
// longer. Sets in a file or in memory serve one process and switch at
// once.
//
// A stored set holds the private keys, in the key file's format (PKCS #8
// PEM in JSON), and is exactly as sensitive as the key file: whoever reads
// it can sign tokens that every replica accepts. In a database it is
// protected by the database's access control, not by encryption in the
// row: give the service a role of its own, let no other role read the
// key table, connect over TLS that verifies the server, and treat backups
// and replicas of the database as holding the keys. The set never appears
// in a log line, an error, or a notification, which carries only the new
// set's number; replicas read the set itself over their own connections.
//
// # Verification
//
// [Verifier.Verify] refuses tokens over [MaxTokenSize] before parsing,
// and tokens whose header or claims repeat a member name (at any depth, or
// at the top in other case) or whose header has "crit": scorehub
// understands no JWS extension. It then pins the algorithm to the one of the key the token names, requires "exp",
// "iat", "sub" and "jti", checks "iss" and "aud", refuses a token whose
// "exp" minus "iat" exceeds VerifierConfig.MaxValidity (by default
// [MaxValidity], the longest any Issuer grants), and allows at most
// [MaxLeeway] of clock skew. Failures wrap exactly one sentinel
// ([ErrExpired], [ErrSignature], …) for [errors.Is]; no claims come with an
// error. [Provider.Verify] does the same for the OpenID Connect provider's
// access tokens against its published keys, which it caches and fetches
// again, one fetch at a time and rate-limited, when a token names an
// unknown key. It can limit the clients ("azp") and token types ("typ") it
// accepts, and prefixes the subjects it maps ("oidc:alice"), so that a
// provider's user never passes for a local user of the same name.
//
// # Users
//
// The token service takes its users from an [Authenticator], which turns a
// user name and password into a [Principal]; package tokens/accounts has
// the ones scorehub keeps (users of an htpasswd file, users and API tokens
// managed at run time), and any other (a directory service) will do.
// Before any password check the token service limits
// attempts per client address, failed logins per address, failed logins
// per user name and address, and failed logins per user name across
// addresses, so that many addresses guessing one password are slowed as
// one. The last limit does not hold an address the user logged in from
// before, so guessing a user's password cannot lock that user out where
// the user is known; middleware.Credentials applies the same policy to
// Basic passwords. It also caps how many checks run at once. A failed login is logged with only the first two
// characters of the name tried and a keyed hash of it, since a name that
// failed may be a password typed into the wrong field.
//
// # Revocation
//
// A token is a signed statement, valid until it expires; to end it sooner
// the verifier must ask. A [Principal] can carry a credential version,
// which the [Issuer] puts in the token's "cv" claim; the users of package
// tokens/accounts make it with [CredentialVersion] from a password hash,
// or at random, new whenever the user's password, groups or admin flag
// change. A [Verifier] given
// a [CredentialSource] (VerifierConfig.Credentials) looks the token's
// subject up after every other check and refuses it with [ErrRevoked] when
// the subject is unknown or has another version: the user was removed, or
// the password (bcrypt salts every new hash afresh), the groups or the
// admin flag changed. The lookup should be a map read; a host that reloads
// its users swaps the source's contents, and a source shared by several
// servers makes a revocation hold on all of them. Tokens without "cv",
// such as those exchanged for an OpenID Connect provider's token, are not
// looked up and end at their expiry.
//
// Errors sent to clients have the JSON shape of internal/httperr.
package tokens
