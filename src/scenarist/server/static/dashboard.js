// scenarist dashboard: draws the charts described by <script type="application/json">
// blocks. The data is read with JSON.parse(textContent), never evaluated or inserted
// as HTML; labels reach Chart.js as plain strings, which it draws on a canvas.
(function () {
  "use strict";
  var COLORS = ["#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2", "#4b5563", "#ca8a04"];

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
        tension: 0.2
      };
    });
    new Chart(canvas, {
      type: spec.kind,
      data: { labels: spec.labels, datasets: datasets },
      options: {
        animation: false,
        responsive: true,
        maintainAspectRatio: false,
        plugins: { legend: { display: datasets.length > 1 } },
        scales: {
          y: { beginAtZero: true, title: { display: true, text: spec.y_label } },
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
