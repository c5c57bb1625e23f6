// Live updates of the rollout page: the server sends the redrawn view as
// Server-Sent Events and this script swaps it in. The HTML is rendered and
// escaped by the server's templates.
(function () {
  "use strict";
  var root = document.getElementById("view");
  var live = document.getElementById("live");
  if (!root || !live || !window.EventSource) {
    return;
  }
  var updates = 0;
  var source = new EventSource(root.getAttribute("data-stream"));
  function show(state, text) {
    live.setAttribute("data-state", state);
    live.textContent = text;
  }
  source.addEventListener("open", function () { show("live", "live"); });
  source.addEventListener("error", function () { show("reconnecting", "reconnecting…"); });
  source.addEventListener("view", function (e) {
    root.innerHTML = e.data;
    updates++;
    live.setAttribute("data-updates", String(updates));
    show("live", "live · updated " + new Date().toLocaleTimeString());
  });
  source.addEventListener("gone", function () {
    source.close();
    show("gone", "the rollout was deleted");
  });
})();
