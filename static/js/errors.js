/* When an htmx request fails (throttled, session expired, server error) htmx swaps nothing;
   this says so on the page instead of leaving a button that seems to do nothing. */
(function () {
  "use strict";

  const MESSAGES = {
    0: "The server did not answer. Check your connection; nothing was saved by that action.",
    403: "Your session or the form expired: reload the page (drafts are saved).",
    404: "That is no longer here for you: reload the page.",
    429: "Too many requests: wait a moment and try again.",
  };

  function show(text) {
    let box = document.getElementById("request-error");
    if (!box) {
      box = document.createElement("div");
      box.id = "request-error";
      box.className = "request-error";
      box.setAttribute("role", "alert");
      document.body.appendChild(box);
    }
    box.textContent = text;
    box.hidden = false;
    clearTimeout(box._timer);
    box._timer = setTimeout(function () { box.hidden = true; }, 8000);
  }

  document.addEventListener("htmx:responseError", function (event) {
    const xhr = event.detail.xhr;
    const type = xhr.getResponseHeader("Content-Type") || "";
    const plain = type.startsWith("text/plain");
    let text = plain && xhr.responseText ? xhr.responseText.slice(0, 300) : "";
    if (!text && type.startsWith("text/html") && xhr.responseText) {
      // A refusal's message (templates/partials/error.html).
      const found = new DOMParser().parseFromString(xhr.responseText, "text/html")
        .querySelector("[data-error-message]");
      text = found ? found.textContent.trim().slice(0, 300) : "";
    }
    text = text || MESSAGES[xhr.status] || "Something went wrong (" + xhr.status + "); nothing was lost. Try again.";
    show(text);
  });
  document.addEventListener("htmx:sendError", function () { show(MESSAGES[0]); });
})();
