// Drives @aws-sdk/client-bedrock-runtime, unchanged, against Bedrock-style
// services of simbench serve, and prints what it got as one JSON line: an
// answer, a streamed answer (ConverseStream's AWS event stream), a tool
// call, and two requests sent at once past a request limit
// on each service. The SDK reads the ThrottlingException from the 429's
// x-amzn-ErrorType and retries it after its own backoff (a random share of
// 1 s, doubling each attempt), or after Retry-After when the 429 has one
// (up to 5 s past its backoff). It marks each attempt in amz-sdk-request
// ("attempt=2; max=3"), which the server reads to count early retries.
// fakeapi's TestLongNodeSDKBedrock runs it.
//
//   node sdk-bedrock.mjs URL RETRY_AFTER_URL (the services' URLs; the SDK appends /model/...)
import { BedrockRuntimeClient, ConverseCommand, ConverseStreamCommand } from "@aws-sdk/client-bedrock-runtime";
import { NodeHttpHandler } from "@smithy/node-http-handler";

// The client speaks HTTP/2 by default (for its bidirectional streams);
// serve speaks HTTP/1.1 without TLS, so it is given the SDK's own HTTP/1.1
// handler.
const requestHandler = new NodeHttpHandler();

const client = (endpoint) =>
  new BedrockRuntimeClient({
    endpoint,
    region: "us-east-1",
    credentials: { accessKeyId: "bedrock-key", secretAccessKey: "unchecked" },
    maxAttempts: 6,
    requestHandler,
  });
const modelId = "anthropic.claude-3-haiku-20240307-v1:0";
const ask = (text, extra = {}) =>
  new ConverseCommand({ modelId, messages: [{ role: "user", content: [{ text }] }], inferenceConfig: { maxTokens: 5 }, ...extra });
const text = (r) => r.output.message.content.map((b) => b.text ?? "").join("");
const out = {};

const br = client(process.argv[2]);
const pair = await Promise.all([ask("first of two"), ask("second of two")].map((c) => br.send(c)));
out.pair = pair.map(text);

const answer = await br.send(ask("What is the capital of France?"));
out.answer = text(answer);
out.stop = answer.stopReason;
out.usage = answer.usage;

const stream = await br.send(
  new ConverseStreamCommand({ modelId, messages: [{ role: "user", content: [{ text: "Stream it" }] }], inferenceConfig: { maxTokens: 3 } }),
);
out.streamed = "";
for await (const ev of stream.stream) {
  if (ev.contentBlockDelta) out.streamed += ev.contentBlockDelta.delta?.text ?? "";
  if (ev.messageStop) out.streamStop = ev.messageStop.stopReason;
  if (ev.metadata) out.streamUsage = ev.metadata.usage;
}

const call = await br.send(
  ask("Find it", {
    inferenceConfig: { maxTokens: 200 },
    toolConfig: {
      tools: [{ toolSpec: { name: "search", inputSchema: { json: { type: "object", properties: { q: { type: "string" } }, required: ["q"] } } } }],
      toolChoice: { tool: { name: "search" } },
    },
  }),
);
const use = call.output.message.content.find((b) => b.toolUse)?.toolUse;
out.tool = use?.name ?? null;
out.toolArgs = use?.input ?? null;
out.toolStop = call.stopReason;

const ra = client(process.argv[3]);
out.retryAfterPair = (await Promise.all([ask("first of two"), ask("second of two")].map((c) => ra.send(c)))).map(text);

// A 429 the SDK gives up on, to show the error it throws.
const one = new BedrockRuntimeClient({ endpoint: process.argv[3], region: "us-east-1", credentials: { accessKeyId: "k", secretAccessKey: "s" }, maxAttempts: 1, requestHandler });
await Promise.allSettled([one.send(ask("x")), one.send(ask("y"))]).then((rs) => {
  const e = rs.find((r) => r.status === "rejected")?.reason;
  out.thrown = e ? { name: e.name, status: e.$metadata?.httpStatusCode } : null;
});
console.log(JSON.stringify(out));
