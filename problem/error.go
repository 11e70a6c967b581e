package problem

// Error is an error a client is told about, carrying its whole answer.
//
// Code says what went wrong; Message is one human sentence safe to show
// the client; Pointer is the JSON pointer of the place in the request at
// fault, if any. Fields, when several places are at fault, lists every
// one of them, Pointer then being the first.
//
// Status is the HTTP status; zero means the one scorehub's table gives
// Code, so only an error of a code of the host's own needs to set it (an
// unknown code with no status is answered 500, and logged as a fault).
//
// Challenge, RetryAfter, Allow and AcceptPatch are the headers the answer
// needs: WWW-Authenticate (a 401 without one gets a bare "Bearer", as RFC
// 9110 requires one), Retry-After in whole seconds (sent when positive),
// Allow (405) and Accept-Patch (415 of a PATCH route).
//
// Err is the cause, for the log only, and what [errors.Is] and
// [errors.As] look at next: an error that says more about a sentinel
// wraps it there (see [Error.Detail]). Text, when set, is what Error
// returns, the way the error reads to Go callers and in the log
// ("registry: not found"), which may say more or less than Message. The
// sentinels of a package and the errors that say more about them set it;
// an answer composed for a client leaves it empty, and where an error only
// passes through (a process's, in the scoring handler), only such an
// answer is sent as it is.
//
// An Error is a value: its methods return changed copies, so one may be
// shared, as a sentinel is, by concurrent requests.
type Error struct {
	Code        Code
	Message     string
	Pointer     string
	Fields      []FieldError
	Status      int
	Challenge   string
	RetryAfter  int
	Allow       string
	AcceptPatch string
	Text        string
	Err         error
}

// FieldError is one place in a request at fault: its JSON pointer and a
// phrase saying what is wrong there.
type FieldError struct {
	Pointer string `json:"pointer"`
	Message string `json:"message"`
}

// Error is Text when set, else "code: message (at pointer): cause".
func (e *Error) Error() string {
	if e.Text != "" {
		return e.Text
	}
	s := string(e.Code) + ": " + e.Message
	if e.Pointer != "" {
		s += " (at " + e.Pointer + ")"
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns Err.
func (e *Error) Unwrap() error { return e.Err }

// Detail returns an error that matches e with [errors.Is] and answers as e
// does, but tells the client message instead of e's Message; text is what
// its Error returns. A package says with it which record or field of the
// request one of its sentinels is about.
func (e *Error) Detail(text, message string) *Error {
	c := *e
	c.Text, c.Message, c.Err = text, message, e
	return &c
}

// At returns a copy of e that points at pointer.
func (e *Error) At(pointer string) *Error {
	c := *e
	c.Pointer = pointer
	return &c
}

// Wrap returns a copy of e whose cause is err. The copy of a sentinel does
// not match it with [errors.Is]: a sentinel is wrapped with fmt.Errorf's
// %w, or given a sentence about the case with Detail.
func (e *Error) Wrap(err error) *Error {
	c := *e
	c.Err = err
	return &c
}

// WithChallenge returns a copy of e sent with WWW-Authenticate: challenge.
func (e *Error) WithChallenge(challenge string) *Error {
	c := *e
	c.Challenge = challenge
	return &c
}

// WithRetryAfter returns a copy of e sent with Retry-After: seconds (at
// least 1).
func (e *Error) WithRetryAfter(seconds int) *Error {
	c := *e
	c.RetryAfter = max(seconds, 1)
	return &c
}
