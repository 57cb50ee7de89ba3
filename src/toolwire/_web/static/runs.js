// toolwire web: durable runs (/api/runs/...), as `toolwire runs` lists, shows and decides them.
// Uses `$`, `el` and `api` from app.js. Run ids, agents, arguments, errors and the conversation
// are put on the page with textContent, never as markup. While the screen is shown the list and
// the chosen run are read again every few seconds: the workers move runs on by themselves.
"use strict";

const REFRESH_MS = 2000;
const runs = { chosen: null, shownKey: "", decisions: new Map(), timer: null, busy: false };

async function runsGet(path) {
  const response = await api(path);
  const answer = await response.json().catch(() => ({ error: `${response.status} ${response.statusText}` }));
  if (!response.ok) throw new Error(answer.error || `HTTP ${response.status}`);
  return answer;
}

async function runsPost(action, body) {
  const response = await api(`/api/runs/${action}`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  const answer = await response.json().catch(() => ({ error: `${response.status} ${response.statusText}` }));
  if (!response.ok) throw new Error(answer.error || `HTTP ${response.status}`);
  return answer;
}

function when(iso) {
  return iso ? new Date(iso).toLocaleString() : "-";
}

async function loadRuns() {
  const query = new URLSearchParams();
  if ($("runs-status").value) query.set("status", $("runs-status").value);
  if ($("runs-agent").value.trim()) query.set("agent", $("runs-agent").value.trim());
  const list = $("runs-list");
  let answer;
  try {
    answer = await runsGet(`/api/runs/list?${query}`);
  } catch (error) {
    list.replaceChildren(el("li", "muted", error.message));
    return;
  }
  $("runs-database").textContent = `${answer.database}: ${answer.runs.length} run(s)`;
  list.replaceChildren();
  if (!answer.runs.length) list.append(el("li", "muted", "no runs"));
  for (const run of answer.runs) {
    const button = el("button", run.run_id === runs.chosen ? "chosen" : "", `${run.run_id}  ${run.agent}\n${run.state} · ${when(run.updated_at)}`);
    button.type = "button";
    button.dataset.run = run.run_id;
    button.dataset.state = run.state;
    button.addEventListener("click", () => {
      runs.chosen = run.run_id;
      runs.shownKey = "";
      runs.decisions.clear();
      $("run-message").textContent = "";
      for (const other of document.querySelectorAll("#runs-list button")) other.classList.toggle("chosen", other === button);
      showRun();
    });
    const item = el("li");
    item.append(button);
    list.append(item);
  }
}

function fact(table, label, value) {
  const row = el("tr");
  row.append(el("td", "", label), el("td", "", value));
  table.append(row);
}

async function showRun() {
  if (!runs.chosen) return;
  let run;
  try {
    run = await runsGet(`/api/runs/show?id=${encodeURIComponent(runs.chosen)}`);
  } catch (error) {
    $("run-message").className = "error";
    $("run-message").textContent = error.message;
    return;
  }
  // Drawn again only when the run moved and no decision is half made.
  const key = `${run.state}|${run.updated_at}|${run.messages.length}`;
  if (key === runs.shownKey || runs.decisions.size) return;
  runs.shownKey = key;
  $("run-detail").hidden = false;
  $("run-title").textContent = run.run_id;
  const facts = $("run-facts");
  facts.replaceChildren();
  fact(facts, "agent", run.agent);
  fact(facts, "state", run.state);
  fact(facts, "started", when(run.created_at));
  fact(facts, "updated", when(run.updated_at));
  fact(facts, "worker", run.worker || "-");
  fact(facts, "version", run.app_version || "-");
  if (run.error) fact(facts, "error", run.error);
  if (run.result) {
    const usage = run.result.usage || {};
    fact(facts, "stopped", run.result.stop_reason || "-");
    fact(facts, "usage", `${usage.input_tokens ?? "?"} input / ${usage.output_tokens ?? "?"} output tokens`);
  }
  drawPending(run);
  const finished = ["succeeded", "failed", "cancelled"].some((s) => run.state.startsWith(s));
  $("run-cancel").disabled = finished;
  $("run-approve-all").disabled = $("run-deny-all").disabled = !run.pending.length;
  drawConversation(run.messages);
}

function drawPending(run) {
  const box = $("run-pending");
  box.replaceChildren();
  if (!run.pending.length) return;
  box.append(el("h3", "", `Waiting on ${run.pending.length} call(s)`));
  for (const call of run.pending) {
    const node = el("div", "pending");
    node.dataset.callId = call.call_id;
    node.append(el("div", "name", `${call.name}  [${call.call_id}]`));
    node.append(el("pre", "", JSON.stringify(call.arguments, null, 2)));
    const row = el("div", "decide");
    const status = el("span", "muted", call.needs === "approval" ? "needs approval" : "needs a result");
    if (call.needs === "approval") {
      const approve = el("button", "approve", "Approve");
      const deny = el("button", "deny", "Deny");
      approve.type = deny.type = "button";
      approve.addEventListener("click", () => decide(run, call, { approved: true }, row, status));
      deny.addEventListener("click", () => decide(run, call, { approved: false }, row, status));
      row.append(approve, deny, status);
    } else {
      const input = el("input");
      input.placeholder = "the result to use";
      const use = el("button", "", "Use this result");
      use.type = "button";
      use.addEventListener("click", () => decide(run, call, { result: input.value }, row, status));
      row.append(input, use, status);
    }
    node.append(row);
    box.append(node);
  }
}

// Every pending call is decided in one decision (the run checks that none is left out).
function decide(run, call, choice, row, status) {
  runs.decisions.set(call.call_id, choice);
  for (const button of row.querySelectorAll("button")) button.disabled = true;
  status.textContent = "result" in choice ? "answered" : choice.approved ? "approved" : "denied";
  if (runs.decisions.size < run.pending.length) return;
  const body = { runId: run.run_id, callIds: [], deny: [], results: {}, reason: $("run-reason").value || undefined };
  for (const [id, made] of runs.decisions) {
    if ("result" in made) body.results[id] = made.result;
    else if (made.approved) body.callIds.push(id);
    else body.deny.push(id);
  }
  runs.decisions.clear();
  act("approve", body);
}

async function act(action, body) {
  const message = $("run-message");
  message.className = "muted";
  message.textContent = `${action}…`;
  try {
    const answer = await runsPost(action, body);
    message.textContent = answer.message || answer.decided.map((d) => `${d.decision} ${d.name} [${d.callId}]`).join("\n") || "done";
  } catch (error) {
    message.className = "error";
    message.textContent = error.message;
  }
  runs.shownKey = "";
  await refreshRuns();
}

function drawConversation(messages) {
  const box = $("run-conversation");
  box.replaceChildren();
  for (const message of messages) {
    const line = el("div", "turn");
    line.append(el("span", "role", message.role || message.kind || "?"));
    const parts = message.content || message.parts || [];
    const texts = [];
    if (typeof parts === "string") texts.push(parts);
    if (typeof message.text === "string") texts.push(message.text);
    for (const part of Array.isArray(parts) ? parts : []) {
      if (part.text) texts.push(part.text);
      else if (part.name) texts.push(`→ ${part.name}(${typeof part.arguments === "string" ? part.arguments : JSON.stringify(part.arguments)})`);
      else if (part.kind) texts.push(`[${part.kind}]`);
    }
    if (message.call_id) texts.unshift(`[${message.call_id}] ${message.name || ""}:`);
    const text = el("span", "text");
    line.append(text);
    box.append(line);
    showResult(text, texts.join("\n")); // long texts cut, with "show all" (app.js)
  }
}

async function refreshRuns() {
  if (runs.busy) return;
  runs.busy = true;
  try {
    await loadRuns();
    await showRun();
  } finally {
    runs.busy = false;
  }
}

document.addEventListener("toolwire-screen", (event) => {
  clearInterval(runs.timer);
  runs.timer = null;
  if (event.detail !== "runs") return;
  refreshRuns();
  runs.timer = setInterval(refreshRuns, REFRESH_MS);
});

document.addEventListener("DOMContentLoaded", () => {
  $("runs-filter").addEventListener("submit", (event) => {
    event.preventDefault();
    refreshRuns();
  });
  $("run-approve-all").addEventListener("click", () => act("approve", { runId: runs.chosen, reason: $("run-reason").value || undefined }));
  $("run-deny-all").addEventListener("click", () => act("deny", { runId: runs.chosen, reason: $("run-reason").value || undefined }));
  $("run-cancel").addEventListener("click", () => act("cancel", { runId: runs.chosen }));
});
