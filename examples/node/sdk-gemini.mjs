// Drives the @google/genai client, unchanged, against a Gemini-style service
// of simbench serve, and prints what it got as one JSON line: an answer, a
// streamed answer, a function call, two requests sent at once past a
// request limit, and, on a second service, a 429 asking for about a
// minute. The SDK does not read the 429's RetryInfo: it retries after its
// own backoff (retryOptions: here at least 1.5 s, more than the 1 s the
// first service asks; its default of at least 1 s would meet that delay
// exactly), so the second service sees its retry come back early.
// fakeapi's TestLongNodeSDKGemini runs it.
//
//   node sdk-gemini.mjs BASE_URL SLOW_BASE_URL (the services' URLs; the SDK appends /v1beta/models/...)
import { GoogleGenAI } from "@google/genai";

// X-Simbench-Client tells the server each request is a client's own, so
// that it counts a retry that comes back before its delay (the SDK marks
// none).
const client = (baseUrl, attempts) =>
  new GoogleGenAI({
    apiKey: "gemini-key",
    httpOptions: { baseUrl, headers: { "X-Simbench-Client": "genai" }, retryOptions: { attempts, initialDelay: 1.5 } },
  });
const ai = client(process.argv[2], 3);
const model = "gemini-2.5-flash";
const ask = (text, config = {}) => ({ model, contents: text, config: { maxOutputTokens: 5, ...config } });
const out = {};

const pair = await Promise.all([ask("first of two"), ask("second of two")].map((p) => ai.models.generateContent(p)));
out.pair = pair.map((r) => r.text);

const answer = await ai.models.generateContent(ask("What is the capital of France?"));
out.answer = answer.text;
out.finish = answer.candidates[0].finishReason;
out.usage = answer.usageMetadata;

out.streamed = "";
for await (const chunk of await ai.models.generateContentStream(ask("Stream it"))) {
  out.streamed += chunk.text ?? "";
}

const call = await ai.models.generateContent(
  ask("Find it", {
    maxOutputTokens: 200,
    tools: [{ functionDeclarations: [{ name: "search", parameters: { type: "OBJECT", properties: { q: { type: "STRING" } }, required: ["q"] } }] }],
    toolConfig: { functionCallingConfig: { mode: "ANY", allowedFunctionNames: ["search"] } },
  }),
);
out.tool = call.functionCalls?.[0]?.name ?? null;
out.toolArgs = call.functionCalls?.[0]?.args ?? null;

// One request a minute, with two attempts: the first is admitted; the
// second's 429 asks for the rest of the minute, and the SDK's one retry,
// after its backoff of 1.5 to 3 s, gets a 429 again, which it throws.
const slow = client(process.argv[3], 2);
await slow.models.generateContent(ask("one a minute"));
try {
  await slow.models.generateContent(ask("again"));
  out.slowError = null;
} catch (e) {
  out.slowError = e.status ?? String(e);
}
console.log(JSON.stringify(out));
