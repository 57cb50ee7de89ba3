// toolwire web: a chat over the AG-UI endpoint (/api/agui) and a timeline of each run.
// Every piece of data (model text, tool names, arguments, results, errors) is put on the page
// with textContent, never as markup.
"use strict";

const SHOWN = 2000; // characters of a tool result shown before "show all"

// crypto.randomUUID exists in secure contexts only (loopback is one; a plain-HTTP host is not).
function newId() {
  if (window.crypto && crypto.randomUUID) return crypto.randomUUID();
  return `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
}

const state = {
  token: "",
  threadId: newId(),
  messages: [], // the conversation, as AG-UI messages
  cards: new Map(), // tool call id -> its card
  bubbles: new Map(), // message id -> its text bubble
  controller: null, // the running request, for Stop
  runs: 0,
  decisions: new Map(), // interrupt id -> answer, while a run waits for approvals
};

const $ = (id) => document.getElementById(id);

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function scrollDown() {
  const log = $("log");
  log.scrollTop = log.scrollHeight;
}

function readToken() {
  const match = /(?:^#|&)token=([^&]+)/.exec(location.hash);
  if (match) {
    state.token = decodeURIComponent(match[1]);
    sessionStorage.setItem("toolwire-token", state.token);
    history.replaceState(null, "", location.pathname); // keep the token out of the address bar
  } else {
    state.token = sessionStorage.getItem("toolwire-token") || "";
  }
}

async function api(path, init = {}) {
  const headers = { Authorization: `Bearer ${state.token}`, ...(init.headers || {}) };
  return fetch(path, { ...init, headers });
}

async function loadInfo() {
  const response = await api("/api/info");
  if (!response.ok) {
    note(`The page cannot reach its server (${response.status}): open the URL the command printed.`, "error");
    return;
  }
  const info = await response.json();
  $("model").textContent = `model: ${info.model}`;
  if (info.runs) $("tab-runs").hidden = false;
  if (info.stdio) $("inspect-transport").hidden = false;
  $("tools-summary").textContent = `${info.tools.length} tools`;
  const list = $("tools");
  for (const tool of info.tools) {
    const item = el("li");
    item.append(el("strong", "", tool.name));
    if (tool.requiresApproval) item.append(el("span", "muted", " (asks for approval)"));
    item.append(el("div", "muted", tool.description));
    list.append(item);
  }
}

function note(text, kind = "note") {
  $("log").append(el("div", `msg ${kind}`, text));
  scrollDown();
}

function findMessage(id) {
  return state.messages.find((m) => m.id === id);
}

function assistantMessage(id) {
  let message = findMessage(id);
  if (!message) {
    message = { id, role: "assistant", content: "" };
    state.messages.push(message);
  }
  return message;
}

function bubble(id) {
  let node = state.bubbles.get(id);
  if (!node) {
    node = el("div", "msg assistant", "");
    state.bubbles.set(id, node);
    $("log").append(node);
  }
  return node;
}

function showResult(target, text) {
  target.replaceChildren();
  if (text.length <= SHOWN) {
    target.textContent = text;
    return;
  }
  target.textContent = text.slice(0, SHOWN);
  const more = el("button", "", `show all ${text.length.toLocaleString()} characters`);
  more.type = "button";
  more.addEventListener("click", () => { target.textContent = text; });
  target.after(more);
}

function card(id, name) {
  let node = state.cards.get(id);
  if (!node) {
    node = el("div", "tool");
    node.dataset.callId = id;
    node.append(el("span", "status", "calling"), el("div", "name", name));
    node.append(el("pre", "args", ""), el("pre", "result", ""));
    node.querySelector(".result").hidden = true;
    state.cards.set(id, node);
    $("log").append(node);
  }
  return node;
}

function handle(event, timeline) {
  switch (event.type) {
    case "REASONING_MESSAGE_START": {
      // Shown, not kept: the model's thinking is not sent back as conversation.
      const node = el("div", "msg reasoning", "");
      state.bubbles.set(event.messageId, node);
      $("log").append(node);
      break;
    }
    case "REASONING_MESSAGE_CONTENT": {
      const node = state.bubbles.get(event.messageId);
      if (node) node.textContent += event.delta;
      break;
    }
    case "TEXT_MESSAGE_START":
      assistantMessage(event.messageId);
      bubble(event.messageId);
      break;
    case "TEXT_MESSAGE_CONTENT": {
      const message = assistantMessage(event.messageId);
      message.content = (message.content || "") + event.delta;
      bubble(event.messageId).textContent = message.content;
      break;
    }
    case "TOOL_CALL_START": {
      const message = assistantMessage(event.parentMessageId || event.toolCallId);
      message.toolCalls = message.toolCalls || [];
      message.toolCalls.push({ id: event.toolCallId, type: "function", function: { name: event.toolCallName, arguments: "" } });
      card(event.toolCallId, event.toolCallName);
      break;
    }
    case "TOOL_CALL_ARGS": {
      for (const message of state.messages) {
        const call = (message.toolCalls || []).find((c) => c.id === event.toolCallId);
        if (call) call.function.arguments += event.delta;
      }
      const node = state.cards.get(event.toolCallId);
      if (node) node.querySelector(".args").textContent += event.delta;
      break;
    }
    case "TOOL_CALL_RESULT": {
      state.messages.push({ id: event.messageId, role: "tool", toolCallId: event.toolCallId, content: event.content });
      const node = state.cards.get(event.toolCallId);
      if (node) {
        node.querySelector(".status").textContent = "done";
        const result = node.querySelector(".result");
        result.hidden = false;
        showResult(result, event.content);
      }
      break;
    }
    case "CUSTOM":
      if (event.name === "toolwire.trace") timeline.add(event.value);
      break;
    case "RUN_FINISHED":
      timeline.finish(event.result || { stopReason: event.outcome ? `${event.outcome.type === "interrupt" ? "waiting for approval" : event.outcome.type}` : "finished" });
      if (event.outcome && event.outcome.type === "interrupt") askApprovals(event.outcome.interrupts);
      break;
    case "RUN_ERROR":
      note(`The run failed: ${event.message}`, "error");
      timeline.finish({ stopReason: `error (${event.code || "error"})` });
      break;
    default:
      break;
  }
  scrollDown();
}

function askApprovals(interrupts) {
  state.decisions.clear();
  // The whole turn waits: its other calls run once every approval is answered.
  for (const node of state.cards.values()) {
    const status = node.querySelector(".status");
    if (status.textContent === "calling") status.textContent = "waiting";
  }
  for (const interrupt of interrupts) {
    const node = state.cards.get(interrupt.toolCallId) || card(interrupt.toolCallId, interrupt.toolCallId);
    node.querySelector(".status").textContent = "needs approval";
    const row = el("div", "decide");
    const approve = el("button", "approve", "Approve");
    const deny = el("button", "deny", "Deny");
    approve.type = deny.type = "button";
    const decide = (approved) => {
      row.remove();
      node.querySelector(".status").textContent = approved ? "approved" : "denied";
      state.decisions.set(interrupt.id, { approved, reason: approved ? undefined : "denied in the page" });
      if (state.decisions.size === interrupts.length) {
        const resume = [...state.decisions].map(([id, payload]) => ({ interruptId: id, status: "resolved", payload }));
        state.decisions.clear();
        run({ resume });
      }
    };
    approve.addEventListener("click", () => decide(true));
    deny.addEventListener("click", () => decide(false));
    row.append(approve, deny);
    node.append(row);
  }
}

class Timeline {
  constructor() {
    state.runs += 1;
    this.box = el("div", "run");
    this.box.append(el("h3", "", `Run ${state.runs}`));
    this.rows = el("div");
    this.box.append(this.rows);
    this.entries = [];
    $("timeline").prepend(this.box);
  }

  add(entry) {
    this.entries.push(entry);
    this.draw();
  }

  draw() {
    const longest = Math.max(1e-6, ...this.entries.map((e) => e.seconds));
    this.rows.replaceChildren();
    for (const entry of this.entries) {
      const row = el("div", "row");
      const isTool = entry.kind === "tool";
      const label = isTool ? entry.name : `model #${entry.iteration}`;
      row.append(el("span", "label", label));
      const bar = el("div", `bar${isTool ? " tool-bar" : ""}${entry.isError ? " failed" : ""}`);
      bar.style.width = `${(100 * entry.seconds) / longest}%`;
      row.append(bar, el("span", "secs", `${(entry.seconds * 1000).toFixed(1)} ms`));
      this.rows.append(row);
      const detail = isTool
        ? `${entry.arguments} → ${entry.result}${entry.resultChars > entry.result.length ? " …" : ""}`
        : `${entry.inputTokens} in / ${entry.outputTokens} out tokens, ${entry.finishReason} · ${entry.cost ? `$${entry.cost}` : "cost unknown"}`;
      const line = el("div", "detail", detail);
      if (!isTool && !entry.cost && entry.costReason) line.title = entry.costReason;
      this.rows.append(line);
    }
  }

  finish(result) {
    if (!result) return;
    const parts = [`stopped: ${result.stopReason}`];
    if (result.inputTokens !== undefined) parts.push(`${result.inputTokens} in / ${result.outputTokens} out tokens`);
    if (result.inputTokens !== undefined) parts.push(result.cost ? `$${result.cost}` : "cost unknown");
    this.box.append(el("div", "summary", parts.join(" · ")));
  }
}

