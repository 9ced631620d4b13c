/* The step-level review's keyboard and state (annotation.kinds.step_review), beside annotate.js.
   Each step is marked right or wrong; a wrong step has an error type and may have the call it
   should have made, written in the call editor. The whole review lives in one hidden field of the
   answer form (#steps-field, JSON: one entry per step), which the server checks on submit; the
   page is redrawn from it after a refused submit or an undo. Keys are read in the capture phase,
   so that annotate.js's digit keys (its question choices) do not see the ones used here.
   Plain JavaScript, no dependencies. */
(function () {
  "use strict";

  let current = 0;
  let editing = null;  // the step whose call is being written

  function root() { return document.querySelector("[data-step-review]"); }
  function steps() { return Array.from(document.querySelectorAll(".trace-step[data-step]")); }
  function field() { return document.getElementById("steps-field"); }
  function editor() { return document.querySelector("[data-call-editor]"); }

  function load() {
    const f = field();
    let data = [];
    try { data = f && f.value ? JSON.parse(f.value) : []; } catch (e) { data = []; }
    if (!Array.isArray(data)) data = [];
    const n = steps().length;
    const state = [];
    for (let i = 0; i < n; i++) {
      const entry = data[i] && typeof data[i] === "object" ? data[i] : {};
      let right = entry.right;
      if (right === "right") right = true;
      if (right === "wrong") right = false;
      state.push({ right: typeof right === "boolean" ? right : null, error: entry.error || "", call: entry.call || null });
    }
    return state;
  }

  let state = [];

  function save() {
    const f = field();
    if (!f) return;
    f.value = JSON.stringify(state.map(function (s) {
      if (s.right === null) return {};
      if (s.right) return { right: true };
      return { right: false, error: s.error, call: s.call };
    }));
  }

  function callText(call) {
    if (!call || !call.name) return "No call written.";
    let args = call.fields || call.arguments || {};
    if (typeof args === "string") return call.name + "(" + args + ")";
    const parts = Object.keys(args).filter(function (k) { return args[k] !== "" && args[k] !== null; })
      .map(function (k) {
        const v = args[k];
        return (k || "arguments") + "=" + (typeof v === "string" ? v : JSON.stringify(v));
      });
    return "Should have called " + call.name + "(" + parts.join(", ") + ")";
  }

  function draw(i) {
    const li = steps()[i];
    const s = state[i];
    if (!li || !s) return;
    li.querySelectorAll("input[data-mark]").forEach(function (input) {
      input.checked = s.right !== null && input.dataset.mark === (s.right ? "right" : "wrong");
    });
    const errors = li.querySelector("[data-step-errors]");
    const fix = li.querySelector("[data-step-fix]");
    const wrong = s.right === false;
    if (errors) errors.hidden = !wrong;
    if (fix) fix.hidden = !wrong;
    li.querySelectorAll("input[data-error]").forEach(function (input) {
      input.checked = wrong && input.dataset.error === s.error;
    });
    const summary = li.querySelector("[data-call-summary]");
    if (summary) summary.textContent = callText(s.call);
    li.classList.toggle("marked-right", s.right === true);
    li.classList.toggle("marked-wrong", wrong);
    const label = li.querySelector("[data-step-state]");
    if (label) {
      let text = "not marked";
      if (s.right === true) text = "right";
      if (wrong) {
        const chosen = li.querySelector('input[data-error="' + CSS.escape(s.error) + '"]');
        const name = chosen ? chosen.closest("label").querySelector(".error-label") : null;
        text = "wrong" + (s.error ? ": " + (name ? name.textContent : s.error) : ", choose its error type");
      }
      label.textContent = text;
    }
  }

  function drawAll() { for (let i = 0; i < state.length; i++) draw(i); }

  function go(i, focus) {
    const all = steps();
    if (!all.length) return;
    current = Math.max(0, Math.min(all.length - 1, i));
    all.forEach(function (li, j) { li.classList.toggle("current", j === current); li.setAttribute("aria-current", j === current ? "step" : "false"); });
    if (focus !== false) {
      all[current].focus({ preventScroll: true });
      all[current].scrollIntoView({ block: "nearest" });
    }
  }

  function mark(i, right) {
    const s = state[i];
    if (!s) return;
    s.right = right;
    if (right) { s.error = ""; s.call = null; }
    save(); draw(i);
  }

  function chooseError(i, number) {
    const li = steps()[i];
    const inputs = li ? li.querySelectorAll("input[data-error]") : [];
    const input = inputs[number - 1];
    if (!input) return false;
    if (state[i].right !== false) state[i].right = false;
    state[i].error = input.dataset.error;
    save(); draw(i);
    return true;
  }

  // --- the call editor --------------------------------------------------------------------

  function showTool(name) {
    const ed = editor();
    ed.querySelectorAll("[data-tool-fields]").forEach(function (group) {
      group.hidden = group.dataset.toolFields !== name;
    });
  }

  function fillFields(call) {
    const ed = editor();
    const select = ed.querySelector("[data-editor-tool]");
    if (!select) return;
    if (call && call.name && Array.from(select.options).some(function (o) { return o.value === call.name; })) {
      select.value = call.name;
    }
    showTool(select.value);
    const group = ed.querySelector('[data-tool-fields="' + CSS.escape(select.value) + '"]');
    const texts = (call && call.name === select.value && (call.fields || call.arguments)) || {};
    group.querySelectorAll("[data-arg]").forEach(function (input) {
      const name = input.dataset.arg;
      let value = name === "" ? texts : texts[name];
      if (name === "" && call && call.fields) value = call.fields[""];
      if (value === undefined || value === null) value = "";
      if (typeof value !== "string") value = JSON.stringify(value);
      input.value = value;
    });
  }

  function openEditor(i) {
    const ed = editor();
    if (!ed || !state[i]) return;
    if (state[i].right !== false) { mark(i, false); }
    editing = i;
    ed.hidden = false;
    ed.querySelector("[data-editor-step]").textContent = String(i + 1);
    const error = ed.querySelector("[data-editor-error]");
    if (error) error.hidden = true;
    let call = state[i].call;
    if (!call) {
      try { call = JSON.parse(steps()[i].dataset.prefill || "{}"); } catch (e) { call = null; }
    }
    fillFields(call);
    const first = ed.querySelector("[data-editor-tool]") || ed.querySelector("button");
    if (first) first.focus();
  }

  function closeEditor() {
    const ed = editor();
    if (ed) ed.hidden = true;
    const i = editing;
    editing = null;
    if (i !== null) go(i);
  }

  function keepCall() {
    const ed = editor();
    const select = ed.querySelector("[data-editor-tool]");
    if (editing === null || !select) { closeEditor(); return; }
    const group = ed.querySelector('[data-tool-fields="' + CSS.escape(select.value) + '"]');
    const fields = {};
    group.querySelectorAll("[data-arg]").forEach(function (input) { fields[input.dataset.arg] = input.value; });
    state[editing].call = { name: select.value, fields: fields };
    save(); draw(editing);
    closeEditor();
  }

  function removeCall() {
    if (editing !== null) { state[editing].call = null; save(); draw(editing); }
    closeEditor();
  }

  // --- keys and clicks ----------------------------------------------------------------------

  function typing(target) {
    return target && (target.tagName === "TEXTAREA" || target.tagName === "SELECT" ||
      (target.tagName === "INPUT" && !["radio", "checkbox", "button", "submit"].includes(target.type)) ||
      target.isContentEditable);
  }

  function inEditor(target) { return target && target.closest && target.closest("[data-call-editor]"); }

  document.addEventListener("keydown", function (event) {
    if (!root()) return;
    const target = event.target;
    const handled = function () { event.preventDefault(); event.stopImmediatePropagation(); };
    if (editing !== null && (inEditor(target) || target === document.body)) {
      if (event.key === "Escape") { handled(); closeEditor(); return; }
      if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) { handled(); keepCall(); return; }
      if (typing(target) || inEditor(target)) {
        if (event.key === "Enter" && target.tagName !== "TEXTAREA" && target.tagName !== "BUTTON") { handled(); keepCall(); }
        return;
      }
    }
    if (typing(target) || event.ctrlKey || event.metaKey || event.altKey) return;
    const key = event.key;
    const onRadio = target && target.tagName === "INPUT" && target.type === "radio";
    if (key === "j" || (key === "ArrowDown" && !onRadio)) { handled(); go(current + 1); }
    else if (key === "k" || (key === "ArrowUp" && !onRadio)) { handled(); go(current - 1); }
    else if (key === "r") { handled(); mark(current, true); }
    else if (key === "w") { handled(); mark(current, false); }
    else if (key === "e") { handled(); openEditor(current); }
    else if (/^[1-9]$/.test(key)) { if (chooseError(current, Number(key))) handled(); }
  }, true);

  document.addEventListener("change", function (event) {
    const input = event.target;
    const li = input.closest && input.closest(".trace-step[data-step]");
    if (!li) return;
    const i = Number(li.dataset.step);
    if (input.dataset.mark) { go(i, false); mark(i, input.dataset.mark === "right"); }
    else if (input.dataset.error) { go(i, false); state[i].right = false; state[i].error = input.dataset.error; save(); draw(i); }
  });

  document.addEventListener("click", function (event) {
    const button = event.target.closest && event.target.closest("button");
    if (!button || !root()) return;
    if (button.hasAttribute("data-open-editor")) {
      const li = button.closest(".trace-step[data-step]");
      if (li) { go(Number(li.dataset.step), false); openEditor(Number(li.dataset.step)); }
    } else if (button.hasAttribute("data-editor-keep")) keepCall();
    else if (button.hasAttribute("data-editor-remove")) removeCall();
    else if (button.hasAttribute("data-editor-cancel")) closeEditor();
  });

  document.addEventListener("change", function (event) {
    if (event.target.matches && event.target.matches("[data-editor-tool]")) fillFields({ name: event.target.value });
  });

  // Before the form leaves, the field holds the review as it is on screen.
  document.addEventListener("submit", function (event) {
    if (event.target.id === "answer-form" && root()) save();
  }, true);

  function start() {
    if (!root()) return;
    state = load();
    editing = null;
    drawAll();
    // The first step not yet marked (or the first), without taking the focus from an error.
    const first = state.findIndex(function (s) { return s.right === null; });
    go(first < 0 ? 0 : first, !document.getElementById("form-error"));
    save();
  }

  document.addEventListener("DOMContentLoaded", start);
  document.addEventListener("htmx:afterSettle", start);
})();
