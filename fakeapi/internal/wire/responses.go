package wire

import (
	"strconv"
	"strings"
	"time"

	"github.com/simbench/simbench/sched/satmath"
)

// This file renders the OpenAI Responses API (POST /v1/responses): the
// response object, and the events of a streamed response in the order the
// API sends them.

// responseRounds is the count of responses with tool calls that the
// conversation has had once this one is sent; the response id carries it,
// so that previous_response_id continues the conversation.
func responseRounds(dec *Decoded) int {
	if len(dec.Reply.Calls) > 0 {
		return dec.Agent.Round + 1
	}
	return dec.Agent.Round
}

// responseOutput is the output array of a response: one assistant message
// with the answer, or one function_call item per tool call. done renders
// the items as completed, else as they start in a stream (empty).
func responseOutput(id string, out int64, dec *Decoded, done bool) []any {
	calls := dec.Reply.Calls
	if len(calls) == 0 {
		return []any{responseMessage(id, strings.Join(Answer(out), ""), done, dec.Truncated)}
	}
	items := make([]any, len(calls))
	for i, c := range calls {
		items[i] = functionCallItem(id, i, c, done)
	}
	return items
}

// responseMessage is the assistant message item of a response with text:
// in progress and empty unless done; done, "incomplete" when cut at
// max_output_tokens, else "completed".
func responseMessage(id, text string, done, cut bool) map[string]any {
	status, content := "in_progress", []any{}
	if done {
		status, content = "completed", []any{outputText(text)}
		if cut {
			status = "incomplete"
		}
	}
	return map[string]any{"id": "msg_" + id, "type": "message", "status": status, "role": "assistant", "content": content}
}

func outputText(text string) map[string]any {
	return map[string]any{"type": "output_text", "text": text, "annotations": []any{}, "logprobs": []any{}}
}

func functionCallItem(id string, i int, c ToolCall, done bool) map[string]any {
	status, args := "in_progress", ""
	if done {
		status, args = "completed", string(c.Args)
	}
	return map[string]any{"id": "fc_" + id + "_" + strconv.Itoa(i), "type": "function_call", "status": status,
		"call_id": c.ID, "name": c.Name, "arguments": args}
}

// responseStatus is the status of a finished response: "incomplete" when
// its text stopped at max_output_tokens, else "completed".
func responseStatus(dec *Decoded) string {
	if dec.Truncated {
		return "incomplete"
	}
	return "completed"
}

// responseObject is the Response the API returns (and sends in
// response.created, response.in_progress and response.completed or
// response.incomplete); usage is sent only once finished, and an
// incomplete response says why in incomplete_details
// ({"reason":"max_output_tokens"}).
func responseObject(id, model string, created time.Time, status string, output []any, in, out int64, dec *Decoded) map[string]any {
	r := map[string]any{
		"id": responseID(dec.Agent.Conv, responseRounds(dec), id), "object": "response", "created_at": created.Unix(),
		"status": status, "model": model, "output": output,
		"parallel_tool_calls": dec.Agent.Parallel, "tool_choice": "auto", "tools": []any{},
		"error": nil, "incomplete_details": nil, "instructions": nil, "metadata": map[string]any{},
		"temperature": 1, "top_p": 1, "truncation": "disabled",
		"text":  map[string]any{"format": map[string]any{"type": "text"}},
		"usage": nil,
	}
	if status == "incomplete" {
		r["incomplete_details"] = map[string]any{"reason": "max_output_tokens"}
	}
	if status == "completed" || status == "incomplete" {
		r["usage"] = map[string]any{
			"input_tokens": in, "input_tokens_details": map[string]any{"cached_tokens": 0},
			"output_tokens": out, "output_tokens_details": map[string]any{"reasoning_tokens": 0},
			"total_tokens": satmath.Add(in, out),
		}
	}
	return r
}

// responseEvents fills groups (one per answer piece, or per tool call) with
// a streamed response: response.created and response.in_progress; for a
// text answer, the message's output_item.added, content_part.added,
// output_text.delta per piece, output_text.done, content_part.done and
// output_item.done; for tool calls, per call output_item.added,
// function_call_arguments.delta and .done, and output_item.done; then
// response.completed with usage. Every event carries a sequence_number.
func responseEvents(groups *sseGroups, pieces answerPieces, id, model string, created time.Time, in, out int64, dec *Decoded) {
	seq := 0
	event := func(g int, typ string, v map[string]any) {
		v["type"], v["sequence_number"] = typ, seq
		seq++
		groups.event(g, typ, v)
	}
	last := groups.n - 1
	event(0, "response.created", map[string]any{"response": responseObject(id, model, created, "in_progress", []any{}, in, out, dec)})
	event(0, "response.in_progress", map[string]any{"response": responseObject(id, model, created, "in_progress", []any{}, in, out, dec)})
	if calls := dec.Reply.Calls; len(calls) > 0 {
		for i, c := range calls {
			itemID := "fc_" + id + "_" + strconv.Itoa(i)
			event(i, "response.output_item.added", map[string]any{"output_index": i, "item": functionCallItem(id, i, c, false)})
			for _, p := range argPieces(c.Args) {
				event(i, "response.function_call_arguments.delta", map[string]any{"item_id": itemID, "output_index": i, "delta": p})
			}
			event(i, "response.function_call_arguments.done", map[string]any{"item_id": itemID, "output_index": i, "name": c.Name, "arguments": string(c.Args)})
			event(i, "response.output_item.done", map[string]any{"output_index": i, "item": functionCallItem(id, i, c, true)})
		}
	} else {
		itemID := "msg_" + id
		part := func() map[string]any {
			return map[string]any{"item_id": itemID, "output_index": 0, "content_index": 0}
		}
		event(0, "response.output_item.added", map[string]any{"output_index": 0, "item": responseMessage(id, "", false, false)})
		p := part()
		p["part"] = outputText("")
		event(0, "response.content_part.added", p)
		for i, piece := range pieces.all() {
			p := part()
			p["delta"], p["logprobs"] = piece, []any{}
			event(i, "response.output_text.delta", p)
		}
		text := pieces.text() // once the deltas are sent: a waiting stream holds no copy
		p = part()
		p["text"], p["logprobs"] = text, []any{}
		event(last, "response.output_text.done", p)
		p = part()
		p["part"] = outputText(text)
		event(last, "response.content_part.done", p)
		event(last, "response.output_item.done", map[string]any{"output_index": 0, "item": responseMessage(id, text, true, dec.Truncated)})
	}
	status := responseStatus(dec)
	event(last, "response."+status, map[string]any{"response": responseObject(id, model, created, status, responseOutput(id, out, dec, true), in, out, dec)})
}
