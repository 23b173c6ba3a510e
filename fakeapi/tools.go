package fakeapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/simbench/simbench/spec"
	"hash/fnv"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
)

// Defaults of AgentConfig, used when a field is zero (spec's).
const (
	// DefaultAgentCalls is the tool calls per response when AgentConfig.Calls
	// is nil.
	DefaultAgentCalls = spec.DefaultAgentCalls
	// DefaultAgentIterations is the responses with tool calls per
	// conversation when AgentConfig.MaxIterations is 0.
	DefaultAgentIterations = spec.DefaultAgentIterations
)

// AgentConfig makes a provider-style service drive an agent's loop: see
// spec.Agent, its type and its one validator.
type AgentConfig = spec.Agent

// iterations draws how many responses with tool calls a conversation gets.
func iterations(a *AgentConfig, rng *rand.Rand) int {
	most := a.MaxIterations
	if most == 0 {
		most = DefaultAgentIterations
	}
	n := 1
	for n < most && !(rng.Float64() < a.FinishProbability) {
		n++
	}
	return n
}

// calls draws the tool calls of one response.
func calls(a *AgentConfig, rng *rand.Rand) int {
	if a.Calls == nil {
		return DefaultAgentCalls
	}
	return max(a.Calls(rng), 0)
}

// choiceMode is what a request's tool_choice asks for.
type choiceMode uint8

const (
	choiceAuto choiceMode = iota
	choiceNone
	choiceRequired
	choiceNamed
)

// toolSpec is one function tool a request offers.
type toolSpec struct {
	name   string
	schema json.RawMessage
}

// agentRequest is what a request tells the fake model about tools and the
// conversation.
type agentRequest struct {
	tools    []toolSpec
	mode     choiceMode
	named    string // the tool of choiceNamed
	parallel bool
	// conv hashes the conversation's first message (or comes from
	// previous_response_id); round counts the responses with tool calls the
	// conversation has had.
	conv  uint64
	round int
}

// toolCall is one call the fake model makes.
type toolCall struct {
	id, name string
	args     []byte // a JSON object
}

// reply is what the fake model answers: tool calls, or text when there are
// none.
type reply struct {
	calls []toolCall
}

// callIDPattern matches the call ids the server issues: a prefix, "sb", the
// conversation hash in hex, "r" and the round, "c" and the call's index.
var callIDPattern = regexp.MustCompile(`(?:call|toolu|resp)_sb([0-9a-f]{16})r([0-9]{1,9})`)

// callID is the id of call i of a conversation's round, with prefix "call"
// (OpenAI) or "toolu" (Anthropic). The server reads the round back from the
// ids in the conversation's history, so it needs no state.
func callID(prefix string, conv uint64, round, i int) string {
	return fmt.Sprintf("%s_sb%016xr%dc%d", prefix, conv, round, i)
}

// responseID is the id of a Responses API response that ends round rounds
// of conversation conv; previous_response_id brings both back.
func responseID(conv uint64, rounds int, id string) string {
	return fmt.Sprintf("resp_sb%016xr%dn%s", conv, rounds, id)
}

