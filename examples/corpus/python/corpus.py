"""The labelled corpus's runtime in Python: the good runtime of
examples/corpus/main.go on asyncio and httpx (Debian's python3-httpx, no
PyPI), and the same with exactly one defect (--defect NAME; manifest.toml
names each). It sends nothing simbench-specific: a bearer key, JSON bodies
and, on writes, an Idempotency-Key.

The good runtime runs --sessions sessions of --turns turns; each turn looks
4 things up at once, then saves 3 changes to the session's document one at
a time. At most 8 calls are in flight (an asyncio.Semaphore held for the
whole call, its waits included). Each attempt has a 1 s timeout that
cancels its request, closing its connection; a call is tried at most 5
times. After a 429 it waits the Retry-After (retry-after-ms, else
retry-after) plus up to 2 s of jitter; after a timeout, a reset or a 5xx, a
full-jitter backoff from 100 ms; a 4xx other than 429 is not retried.
Writes carry an Idempotency-Key, the same on every attempt of a call. Each
session's first lookup forwards arguments the model cut short (not JSON),
which the service refuses with a 400.

    simbench check examples/corpus/scenario.toml -- /usr/bin/python3 examples/corpus/python/corpus.py --defect fixed-delay
"""

import argparse
import asyncio
import contextlib
import json
import os
import random
import sys
import uuid

import httpx

# The runtimes of the corpus: the good one ("none") and one defect each.
DEFECTS = ["none", "no-cap", "cap-64", "fixed-delay", "ignore-retry-after",
           "timeout-no-abort", "write-no-key", "parallel-writes",
           "retry-non-retryable", "no-timeout"]

# Retry settings of the good runtime, in seconds.
ATTEMPTS = 5
TIMEOUT = 1.0
BACKOFF_BASE = 0.1
JITTER_MAX = 2.0


def positive(v):
    """Parses a positive integer flag."""
    n = int(v)
    if n <= 0:
        raise argparse.ArgumentTypeError(f"{v}: want a positive integer")
    return n


def retry_after(headers):
    """The retry delay an answer's headers give, in seconds: retry-after-ms,
    else retry-after in seconds; -1 when they give none."""
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        try:
            v = float(headers.get(name, ""))
        except ValueError:
            continue
        if v >= 0:
            return v * scale
    return -1.0


class Runtime:
    """One runtime of the corpus: the good one, or it with defect."""

    def __init__(self, defect, lookup, save, key, client):
        self.defect = defect
        self.lookup, self.save = lookup, save
        self.key = key
        self.client = client
        cap = {"no-cap": None, "cap-64": 64}.get(defect, 8)
        self.sem = asyncio.Semaphore(cap) if cap else contextlib.nullcontext()
        self.ok = self.lost = self.sent = 0
        self.abandoned = set()  # attempts given up on that run on

    async def send(self, url, body, key):
        """Posts body to url and returns the status and Retry-After."""
        headers = {"Authorization": f"Bearer {self.key}"}
        if key:
            headers["Idempotency-Key"] = key
        if isinstance(body, str):  # arguments that are not JSON, as they came
            headers["Content-Type"] = "application/json"
            resp = await self.client.post(url, content=body, headers=headers)
        else:
            resp = await self.client.post(url, json=body, headers=headers)
        return resp.status_code, retry_after(resp.headers)

    async def attempt(self, url, body, key):
        """Sends one attempt, cancelled at the timeout (with
        timeout-no-abort, abandoned there: the request runs on; with
        no-timeout, waited on to its end), and returns its status (0: a
        timeout or a reset) and Retry-After (-1: none)."""
        try:
            if self.defect == "no-timeout":
                return await self.send(url, body, key)
            if self.defect != "timeout-no-abort":
                return await asyncio.wait_for(self.send(url, body, key), TIMEOUT)
            task = asyncio.ensure_future(self.send(url, body, key))
            self.abandoned.add(task)
            task.add_done_callback(self.abandoned.discard)
            return await asyncio.wait_for(asyncio.shield(task), TIMEOUT)
        except (asyncio.TimeoutError, httpx.TransportError):
            return 0, -1.0

    def wait(self, status, after, n):
        """How long to wait before the next attempt after attempt n (from 0)
        got status and Retry-After after (-1: none), in seconds."""
        backoff = random.uniform(0, BACKOFF_BASE * 2**n)  # full jitter
        if status != 429 or after < 0:
            return backoff
        if self.defect == "fixed-delay":
            return after
        if self.defect == "ignore-retry-after":
            return random.uniform(0, JITTER_MAX)
        return after + random.uniform(0, JITTER_MAX)

    async def call(self, url, args, key):
        """Makes one tool call: up to ATTEMPTS attempts, holding a slot of
        the cap throughout."""
        async with self.sem:
            for n in range(ATTEMPTS):
                self.sent += 1
                status, after = await self.attempt(url, args, key)
                if 200 <= status < 300:
                    self.ok += 1
                    return
                refused = 400 <= status < 500 and status != 429 and self.defect != "retry-non-retryable"
                if refused or n == ATTEMPTS - 1:
                    break
                await asyncio.sleep(self.wait(status, after, n))
            self.lost += 1

    async def session(self, s, turns):
        """Runs one session's turns: 4 lookups at once, then 3 saves of its
        document, one at a time (at once with parallel-writes)."""
        for t in range(turns):
            lookups = [{"session": s, "turn": t, "query": c} for c in range(4)]
            if t == 0:  # the model's arguments, cut short
                lookups[0] = json.dumps(lookups[0])[:-3]
            await asyncio.gather(*(self.call(self.lookup, args, "") for args in lookups))
            saves = []
            for c in range(3):
                key = "" if self.defect == "write-no-key" else f"s{s}-t{t}-c{c}-{uuid.uuid4()}"
                save = self.call(self.save, {"resource": f"doc-{s}", "turn": t, "change": c}, key)
                if self.defect == "parallel-writes":
                    saves.append(save)
                else:
                    await save
            await asyncio.gather(*saves)


async def main():
    p = argparse.ArgumentParser(description="the labelled corpus's runtime on asyncio and httpx")
    p.add_argument("-defect", "--defect", default="none", choices=DEFECTS, help="the one defect")
    p.add_argument("-sessions", "--sessions", type=positive, default=8, help="sessions running at once")
    p.add_argument("-turns", "--turns", type=positive, default=2, help="turns per session")
    a = p.parse_args()
    lookup = os.environ.get("SIMBENCH_TOOL_URL_LOOKUP")
    save = os.environ.get("SIMBENCH_TOOL_URL_SAVE")
    if not lookup or not save:
        sys.exit("corpus: SIMBENCH_TOOL_URL_LOOKUP and SIMBENCH_TOOL_URL_SAVE are not set; run me under simbench check")
    # No timeout of httpx's own: the runtime times each attempt out.
    async with httpx.AsyncClient(timeout=None, limits=httpx.Limits(max_connections=None)) as client:
        rt = Runtime(a.defect, lookup, save, os.environ.get("OPENAI_API_KEY", ""), client)
        await asyncio.gather(*(rt.session(s, a.turns) for s in range(a.sessions)))
        print(f"corpus {a.defect}: {rt.ok} calls answered, {rt.lost} lost, {rt.sent} attempts", flush=True)
        for task in rt.abandoned:  # exit without the attempts given up on
            task.cancel()


if __name__ == "__main__":
    asyncio.run(main())
