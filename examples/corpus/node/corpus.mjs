// The labelled corpus's runtime in Node: the good runtime of
// examples/corpus/main.go on the official openai SDK (its client posts
// each attempt, with its retries off: the runtime makes its own), and the
// same with exactly one defect (--defect NAME; manifest.toml names each).
// It sends nothing simbench-specific: a bearer key, JSON bodies and, on
// writes, an Idempotency-Key.
//
// The good runtime runs --sessions sessions of --turns turns; each turn
// looks 4 things up at once, then saves 3 changes to the session's
// document one at a time. At most 8 calls are in flight (a semaphore held
// for the whole call, its waits included). Each attempt has a 1 s timeout
// that aborts its request (an AbortController); a call is tried at most 5
// times. After a 429 it waits the Retry-After (retry-after-ms, else
// retry-after) plus up to 2 s of jitter; after a timeout, a reset or a
// 5xx, a full-jitter backoff from 100 ms; a 4xx other than 429 is not
// retried. Writes carry an Idempotency-Key, the same on every attempt of a
// call. Each session's first lookup forwards arguments the model cut short
// (not JSON; the SDK posts a string as it is), which the service refuses
// with a 400.
//
//	simbench check examples/corpus/scenario.toml -- node examples/corpus/node/corpus.mjs --defect fixed-delay
//
// The SDK comes from examples/node's packages (npm ci --prefix
// examples/node).
import { createRequire } from "node:module";
import { randomUUID } from "node:crypto";

const require = createRequire(new URL("../../node/package.json", import.meta.url));
const { default: OpenAI, APIError, APIConnectionTimeoutError } = require("openai");

// defects are the runtimes of the corpus: the good one ("none") and one
// defect each.
const defects = ["none", "no-cap", "cap-64", "fixed-delay", "ignore-retry-after", "timeout-no-abort", "write-no-key", "parallel-writes",
  "retry-non-retryable", "no-timeout"];

// Retry settings of the good runtime, in milliseconds.
const attempts = 5;
const timeoutMs = 1000;
const backoffBaseMs = 100;
const jitterMaxMs = 2000;

// flags reads --defect, --sessions and --turns (or one dash) from argv.
function flags(argv) {
  const f = { defect: "none", sessions: 8, turns: 2 };
  for (let i = 0; i < argv.length; i++) {
    const name = argv[i].replace(/^--?/, "");
    if (!(name in f) || i + 1 >= argv.length) usage(`unknown or incomplete flag ${argv[i]}`);
    const v = argv[++i];
    f[name] = name === "defect" ? v : Number(v);
    if (name !== "defect" && !(Number.isInteger(f[name]) && f[name] > 0)) usage(`--${name} ${v}: want a positive integer`);
  }
  if (!defects.includes(f.defect)) usage(`unknown --defect ${JSON.stringify(f.defect)}; one of ${defects.join(", ")}`);
  return f;
}

function usage(msg) {
  console.error(`corpus: ${msg}`);
  process.exit(2);
}

