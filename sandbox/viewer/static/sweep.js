// A sweep's results against what it swept (a section of type "sweep", `sandbox.viewer.page._sweep_chart`): a chosen
// metric against a chosen parameter, one line for each value of another parameter (each other one held at a chosen
// value), with its 95% CI over seeds as a band where the seeds give one; and a heat map of the metric over the two
// parameters (the chosen x and the lines' parameter). Drawn with Plotly, as the viewer's other charts.
// window.SandboxSweep(section, tools) returns the section's element; tools: { el, PALETTE, tint, plotlyText }.
"use strict";
(function () {
  const NONE = "";

  window.SandboxSweep = function (section, tools) {
    const { el, PALETTE, tint, plotlyText } = tools;
    const params = section.parameters;
    const label = (p) => section.names[params.indexOf(p)] || p;
    const rows = section.values[params[0]].map((_, i) => i);
    const distinct = (p) => [...new Set(rows.map((i) => section.values[p][i]))]
      .sort((a, b) => (typeof a === "number" && typeof b === "number" ? a - b : String(a).localeCompare(String(b), "en", { numeric: true })));
    const metricNames = Object.keys(section.metrics);
    const state = { metric: metricNames[0], x: params[0], by: params.length > 1 ? params[1] : NONE, fixed: {} };
    for (const p of params) state.fixed[p] = distinct(p)[0];

    const pick = (role, title, options, value, set) => el("label", {}, title + " ",
      el("select", { "data-role": role, onchange: (e) => { set(e.target.value); draw(); } },
        options.map(([v, text]) => el("option", { value: v, selected: String(v) === String(value) }, text))));
    const fixedBox = el("span", { class: "sweep-fixed" });
    const lines = el("div", { class: "chart", "data-role": "sweep-lines" });
    const heat = el("div", { class: "chart", "data-role": "sweep-heat" });
    const note = el("p", { class: "muted note", "data-role": "sweep-note" });
    const node = el("div", { class: "sweep", "data-parameters": params.length },
      el("div", { class: "controls" },
        pick("metric", "metric", metricNames.map((m) => [m, m]), state.metric, (v) => { state.metric = v; }),
        pick("x", "against", params.map((p) => [p, label(p)]), state.x, (v) => { state.x = v; if (state.by === v) state.by = params.find((p) => p !== v) || NONE; }),
        params.length > 1 ? pick("by", "a line for each", [[NONE, "(none)"], ...params.map((p) => [p, label(p)])], state.by,
          (v) => { state.by = v === state.x ? NONE : v; }) : null,
        fixedBox),
      lines, params.length > 1 ? heat : null, note);

    function value(p, i) { return section.values[p][i]; }
    function kept(i) { // the row's other parameters at their chosen values
      return params.every((p) => p === state.x || p === state.by || String(value(p, i)) === String(state.fixed[p]));
    }

    function draw() {
      const others = params.filter((p) => p !== state.x && p !== state.by);
      tools.fill(fixedBox, others.map((p) => pick("fixed", label(p) + " at", distinct(p).map((v) => [v, String(v)]), state.fixed[p],
        (v) => { state.fixed[p] = distinct(p).find((d) => String(d) === v); })));
      const metric = section.metrics[state.metric];
      const groups = state.by ? distinct(state.by) : [null];
      const traces = [];
      let banded = 0;
      groups.forEach((g, k) => {
        const colour = PALETTE[k % PALETTE.length];
        const chosen = rows.filter((i) => kept(i) && (g === null || String(value(state.by, i)) === String(g)))
          .sort((a, b) => distinct(state.x).indexOf(value(state.x, a)) - distinct(state.x).indexOf(value(state.x, b)));
        if (!chosen.length) return;
        const x = chosen.map((i) => value(state.x, i));
        const name = g === null ? state.metric : label(state.by) + " = " + g;
        const low = metric.low ? chosen.map((i) => metric.low[i]) : null, high = metric.high ? chosen.map((i) => metric.high[i]) : null;
        const interval = low && high && low.every((v, j) => Number.isFinite(v) && Number.isFinite(high[j]) && high[j] >= v) &&
          low.some((v, j) => high[j] > v); // an interval somewhere: seeds that all agree give none
        if (interval) {
          banded++;
          traces.push({ x: [...x, ...[...x].reverse()], y: [...high, ...[...low].reverse()], fill: "toself", mode: "lines",
            line: { width: 0, color: colour }, fillcolor: tint(colour, 0.2), showlegend: false, hoverinfo: "skip", type: "scatter",
            name: plotlyText(name) + " 95% CI" });
        }
        traces.push({ type: "scatter", mode: "lines+markers", x: x.map((v) => (typeof v === "string" ? plotlyText(v) : v)),
          y: chosen.map((i) => metric.mean[i]), name: plotlyText(name), line: { color: colour }, marker: { color: colour } });
      });
      const seeds = section.seeds ? Math.min(...section.seeds.filter(Number.isFinite)) : 1;
      const layout = { margin: { t: 10, r: 10, b: 50, l: 60 }, xaxis: { title: { text: plotlyText(label(state.x)) } },
        yaxis: { title: { text: plotlyText(state.metric + " (mean over seeds)") } }, legend: { orientation: "h", y: -0.25 },
        showlegend: true, hovermode: "closest" };
      window.Plotly.react(lines, traces, layout, { displaylogo: false, responsive: true });
      lines.dataset.traces = traces.filter((t) => !t.fill).length;
      lines.dataset.bands = banded;
      note.textContent = banded ? "Bands: 95% CI over seeds (t-interval; at least " + seeds + " seeds a setting)."
        : "No band: the settings have one seed each, or their seeds agree.";
      if (state.by && params.length > 1) {
        const xs = distinct(state.x), ys = distinct(state.by);
        const z = ys.map((yv) => xs.map((xv) => {
          const i = rows.find((r) => kept(r) && String(value(state.x, r)) === String(xv) && String(value(state.by, r)) === String(yv));
          return i === undefined ? null : metric.mean[i];
        }));
        window.Plotly.react(heat, [{ type: "heatmap", x: xs.map(String), y: ys.map(String), z, colorscale: "Viridis",
          colorbar: { title: { text: plotlyText(state.metric) } }, hovertemplate: "%{x}, %{y}: %{z}<extra></extra>" }],
        { margin: { t: 10, r: 10, b: 50, l: 80 }, xaxis: { title: { text: plotlyText(label(state.x)) }, type: "category" },
          yaxis: { title: { text: plotlyText(label(state.by)) }, type: "category" } }, { displaylogo: false, responsive: true });
        heat.hidden = false;
        heat.dataset.cells = z.flat().filter((v) => v !== null).length;
      } else {
        heat.hidden = true;
      }
      node.dataset.metric = state.metric;
    }
    requestAnimationFrame(draw);
    return node;
  };
})();
