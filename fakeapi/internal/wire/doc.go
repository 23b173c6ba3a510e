// Package wire holds the provider shapes of package fakeapi's server: what
// only HTTP needs. Each API style a service speaks (spec.APIStyle) is one
// Provider in one file (openai.go with responses.go and embeddings.go,
// anthropic.go, generic.go): its routes, the reading of its request bodies
// (DecodeRequest), its answers (OKBody, ModelsBody), its streamed events
// (StreamBody, in groups of server-sent events), its error bodies and
// statuses (ErrorBody, Provider.Status) and how an official SDK finds it.
//
// It decides nothing: the status, the tool calls (Reply) and the length
// of an answer come from fakeapi's model and agent loop, and a shape only
// words them. The names of the decisions the shapes word differently
// (KindOverloaded, LimitTPM, …) are written here, as the error codes they
// are, and fakeapi's names of its kinds and limits take them from here.
package wire
