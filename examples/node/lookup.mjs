// The tool both examples give their model: POST the call's arguments to
// the URL simbench check puts in SIMBENCH_TOOL_URL_LOOKUP.
export async function lookup(args, session) {
  const url = process.env.SIMBENCH_TOOL_URL_LOOKUP;
  if (!url) throw new Error("SIMBENCH_TOOL_URL_LOOKUP is not set; run me under simbench check");
  const res = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      authorization: `Bearer ${process.env.OPENAI_API_KEY}`,
      "x-simbench-client": session,
    },
    body: JSON.stringify(args),
  });
  return res.ok ? await res.text() : `error: status ${res.status}`;
}

// sessions is the number of conversations to run at once: the first
// command-line argument, 4 without one.
export const sessions = Number(process.argv[2] ?? 4);
