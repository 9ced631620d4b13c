/* The annotation workspace's keyboard: every action has a key, shown next to it on screen.
   Plain JavaScript, no dependencies; htmx swaps the workspace, so state is read from the
   page each time rather than kept here. */
(function () {
  "use strict";

  let startedAt = performance.now();
  let timerHandle = null;

  function workspace() { return document.getElementById("workspace"); }
  function form() { return document.getElementById("answer-form"); }

  function typing(target) {
    return target && (target.tagName === "TEXTAREA" ||
      (target.tagName === "INPUT" && !["radio", "checkbox", "button", "submit"].includes(target.type)) ||
      target.tagName === "SELECT" || target.isContentEditable);
  }

  function togglePanel(id, show) {
    const panel = document.getElementById(id);
    if (!panel) return;
    const open = show === undefined ? panel.hidden : show;
    panel.hidden = !open;
    if (open && id === "guidelines-panel" && window.htmx) htmx.trigger(panel, "load-guidelines");
    if (open) panel.setAttribute("tabindex", "-1"), panel.focus();
  }

  function closePanels() {
    ["guidelines-panel", "shortcuts"].forEach((id) => togglePanel(id, false));
  }

  function click(selector) {
    const element = workspace() && workspace().querySelector(selector);
    if (element && !element.disabled) { element.click(); return true; }
    return false;
  }

  function choose(key) {
    const f = form();
    if (!f) return false;
    if (key === "0") {
      // Item choices: "none".
      const boxes = f.querySelectorAll('fieldset input[type="checkbox"][data-key]');
      if (!boxes.length) return false;
      boxes.forEach((box) => { box.checked = false; });
      return true;
    }
    const input = f.querySelector('input[data-key="' + CSS.escape(key) + '"]');
    if (!input) return false;
    if (input.type === "checkbox") input.checked = !input.checked; else input.checked = true;
    input.focus({ preventScroll: true });
    input.dispatchEvent(new Event("change", { bubbles: true }));
    return true;
  }

  // The refinement editor: Alt+arrows move and indent the row that has the focus, Alt+Enter
  // adds a row after it, Alt+Delete deletes it. Focus returns to the same row's text after
  // htmx redraws the editor (its inputs keep their ids).
  const EDITOR_KEYS = {
    ArrowUp: "up", ArrowDown: "down", ArrowLeft: "outdent", ArrowRight: "indent",
    Enter: "insert", Delete: "delete", Backspace: "delete",
  };

  function editorKey(event) {
    const op = EDITOR_KEYS[event.key];
    const row = event.target.closest && event.target.closest("[data-editor] [data-uid]");
    if (!op || !row) return false;
    const button = row.querySelector('button[data-op="' + op + '"]');
    if (!button || button.disabled) return true;
    const uid = row.dataset.uid;
    const rows = () => Array.from(document.querySelectorAll("[data-editor] [data-uid]"));
    const before = rows().map((r) => r.dataset.uid);
    const index = before.indexOf(uid);
    button.click();
    document.addEventListener("htmx:afterSettle", function refocus() {
      document.removeEventListener("htmx:afterSettle", refocus);
      const now = rows();
      let target;
      if (op === "insert") target = now.find((r) => !before.includes(r.dataset.uid));
      else if (op === "delete") target = now[Math.min(index, now.length - 1)];
      else target = now.find((r) => r.dataset.uid === uid);
      const field = target && target.querySelector("input, select");
      if (field) field.focus();
    });
    return true;
  }

  // The editor comes back from each save as the server saw it, which can be a few keys behind
  // the field being typed in (keys pressed while the save was on its way). What the field held
  // when the request left is noted; if the focused field has changed since, its value is put
  // back after the swap and saved again, so no keystroke is lost.
  const sentValues = new WeakMap();

  function editorFields() {
    return document.querySelectorAll("[data-editor] input[id], [data-editor] textarea[id]");
  }

  document.addEventListener("htmx:beforeRequest", function (event) {
    if (!event.target.closest || !event.target.closest("[data-editor]")) return;
    const values = {};
    editorFields().forEach(function (field) { values[field.id] = field.value; });
    sentValues.set(event.detail.xhr, values);
  });

  document.addEventListener("htmx:beforeSwap", function (event) {
    const values = sentValues.get(event.detail.xhr);
    const active = document.activeElement;
    if (!values || !active || !active.id || !(active.id in values)) return;
    if (active.value === values[active.id]) return;
    const id = active.id, value = active.value;
    document.addEventListener("htmx:afterSwap", function restore() {
      document.removeEventListener("htmx:afterSwap", restore);
      const field = document.getElementById(id);
      if (!field || field.value === value) return;
      field.value = value;
      field.dispatchEvent(new Event("change", { bubbles: true }));
    });
  });

  function submit() {
    const f = form();
    if (!f) return;
    const field = f.querySelector('input[name="time_ms"]');
    if (field) field.value = String(Math.round(performance.now() - startedAt));
    if (f.requestSubmit) f.requestSubmit(); else f.submit();
  }

  document.addEventListener("keydown", function (event) {
    if (!workspace()) return;
    if (event.key === "Escape") { closePanels(); if (typing(event.target)) event.target.blur(); return; }
    if (event.altKey && editorKey(event)) { event.preventDefault(); return; }
    if (typing(event.target)) {
      if (event.key === "Enter" && (event.ctrlKey || event.metaKey) && event.target.closest("#answer-form")) {
        event.preventDefault(); submit();
      }
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.target.closest && event.target.closest("[data-editor]")) return;  // the refinement editor has its own keys
    const key = event.key;
    let handled = true;
    if (key === "Enter") {
      if (event.target.tagName === "BUTTON" || event.target.tagName === "A") return;
      submit();
    } else if (key === "s") handled = click('[data-action="skip"]');
    else if (key === "u") handled = click('[data-action="undo"]');
    else if (key === "g") togglePanel("guidelines-panel");
    else if (key === "?") togglePanel("shortcuts");
    else if (key === "n") {
      const note = form() && form().querySelector('textarea[name="note"], textarea[name="comment"]');
      if (note) note.focus(); else handled = false;
    } else handled = choose(key);
    if (handled) event.preventDefault();
  });

  document.addEventListener("click", function (event) {
    const button = event.target.closest("[data-action]");
    if (!button) return;
    if (button.dataset.action === "guidelines") togglePanel("guidelines-panel");
    if (button.dataset.action === "help") togglePanel("shortcuts");
  });

  document.addEventListener("submit", function (event) {
    if (event.target.id !== "answer-form") return;
    const field = event.target.querySelector('input[name="time_ms"]');
    if (field && !field.value) field.value = String(Math.round(performance.now() - startedAt));
  }, true);

  function tick() {
    const timer = document.querySelector(".timer");
    if (!timer) return;
    const seconds = Math.floor((performance.now() - startedAt) / 1000);
    timer.textContent = Math.floor(seconds / 60) + ":" + String(seconds % 60).padStart(2, "0");
  }

  function start() {
    startedAt = performance.now();
    tick();
    if (!timerHandle) timerHandle = setInterval(tick, 1000);
    const error = document.getElementById("form-error");
    const first = form() && form().querySelector("fieldset input");
    // Keyboard users land on the form; an error is read out first.
    if (error) { error.setAttribute("tabindex", "-1"); error.focus(); }
    else if (first && document.activeElement === document.body) first.focus({ preventScroll: true });
  }

  document.addEventListener("DOMContentLoaded", start);
  // After htmx puts in the next item (or the same one with an error), start again.
  document.addEventListener("htmx:afterSettle", function () {
    if (workspace()) start();
  });
})();
