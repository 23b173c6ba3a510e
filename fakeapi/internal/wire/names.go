package wire

// The names of the fake model's decisions (fakeapi.Kind.String) and limits
// (fakeapi.Limit.String) that the shapes word differently. They are the
// error codes the shapes send, so they are written here, and fakeapi's
// tables of names take them from here.
const (
	// KindOverloaded is an overload's kind: OpenAI's code "overloaded".
	KindOverloaded = "overloaded"
	// KindTooLarge is the kind of a request that can never be admitted.
	KindTooLarge = "too_large"
	// KindQuotaExhausted is a spent credit's kind: OpenAI's type and code
	// "insufficient_quota".
	KindQuotaExhausted = "insufficient_quota"
	// KindContextTooLong is the kind of an input beyond the model's
	// context: OpenAI's code "context_length_exceeded".
	KindContextTooLong = "context_length_exceeded"
	// LimitTPM is the tokens-per-minute limit.
	LimitTPM = "tpm"
	// LimitITPM is the input-tokens-per-minute limit.
	LimitITPM = "itpm"
	// LimitOTPM is the output-tokens-per-minute limit.
	LimitOTPM = "otpm"
	// LimitRPS is the requests-per-second limit, which the Gemini shape
	// names as a quota of its own.
	LimitRPS = "rps"
	// LimitConcurrency is the limit of requests in flight.
	LimitConcurrency = "concurrency"
)
