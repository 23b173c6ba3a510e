// An agent loop on the Vercel AI SDK: generateText with a tool, stopping
// after at most 10 steps. Under simbench check:
//
//   simbench check tier3 -- node examples/node/vercel-ai.mjs 4
//
// It talks to OPENAI_BASE_URL with OPENAI_API_KEY, which check sets.
import { createOpenAI } from "@ai-sdk/openai";
import { generateText, stepCountIs, tool } from "ai";
import { z } from "zod";
import { lookup, sessions } from "./lookup.mjs";

async function converse(session) {
  const openai = createOpenAI({
    baseURL: process.env.OPENAI_BASE_URL,
    apiKey: process.env.OPENAI_API_KEY,
    headers: { "x-simbench-client": session },
  });
  const result = await generateText({
    model: openai.chat("gpt-4o-mini"),
    prompt: "Look up what I need for my trip.",
    tools: {
      lookup: tool({
        description: "Look something up",
        inputSchema: z.object({ q: z.string() }),
        execute: (args) => lookup(args, session),
      }),
    },
    stopWhen: stepCountIs(10),
  });
  return result.text;
}

const results = await Promise.allSettled(Array.from({ length: sessions }, (_, i) => converse(`session-${i}`)));
const failed = results.filter((r) => r.status === "rejected");
for (const f of failed) console.error("vercel-ai:", f.reason?.message ?? f.reason);
console.log(`vercel-ai: ${results.length - failed.length} conversations answered, ${failed.length} failed`);
process.exit(failed.length > 0 ? 1 : 0);
