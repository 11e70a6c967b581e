// Package accounts keeps scorehub's users and API tokens and checks their
// passwords and tokens. It is what the token service of package tokens
// and the credential middleware ask who a user is; tokens issues and
// verifies the JWTs, and this package hands it [tokens.Principal]s through
// the interfaces tokens defines ([tokens.Authenticator],
// [tokens.CredentialSource]), so it imports tokens and never the reverse.
//
// # Data flow
//
//	name + password  → StaticUsers / Book (bcrypt)  → tokens.Principal → tokens.Issuer
//	                   PasswordCache in front, for HTTP Basic on every request
//	"apitoken" token → Book.VerifyAPIToken (SHA-256 lookup) → tokens.Principal
//	tokens.Verifier  → Book.CredentialVersion → revoked or not
//	management API   → Book (rules) → Store (load, commit) → memory, file, database
//
// # Users
//
// [StaticUsers] holds bcrypt hashes, from code ([NewStaticUsers]) or from
// an htpasswd file ([LoadHTPasswd]); [Book] (below) keeps users that change
// at run time. Either way an unknown user costs the same bcrypt work as a
// wrong password. A [PasswordCache] in front of either remembers, for a
// short time and under a keyed hash, the passwords it accepted, so a client
// sending HTTP Basic credentials on every request pays for bcrypt once.
//
// # Book
//
// A [Book] keeps users and API tokens that an admin manages through the
// management API, in a [Store]: [NewMemoryStore], or [OpenFileStore], one
// JSON file of mode 0600 in the data directory, replaced atomically on
// every write. The Book checks every rule of a write (names, passwords,
// revisions, owners, limits) and the store only loads and commits,
// conditionally on the state the rules were checked on, so package
// accountstest proves any store with one suite. Over a [Notifier], a store
// several replicas share, the Book also publishes what the other replicas
// commit as the store reports it, so a user removed or changed, or an API
// token deleted, through any replica revokes what was issued for it on
// every replica, within the time the store takes to report it
// (PostgreSQL's: under a second). Users of an htpasswd file stay beside
// them as Config.ReadOnly, listed with source "file" and never changed.
// Errors describe themselves to the HTTP edge (type, message naming the
// user or token, JSON pointer of the field).
//
// # User names
//
// A name the Book creates must not pass for another user's, to a person
// reading a list of users or a log: it has no white space and no
// invisible character (U+200B ZERO WIDTH SPACE, U+00AD SOFT HYPHEN and
// the other format and default-ignorable characters); it is one that the
// PRECIS UsernameCaseMapped profile of RFC 8265 accepts; its letters are
// of one script, as Unicode TR39's Highly Restrictive level has it (Latin
// with Han and kana, Bopomofo or Hangul is one), so "аdmin" with a
// Cyrillic а is refused; and it differs from every other user's name,
// stored or read-only, after NFKC normalisation, case folding and reading
// the Cyrillic and Greek letters that look Latin as those letters, so
// "Ann", "ANN", "ａｎｎ" and a Cyrillic "апп" are refused beside "ann" with
// [ErrExists] naming it. The comparison is made on the state the commit
// is conditional on, so it holds for names created at once on any
// replica. Users stored before these rules, and users of an htpasswd
// file, keep their names and log in with them as before: lookups are by
// the exact name, and only a new name is compared.
//
// # Passwords
//
// Every password the Book is given, and any a host is configured with,
// passes [CheckNewPassword], after NIST SP 800-63B: long enough, at most
// the 72 bytes bcrypt reads, and not one an attacker tries first (white
// space alone, one of the common passwords of commonpasswords.txt, whose
// header says where they come from, a repetition or a run of consecutive
// characters). The users of an htpasswd file, and any [User] built from a
// hash, come as bcrypt hashes: their passwords cannot be checked, and
// whoever writes the file answers for them.
//
// An API token is [APITokenPrefix], 256 random bits in base62 and a CRC-32
// check, so leaked tokens are easy to find and a mistyped one is refused
// before any lookup. Only its SHA-256 is kept. [Book.VerifyAPIToken]
// looks the hash up in an immutable in-memory snapshot, without allocating
// and without a write: it records the last use in memory, and a background
// writer makes it durable. Every stored user has a random credential
// version, new whenever their password, groups or admin flag change; the
// principals the Book authenticates carry it, and every API token keeps the
// one its owner had when it was made, so such a change, or the owner's
// removal, revokes the user's idTokens (through a [tokens.Verifier] with
// the Book as its [tokens.CredentialSource]) and their API tokens at once.
// [StaticUsers] derive the version from the user's hash, admin flag and
// groups ([tokens.CredentialVersion]), so editing the htpasswd file does
// the same for its users.
//
// Its error messages start "tokens:", as those of the token service do, so
// that logs, and what hosts match in them, read as they did before the
// accounts had a package of their own.
package accounts
