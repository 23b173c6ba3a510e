package wire

import (
	"net/http"
	"net/url"
	"strconv"
)

// The Azure OpenAI shape (spec.APIAzure): OpenAI's requests, answers and
// streams (openai.go) at a deployment's paths, POST
// /openai/deployments/{deployment}/chat/completions and /embeddings, GET
// /openai/models, each with the api-version query parameter, which it
// requires (400 MissingApiVersionParameter without it). Its own errors
// (401, 404 and a rate limit's 429) are {"error":{"code":"429","message"}},
// the status as a string; the others are OpenAI's, which Azure passes on.
// Its headers are OpenAI's (spec.APIStyle.DefaultHeaders): retry-after,
// retry-after-ms and x-ratelimit-*.

// azureShape is the Azure OpenAI provider shape: the OpenAI shape but for
// its routes, errors and SDK.
type azureShape struct{ openAIShape }

// azureRoutes are the Azure OpenAI shape's own paths, in the order a 404
// names them.
var azureRoutes = []providerRoute{
	{"/openai/deployments/{deployment}/chat/completions", EpChat},
	{"/openai/deployments/{deployment}/embeddings", EpEmbeddings},
	{"/openai/models", EpModels},
}

func (azureShape) routes() []providerRoute { return azureRoutes }

// errorBody is Azure's own error for a 401, a 404 and a rate limit's 429,
// {"error":{"code":"429","message":…}}, and OpenAI's otherwise (a spent
// credit's 429 included).
func (azureShape) errorBody(status int, message string, extra map[string]any) (v any, e map[string]any) {
	kind, _ := extra["kind"].(string)
	switch {
	case status == http.StatusUnauthorized, status == http.StatusNotFound,
		status == http.StatusTooManyRequests && kind != KindQuotaExhausted:
		e = map[string]any{"code": strconv.Itoa(status), "message": message}
		return map[string]any{"error": e}, e
	}
	return openAIShape{}.errorBody(status, message, extra)
}

// AzureAPIVersion is the api-version the shape's smallest request names,
// a generally available version of Azure OpenAI's data-plane API. The
// shape takes any non-empty version.
const AzureAPIVersion = "2024-10-21"

// checkQuery refuses a request without api-version, as Azure does.
func (azureShape) checkQuery(_ Endpoint, q url.Values) (status int, body any) {
	if q.Get("api-version") != "" {
		return 0, nil
	}
	return http.StatusBadRequest, map[string]any{"error": map[string]any{
		"code":    "MissingApiVersionParameter",
		"message": "The api-version query parameter (?api-version=) is required for all requests.",
	}}
}

// SmallestRequest is a one-message request for 16 tokens to deployment
// simbench-gateway.
func (azureShape) SmallestRequest() (path, body string) {
	return "/openai/deployments/simbench-gateway/chat/completions?api-version=" + AzureAPIVersion,
		`{"messages":[{"role":"user","content":"hi"}],"max_tokens":16}`
}

// SDK: the AzureOpenAI client takes the URL itself as its endpoint and
// appends /openai/deployments/…; it reads AZURE_OPENAI_ENDPOINT, not a
// base URL, so no prefix.
func (azureShape) SDK(url string) (base, env string) { return url, "" }
