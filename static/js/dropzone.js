/* The import page's drop zone: files dropped on it go into the form's file input (which stays
   usable on its own, with the keyboard, and without this script), and the chosen files are
   listed with their sizes. The server checks the size limit again. */
(function () {
  "use strict";

  function size(bytes) {
    if (bytes < 1024) return bytes + " bytes";
    if (bytes < 1048576) return (bytes / 1024).toFixed(1) + " KB";
    return (bytes / 1048576).toFixed(1) + " MB";
  }

  function setUp(zone) {
    const input = zone.querySelector("input[type=file]");
    const list = zone.querySelector(".chosen-files");
    const warning = document.getElementById("files-warning");
    const limit = Number(zone.dataset.maxBytes || 0);

    function show() {
      list.replaceChildren();
      let total = 0;
      for (const file of input.files) {
        total += file.size;
        const item = document.createElement("li");
        item.textContent = file.name + " (" + size(file.size) + ")";
        list.appendChild(item);
      }
      if (warning) {
        const over = limit && total > limit;
        warning.hidden = !over;
        warning.textContent = over
          ? "These files are " + size(total) + " together; uploads are limited to " + size(limit) + "."
          : "";
      }
    }

    zone.addEventListener("dragover", function (event) {
      event.preventDefault();
      zone.classList.add("drop-over");
    });
    zone.addEventListener("dragleave", function () { zone.classList.remove("drop-over"); });
    zone.addEventListener("drop", function (event) {
      event.preventDefault();
      zone.classList.remove("drop-over");
      const dropped = event.dataTransfer && event.dataTransfer.files;
      if (!dropped || !dropped.length) return;
      const files = new DataTransfer();
      for (const file of dropped) files.items.add(file);
      input.files = files.files;
      show();
    });
    input.addEventListener("change", show);
    show();
  }

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll(".drop-zone").forEach(setUp);
  });
})();