async function run(extra = {}) {
  const controller = new AbortController();
  state.controller = controller;
  $("send").disabled = true;
  $("stop").disabled = false;
  const timeline = new Timeline();
  const body = {
    threadId: state.threadId,
    runId: newId(),
    messages: state.messages,
    tools: [],
    context: [],
    state: {},
    forwardedProps: {},
    ...extra,
  };
  try {
    const response = await api("/api/agui", {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
      body: JSON.stringify(body),
      signal: controller.signal,
    });
    if (!response.ok) {
      note(`The server refused the run (${response.status}): ${await response.text()}`, "error");
      return;
    }
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let end;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        for (const line of block.split("\n")) {
          if (line.startsWith("data: ")) handle(JSON.parse(line.slice(6)), timeline);
        }
      }
    }
  } catch (error) {
    if (error.name === "AbortError") note("Stopped.");
    else note(`The connection failed: ${error}`, "error");
  } finally {
    state.controller = null;
    $("send").disabled = false;
    $("stop").disabled = true;
  }
}

function send(event) {
  event.preventDefault();
  const prompt = $("prompt");
  const text = prompt.value.trim();
  if (!text || state.controller) return;
  prompt.value = "";
  state.messages.push({ id: newId(), role: "user", content: text });
  $("log").append(el("div", "msg user", text));
  run();
}

document.addEventListener("DOMContentLoaded", () => {
  readToken();
  $("composer").addEventListener("submit", send);
  $("prompt").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey) send(event);
  });
  $("stop").addEventListener("click", () => state.controller && state.controller.abort());
  loadInfo();
});