// semaphore returns acquire(), which resolves to a release function once
// one of n slots is free (n Infinity: no cap).
function semaphore(n) {
  let free = n;
  const waiting = [];
  const release = () => {
    const next = waiting.shift();
    if (next) next(release);
    else free++;
  };
  return () => new Promise((resolve) => {
    if (free > 0) {
      free--;
      resolve(release);
    } else waiting.push(resolve);
  });
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const rand = (ms) => Math.random() * ms;

// retryAfterMs reads the retry delay of an answer's headers:
// retry-after-ms, else retry-after in seconds; -1 when they give none.
function retryAfterMs(headers) {
  const ms = parseFloat(headers?.get("retry-after-ms") ?? "");
  if (ms >= 0) return ms;
  const s = parseFloat(headers?.get("retry-after") ?? "");
  if (s >= 0) return s * 1000;
  return -1;
}

const f = flags(process.argv.slice(2));
const lookupURL = process.env.SIMBENCH_TOOL_URL_LOOKUP;
const saveURL = process.env.SIMBENCH_TOOL_URL_SAVE;
if (!lookupURL || !saveURL) usage("SIMBENCH_TOOL_URL_LOOKUP and SIMBENCH_TOOL_URL_SAVE are not set; run me under simbench check");

// The client posts one attempt: no retries of its own; the timeout is the
// runtime's (timeout-no-abort sets none and gives up on its own).
const client = new OpenAI({ apiKey: process.env.OPENAI_API_KEY ?? "none", maxRetries: 0 });
const acquire = semaphore(f.defect === "no-cap" ? Infinity : f.defect === "cap-64" ? 64 : 8);
const counts = { ok: 0, lost: 0, sent: 0 };

// attempt sends one attempt and returns its status (0: a timeout or a
// reset) and Retry-After in ms (-1: none). The SDK aborts the request at
// the timeout; with timeout-no-abort the attempt is given up on there and
// its request runs on; with no-timeout it is waited on to its end.
async function attempt(url, body, key) {
  const headers = key ? { "Idempotency-Key": key } : {};
  const abort = f.defect !== "timeout-no-abort";
  const timeout = abort && f.defect !== "no-timeout" ? timeoutMs : 60_000;
  const post = client
    .post(url, { body, headers, maxRetries: 0, timeout })
    .asResponse()
    .then(async (res) => {
      await res.arrayBuffer();
      return { status: res.status, after: retryAfterMs(res.headers) };
    })
    .catch((err) => {
      if (err instanceof APIError && err.status) return { status: err.status, after: retryAfterMs(err.headers) };
      return { status: 0, after: -1, timedOut: err instanceof APIConnectionTimeoutError };
    });
  if (abort) return post;
  let timer;
  const giveUp = new Promise((resolve) => { timer = setTimeout(() => resolve({ status: 0, after: -1 }), timeoutMs); });
  try {
    return await Promise.race([post, giveUp]);
  } finally {
    clearTimeout(timer);
  }
}

// wait is how long to wait before the next attempt after attempt n (from
// 0) got status and Retry-After after (-1: none), in ms.
function wait(status, after, n) {
  const backoff = rand(backoffBaseMs * 2 ** n); // full jitter
  if (status !== 429 || after < 0) return backoff;
  if (f.defect === "fixed-delay") return after;
  if (f.defect === "ignore-retry-after") return rand(jitterMaxMs);
  return after + rand(jitterMaxMs);
}

// call makes one tool call: up to attempts attempts, holding a slot of
// the cap throughout.
async function call(url, args, key) {
  const release = await acquire();
  try {
    for (let n = 0; n < attempts; n++) {
      counts.sent++;
      const { status, after } = await attempt(url, args, key);
      if (status >= 200 && status < 300) {
        counts.ok++;
        return;
      }
      const refused = status >= 400 && status < 500 && status !== 429 && f.defect !== "retry-non-retryable";
      if (refused || n === attempts - 1) break;
      await sleep(wait(status, after, n));
    }
    counts.lost++;
  } finally {
    release();
  }
}

// session runs one session's turns: 4 lookups at once, then 3 saves of
// its document, one at a time (at once with parallel-writes).
async function session(s) {
  for (let t = 0; t < f.turns; t++) {
    const lookups = [0, 1, 2, 3].map((c) => ({ session: s, turn: t, query: c }));
    if (t === 0) lookups[0] = JSON.stringify(lookups[0]).slice(0, -3); // the model's arguments, cut short
    await Promise.all(lookups.map((args) => call(lookupURL, args, "")));
    const saves = [];
    for (let c = 0; c < 3; c++) {
      const key = f.defect === "write-no-key" ? "" : `s${s}-t${t}-c${c}-${randomUUID()}`;
      const save = call(saveURL, { resource: `doc-${s}`, turn: t, change: c }, key);
      if (f.defect === "parallel-writes") saves.push(save);
      else await save;
    }
    await Promise.all(saves);
  }
}

process.on("SIGINT", () => process.exit(130));
await Promise.all(Array.from({ length: f.sessions }, (_, s) => session(s)));
console.log(`corpus ${f.defect}: ${counts.ok} calls answered, ${counts.lost} lost, ${counts.sent} attempts`);
// Attempts given up on without an abort may still run: exit without them.
process.exit(0);
