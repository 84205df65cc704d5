// scenarist dashboard: draws the charts described by <script type="application/json">
// blocks. The data is read with JSON.parse(textContent), never evaluated or inserted
// as HTML; labels reach Chart.js as plain strings, which it draws on a canvas.
(function () {
  "use strict";
  var COLORS = ["#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2", "#4b5563", "#ca8a04"];

  // Money at its scale, as scenarist.report._money.format_usd: $0.000032, $0.0123, $12.35.
  function formatUsd(value) {
    if (value === null || value === undefined || !isFinite(value)) { return "–"; }
    var sign = value < 0 ? "-" : "";
    var size = Math.abs(value);
    if (size === 0) { return "$0.00"; }
    if (size >= 1) {
      return sign + "$" + size.toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 });
    }
    if (size >= 0.01) {
      var text = size.toFixed(4).replace(/0+$/, "");
      var decimals = Math.max(2, (text.split(".")[1] || "").length);
      return sign + "$" + size.toFixed(decimals);
    }
    var digits = 1 - Math.floor(Math.log10(size));
    return sign + "$" + size.toFixed(digits).replace(/0+$/, "");
  }

  function axis(unit, label) {
    var y = { beginAtZero: true, title: { display: true, text: label }, ticks: {} };
    if (unit === "percent") {  // a pass rate is always shown on 0-100 %
      y.min = 0;
      y.max = 100;
      y.ticks.stepSize = 25;
      y.ticks.callback = function (v) { return v + " %"; };
    } else if (unit === "usd") {
      y.ticks.callback = function (v) { return formatUsd(v); };
    }
    return y;
  }

  function tooltipLabel(unit) {
    return function (context) {
      var v = context.parsed.y;
      var shown = unit === "usd" ? formatUsd(v) : (unit === "percent" ? v + " %" : String(v));
      return (context.dataset.label ? context.dataset.label + ": " : "") + shown;
    };
  }

  function draw(canvas) {
    if (typeof Chart === "undefined" || Chart.getChart(canvas)) {
      return;
    }
    var source = document.getElementById(canvas.dataset.chart);
    if (!source) {
      return;
    }
    var spec = JSON.parse(source.textContent);
    var datasets = spec.series.map(function (series, i) {
      var color = COLORS[i % COLORS.length];
      return {
        label: series.label,
        data: series.values,
        borderColor: color,
        backgroundColor: spec.kind === "bar" ? color + "99" : color,
        spanGaps: true,
        pointRadius: 3,
        tension: 0,  // straight segments: smoothing overshoots 0 % and 100 %
        cubicInterpolationMode: "default"
      };
    });
    new Chart(canvas, {
      type: spec.kind,
      data: { labels: spec.labels, datasets: datasets },
      options: {
        animation: false,
        responsive: true,
        maintainAspectRatio: false,
        plugins: {
          legend: { display: datasets.length > 1 },
          tooltip: { callbacks: { label: tooltipLabel(spec.y_unit) } }
        },
        scales: {
          y: axis(spec.y_unit, spec.y_label),
          x: { ticks: { maxRotation: 0, autoSkip: true, maxTicksLimit: 8 } }
        }
      }
    });
  }

  function drawAll(root) {
    (root || document).querySelectorAll("canvas[data-chart]").forEach(draw);
  }

  document.addEventListener("DOMContentLoaded", function () { drawAll(document); });
  document.addEventListener("htmx:afterSettle", function (event) { drawAll(event.target); });
})();
