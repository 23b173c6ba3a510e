// An Express gateway that limits each API key (its Authorization header)
// with express-rate-limit and forwards every request to an upstream: the
// second example of a gateway simbench check --gateway grades
// (cmd_check_gateway_test.go). Each process keeps its own counts with the
// memory store, or shares them through Redis with rate-limit-redis.
//
//   node gateway.mjs PORT UPSTREAM LIMIT WINDOW_MS memory
//   node gateway.mjs PORT UPSTREAM LIMIT WINDOW_MS redis redis://127.0.0.1:6379
//
// LIMIT requests per key are let through per window of WINDOW_MS; the rest
// are answered 429 with the headers express-rate-limit sets (RateLimit and
// Retry-After). The upstream's answers, 429s and their Retry-After
// included, go back to the client as they came.
import express from "express";
import { rateLimit } from "express-rate-limit";
import { RedisStore } from "rate-limit-redis";
import { createClient } from "redis";

const [port, upstream, limit, windowMs, storeName, redisURL] = process.argv.slice(2);
if (!port || !upstream || !limit || !windowMs || !["memory", "redis"].includes(storeName)) {
  console.error("usage: node gateway.mjs PORT UPSTREAM LIMIT WINDOW_MS memory|redis [REDIS_URL]");
  process.exit(2);
}

let store; // undefined: express-rate-limit's memory store
if (storeName === "redis") {
  const client = createClient({ url: redisURL });
  await client.connect();
  store = new RedisStore({ sendCommand: (...args) => client.sendCommand(args), prefix: "simbench-gateway:" });
}

const app = express();
app.use(
  rateLimit({
    windowMs: Number(windowMs),
    limit: Number(limit),
    keyGenerator: (req) => req.headers.authorization ?? "anonymous",
    standardHeaders: "draft-8",
    legacyHeaders: true,
    store,
  }),
);
app.use(express.raw({ type: "*/*", limit: "1mb" }));

// Headers that belong to one hop, not passed on.
const hop = new Set(["connection", "keep-alive", "transfer-encoding", "content-length", "host"]);

app.all("/{*path}", async (req, res) => {
  const headers = {};
  for (const [k, v] of Object.entries(req.headers)) {
    if (!hop.has(k)) headers[k] = v;
  }
  try {
    const up = await fetch(upstream + req.originalUrl, {
      method: req.method,
      headers,
      body: ["GET", "HEAD"].includes(req.method) ? undefined : req.body,
    });
    res.status(up.status);
    up.headers.forEach((v, k) => {
      if (!hop.has(k) && k !== "content-encoding") res.setHeader(k, v);
    });
    res.send(Buffer.from(await up.arrayBuffer()));
  } catch (err) {
    res.status(502).json({ error: String(err) });
  }
});

app.listen(Number(port), "127.0.0.1", () => console.log(`gateway listening on 127.0.0.1:${port}`));
