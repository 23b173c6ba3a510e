package fakeapi

import "github.com/simbench/simbench/fakeapi/internal/wire"

// Names the provider shapes (package wire) define, part of the server's
// interface to its clients.
const (
	// TokensHeader overrides the input-token estimate of a request.
	TokensHeader = wire.TokensHeader
	// OutputTokensHeader gives a generic request's output tokens (0 without
	// it or a body's "output_tokens"): the tokens the service generates at
	// its tokens per second and charges against its output-token limit.
	OutputTokensHeader = wire.OutputTokensHeader
	// ClientHeader tells clients sharing one API key apart for early-retry
	// accounting.
	ClientHeader = wire.ClientHeader
	// ThreadsBeta is the anthropic-beta value of the message-threads beta,
	// which the fake service refuses.
	ThreadsBeta = wire.ThreadsBeta
	// RetryInfoType is the @type of the google.rpc.RetryInfo detail in
	// which an error body carries its retry delay
	// (spec.Faults.RetryDelayBody).
	RetryInfoType = wire.RetryInfoType
	// DefaultEmbeddingDimensions is the length of an embedding vector when
	// the request names no dimensions.
	DefaultEmbeddingDimensions = wire.DefaultEmbeddingDimensions
)
