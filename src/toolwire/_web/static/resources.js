// toolwire web: the inspector's resources (read, templates filled from a form) and prompts (get
// with arguments). Uses `$`, `el` from app.js and `inspectorPost`, `listing` from inspector.js.
// What the server sends is shown with textContent; an image only as a data URL of a raster type
// whose base64 checks, so nothing it sends is ever read as markup or script.
"use strict";

const IMAGE_TYPE = /^image\/(png|jpeg|gif|webp)$/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function showItem(title, description, button) {
  $("inspect-tool").hidden = true;
  $("inspect-item").hidden = false;
  $("inspect-item-name").textContent = title;
  $("inspect-item-description").textContent = description || "";
  $("inspect-item-fields").replaceChildren();
  $("inspect-item-go").textContent = button;
  $("inspect-content").replaceChildren();
}

// What the item form's Read/Get button does for the item shown now.
let itemAction = null;

function onSubmit(action) {
  itemAction = action;
}

async function submitItem(event) {
  event.preventDefault();
  if (!itemAction) return;
  $("inspect-item-go").disabled = true;
  const box = $("inspect-content");
  box.replaceChildren(el("div", "muted", "asking…"));
  try {
    await itemAction(box);
  } catch (error) {
    box.replaceChildren(el("div", "content failed", error.message));
  } finally {
    $("inspect-item-go").disabled = false;
  }
}

function textField(name, hint, required) {
  const box = el("div", "field");
  const id = `item-${name}-${Math.random().toString(36).slice(2)}`;
  const label = el("label", "", `${name}${required ? " *" : ""}`);
  label.htmlFor = id;
  const input = el("input");
  input.id = id;
  input.name = name;
  box.append(label, input);
  if (hint) box.append(el("div", "hint", hint));
  $("inspect-item-fields").append(box);
  return input;
}

// One content block as the server's answer was checked (see `_content` in inspector.py).
function drawContent(target, part, heading) {
  const box = el("div", "content");
  box.append(el("div", "head", heading));
  if (part.type === "text") {
    const cut = part.chars > part.text.length ? `\n… (${part.chars.toLocaleString()} characters in all)` : "";
    box.append(el("pre", "", part.text + cut));
  } else if (part.type === "image" && IMAGE_TYPE.test(part.mimeType) && BASE64.test(part.data)) {
    const image = el("img");
    image.alt = heading;
    image.src = `data:${part.mimeType};base64,${part.data}`;
    box.append(image);
  } else if (part.type === "image" || part.type === "binary") {
    const size = part.bytes === null || part.bytes === undefined ? "" : `${part.bytes.toLocaleString()} bytes`;
    box.append(el("div", "muted", `binary ${part.mimeType || ""} ${size} ${part.note || ""}`.trim()));
  } else {
    box.append(el("pre", "", part.text || ""));
  }
  target.append(box);
}

async function readInto(box, uri) {
  const answer = await inspectorPost("read", { uri });
  box.replaceChildren();
  if (!answer.contents.length) box.append(el("div", "muted", "no contents"));
  for (const part of answer.contents) drawContent(box, part, `${part.uri}  ${part.mimeType || ""}`);
}

function openResource(resource) {
  showItem(resource.uri, [resource.name, resource.description].filter(Boolean).join(" — "), "Read");
  onSubmit((box) => readInto(box, resource.uri));
}

// RFC 6570 expressions ({x}, {+x}, {#x}, {/x}, {.x}, {;x}, {?x,y}, {&x}), filled from the form.
function expand(template, values) {
  return template.replace(/\{([+#./;?&]?)([^}]*)\}/g, (_, op, names) => {
    const vars = names.split(",").map((n) => n.replace(/[*]|:\d+$/g, "")).filter((n) => values[n] !== undefined && values[n] !== "");
    const encode = op === "+" || op === "#" ? encodeURI : encodeURIComponent;
    if (!vars.length) return "";
    const named = op === ";" || op === "?" || op === "&";
    const parts = vars.map((n) => (named ? `${n}=${encode(values[n])}` : encode(values[n])));
    const first = { "": "", "+": "", "#": "#", ".": ".", "/": "/", ";": ";", "?": "?", "&": "&" }[op];
    const join = { "": ",", "+": ",", "#": ",", ".": ".", "/": "/", ";": ";", "?": "&", "&": "&" }[op];
    return first + parts.join(join);
  });
}

function templateNames(template) {
  const names = [];
  for (const match of template.matchAll(/\{[+#./;?&]?([^}]*)\}/g)) {
    for (const name of match[1].split(",")) {
      const clean = name.replace(/[*]|:\d+$/g, "");
      if (clean && !names.includes(clean)) names.push(clean);
    }
  }
  return names;
}

function openTemplate(template) {
  showItem(template.uriTemplate, [template.name, template.description].filter(Boolean).join(" — "), "Read");
  const inputs = templateNames(template.uriTemplate).map((name) => [name, textField(name, "", true)]);
  const shown = el("div", "hint", "");
  $("inspect-item-fields").append(shown);
  const uri = () => expand(template.uriTemplate, Object.fromEntries(inputs.map(([n, input]) => [n, input.value])));
  for (const [, input] of inputs) input.addEventListener("input", () => { shown.textContent = `reads ${uri()}`; });
  onSubmit((box) => readInto(box, uri()));
}

function openPrompt(prompt) {
  showItem(prompt.name, [prompt.title, prompt.description].filter(Boolean).join(" — "), "Get");
  const inputs = (prompt.arguments || []).map((a) => [a, textField(a.name, a.description, a.required)]);
  onSubmit(async (box) => {
    const args = {};
    for (const [argument, input] of inputs) {
      if (input.value !== "" || argument.required) args[argument.name] = input.value;
    }
    const answer = await inspectorPost("prompt", { name: prompt.name, arguments: args });
    box.replaceChildren();
    if (answer.description) box.append(el("div", "muted", answer.description));
    for (const message of answer.messages) {
      for (const part of message.content) drawContent(box, part, `${message.role}${part.uri ? `  ${part.uri}` : ""}`);
    }
  });
}

document.addEventListener("DOMContentLoaded", () => {
  $("inspect-item-form").addEventListener("submit", submitItem);
});
