/* yace HTML report: draws the charts described in #yace-charts with uPlot.
   Everything it needs is on the page; it makes no network request. */
(function () {
  "use strict";
  var holder = document.getElementById("yace-charts");
  if (!holder || typeof uPlot === "undefined") return;
  var doc = JSON.parse(holder.textContent);
  var words = doc.words || {};
  function word(k, en) { return words[k] || en; }

  function num(v, digits) {
    return v.toLocaleString("en-US", { maximumFractionDigits: digits });
  }
  function dur(us) {
    if (us == null || !isFinite(us)) return "—";
    if (us < 1000) return num(us, us < 10 ? 1 : 0) + " µs";
    if (us < 1e6) return num(us / 1000, us < 1e4 ? 2 : 1) + " ms";
    return num(us / 1e6, 2) + " s";
  }
  function bytes(v) {
    var units = ["B", "KiB", "MiB", "GiB", "TiB"], u = 0;
    while (Math.abs(v) >= 1024 && u < units.length - 1) { v /= 1024; u++; }
    return num(v, u === 0 ? 0 : Math.abs(v) < 10 ? 2 : 1) + " " + units[u];
  }
  // Axis steps for bytes: 1, 2, 5… of a binary unit, so ticks read 2 MiB, 4 MiB.
  var BYTE_STEPS = [];
  for (var k = 0; k < 5; k++) {
    [1, 2, 5, 10, 20, 50, 100, 200, 500].forEach(function (m) { BYTE_STEPS.push(m * Math.pow(1024, k)); });
  }
  function fmt(unit, v) {
    if (v == null || !isFinite(v)) return "—";
    switch (unit) {
      case "us": return dur(v);
      case "per_s": return num(v, v < 10 ? 2 : 1) + "/s";
      case "cores": return num(v, 3) + " " + word("cores", "cores");
      case "pct": return num(v, 3) + "%";
      case "cpu": return num(v, 1) + "%";
      case "bytes": return bytes(v);
      default: return num(v, 2);
    }
  }
  function short(unit, v) {
    if (v == null) return "";
    if (unit === "us") return dur(v);
    if (unit === "pct" || unit === "cpu") return num(v, 2) + "%";
    if (unit === "bytes") return bytes(v);
    var a = Math.abs(v);
    if (a >= 1e6) return num(v / 1e6, 1) + "M";
    if (a >= 1e3) return num(v / 1e3, 1) + "k";
    return num(v, 2);
  }
  // m:ss or h:mm:ss, with tenths off a whole second (a server sample).
  function clock(s) {
    var t = Math.round(s * 10), tenth = t % 10;
    s = (t - tenth) / 10;
    var h = Math.floor(s / 3600), m = Math.floor(s / 60) % 60, x = s % 60;
    var mm = (h > 0 && m < 10 ? "0" : "") + m, ss = (x < 10 ? "0" : "") + x;
    return (h > 0 ? h + ":" : "") + mm + ":" + ss + (tenth ? "." + tenth : "");
  }
  function pct(x) {
    if (x <= 0) return "0%";
    var p = 100 * (1 - Math.pow(10, -x));
    return num(p, Math.max(0, Math.ceil(x) - 2)) + "%";
  }
  function xfmt(kind, v) {
    if (kind === "time") return clock(v);
    if (kind === "search") return num(v, 2) + "/s";
    if (kind === "spectrum") return "p" + pct(v).replace("%", "");
    return word("from", "latency from") + " " + dur(v);
  }

  // One tooltip, moved to whichever chart the cursor is on.
  var tip = document.createElement("div");
  tip.className = "yace-tip";
  tip.setAttribute("role", "tooltip");
  document.body.appendChild(tip);

  function tooltip(chart) {
    return {
      hooks: {
        setCursor: function (u) {
          var i = u.cursor.idx;
          if (i == null || u.cursor.left < 0) {
            if (tip.owner === u) tip.style.display = "none";
            return;
          }
          var rows = ["<b>" + xfmt(chart.kind, u.data[0][i]) + "</b>"];
          for (var s = 1; s < u.series.length; s++) {
            var meta = u.series[s]._yace;
            if (!meta || !u.series[s].show) continue;
            rows.push('<span style="color:' + meta.color + '">●</span> ' +
              meta.label + ": " + fmt(meta.unit, u.data[s][i]));
          }
          tip.innerHTML = rows.join("<br>");
          tip.owner = u;
          tip.style.display = "block";
          var box = u.over.getBoundingClientRect();
          var x = box.left + window.scrollX + u.cursor.left + 14;
          var y = box.top + window.scrollY + u.cursor.top + 14;
          var w = tip.offsetWidth;
          if (x + w > window.scrollX + document.documentElement.clientWidth - 8) {
            x = x - w - 28;
          }
          tip.style.left = x + "px";
          tip.style.top = y + "px";
        },
      },
    };
  }

  var sync = uPlot.sync("yace-time");
  var plots = [];

  // The time charts share one axis: the run's seconds, from the start to
  // the last second or server sample any of them has.
  var tmax = 0;
  doc.charts.forEach(function (c) {
    if (c.kind === "time" && c.x.length) tmax = Math.max(tmax, c.x[c.x.length - 1]);
  });

  function build(chart, el, log) {
    var x = chart.x, pre = false, post = false;
    if (chart.kind === "time" && x.length) {
      pre = x[0] > 0;
      post = x[x.length - 1] < tmax;
      x = (pre ? [0] : []).concat(x, post ? [tmax] : []);
    }
    // A series on that axis: no value where it was widened.
    function span(vals) {
      if (!pre && !post) return vals;
      return (pre ? [null] : []).concat(vals, post ? [null] : []);
    }
    var data = [x];
    var series = [{ label: chart.kind === "time" ? word("time", "time") : chart.kind === "spectrum" ? word("percentile", "percentile") : chart.kind === "search" ? word("rate", "offered rate") : word("latency", "latency"),
      value: function (u, v) { return v == null ? "—" : xfmt(chart.kind, v); } }];
    var bands = [];
    var units = ["", ""];
    var bars = chart.kind === "hist" && chart.series.length === 1;
    chart.series.forEach(function (s) {
      var unit = s.unit;
      units[s.axis] = units[s.axis] || unit;
      var vals = span(s.values);
      if (log && s.axis === 0) vals = vals.map(function (v) { return v != null && v > 0 ? v : null; });
      var scale = s.axis === 1 ? "y2" : "y";
      if (s.lo && s.hi) {
        var hiIdx = data.length;
        data.push(span(s.hi));
        series.push({ label: s.label + " (" + word("fastest", "fastest second") + ")", scale: scale, stroke: s.color + "55", width: 0.5,
          points: { show: false }, value: function (u, v) { return fmt(unit, v); } });
        data.push(span(s.lo));
        series.push({ label: s.label + " (" + word("slowest", "slowest second") + ")", scale: scale, stroke: s.color + "55", width: 0.5,
          points: { show: false }, value: function (u, v) { return fmt(unit, v); } });
        bands.push({ series: [hiIdx, hiIdx + 1], fill: s.color + "22" });
      }
      data.push(vals);
      var opt = {
        label: s.label,
        scale: scale,
        stroke: s.color,
        width: 1.5,
        spanGaps: false,
        points: { show: false },
        value: function (u, v) { return fmt(unit, v); },
      };
      if (s.dash) opt.dash = [6, 4];
      // Read at fewer samples than its source's other figures: joined
      // across the samples it was not read at, each reading a dot.
      if (s.sparse) {
        opt.spanGaps = true;
        opt.points = { show: true, size: 5, fill: s.color, stroke: s.color };
      }
      if (s.points) {
        opt.paths = function () { return null; };
        opt.points = { show: true, size: 10, fill: s.color, stroke: s.color };
      }
      if (bars) {
        opt.paths = uPlot.paths.bars({ size: [0.92, Infinity], align: 1 });
        opt.fill = s.color + "99";
      } else if (chart.kind === "hist") {
        opt.paths = uPlot.paths.stepped({ align: 1 });
      }
      opt._yace = { label: s.label, unit: unit, color: s.color };
      series.push(opt);
    });
    var scales = {
      x: { time: false },
      y: { distr: log ? 3 : 1, range: log ? undefined : function (u, min, max) { return [0, max > 0 ? max * 1.05 : 1]; } },
    };
    if (chart.kind === "hist" || chart.kind === "search") scales.x.distr = 3;
    var axes = [
      {
        values: function (u, splits) {
          return splits.map(function (v) {
            if (v == null) return "";
            return chart.kind === "time" ? clock(v) : chart.kind === "spectrum" ? pct(v) : chart.kind === "search" ? short("per_s", v) + "/s" : dur(v);
          });
        },
        splits: chart.kind === "spectrum" ? function (u, i, min, max) { var out = []; for (var k = Math.ceil(min); k <= max; k++) out.push(k); return out; } : undefined,
        // Whole seconds, minutes and hours on the time axis.
        incrs: chart.kind === "time" ? [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400] : undefined,
        size: 40,
      },
      { scale: "y", size: 70, incrs: units[0] === "bytes" ? BYTE_STEPS : undefined,
        values: function (u, splits) { return splits.map(function (v) { return short(units[0], v); }); } },
    ];
    if (units[1]) {
      scales.y2 = { range: function (u, min, max) { return [0, max > 0 ? max * 1.05 : 1]; } };
      axes.push({ scale: "y2", side: 1, size: 70, grid: { show: false }, incrs: units[1] === "bytes" ? BYTE_STEPS : undefined,
        values: function (u, splits) { return splits.map(function (v) { return short(units[1], v); }); } });
    }
    var opts = {
      width: Math.max(300, el.clientWidth),
      height: 280,
      series: series,
      bands: bands,
      scales: scales,
      axes: axes,
      legend: { live: false },
      cursor: chart.kind === "time" ? { sync: { key: sync.key }, drag: { x: true, y: false } } : { drag: { x: true, y: false } },
      plugins: [tooltip(chart)],
    };
    el.innerHTML = "";
    var u = new uPlot(opts, data, el);
    el.dataset.drawn = "1";
    el.dataset.kind = chart.kind;
    el.yacePlot = u; // read by tests/browser/report.py
    return u;
  }

  doc.charts.forEach(function (chart) {
    var el = document.querySelector('.plot[data-chart="' + chart.id + '"]');
    if (!el) return;
    var box = document.querySelector('input[data-log="' + chart.id + '"]');
    var entry = { chart: chart, el: el, plot: null };
    var draw = function () {
      if (entry.plot) entry.plot.destroy();
      entry.plot = build(chart, el, box ? box.checked : false);
    };
    if (box) box.addEventListener("change", draw);
    draw();
    plots.push(entry);
  });

  function fit(width) {
    plots.forEach(function (p) {
      p.plot.setSize({ width: width || Math.max(300, p.el.clientWidth), height: 280 });
    });
  }
  var pending;
  window.addEventListener("resize", function () {
    clearTimeout(pending);
    pending = setTimeout(function () { fit(); }, 100);
  });
  // A4 portrait at 96 dpi, less the page margins.
  window.addEventListener("beforeprint", function () { fit(680); });
  window.addEventListener("afterprint", function () { fit(); });
  document.documentElement.dataset.charts = String(plots.length);
  // When the page became interactive (read by bench/report/run.sh).
  window.yaceDrawnMs = performance.now();
})();
