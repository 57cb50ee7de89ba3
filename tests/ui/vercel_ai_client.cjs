// Drives toolwire's UI message stream endpoint with the AI SDK's own transport and reader
// (package `ai`), which validate every chunk against the SDK's schema; prints the messages built.
// Usage: node vercel_ai_client.cjs URL
const { DefaultChatTransport, readUIMessageStream } = require("ai");

const url = process.argv[2];
const colorTool = {
  pick_color: {
    description: "Ask the user for a color.",
    inputSchema: { type: "object", properties: { hint: { type: "string" } } },
  },
};

async function send(messages, assistant, body = {}) {
  const transport = new DefaultChatTransport({ api: url, body });
  const stream = await transport.sendMessages({
    chatId: "c1",
    messages,
    trigger: "submit-message",
    messageId: undefined,
    abortSignal: undefined,
  });
  let last = assistant;
  const reader = readUIMessageStream({
    stream,
    message: assistant,
    terminateOnError: true,
  });
  for await (const message of reader) last = message;
  return structuredClone(last);
}

function user(id, text) {
  return { id, role: "user", parts: [{ type: "text", text }] };
}

async function approval() {
  const question = user("u1", "Refund order 7");
  const paused = await send([question]);
  const answered = structuredClone(paused);
  for (const part of answered.parts) {
    if (part.state === "approval-requested") {
      part.state = "approval-responded";
      part.approval = { ...part.approval, approved: true };
    }
  }
  const done = await send([question, answered], answered);
  return { paused, done };
}

async function frontendTool() {
  const question = user("u1", "Pick a color");
  const paused = await send([question], undefined, { tools: colorTool });
  const answered = structuredClone(paused);
  for (const part of answered.parts) {
    if (part.type === "tool-pick_color" && part.state === "input-available") {
      part.state = "output-available";
      part.output = "red";
    }
  }
  const done = await send([question, answered], answered, { tools: colorTool });
  return { paused, done };
}

async function failure() {
  try {
    await send([user("u1", "fail")]);
    return { error: null };
  } catch (e) {
    return { error: String(e && e.message ? e.message : e) };
  }
}

async function reasoning() {
  return { message: await send([user("u1", "think")]) };
}

(async () => {
  const out = {};
  out.approval = await approval();
  out.frontend = await frontendTool();
  out.failure = await failure();
  out.reasoning = await reasoning();
  process.stdout.write(JSON.stringify(out));
})().catch((e) => { console.error(e); process.exit(1); });
