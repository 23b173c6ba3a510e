// Drives the openai package's AzureOpenAI client, unchanged, against an
// Azure-style service of simbench serve, and prints what it got as one JSON
// line: an answer, a streamed answer, a tool call, and two requests sent at
// once past a request limit, the second of which the SDK retries after the
// 429's retry-after-ms. fakeapi's TestLongNodeSDKAzure runs it.
//
//   node sdk-azure.mjs ENDPOINT (the service's URL; the SDK appends /openai/deployments/...)
import { AzureOpenAI } from "openai";

const client = new AzureOpenAI({
  endpoint: process.argv[2],
  apiKey: "azure-key",
  apiVersion: "2024-10-21",
  deployment: "gpt-4o",
  maxRetries: 3,
});
const ask = (content, extra = {}) => ({
  model: "gpt-4o",
  messages: [{ role: "user", content }],
  max_tokens: 5,
  ...extra,
});
const out = {};

// Two at once: one is admitted, the other gets a 429 and is retried.
const pair = await Promise.all([ask("first of two"), ask("second of two")].map((p) => client.chat.completions.create(p)));
out.pair = pair.map((r) => r.choices[0].message.content);

const answer = await client.chat.completions.create(ask("What is the capital of France?"));
out.answer = answer.choices[0].message.content;
out.finish = answer.choices[0].finish_reason;

const stream = await client.chat.completions.create(ask("Stream it", { stream: true }));
out.streamed = "";
for await (const chunk of stream) {
  out.streamed += chunk.choices[0]?.delta?.content ?? "";
}

const tools = [{ type: "function", function: { name: "search", parameters: { type: "object", properties: { q: { type: "string" } }, required: ["q"] } } }];
const call = await client.chat.completions.create(
  ask("Find it", { max_tokens: 200, tools, tool_choice: { type: "function", function: { name: "search" } } }),
);
out.tool = call.choices[0].message.tool_calls?.[0]?.function?.name ?? null;
out.toolArgs = call.choices[0].message.tool_calls?.[0]?.function?.arguments ?? null;

console.log(JSON.stringify(out));