// rawTool is a tool in any of the three request shapes: chat completions
// ({"type":"function","function":{"name","parameters"}}), Responses
// ({"type":"function","name","parameters"}) and Anthropic ({"name",
// "input_schema"}).
type rawTool struct {
	Type     string `json:"type"`
	Name     string `json:"name"`
	Function *struct {
		Name       string          `json:"name"`
		Parameters json.RawMessage `json:"parameters"`
	} `json:"function"`
	Parameters  json.RawMessage `json:"parameters"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// decodeAgent reads the tools, tool choice and conversation of a request
// to chat completions, messages or responses. Tools the fake model cannot
// call (server tools such as web search) are left out.
func decodeAgent(ep endpoint, b *reqBody) (agentRequest, error) {
	a := agentRequest{parallel: true}
	if len(b.Tools) > 0 && !bytes.Equal(bytes.TrimSpace(b.Tools), []byte("null")) {
		var tools []rawTool
		if err := json.Unmarshal(b.Tools, &tools); err != nil {
			return a, fmt.Errorf("tools is not an array of tools: %v", err)
		}
		for i, t := range tools {
			s := toolSpec{name: t.Name, schema: t.InputSchema}
			switch {
			case t.Function != nil:
				s.name, s.schema = t.Function.Name, t.Function.Parameters
			case ep == epResponses:
				s.schema = t.Parameters
			}
			// OpenAI's tools of type function take JSON arguments (its
			// "custom" tools take free text); Anthropic's client tools have
			// no type or "custom". Other types are the provider's own tools,
			// run on its side.
			if ep == epMessages && t.Type != "" && t.Type != "custom" || ep != epMessages && t.Type != "" && t.Type != "function" {
				continue
			}
			if s.name == "" {
				return a, fmt.Errorf("tools[%d] has no name", i)
			}
			a.tools = append(a.tools, s)
		}
	}
	if err := a.decodeChoice(b.ToolChoice); err != nil {
		return a, err
	}
	if b.ParallelToolCalls != nil && !*b.ParallelToolCalls {
		a.parallel = false
	}
	if a.mode == choiceNamed && !a.hasTool(a.named) {
		return a, fmt.Errorf("tool_choice names the tool %q, which is not in tools", a.named)
	}
	if a.mode == choiceRequired && len(a.tools) == 0 {
		return a, errors.New("tool_choice requires a tool call but tools is empty")
	}
	if len(a.tools) == 0 && ep != epResponses {
		return a, nil // no conversation to follow
	}
	// The call ids the server issued name their conversation and round:
	// those in the request (assistant tool calls, tool results,
	// function_call_output items, previous_response_id) say where the
	// conversation is, so the server keeps no state. Without any, this is
	// the conversation's first request.
	a.conv = conversationHash(ep, b)
	found := false
	if m := callIDPattern.FindStringSubmatch(b.PreviousResponseID); m != nil {
		// A response id carries the rounds done so far.
		a.conv, _ = strconv.ParseUint(m[1], 16, 64)
		a.round, _ = strconv.Atoi(m[2])
		found = true
	}
	for _, field := range []json.RawMessage{b.Messages, b.Input} {
		for _, m := range callIDPattern.FindAllSubmatch(field, -1) {
			conv, _ := strconv.ParseUint(string(m[1]), 16, 64)
			r, _ := strconv.Atoi(string(m[2]))
			if !found {
				a.conv, found = conv, true
			}
			if conv == a.conv {
				a.round = max(a.round, r+1)
			}
		}
	}
	return a, nil
}

func (a *agentRequest) hasTool(name string) bool {
	for _, t := range a.tools {
		if t.name == name {
			return true
		}
	}
	return false
}

// decodeChoice reads tool_choice in its three dialects: OpenAI's strings
// "none", "auto", "required" and objects {"type":"function","function":
// {"name"}} (chat) or {"type":"function","name"} (Responses); Anthropic's
// {"type":"auto"|"any"|"tool"|"none","name","disable_parallel_tool_use"}.
func (a *agentRequest) decodeChoice(raw json.RawMessage) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil
	}
	var s string
	if raw[0] == '"' {
		if err := json.Unmarshal(raw, &s); err != nil {
			return fmt.Errorf("tool_choice: %v", err)
		}
		return a.setMode(s, "")
	}
	var o struct {
		Type     string `json:"type"`
		Name     string `json:"name"`
		Function *struct {
			Name string `json:"name"`
		} `json:"function"`
		DisableParallel bool `json:"disable_parallel_tool_use"`
	}
	if err := json.Unmarshal(raw, &o); err != nil {
		return fmt.Errorf("tool_choice is neither a string nor an object: %v", err)
	}
	if o.DisableParallel {
		a.parallel = false
	}
	name := o.Name
	if o.Function != nil {
		name = o.Function.Name
	}
	return a.setMode(o.Type, name)
}

func (a *agentRequest) setMode(typ, name string) error {
	switch typ {
	case "auto", "":
		a.mode = choiceAuto
	case "none":
		a.mode = choiceNone
	case "required", "any":
		a.mode = choiceRequired
	case "function", "tool":
		if name == "" {
			return fmt.Errorf("tool_choice of type %q names no tool", typ)
		}
		a.mode, a.named = choiceNamed, name
	default:
		// allowed_tools, server tools and the like: let the model choose.
		a.mode = choiceAuto
	}
	return nil
}

// conversationHash hashes the text of a conversation's first user message
// (the Responses input when it is a string; the first message when none is
// the user's), so that every request of one conversation hashes alike,
// however the client spells the message.
func conversationHash(ep endpoint, b *reqBody) uint64 {
	field := b.Messages
	if ep == epResponses {
		field = b.Input
	}
	first := bytes.TrimSpace(field)
	var items []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if len(first) > 0 && first[0] == '[' && json.Unmarshal(first, &items) == nil && len(items) > 0 {
		first = items[0].Content
		for _, it := range items {
			if it.Role == "user" {
				first = it.Content
				break
			}
		}
	}
	h := fnv.New64a()
	h.Write([]byte(messageText(first)))
	return h.Sum64()
}

// messageText is the text of a message's content: the string, or the text
// of its parts joined; any other content compacted as JSON.
func messageText(content json.RawMessage) string {
	var s string
	if json.Unmarshal(content, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(content, &parts) == nil {
		var sb strings.Builder
		for _, p := range parts {
			sb.WriteString(p.Text)
		}
		return sb.String()
	}
	var buf bytes.Buffer
	if json.Compact(&buf, content) != nil {
		return string(content)
	}
	return buf.String()
}

// decideCalls is the fake model's answer to a request with tools; seed is the
// service's stream seed. The conversation's iterations come from the stream
// (seed, conv), each round's calls from a stream of the round's own, so the
// answer does not depend on what else the server has seen.
func decideCalls(a *AgentConfig, seed uint64, req *agentRequest, idPrefix string) reply {
	if len(req.tools) == 0 || req.mode == choiceNone {
		return reply{}
	}
	forced := req.mode == choiceRequired || req.mode == choiceNamed
	conv := rand.New(rand.NewPCG(seed, req.conv))
	if req.round >= iterations(a, conv) && !forced {
		return reply{}
	}
	rng := rand.New(rand.NewPCG(seed^uint64(req.round+1)*0x9e3779b97f4a7c15, req.conv))
	n := calls(a, rng)
	if n == 0 && !forced {
		return reply{}
	}
	n = max(n, 1)
	if !req.parallel {
		n = 1
	}
	out := reply{calls: make([]toolCall, n)}
	for i := range out.calls {
		t := req.tools[rng.IntN(len(req.tools))]
		if req.mode == choiceNamed {
			for _, x := range req.tools {
				if x.name == req.named {
					t = x
					break
				}
			}
		}
		out.calls[i] = toolCall{id: callID(idPrefix, req.conv, req.round, i), name: t.name, args: minimalArgs(t.schema)}
	}
	return out
}
