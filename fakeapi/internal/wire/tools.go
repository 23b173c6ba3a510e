package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"regexp"
	"strconv"
	"strings"
)

// ChoiceMode is what a request's tool_choice asks for.
type ChoiceMode uint8

const (
	// ChoiceAuto lets the model choose between tool calls and text
	// ("auto", no tool_choice, or one the fake model does not know).
	ChoiceAuto ChoiceMode = iota
	// ChoiceNone asks for text, no tool call ("none").
	ChoiceNone
	// ChoiceRequired asks for at least one tool call ("required", "any").
	ChoiceRequired
	// ChoiceNamed asks for a call to the tool AgentRequest.Named.
	ChoiceNamed
)

// ToolSpec is one function tool a request offers.
type ToolSpec struct {
	// Name is the tool's function name.
	Name string
	// Schema is the JSON Schema of the tool's arguments, as the request
	// gave it (parameters or input_schema), for the fake model to fill.
	Schema json.RawMessage
}

// AgentRequest is what a request tells the fake model about tools and the
// conversation.
type AgentRequest struct {
	// Tools are the function tools offered, in the request's order.
	Tools []ToolSpec
	// Mode is what tool_choice asks for; Named the tool of ChoiceNamed;
	// Parallel whether several tool calls in one answer are allowed.
	Mode     ChoiceMode
	Named    string
	Parallel bool
	// Conv hashes the conversation's first message (or comes from
	// previous_response_id); Round counts the responses with tool calls the
	// conversation has had.
	Conv  uint64
	Round int
}

// ToolCall is one call the fake model makes.
type ToolCall struct {
	// ID is the call's id (CallID); Name the tool called.
	ID, Name string
	Args     []byte // a JSON object
}

// Reply is what the fake model answers: tool calls, or text when there are
// none.
type Reply struct {
	// Calls are the tool calls, in order; none means a text answer.
	Calls []ToolCall
}

// callIDPattern matches the call ids the server issues: a prefix, "sb", the
// conversation hash in hex, "r" and the round, "c" and the call's index.
var callIDPattern = regexp.MustCompile(`(?:call|toolu|resp)_sb([0-9a-f]{16})r([0-9]{1,9})`)

// CallID is the id of call i of a conversation's round, with prefix "call"
// (OpenAI) or "toolu" (Anthropic). The server reads the round back from the
// ids in the conversation's history, so it needs no state.
func CallID(prefix string, conv uint64, round, i int) string {
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
func decodeAgent(ep Endpoint, b *reqBody) (AgentRequest, error) {
	a := AgentRequest{Parallel: true}
	if len(b.Tools) > 0 && !bytes.Equal(bytes.TrimSpace(b.Tools), []byte("null")) {
		var tools []rawTool
		if err := json.Unmarshal(b.Tools, &tools); err != nil {
			return a, fmt.Errorf("tools is not an array of tools: %v", err)
		}
		for i, t := range tools {
			s := ToolSpec{Name: t.Name, Schema: t.InputSchema}
			switch {
			case t.Function != nil:
				s.Name, s.Schema = t.Function.Name, t.Function.Parameters
			case ep == EpResponses:
				s.Schema = t.Parameters
			}
			// OpenAI's tools of type function take JSON arguments (its
			// "custom" tools take free text); Anthropic's client tools have
			// no type or "custom". Other types are the provider's own tools,
			// run on its side.
			if ep == EpMessages && t.Type != "" && t.Type != "custom" || ep != EpMessages && t.Type != "" && t.Type != "function" {
				continue
			}
			if s.Name == "" {
				return a, fmt.Errorf("tools[%d] has no name", i)
			}
			a.Tools = append(a.Tools, s)
		}
	}
	if err := a.decodeChoice(b.ToolChoice); err != nil {
		return a, err
	}
	if b.ParallelToolCalls != nil && !*b.ParallelToolCalls {
		a.Parallel = false
	}
	if a.Mode == ChoiceNamed && !a.hasTool(a.Named) {
		return a, fmt.Errorf("tool_choice names the tool %q, which is not in tools", a.Named)
	}
	if a.Mode == ChoiceRequired && len(a.Tools) == 0 {
		return a, errors.New("tool_choice requires a tool call but tools is empty")
	}
	if len(a.Tools) == 0 && ep != EpResponses {
		return a, nil // no conversation to follow
	}
	// The call ids the server issued name their conversation and round:
	// those in the request (assistant tool calls, tool results,
	// function_call_output items, previous_response_id) say where the
	// conversation is, so the server keeps no state. Without any, this is
	// the conversation's first request.
	a.Conv = conversationHash(ep, b)
	found := false
	if m := callIDPattern.FindStringSubmatch(b.PreviousResponseID); m != nil {
		// A response id carries the rounds done so far.
		a.Conv, _ = strconv.ParseUint(m[1], 16, 64)
		a.Round, _ = strconv.Atoi(m[2])
		found = true
	}
	for _, field := range []json.RawMessage{b.Messages, b.Input} {
		for _, m := range callIDPattern.FindAllSubmatch(field, -1) {
			conv, _ := strconv.ParseUint(string(m[1]), 16, 64)
			r, _ := strconv.Atoi(string(m[2]))
			if !found {
				a.Conv, found = conv, true
			}
			if conv == a.Conv {
				a.Round = max(a.Round, r+1)
			}
		}
	}
	return a, nil
}

func (a *AgentRequest) hasTool(name string) bool {
	for _, t := range a.Tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

// decodeChoice reads tool_choice in its three dialects: OpenAI's strings
// "none", "auto", "required" and objects {"type":"function","function":
// {"name"}} (chat) or {"type":"function","name"} (Responses); Anthropic's
// {"type":"auto"|"any"|"tool"|"none","name","disable_parallel_tool_use"}.
func (a *AgentRequest) decodeChoice(raw json.RawMessage) error {
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
		a.Parallel = false
	}
	name := o.Name
	if o.Function != nil {
		name = o.Function.Name
	}
	return a.setMode(o.Type, name)
}

func (a *AgentRequest) setMode(typ, name string) error {
	switch typ {
	case "auto", "":
		a.Mode = ChoiceAuto
	case "none":
		a.Mode = ChoiceNone
	case "required", "any":
		a.Mode = ChoiceRequired
	case "function", "tool":
		if name == "" {
			return fmt.Errorf("tool_choice of type %q names no tool", typ)
		}
		a.Mode, a.Named = ChoiceNamed, name
	default:
		// allowed_tools, server tools and the like: let the model choose.
		a.Mode = ChoiceAuto
	}
	return nil
}

// conversationHash hashes the text of a conversation's first user message
// (the Responses input when it is a string; the first message when none is
// the user's), so that every request of one conversation hashes alike,
// however the client spells the message.
func conversationHash(ep Endpoint, b *reqBody) uint64 {
	field := b.Messages
	if ep == EpResponses {
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

// bytesPerToken is how many bytes of text make one token, as the input
// tokens are estimated from the prompt.
const bytesPerToken = 4

// ToolCallTokens is the tokens of a tool-call answer: its calls serialized
// as tool_use blocks, at bytesPerToken.
func ToolCallTokens(calls []ToolCall) int64 {
	var size int
	for _, c := range calls {
		b, _ := json.Marshal(toolUseBlock(c, true)) // plain maps: cannot fail
		size += len(b)
	}
	return int64((size + bytesPerToken - 1) / bytesPerToken)
}
