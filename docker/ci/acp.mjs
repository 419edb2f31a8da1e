// The calls the container checks make against a running server, as a user's client would:
//   node acp.mjs ready URL                     /readyz answers 200
//   node acp.mjs ui URL                        /ui/ serves the inspector page
//   node acp.mjs run URL AGENT TEXT            a stateless run, waited for, ends in success
//   node acp.mjs thread-run URL AGENT TEXT     a run on a new thread, waited for; prints "THREAD RUN"
//   node acp.mjs start-run URL AGENT TEXT      a run on a new thread, left running; prints "THREAD RUN"
//   node acp.mjs check-run URL THREAD RUN TEXT the run is stored as a success whose output holds TEXT
//   node acp.mjs check-shut-down URL THREAD RUN the run is stored as ended by the server's shutdown
// Each fails (exit 1) with a line saying what was wrong.

const [command, base, ...args] = process.argv.slice(2);

function fail(message) {
  process.stderr.write(`acp.mjs ${command}: ${message}\n`);
  process.exit(1);
}

async function call(method, path, body) {
  const response = await fetch(base + path, {
    method,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  }).catch((err) => fail(`${method} ${path}: ${err.cause?.message ?? err.message}`));
  const text = await response.text();
  if (!response.ok) fail(`${method} ${path}: ${response.status} ${text.slice(0, 300)}`);
  return text;
}

const json = async (method, path, body) => JSON.parse(await call(method, path, body));

async function agentId(name) {
  const found = await json("POST", "/agents/search", { name });
  if (found.length !== 1) fail(`expected one agent named ${name}, found ${found.length}`);
  return found[0].agent_id;
}

const input = (text) => ({ messages: [{ role: "user", content: text }] });

/** A waited run must have succeeded, and its output must hold `text` when one is given. */
function expectSuccess(result, text) {
  const { run, output } = result;
  if (run?.status !== "success")
    fail(`run ${run?.run_id} is ${run?.status}: ${JSON.stringify(output)}`);
  if (text !== undefined && !JSON.stringify(output).includes(text)) {
    fail(`run ${run.run_id} output lacks ${JSON.stringify(text)}: ${JSON.stringify(output)}`);
  }
}

async function newThreadRun(agent, text, wait) {
  const agent_id = await agentId(agent);
  const { thread_id } = await json("POST", "/threads", { metadata: { from: "docker-ci" } });
  if (wait) {
    const result = await json("POST", `/threads/${thread_id}/runs/wait`, {
      agent_id,
      input: input(text),
    });
    expectSuccess(result, text);
    return `${thread_id} ${result.run.run_id}`;
  }
  const { run_id } = await json("POST", `/threads/${thread_id}/runs`, {
    agent_id,
    input: input(text),
    stream_mode: ["custom"],
  });
  // Left running: return once the agent has streamed its first words (ACP has no "running"
  // status: a run is pending until it ends), so a stop that follows finds it executing.
  const response = await fetch(`${base}/threads/${thread_id}/runs/${run_id}/stream`).catch((err) =>
    fail(`stream of ${run_id}: ${err.message}`),
  );
  if (!response.ok) fail(`stream of ${run_id}: ${response.status}`);
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let seen = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done || seen.includes("RUN_FINISHED")) break;
    seen += decoder.decode(value, { stream: true });
    if (seen.includes("TEXT_MESSAGE_CONTENT")) {
      await reader.cancel();
      return `${thread_id} ${run_id}`;
    }
  }
  fail(`run ${run_id} ended before any of its text was streamed: ${seen.slice(0, 300)}`);
}

switch (command) {
  case "ready":
    await call("GET", "/readyz");
    break;
  case "ui": {
    const page = await call("GET", "/ui/");
    if (!page.includes("acp-agui inspector")) fail("/ui/ is not the inspector page");
    break;
  }
  case "run": {
    const [agent, text] = args;
    const result = await json("POST", "/runs/wait", {
      agent_id: await agentId(agent),
      input: input(text),
    });
    expectSuccess(result);
    console.log(`${agent}: ${JSON.stringify(result.output).slice(0, 160)}`);
    break;
  }
  case "thread-run":
    console.log(await newThreadRun(args[0], args[1], true));
    break;
  case "start-run":
    console.log(await newThreadRun(args[0], args[1], false));
    break;
  case "check-run": {
    const [thread, run, text] = args;
    await json("GET", `/threads/${thread}`);
    expectSuccess(await json("GET", `/threads/${thread}/runs/${run}/wait`), text);
    break;
  }
  case "check-shut-down": {
    const [thread, run] = args;
    const result = await json("GET", `/threads/${thread}/runs/${run}/wait`);
    const description = result.output?.description ?? "";
    if (result.run?.status !== "error" || !description.includes("shut down")) {
      fail(`run ${run} is ${result.run?.status}: ${JSON.stringify(result.output)}`);
    }
    break;
  }
  default:
    fail("unknown command");
}
