/* yace live page with --dashboard-control: each button posts one word to
   "control" beside the page (faster, slower, pause, rate=N), with the
   token of the page's own address in the X-Yace-Token header (never in a
   URL), and shows what yace did ({message, now}) or why not ({error}).
   Only on a page served with control on; the read-only page has no such
   script. */
(function () {
  "use strict";
  var $ = function (id) { return document.getElementById(id); };
  var box = $("yace-live-control");
  var live = window.yaceLive || {};
  live.steered = 0;
  if (!box || typeof fetch === "undefined") return;
  var token = new URLSearchParams(location.search).get("token") || "";
  var said = $("yace-live-steered"), now = $("yace-live-now"), rate = $("yace-live-rate");

  function say(text, bad) {
    said.textContent = text;
    said.style.color = bad ? "var(--bad)" : "";
  }

  function send(body) {
    fetch("control", {
      method: "POST",
      headers: { "X-Yace-Token": token, "Content-Type": "text/plain" },
      body: body,
      cache: "no-store",
      credentials: "omit",
      redirect: "error"
    })
      .then(function (r) {
        return r.json().then(function (d) { return { ok: r.ok, d: d }; });
      })
      .then(function (a) {
        if (a.ok) {
          say(a.d.message, false);
          now.textContent = a.d.now;
          live.steered++;
        } else {
          say(a.d.error, true);
        }
      })
      .catch(function () { say("yace cannot be reached", true); });
  }

  box.querySelectorAll("button[data-control]").forEach(function (b) {
    b.addEventListener("click", function () { send(b.getAttribute("data-control")); });
  });
  function setRate() {
    if (rate.value !== "") send("rate=" + rate.value);
  }
  $("yace-live-rate-set").addEventListener("click", setRate);
  rate.addEventListener("keydown", function (e) {
    if (e.key === "Enter") setRate();
  });
})();
