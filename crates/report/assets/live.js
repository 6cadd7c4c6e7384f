/* yace live page: follows the run over one stream of server-sent events
   from the yace that serves this page ("events" beside it, with the page's
   own query, which carries the token where one is needed) and hands each
   update to the report's script (window.yaceCharts). It talks to nothing
   else. Events:
     full  {v, charts, figures, status, cards}: every chart whole (on
           connecting, after falling behind, or when a chart's lines change);
     tail  {from, v, tails: [{chart, at, x, series: [{values, lo, hi}]}],
           status, cards}: each changed chart's figures from index `at` on,
           for a page that holds version `from`;
     end   {report, file, status, cards}: the run has ended; `report` is the
           HTML report of the final result. */
(function () {
  "use strict";
  var charts = window.yaceCharts;
  var live = (window.yaceLive = { events: 0, version: 0, report: null, lost: 0 });
  if (!charts || typeof EventSource === "undefined") return;
  var $ = function (id) { return document.getElementById(id); };
  var section = $("yace-live-charts");
  var held = []; // the charts as last received, in order

  function figures(html) {
    var made = false;
    held.forEach(function (c) {
      if (!document.querySelector('.plot[data-chart="' + c.id + '"]') && html[c.id]) {
        var box = document.createElement("div");
        box.innerHTML = html[c.id]; // the server's own markup, escaped there
        section.appendChild(box.firstElementChild);
        made = true;
      }
    });
    // Keep the figures in the charts' order.
    if (made) {
      held.forEach(function (c) {
        var f = document.getElementById("chart-" + c.id);
        if (f) section.appendChild(f);
      });
    }
  }

  function state(d) {
    $("yace-live-status").textContent = d.status;
    var cards = $("yace-live-cards"), have = cards.querySelectorAll(".card");
    if (have.length !== d.cards.length) {
      cards.textContent = "";
      d.cards.forEach(function () {
        var c = document.createElement("div"), v = document.createElement("div"), k = document.createElement("div");
        c.className = "card"; v.className = "v"; k.className = "k";
        c.appendChild(v); c.appendChild(k); cards.appendChild(c);
      });
      have = cards.querySelectorAll(".card");
    }
    d.cards.forEach(function (kv, i) {
      have[i].querySelector(".v").textContent = kv[1];
      have[i].querySelector(".k").textContent = kv[0];
    });
    $("yace-live-lost").hidden = true;
    live.events++;
  }

  // Cut at `at` and append: an array's figures from index `at` on.
  function splice(to, at, from) {
    to.length = Math.min(to.length, at);
    Array.prototype.push.apply(to, from);
  }

  var es = new EventSource("events" + location.search);
  es.addEventListener("full", function (e) {
    var d = JSON.parse(e.data);
    held = d.charts;
    figures(d.figures);
    charts.update(held);
    live.version = d.v;
    state(d);
  });
  es.addEventListener("tail", function (e) {
    var d = JSON.parse(e.data);
    // Sent only to a page that holds `from`; anything else waits for a full.
    if (d.from !== live.version) return;
    d.tails.forEach(function (t) {
      var c = held[t.chart];
      splice(c.x, t.at, t.x);
      t.series.forEach(function (s, k) {
        var to = c.series[k];
        ["values", "lo", "hi"].forEach(function (key) {
          if (s[key]) splice(to[key], t.at, s[key]);
        });
      });
    });
    charts.update(held);
    live.version = d.v;
    state(d);
  });
  es.addEventListener("end", function (e) {
    es.close();
    var d = JSON.parse(e.data);
    live.report = d.report;
    state(d);
    var save = $("yace-live-save");
    save.href = URL.createObjectURL(new Blob([d.report], { type: "text/html" }));
    save.download = d.file;
    $("yace-live-show").addEventListener("click", function () {
      document.open();
      document.write(d.report);
      document.close();
    });
    $("yace-live-end").hidden = false;
    // Nothing left to steer (--dashboard-control).
    var ctl = $("yace-live-control");
    if (ctl) ctl.hidden = true;
  });
  es.onerror = function () {
    // The browser tries again by itself while yace runs; said only when
    // no report came.
    if (live.report === null) {
      live.lost++;
      $("yace-live-lost").hidden = false;
    }
  };
})();
