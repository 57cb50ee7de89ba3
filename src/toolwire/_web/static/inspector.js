// toolwire web: the MCP server inspector (/api/inspector/...). Uses `$`, `el` and `api` from
// app.js. Everything the inspected server sends (names, descriptions, schemas, results, the
// JSON-RPC messages) is put on the page with textContent, never as markup.
"use strict";

const inspector = { tools: [], chosen: null, fields: [] };

function showScreen(name) {
  for (const screen of ["chat", "inspector", "runs"]) {
    $(`${screen}-screen`).hidden = name !== screen;
    $(`tab-${screen}`).classList.toggle("active", name === screen);
  }
  document.dispatchEvent(new CustomEvent("toolwire-screen", { detail: name }));
}

async function inspectorPost(action, body) {
  const response = await api(`/api/inspector/${action}`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  let answer;
  try {
    answer = await response.json();
  } catch {
    answer = { error: `${response.status} ${response.statusText}` };
  }
  if (answer.exchange) drawExchange(answer.exchange);
  if (!response.ok) throw new Error(answer.error || `HTTP ${response.status}`);
  return answer;
}

function pretty(text) {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

function drawExchange(entries) {
  const box = $("inspect-exchange");
  box.replaceChildren();
  for (const entry of entries) {
    const row = el("div", `wire ${entry.direction}`);
    let method = "";
    try {
      const message = JSON.parse(entry.body);
      method = message.method || (message.error ? "error" : message.result !== undefined ? "result" : "");
      if (message.id !== undefined) method += ` #${message.id}`;
    } catch {
      method = "";
    }
    const arrow = entry.direction === "sent" ? "→" : "←";
    row.append(el("div", "head", `${entry.n}. ${arrow} ${entry.http}  ${method}`));
    row.append(el("pre", "", pretty(entry.body)));
    box.append(row);
  }
  box.parentElement.scrollTop = box.parentElement.scrollHeight;
}

// A listing as buttons (each opens `open(item)`), or the reason the server gave for none.
function listing(target, items, describe, open) {
  const list = $(target);
  list.replaceChildren();
  if (typeof items === "string") {
    list.append(el("li", "muted", items));
    return;
  }
  if (!items.length) list.append(el("li", "muted", "none"));
  for (const item of items) {
    const button = el("button", "", describe(item));
    button.type = "button";
    button.addEventListener("click", () => {
      for (const other of document.querySelectorAll("#inspect-side button.chosen")) other.classList.remove("chosen");
      button.classList.add("chosen");
      $("inspect-tool").hidden = true;
      open(item);
    });
    const entry = el("li");
    entry.append(button);
    list.append(entry);
  }
}

// What the connect form sends: a URL with its sign-in, or (when allowed) a command line.
function connectBody() {
  if ($("inspect-transport").value === "stdio") {
    const command = $("inspect-command").value.trim();
    if (!command) throw new Error("type the command that starts the server");
    return { transport: "stdio", command };
  }
  const url = $("inspect-url").value.trim();
  if (!url) throw new Error("type the server's URL");
  const body = { url };
  const auth = $("inspect-auth").value;
  if (auth === "bearer") body.token = $("inspect-token").value;
  if (auth === "client_credentials" || auth === "oauth") {
    body.auth = {
      kind: auth,
      clientId: $("inspect-client-id").value.trim(),
      clientSecret: $("inspect-client-secret").value,
      scope: $("inspect-scope").value.trim() || undefined,
    };
  }
  return body;
}

function connectFields() {
  const stdio = $("inspect-transport").value === "stdio";
  $("inspect-remote").hidden = stdio;
  $("inspect-command").hidden = !stdio;
  $("inspect-token").hidden = $("inspect-auth").value !== "bearer";
  const auth = $("inspect-auth").value;
  $("inspect-cc").hidden = auth !== "client_credentials" && auth !== "oauth";
  const optional = auth === "oauth" ? " (optional: else the server registers this page)" : "";
  $("inspect-client-id").placeholder = `client id${optional}`;
  $("inspect-client-secret").placeholder = `client secret${auth === "oauth" ? " (optional)" : ""}`;
}

// While a connect waits for a browser sign-in, the address to open is shown as a link: only
// an http(s) address ever becomes one (it comes from the authorization server's metadata).
async function watchSignIn(done) {
  const box = $("inspect-signin");
  while (!done.value) {
    try {
      const answer = await (await api("/api/inspector/signin")).json();
      if (done.value) break; // an answer from before the connect ended is stale
      const link = $("inspect-signin-link");
      if (answer.url && /^https?:\/\//i.test(answer.url)) {
        link.href = answer.url;
        link.title = answer.url;
        box.hidden = false;
      } else {
        link.removeAttribute("href");
        box.hidden = true;
      }
    } catch {
      // the next look may do better
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  box.hidden = true;
}

async function connect(event) {
  event.preventDefault();
  const status = $("inspect-status");
  status.textContent = "Connecting…";
  $("inspect-go").disabled = true;
  $("inspect-tool").hidden = true;
  $("inspect-item").hidden = true;
  const done = { value: false };
  try {
    const body = connectBody();
    if (body.auth && body.auth.kind === "oauth") watchSignIn(done);
    const found = await inspectorPost("connect", body);
    const server = found.server || {};
    status.textContent = `Connected to ${server.name || "a server"} ${server.version || ""} (MCP ${found.protocol || "?"}); ${found.tools.length} tools`;
    inspector.tools = found.tools;
    const list = $("inspect-tools");
    list.replaceChildren();
    for (const tool of found.tools) {
      const button = el("button", "", tool.name);
      button.type = "button";
      button.dataset.tool = tool.name;
      button.addEventListener("click", () => chooseTool(tool, button));
      const item = el("li");
      item.append(button);
      list.append(item);
    }
    if (!found.tools.length) list.append(el("li", "muted", "none"));
    listing("inspect-resources", found.resources, (r) => `${r.uri}  ${r.name || ""}`, openResource);
    listing("inspect-templates", found.resourceTemplates, (t) => `${t.uriTemplate}  ${t.name || ""}`, openTemplate);
    listing("inspect-prompts", found.prompts, (p) => `${p.name}(${(p.arguments || []).map((a) => a.name).join(", ")})`, openPrompt);
    for (const problem of found.problems || []) $("inspect-tools").append(el("li", "muted", problem));
  } catch (error) {
    status.textContent = `Could not connect: ${error.message}`;
  } finally {
    done.value = true;
    $("inspect-signin").hidden = true;
    $("inspect-go").disabled = false;
  }
}

function firstType(schema) {
  const type = schema.type;
  if (Array.isArray(type)) return type.find((t) => t !== "null");
  return type;
}

// One form field per property the form can take (strings, numbers, integers, booleans, enums);
// any other property gets a JSON textarea. Each field reads back {skip} or {value}.
function field(name, schema, required) {
  const box = el("div", "field");
  const id = `arg-${inspector.fields.length}`;
  const label = el("label", "", `${name}${required ? " *" : ""}`);
  label.htmlFor = id;
  box.append(label);
  const type = firstType(schema);
  let input;
  let read;
  if (Array.isArray(schema.enum) && schema.enum.every((v) => v === null || ["string", "number", "boolean"].includes(typeof v))) {
    input = el("select");
    if (!required) input.append(new Option("(not set)", ""));
    schema.enum.forEach((value, index) => input.append(new Option(JSON.stringify(value), String(index))));
    read = () => (input.value === "" ? { skip: true } : { value: schema.enum[Number(input.value)] });
  } else if (type === "boolean") {
    input = el("select");
    if (!required) input.append(new Option("(not set)", ""));
    input.append(new Option("true", "true"), new Option("false", "false"));
    if (schema.default !== undefined) input.value = String(schema.default);
    read = () => (input.value === "" ? { skip: true } : { value: input.value === "true" });
  } else if (type === "string" || type === "number" || type === "integer") {
    input = el("input");
    input.type = type === "string" ? "text" : "number";
    if (type === "integer") input.step = "1";
    if (type === "number") input.step = "any";
    if (schema.default !== undefined) input.placeholder = `default: ${JSON.stringify(schema.default)}`;
    read = () => {
      if (input.value === "") return required && type === "string" ? { value: "" } : { skip: true };
      if (type === "string") return { value: input.value };
      const number = Number(input.value);
      if (Number.isNaN(number) || (type === "integer" && !Number.isInteger(number))) throw new Error(`${name}: not a${type === "integer" ? "n integer" : " number"}`);
      return { value: number };
    };
  } else {
    input = el("textarea");
    input.rows = 3;
    input.placeholder = "JSON";
    read = () => {
      if (input.value.trim() === "") return { skip: true };
      try {
        return { value: JSON.parse(input.value) };
      } catch {
        throw new Error(`${name}: not valid JSON`);
      }
    };
  }
  input.id = id;
  input.name = name;
  box.append(input);
  if (schema.description) box.append(el("div", "hint", schema.description));
  return { box, read };
}

function buildForm(schema) {
  const fields = $("inspect-fields");
  fields.replaceChildren();
  inspector.fields = [];
  const properties = schema && typeof schema.properties === "object" ? schema.properties : null;
  const simple = properties && !schema.anyOf && !schema.oneOf && !schema.allOf;
  if (!simple) {
    // A schema the form cannot lay out: the arguments are written as one JSON object.
    const raw = field("arguments (JSON object)", {}, true);
    inspector.fields.push({ name: null, read: raw.read });
    fields.append(raw.box);
    return;
  }
  const required = new Set(schema.required || []);
  for (const [name, sub] of Object.entries(properties)) {
    const made = field(name, sub || {}, required.has(name));
    inspector.fields.push({ name, read: made.read });
    fields.append(made.box);
  }
}

function readArguments() {
  const args = {};
  for (const { name, read } of inspector.fields) {
    const got = read();
    if (got.skip) continue;
    if (name === null) return got.value;
    args[name] = got.value;
  }
  return args;
}

async function chooseTool(tool, button) {
  for (const other of document.querySelectorAll("#inspect-tools button")) other.classList.remove("chosen");
  for (const other of document.querySelectorAll("#inspect-side button.chosen")) other.classList.remove("chosen");
  button.classList.add("chosen");
  inspector.chosen = tool;
  $("inspect-item").hidden = true;
  $("inspect-tool").hidden = false;
  $("inspect-tool-name").textContent = tool.title ? `${tool.name} (${tool.title})` : tool.name;
  $("inspect-tool-description").textContent = tool.description || "";
  $("inspect-result").hidden = true;
  buildForm(tool.inputSchema);
  const box = $("inspect-dialects");
  box.replaceChildren(el("div", "muted", "compiling…"));
  try {
    const answer = await inspectorPost("tool", { name: tool.name });
    box.replaceChildren();
    for (const entry of answer.dialects) {
      const details = el("details", "dialect");
      details.dataset.dialect = entry.dialect;
      const summary = entry.error
        ? `${entry.dialect}: cannot be expressed`
        : `${entry.dialect} · ${entry.tokens} tokens · ${entry.changes.length} change${entry.changes.length === 1 ? "" : "s"}`;
      details.append(el("summary", "", summary));
      if (entry.error) details.append(el("pre", "", entry.error));
      else {
        details.append(el("div", "muted", `tokens: ${entry.method}`));
        const changes = el("ul", "changes");
        for (const change of entry.changes) changes.append(el("li", "", change));
        details.append(changes, el("pre", "schema", JSON.stringify(entry.schema, null, 2)));
      }
      box.append(details);
    }
  } catch (error) {
    box.replaceChildren(el("div", "muted", `Could not compile: ${error.message}`));
  }
}

async function callTool(event) {
  event.preventDefault();
  const result = $("inspect-result");
  result.hidden = false;
  result.className = "";
  let args;
  try {
    args = readArguments();
  } catch (error) {
    result.className = "failed";
    result.textContent = error.message;
    return;
  }
  $("inspect-call").disabled = true;
  result.textContent = "calling…";
  try {
    const answer = await inspectorPost("call", { name: inspector.chosen.name, arguments: args });
    result.className = answer.isError ? "failed" : "ok";
    const cut = answer.textChars > answer.text.length ? `\n… (${answer.textChars.toLocaleString()} characters in all)` : "";
    result.textContent = `${answer.isError ? "error: " : ""}${answer.text}${cut}`;
    if (answer.structured !== null && answer.structured !== undefined) {
      result.textContent += `\n\nstructured: ${JSON.stringify(answer.structured, null, 2)}`;
    }
  } catch (error) {
    result.className = "failed";
    result.textContent = error.message;
  } finally {
    $("inspect-call").disabled = false;
  }
}

document.addEventListener("DOMContentLoaded", () => {
  // Set here: the page's markup holds no URL (a test keeps it free of outside addresses).
  $("inspect-url").placeholder = `${location.protocol}//127.0.0.1:8000/mcp`;
  $("tab-chat").addEventListener("click", () => showScreen("chat"));
  $("tab-inspector").addEventListener("click", () => showScreen("inspector"));
  $("tab-runs").addEventListener("click", () => showScreen("runs"));
  $("inspect-transport").addEventListener("change", connectFields);
  $("inspect-auth").addEventListener("change", connectFields);
  // Giving up a sign-in: the server ends the connect that waits for it.
  $("inspect-signin-cancel").addEventListener("click", () => inspectorPost("disconnect", {}).catch(() => {}));
  $("inspect-connect").addEventListener("submit", connect);
  $("inspect-form").addEventListener("submit", callTool);
});
