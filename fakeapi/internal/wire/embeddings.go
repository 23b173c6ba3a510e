package wire

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
)

// DefaultEmbeddingDimensions is the length of an embedding vector when the
// request does not ask for dimensions (that of OpenAI's small model).
const DefaultEmbeddingDimensions = 1536

// maxEmbeddingDimensions bounds the dimensions a request may ask for.
const maxEmbeddingDimensions = 1 << 14

// embedRequest is what an embeddings request asks for: one vector per
// input, each of dims float32s, as JSON numbers or base64.
type embedRequest struct {
	inputs []json.RawMessage
	dims   int
	base64 bool
}

// decodeEmbed reads an embeddings request's input (a string, an array of
// strings, an array of token ids, or an array of such arrays),
// encoding_format ("float", "base64" or absent) and dimensions.
func decodeEmbed(input json.RawMessage, format string, dims *int) (embedRequest, error) {
	e := embedRequest{dims: DefaultEmbeddingDimensions}
	switch format {
	case "", "float":
	case "base64":
		e.base64 = true
	default:
		return e, fmt.Errorf("encoding_format %q: want \"float\" or \"base64\"", format)
	}
	if dims != nil {
		if *dims < 1 || *dims > maxEmbeddingDimensions {
			return e, fmt.Errorf("dimensions %d: want 1 to %d", *dims, maxEmbeddingDimensions)
		}
		e.dims = *dims
	}
	var one string
	if json.Unmarshal(input, &one) == nil {
		e.inputs = []json.RawMessage{input}
		return e, nil
	}
	var many []json.RawMessage
	if err := json.Unmarshal(input, &many); err != nil {
		return e, errors.New("input must be a string, an array of strings, or an array of token arrays")
	}
	if len(many) == 0 {
		return e, errors.New("input must not be empty")
	}
	var n float64
	if json.Unmarshal(many[0], &n) == nil {
		e.inputs = []json.RawMessage{input} // one array of token ids
		return e, nil
	}
	e.inputs = many
	return e, nil
}

// data renders the vectors: entry i embeds input i, a unit vector drawn
// from a generator seeded by the input's text, so equal inputs get equal
// vectors. Base64 vectors are the float32s in little-endian order.
func (e *embedRequest) data() []any {
	out := make([]any, len(e.inputs))
	buf := make([]byte, 4*e.dims)
	for i, in := range e.inputs {
		h := fnv.New64a()
		h.Write(in)
		rng := rand.New(rand.NewPCG(h.Sum64(), uint64(e.dims)))
		v := make([]float32, e.dims)
		var norm float64
		for j := range v {
			x := rng.NormFloat64()
			v[j] = float32(x)
			norm += x * x
		}
		norm = math.Sqrt(norm)
		for j := range v {
			v[j] = float32(float64(v[j]) / norm)
		}
		var emb any = v
		if e.base64 {
			for j, x := range v {
				binary.LittleEndian.PutUint32(buf[4*j:], math.Float32bits(x))
			}
			emb = base64.StdEncoding.EncodeToString(buf)
		}
		out[i] = map[string]any{"object": "embedding", "index": i, "embedding": emb}
	}
	return out
}
