package accounts_test

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/scorehub/scorehub/tokens"
	"github.com/scorehub/scorehub/tokens/accounts"
)

// Users from an htpasswd file made with `htpasswd -B -C 10`; a third field
// lists groups, and the admin group makes an admin. Other hash formats and
// bcrypt costs below 10 are refused, naming the line.
func ExampleParseHTPasswd() {
	const file = `# scorehub users
alice:$2y$10$IPyhGZhGKsmI2KqAidBU0Ot1Rl.PU.z2M5QdthkvC/bNL1bU9.7B2:admin,analysts
bob:$2y$10$8IT0D4jhrfr.sBGF64Wd8e9BWz93oNxgCNa632vAlGT.fKZrGh2qa
`
	users, err := accounts.ParseHTPasswd(strings.NewReader(file), "users.htpasswd")
	if err != nil {
		panic(err)
	}
	p, err := users.Authenticate(context.Background(), "alice", "wonderland")
	fmt.Printf("%+v %v\n", p, err)
	_, err = users.Authenticate(context.Background(), "bob", "wonderland")
	fmt.Println(errors.Is(err, tokens.ErrBadCredentials))

	_, err = accounts.ParseHTPasswd(strings.NewReader("carol:$apr1$w6D0cJ1e$BnLuWBRV3VtdE1WeX3rUo/\n"), "users.htpasswd")
	fmt.Println(err)
	_, err = accounts.ParseHTPasswd(strings.NewReader("dave:$2y$05$cuL6KU6uffP3XeF4bregDO/RzkE3B/XtS3ADvOnZQ4HM7.0nsvEK6\n"), "users.htpasswd")
	fmt.Println(err)
	// Output:
	// {Subject:alice Admin:true Groups:[admin analysts] CredentialVersion:fXL_0BbpIBfT7h8KL_nvog} <nil>
	// true
	// tokens: users.htpasswd:1: user "carol": password hash is Apache MD5 ($apr1$); only bcrypt is accepted (create it with htpasswd -B -C 10)
	// tokens: users.htpasswd:1: user "dave": bcrypt cost 5 is below 10; hash the password again with htpasswd -B -C 10
}

// Users and API tokens kept by a Book: an admin creates a user and an
// API token for them; the token, sent as "Authorization: apitoken <token>",
// names the user as they are now, until the user's password changes.
func ExampleBook() {
	ctx := context.Background()
	store := accounts.NewMemoryStore() // accounts.OpenFileStore(dir) keeps them across restarts
	defer store.Close()
	book, err := accounts.Open(ctx, accounts.Config{Store: store})
	if err != nil {
		panic(err)
	}
	defer book.Close()

	bob, err := book.CreateUser(ctx, accounts.NewUser{Name: "bob", Password: "a long passphrase", Groups: []string{"analysts"}})
	if err != nil {
		panic(err)
	}
	fmt.Println(bob.Name, bob.Source, bob.Revision)

	tok, secret, err := book.CreateAPIToken(ctx, accounts.NewAPIToken{Name: "nightly batch", Owner: "bob",
		WebAPIGroups: []string{"risk"}})
	if err != nil {
		panic(err)
	}
	fmt.Println(tok.Name, strings.HasPrefix(secret, accounts.APITokenPrefix))

	p, groups, err := book.VerifyAPIToken(ctx, secret)
	fmt.Println(p.Subject, p.Groups, groups, err)

	_, err = book.CreateUser(ctx, accounts.NewUser{Name: "carol", Password: "short"})
	fmt.Println(err)

	password := "another long passphrase"
	if _, err := book.UpdateUser(ctx, "bob", bob.Revision, accounts.UserUpdate{Password: &password}); err != nil {
		panic(err)
	}
	_, _, err = book.VerifyAPIToken(ctx, secret)
	fmt.Println(errors.Is(err, tokens.ErrRevoked))
	// Output:
	// bob api 1
	// nightly batch true
	// bob [analysts] [risk] <nil>
	// tokens: /password: the password has 5 characters; at least 12 are required
	// true
}

// A host checks a password it is configured with by the rules the Book
// applies to every password it sets.
func ExampleCheckNewPassword() {
	for _, p := range []string{"password1234", "123456789012345", "abcabcabcabc", "correct horse battery staple"} {
		fmt.Println(accounts.CheckNewPassword(p, 0))
	}
	// Output:
	// tokens: /password: the password is one of the most common passwords
	// tokens: /password: the password is a run of consecutive characters (digits, the alphabet or a keyboard row)
	// tokens: /password: the password is repetitive: it repeats a shorter part, or uses fewer than 3 different characters
	// <nil>
}
