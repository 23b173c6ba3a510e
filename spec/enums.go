package spec

// Algorithm selects how a rate limit is enforced.
type Algorithm string

// Limiter algorithms, as written in scenario files.
const (
	// TokenBucket refills continuously at limit/window and holds at most
	// the burst. A full bucket admits a burst.
	TokenBucket Algorithm = "token_bucket"
	// FixedWindow counts units in windows aligned to multiples of the
	// window since the epoch; two full windows back to back admit twice the
	// limit around the edge.
	FixedWindow Algorithm = "fixed_window"
	// SlidingWindow keeps an exact log: any window of the given length,
	// (t-window, t], holds at most the limit.
	SlidingWindow Algorithm = "sliding_window"
)

// Algorithms lists the limiter algorithms.
var Algorithms = []Algorithm{TokenBucket, FixedWindow, SlidingWindow}

// HeaderStyle selects which provider's rate-limit headers (and 429 bodies)
// a service sends.
type HeaderStyle string

// Header styles, as written in scenario files.
const (
	// HeadersNone sends no rate-limit headers at all (and no Retry-After).
	HeadersNone HeaderStyle = "none"
	// HeadersOpenAI sends retry-after (whole seconds), retry-after-ms and
	// x-ratelimit-{limit,remaining,reset}-{requests,tokens}, resets as
	// durations such as "6ms" or "1m2s".
	HeadersOpenAI HeaderStyle = "openai"
	// HeadersAnthropic sends retry-after (whole seconds) and
	// anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-{limit,remaining,reset},
	// resets as RFC 3339 times.
	HeadersAnthropic HeaderStyle = "anthropic"
	// HeadersStandard sends only Retry-After, in whole seconds.
	HeadersStandard HeaderStyle = "standard"
)

// HeaderStyles lists the header styles.
var HeaderStyles = []HeaderStyle{HeadersNone, HeadersOpenAI, HeadersAnthropic, HeadersStandard}

// RetryDelayBody selects whether a 429's body carries its retry delay, as
// a google.rpc.RetryInfo in error.details[] with retryDelay "Ns" (the
// delay in seconds, decimals allowed), the way Google APIs send it.
type RetryDelayBody string

// Where a 429 states its retry delay besides the header style's headers.
const (
	// RetryDelayBesides sends the delay in the body and in the header
	// style's Retry-After headers.
	RetryDelayBesides RetryDelayBody = "besides"
	// RetryDelayInstead sends the delay in the body only: no Retry-After
	// or Retry-After-Ms header (the rate-limit headers stay).
	RetryDelayInstead RetryDelayBody = "instead"
)

// RetryDelayBodies lists the values of RetryDelayBody other than "" (headers
// only).
var RetryDelayBodies = []RetryDelayBody{RetryDelayBesides, RetryDelayInstead}

// APIStyle selects the endpoints and body shapes of a served service.
type APIStyle string

// API styles.
const (
	// APIOpenAI answers POST /v1/chat/completions, /v1/responses and
	// /v1/embeddings, and GET /v1/models.
	APIOpenAI APIStyle = "openai"
	// APIAnthropic answers POST /v1/messages and /v1/messages/count_tokens,
	// and GET /v1/models.
	APIAnthropic APIStyle = "anthropic"
	// APIGeneric answers every path as a JSON tool endpoint.
	APIGeneric APIStyle = "generic"
	// APIAzure answers Azure OpenAI's POST
	// /openai/deployments/{deployment}/chat/completions and /embeddings,
	// which require the api-version query parameter.
	APIAzure APIStyle = "azure"
	// APIGemini answers the Gemini API's POST
	// /v1beta/models/{model}:generateContent and :streamGenerateContent,
	// and GET /v1beta/models.
	APIGemini APIStyle = "gemini"
	// APIBedrock answers the Amazon Bedrock runtime's POST
	// /model/{modelId}/converse, naming its errors in x-amzn-ErrorType.
	APIBedrock APIStyle = "bedrock"
)

// APIStyles lists the API styles.
var APIStyles = []APIStyle{APIOpenAI, APIAnthropic, APIGeneric, APIAzure, APIGemini, APIBedrock}

// DefaultHeaders is the header style of a service of API style a that
// names none: its provider's own (Azure OpenAI sends OpenAI's headers;
// the Gemini API only a retry delay, which WithDefaults moves into the
// body), HeadersNone for a generic service and for the Bedrock runtime,
// which sends no rate-limit headers.
func (a APIStyle) DefaultHeaders() HeaderStyle {
	switch a {
	case APIOpenAI, APIAzure:
		return HeadersOpenAI
	case APIAnthropic:
		return HeadersAnthropic
	case APIGemini:
		return HeadersStandard
	}
	return HeadersNone
}

// LieMode makes a service mislead clients about when to retry.
type LieMode string

// Lie modes, as written in scenario files (key lying).
const (
	// LieNone tells the truth (the zero value).
	LieNone LieMode = ""
	// LieShort advertises the true wait times Config.LieFactor.
	LieShort LieMode = "short"
	// LieMissing sends 429s without any retry delay.
	LieMissing LieMode = "missing"
)

// LieModes lists the lie modes that lie.
var LieModes = []LieMode{LieShort, LieMissing}
