// An agent on the OpenAI Agents SDK, as its documentation shows one: a
// tool, an agent, run(). Under simbench check:
//
//   simbench check tier3 -- node examples/node/agents-sdk.mjs 4
//
// The SDK reads OPENAI_BASE_URL and OPENAI_API_KEY, which check sets;
// tracing, which would export to OpenAI, is turned off.
import { Agent, OpenAIProvider, Runner, setTracingDisabled, tool } from "@openai/agents";
import OpenAI from "openai";
import { z } from "zod";
import { lookup, sessions } from "./lookup.mjs";

setTracingDisabled(true);

async function converse(session) {
  const client = new OpenAI({ defaultHeaders: { "x-simbench-client": session } });
  const runner = new Runner({ modelProvider: new OpenAIProvider({ openAIClient: client, useResponses: false }) });
  const agent = new Agent({
    name: "researcher",
    instructions: "Look up what the user needs, then answer.",
    model: "gpt-4o-mini",
    tools: [tool({
      name: "lookup",
      description: "Look something up",
      parameters: z.object({ q: z.string() }),
      execute: (args) => lookup(args, session),
    })],
  });
  const result = await runner.run(agent, "Look up what I need for my trip.", { maxTurns: 10 });
  return result.finalOutput;
}

const results = await Promise.allSettled(Array.from({ length: sessions }, (_, i) => converse(`session-${i}`)));
const failed = results.filter((r) => r.status === "rejected");
for (const f of failed) console.error("agents-sdk:", f.reason?.message ?? f.reason);
console.log(`agents-sdk: ${results.length - failed.length} conversations answered, ${failed.length} failed`);
process.exit(failed.length > 0 ? 1 : 0);
