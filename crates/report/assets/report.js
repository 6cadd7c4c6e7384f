/* yace HTML report: draws the charts described in #yace-charts with uPlot.
   Everything it needs is on the page; it makes no network request. */
(function () {
  "use strict";
  var holder = document.getElementById("yace-charts");
  if (!holder || typeof uPlot === "undefined") return;
  var doc = JSON.parse(holder.textContent);
  var words = doc.words || {};
  function word(k, en) { return words[k] || en; }

  // Text for the tooltip's HTML (labels may be a target's name).
  function h(t) {
    return String(t).replace(/[&<>"]/g, function (c) { return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" }[c]; });
  }
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
  function xfmt(chart, v) {
    var kind = chart.kind;
    if (kind === "time") return clock(v);
    if (kind === "search") return num(v, 2) + "/s";
    if (kind === "spectrum") return "p" + pct(v).replace("%", "");
    if (kind === "sweep") return (chart.axis ? chart.axis + " " : "") + num(v, 2);
    if (kind === "groups") return (chart.ticks || [])[Math.round(v)] || "";
    return word("from", "latency from") + " " + dur(v);
  }
  // A lab chart (against a swept parameter, or a dot plot of targets):
  // medians with error bars and each repetition as a dot.
  function lab(chart) { return chart.kind === "sweep" || chart.kind === "groups"; }

  // The x index nearest the cursor that has a measured figure (a lab
  // chart's fitted curve has values between them).
  function measured(u, i) {
    var best = i, dist = Infinity, left = u.cursor.left;
    for (var j = 0; j < u.data[0].length; j++) {
      var any = false;
      for (var s = 1; s < u.series.length; s++) {
        var m = u.series[s]._yace;
        if (m && m.dots && m.dots[j] && m.dots[j].length && u.series[s].show) any = true;
      }
      if (!any) continue;
      var d = Math.abs(u.valToPos(u.data[0][j], "x") - left);
      if (d < dist) { dist = d; best = j; }
    }
    return best;
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
          if (lab(chart)) i = measured(u, i);
          var rows = ["<b>" + h(xfmt(chart, u.data[0][i])) + "</b>"];
          for (var s = 1; s < u.series.length; s++) {
            var meta = u.series[s]._yace;
            if (!meta || !u.series[s].show) continue;
            var v = u.data[s][i];
            if (lab(chart) && v == null) continue;
            var row = '<span style="color:' + meta.color + '">●</span> ' +
              h(meta.label) + ": " + fmt(meta.unit, v);
            if (meta.lo && meta.lo[i] != null && meta.hi[i] != null) {
              row += " [" + fmt(meta.unit, meta.lo[i]) + " – " + fmt(meta.unit, meta.hi[i]) + "]";
            }
            if (meta.dots && meta.dots[i] && meta.dots[i].length) {
              row += '<br><small>&nbsp;&nbsp;&nbsp;' + word("runs", "runs") + ": " +
                meta.dots[i].map(function (d) { return fmt(meta.unit, d); }).join(" · ") + "</small>";
            }
            rows.push(row);
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
  function timeAxis(charts) {
    tmax = 0;
    charts.forEach(function (c) {
      if (c.kind === "time" && c.x.length) tmax = Math.max(tmax, c.x[c.x.length - 1]);
    });
  }
  timeAxis(doc.charts);

  // Error bars, repetitions' dots and vertical marks, over a lab chart;
  // the marks over a time chart too (a run's markers).
  function extras(chart) {
    var groups = chart.kind === "groups";
    return {
      hooks: {
        draw: function (u) {
          var ctx = u.ctx, r = uPlot.pxRatio || 1, box = u.bbox, xs = u.data[0];
          ctx.save();
          ctx.beginPath();
          ctx.rect(box.left, box.top, box.width, box.height);
          ctx.clip();
          for (var s = 1; s < u.series.length; s++) {
            var meta = u.series[s]._yace;
            if (!meta || !u.series[s].show || !(meta.lo || meta.dots)) continue;
            var sc = u.series[s].scale, ylog = u.scales[sc].distr === 3;
            var ok = function (v) { return v != null && isFinite(v) && (!ylog || v > 0); };
            ctx.strokeStyle = meta.color;
            ctx.fillStyle = meta.color;
            for (var i = 0; i < xs.length; i++) {
              var px = u.valToPos(xs[i], "x", true);
              var dots = meta.dots && meta.dots[i] || [];
              // A dot plot: the runs side by side, the median a bar across
              // them, the interval beside them.
              var half = groups ? ((dots.length - 1) * 4.5 + 8) * r : 0;
              if (meta.lo && ok(meta.lo[i]) && ok(meta.hi[i])) {
                var y0 = u.valToPos(meta.lo[i], sc, true), y1 = u.valToPos(meta.hi[i], sc, true);
                var ex = px + (groups ? half + 10 * r : 0), cap = (groups ? 6 : 5) * r;
                ctx.lineWidth = 1.5 * r;
                ctx.beginPath();
                ctx.moveTo(ex, y0); ctx.lineTo(ex, y1);
                ctx.moveTo(ex - cap, y0); ctx.lineTo(ex + cap, y0);
                ctx.moveTo(ex - cap, y1); ctx.lineTo(ex + cap, y1);
                ctx.stroke();
              }
              var v = u.data[s][i];
              if (groups && ok(v)) {
                var y = u.valToPos(v, sc, true);
                ctx.lineWidth = 3 * r;
                ctx.beginPath();
                ctx.moveTo(px - half, y); ctx.lineTo(px + half + 10 * r, y);
                ctx.stroke();
              }
              ctx.lineWidth = 1 * r;
              for (var k = 0; k < dots.length; k++) {
                if (!ok(dots[k])) continue;
                // Side by side, so that equal figures stay visible.
                var dx = (k - (dots.length - 1) / 2) * (groups ? 9 : 3) * r;
                ctx.beginPath();
                ctx.arc(px + dx, u.valToPos(dots[k], sc, true), 3.2 * r, 0, 2 * Math.PI);
                ctx.globalAlpha = 0.35;
                ctx.fill();
                ctx.globalAlpha = 1;
                ctx.stroke();
              }
            }
          }
          // Vertical marks (a knee), labelled above the plot, where no
          // figure is.
          var labels = [];
          (chart.marks || []).forEach(function (m) {
            var px = u.valToPos(m.x, "x", true);
            if (!isFinite(px)) return;
            ctx.strokeStyle = m.color;
            ctx.lineWidth = 1.5 * r;
            ctx.setLineDash([5 * r, 4 * r]);
            ctx.beginPath();
            ctx.moveTo(px, box.top); ctx.lineTo(px, box.top + box.height);
            ctx.stroke();
            ctx.setLineDash([]);
            labels.push([px, m]);
          });
          ctx.restore();
          ctx.save();
          ctx.font = (11 * r) + "px system-ui, sans-serif";
          ctx.textAlign = "left";
          ctx.textBaseline = "alphabetic";
          var end = -Infinity;
          labels.sort(function (a, b) { return a[0] - b[0]; }).forEach(function (l) {
            var px = l[0], m = l[1], w = ctx.measureText(m.label).width;
            // Right of its line, else left of it (at the plot's edge, or
            // where the label before it reaches).
            var tx = px + 3 * r;
            if (tx + w > box.left + box.width || tx < end) tx = Math.max(end, px - 3 * r - w);
            ctx.fillStyle = m.color;
            ctx.fillText(m.label, tx, box.top - 6 * r);
            end = tx + w + 8 * r;
          });
          ctx.restore();
        },
      },
    };
  }

  // A chart's uPlot options and data (drawn by build(), or handed to a
  // plot already drawn by update()).
  function prepare(chart, el, log) {
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
    var series = [{ label: lab(chart) ? chart.axis || "" : chart.kind === "time" ? word("time", "time") : chart.kind === "spectrum" ? word("percentile", "percentile") : chart.kind === "search" ? word("rate", "offered rate") : word("latency", "latency"),
      value: function (u, v) { return v == null ? "—" : xfmt(chart, v); } }];
    // A lab chart's log toggle is its x axis's.
    var xlog = log && chart.kind === "sweep";
    if (xlog) log = false;
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
      // Medians through their gaps (a fitted curve's x values), each a
      // point; a dot plot's are drawn by extras().
      if (lab(chart) && s.dots) {
        opt.spanGaps = true;
        opt.width = 2;
        opt.points = { show: true, size: 7, fill: s.color, stroke: s.color };
        if (chart.kind === "groups") {
          opt.paths = function () { return null; };
          opt.points = { show: false };
        }
      }
      if (bars) {
        opt.paths = uPlot.paths.bars({ size: [0.92, Infinity], align: 1 });
        opt.fill = s.color + "99";
      } else if (chart.kind === "hist") {
        opt.paths = uPlot.paths.stepped({ align: 1 });
      }
      opt._yace = { label: s.label, unit: unit, color: s.color, lo: s.err_lo, hi: s.err_hi, dots: s.dots };
      series.push(opt);
    });
    var scales = {
      x: { time: false },
      y: { distr: log ? 3 : 1, range: log ? undefined : function (u, min, max) { return [0, max > 0 ? max * 1.05 : 1]; } },
    };
    if (chart.kind === "hist" || chart.kind === "search" || xlog) scales.x.distr = 3;
    // Measured x values (ticks on a log axis), and room for the error bars
    // and dots, which are not series.
    var at = [], top = 0, bottom = Infinity, low = Infinity;
    function reach(v) {
      if (v == null) return;
      top = Math.max(top, v);
      low = Math.min(low, v);
      if (v > 0) bottom = Math.min(bottom, v);
    }
    if (lab(chart)) {
      chart.series.forEach(function (s) {
        [s.values, s.err_hi, s.err_lo].forEach(function (vs) {
          (vs || []).forEach(reach);
        });
        (s.dots || []).forEach(function (ds, i) {
          if (ds && ds.length && at.indexOf(chart.x[i]) < 0) at.push(chart.x[i]);
          (ds || []).forEach(reach);
        });
      });
      at.sort(function (a, b) { return a - b; });
      var lo = at.length ? at[0] : 0, hi = at.length ? at[at.length - 1] : 1;
      scales.x.range = chart.kind === "groups" ? function () { return [-0.5, (chart.ticks || []).length - 0.5]; }
        : xlog ? function () { return [lo / 1.3, hi * 1.3]; }
        : function () { var pad = (hi - lo) * 0.05 || 1; return [lo - pad, hi + pad]; };
      // A dot plot is read for its spread: its axis need not start at 0.
      var span = top - low;
      scales.y.range = log ? function () { return [bottom / 1.3, top * 1.3]; }
        : chart.kind === "groups" && span > 0 ? function () { return [Math.max(0, low - span * 0.3), top + span * 0.3]; }
        : function () { return [0, top > 0 ? top * 1.08 : 1]; };
    }
    var axes = [
      {
        values: function (u, splits) {
          return splits.map(function (v) {
            if (v == null) return "";
            if (chart.kind === "groups") return v === Math.round(v) ? (chart.ticks || [])[v] || "" : "";
            if (chart.kind === "sweep") return short("count", v);
            return chart.kind === "time" ? clock(v) : chart.kind === "spectrum" ? pct(v) : chart.kind === "search" ? short("per_s", v) + "/s" : dur(v);
          });
        },
        splits: chart.kind === "spectrum" ? function (u, i, min, max) { var out = []; for (var k = Math.ceil(min); k <= max; k++) out.push(k); return out; }
          : chart.kind === "groups" ? function () { return (chart.ticks || []).map(function (t, k) { return k; }); }
          : xlog ? function () { return at; } : undefined,
        // Every measured value labelled on a log axis (uPlot keeps 1, 2, 5…).
        filter: xlog ? function (u, splits) { return splits; } : undefined,
        label: chart.kind === "sweep" ? chart.axis : undefined,
        labelSize: chart.kind === "sweep" ? 22 : undefined,
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
      cursor: chart.kind === "time" ? { sync: { key: sync.key }, drag: { x: true, y: false } }
        // A lab chart's cursor points sit on the measured value nearest it.
        : lab(chart) ? { drag: { x: true, y: false }, dataIdx: function (u, s, i) { return measured(u, i); } }
        : { drag: { x: true, y: false } },
      // Lab charts' extras, and the vertical marks (a knee, a run's markers).
      plugins: lab(chart) || chart.marks ? [tooltip(chart), extras(chart)] : [tooltip(chart)],
    };
    // Room above the plot for the marks' labels (null: uPlot's own).
    if (chart.marks) opts.padding = [22, null, null, null];
    return { opts: opts, data: data };
  }

  // What makes two drawings of a chart the same plot but for its figures.
  function shape(chart, opts) {
    return JSON.stringify([opts.series.map(function (s) { return s.label; }), opts.bands.length,
      opts.scales.y.distr, chart.marks || null, chart.kind]);
  }

  function build(chart, el, log) {
    var p = prepare(chart, el, log);
    el.innerHTML = "";
    var u = new uPlot(p.opts, p.data, el);
    u._yaceShape = shape(chart, p.opts);
    el.dataset.drawn = "1";
    el.dataset.kind = chart.kind;
    el.yacePlot = u; // read by tests/browser/report.py
    return u;
  }

  function place(chart) {
    var el = document.querySelector('.plot[data-chart="' + chart.id + '"]');
    if (!el) return;
    var box = document.querySelector('input[data-log="' + chart.id + '"]');
    var entry = { chart: chart, el: el, box: box, plot: null };
    entry.draw = function () {
      if (entry.plot) entry.plot.destroy();
      entry.plot = build(entry.chart, el, box ? box.checked : false);
    };
    if (box) box.addEventListener("change", entry.draw);
    entry.draw();
    plots.push(entry);
  }
  doc.charts.forEach(place);

  // A page whose figures change while it is open (the live page, fed by
  // its stream) hands the charts over again: each is redrawn in place with
  // its new figures, or drawn anew where its lines changed; a chart the
  // page has a plot for but had no figures for is drawn.
  function update(charts) {
    timeAxis(charts);
    charts.forEach(function (chart) {
      var entry = null;
      plots.forEach(function (p) { if (p.chart.id === chart.id) entry = p; });
      if (!entry) { place(chart); return; }
      entry.chart = chart;
      var p = prepare(chart, entry.el, entry.box ? entry.box.checked : false);
      if (entry.plot && entry.plot._yaceShape === shape(chart, p.opts)) entry.plot.setData(p.data);
      else entry.draw();
    });
    document.documentElement.dataset.charts = String(plots.length);
  }
  window.yaceCharts = { update: update };

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
