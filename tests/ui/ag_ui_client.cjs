// Drives toolwire's AG-UI endpoint with the protocol's own client (@ag-ui/client), which checks
// every event it receives against the protocol; prints what the client made of the runs as JSON.
// Usage: node ag_ui_client.cjs URL
const { HttpAgent } = require("@ag-ui/client");

const url = process.argv[2];

async function approval() {
  const agent = new HttpAgent({ url, initialMessages: [{ id: "u1", role: "user", content: "Refund order 7" }] });
  await agent.runAgent();
  const interrupts = agent.pendingInterrupts.map((i) => ({ ...i }));
  const state = agent.state;
  const resume = interrupts.map((i) => ({ interruptId: i.id, status: "resolved", payload: { approved: true } }));
  await agent.runAgent({ resume });
  return { interrupts, state, after: agent.state, messages: agent.messages, left: agent.pendingInterrupts.length };
}

async function frontendTool() {
  const tools = [{
    name: "pick_color",
    description: "Ask the user for a color.",
    parameters: { type: "object", properties: { hint: { type: "string" } } },
  }];
  const agent = new HttpAgent({ url, initialMessages: [{ id: "u1", role: "user", content: "Pick a color" }] });
  let pending = [];
  await agent.runAgent({ tools }, { onRunFinishedEvent: (p) => { pending = p.pendingToolCallIds || []; } });
  for (const id of pending) agent.addMessage({ id: `t-${id}`, role: "tool", toolCallId: id, content: "red" });
  await agent.runAgent({ tools });
  return { pending, messages: agent.messages };
}

async function failure() {
  const agent = new HttpAgent({ url, initialMessages: [{ id: "u1", role: "user", content: "fail" }] });
  let error = null;
  try {
    await agent.runAgent({}, { onRunErrorEvent: (p) => { error = p.event.message; } });
  } catch (e) {
    error = error || String(e);
  }
  return { error };
}

async function reasoning() {
  const agent = new HttpAgent({ url, initialMessages: [{ id: "u1", role: "user", content: "think" }] });
  await agent.runAgent();
  return { messages: agent.messages };
}

(async () => {
  const out = { approval: await approval(), frontend: await frontendTool(), failure: await failure(), reasoning: await reasoning() };
  process.stdout.write(JSON.stringify(out));
})().catch((e) => { console.error(e); process.exit(1); });
