// The run viewer's page: the list of runs, a run's page, its transcripts. Used by `sandbox view` (data from the
// server's /api) and by `sandbox report` (data embedded as window.SANDBOX_REPORT). Every text is written through
// text nodes (el() below), never as HTML, so what a model wrote shows as text.
"use strict";
(function () {
  const REPORT = window.SANDBOX_REPORT || null;
  let main, live, where; // the page's elements, found once the document is parsed (a report runs this in <head>)
  let timer = null;
  let view = 0; // bumps on every navigation: a late answer for an old page is dropped

  function el(tag, attrs, ...kids) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key === "class") node.className = value;
      else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value === true ? "" : String(value));
    }
    for (const kid of kids.flat(Infinity)) {
      if (kid === null || kid === undefined || kid === false) continue;
      node.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
    }
    return node;
  }

  // node's children become kids (arrays flattened; null, undefined and false left out)
  function fill(node, ...kids) {
    node.replaceChildren(...kids.flat(Infinity).filter((k) => k !== null && k !== undefined && k !== false)
      .map((k) => (k instanceof Node ? k : document.createTextNode(String(k)))));
    return node;
  }

  const fmt = {
    num(v) {
      if (v === null || v === undefined || v === "") return "";
      if (typeof v !== "number") return String(v);
      if (Number.isInteger(v)) return v.toLocaleString("en");
      return Math.abs(v) >= 100 ? v.toFixed(1) : Math.abs(v) >= 1 ? v.toFixed(3) : v.toPrecision(3);
    },
    time(seconds) { return seconds ? new Date(seconds * 1000).toLocaleString("en-GB") : ""; },
    duration(s) {
      if (s === null || s === undefined) return "";
      if (s < 60) return s.toFixed(1) + " s";
      if (s < 3600) return (s / 60).toFixed(1) + " min";
      return (s / 3600).toFixed(1) + " h";
    },
  };

  async function getJSON(url) {
    const answer = await fetch(url, { cache: "no-store" });
    if (!answer.ok) throw new Error(url + ": " + answer.status + " " + (await answer.text()));
    return answer.json();
  }

  // Filters a report's embedded calls as the server does (sandbox.viewer.transcripts.Transcripts.query).
  function localQuery(rows, q) {
    const needle = (q.text || "").trim().toLowerCase();
    const keys = ["run", "epoch", "agent", "role", "illegal"];
    const matched = rows.filter((row) => keys.every((k) => !q[k] || String(row[k]) === q[k]) &&
      (!needle || [row.answer || "", ...row.prompt.map((m) => m.content)].join(" ").toLowerCase().includes(needle)));
    const facets = {};
    for (const k of keys) facets[k] = [...new Set(rows.filter((r) => r[k] !== null && r[k] !== undefined).map((r) => String(r[k])))]
      .sort((a, b) => a.localeCompare(b, "en", { numeric: true }));
    return { total: rows.length, matched: matched.length, offset: q.offset, limit: q.limit,
             rows: matched.slice(q.offset, q.offset + q.limit), facets };
  }

  const api = {
    runs: () => (REPORT ? Promise.resolve({ runs: [REPORT.run.row] }) : getJSON("/api/runs")),
    run: (path) => (REPORT ? Promise.resolve(REPORT.run) : getJSON("/api/run?path=" + encodeURIComponent(path))),
    calls(path, file, q) {
      if (REPORT) return Promise.resolve(localQuery((REPORT.transcripts || {})[file] || [], q));
      const params = new URLSearchParams({ path, file, offset: q.offset, limit: q.limit, text: q.text || "" });
      for (const k of ["run", "epoch", "agent", "role", "illegal"]) if (q[k]) params.set(k, q[k]);
      return getJSON("/api/transcripts?" + params.toString());
    },
    file: (base, name) => (REPORT ? null : "/files/" + [base && base !== "." ? base : null, name].filter(Boolean).join("/")
      .split("/").map(encodeURIComponent).join("/")),
  };

  function badge(status) { return el("span", { class: "badge status-" + status, "data-status": status }, status); }
  function runLink(path, text) {
    try {
      return el("a", { href: "#/run/" + encodeURIComponent(path) }, text || path);
    } catch (error) { // a name no address can carry (the server sends none; kept safe all the same)
      return el("span", { class: "muted" }, text || path);
    }
  }

  // A sortable, filterable table. columns: [{key, label, num, render}], rows: objects.
  function grid(columns, initial, opts = {}) {
    let rows = initial;
    let key = opts.sortKey || null, dir = opts.sortDir || 1, needle = "";
    const body = el("tbody");
    const heads = columns.map((c) => el("th", { "data-key": c.key, onclick: () => { dir = key === c.key ? -dir : 1; key = c.key; draw(); } }, c.label));
    const filter = el("input", { type: "search", placeholder: opts.placeholder || "filter rows", class: "table-filter",
                                 oninput: (e) => { needle = e.target.value.toLowerCase(); draw(); } });
    const count = el("span", { class: "muted count" });
    function text(row) { return columns.map((c) => String(row[c.key] ?? "")).join(" ").toLowerCase(); }
    function draw() {
      let shown = rows.filter((r) => (!needle || text(r).includes(needle)) && (!opts.keep || opts.keep(r)));
      if (key) {
        shown = [...shown].sort((a, b) => {
          const x = a[key], y = b[key];
          if (x === y) return 0;
          if (x === null || x === undefined || x === "") return 1;
          if (y === null || y === undefined || y === "") return -1;
          return (typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y), "en", { numeric: true })) * dir;
        });
      }
      heads.forEach((h) => { h.className = h.dataset.key === key ? (dir > 0 ? "sorted-asc" : "sorted-desc") : ""; });
      body.replaceChildren(...shown.map((row) => el("tr", { "data-path": row.path ?? null },
        columns.map((c) => cell(c, row)))));
      count.textContent = shown.length === rows.length ? rows.length + " rows" : shown.length + " of " + rows.length + " rows";
    }
    draw();
    const table = el("table", {}, el("thead", {}, el("tr", {}, heads)), body);
    const node = el("div", { class: "grid" }, el("div", { class: "controls" }, filter, count, opts.extra || null), el("div", { class: "scroll" }, table));
    node.redraw = draw;
    node.setRows = (fresh) => { rows = fresh; draw(); };
    return node;
  }

  // One cell: a column's own rendering, a number, or text (a long text cut, whole in its tooltip).
  function cell(column, row) {
    if (column.render) return el("td", { class: column.num ? "num" : column.wrap ? "wrap" : null }, column.render(row));
    if (column.num) return el("td", { class: "num" }, fmt.num(row[column.key]));
    const text = String(row[column.key] ?? "");
    return el("td", { title: text.length > 120 ? text : null }, text.length > 120 ? text.slice(0, 117) + "…" : text);
  }

  // ---- the list of runs ----
  function listRows(data) {
    return data.runs.map((r) => ({ ...r, headline_text: Object.entries(r.headline || {}).map(([k, v]) => k + " " + fmt.num(v)).join(" · ") }));
  }

  async function listPage(token) {
    where.textContent = "runs";
    const data = await api.runs();
    if (token !== view) return;
    const kindsSeen = [...new Set(data.runs.map((r) => r.kind).filter(Boolean))].sort();
    const statuses = ["running", "complete", "stopped", "incomplete", "failed", "corrupt"];
    let kind = "", status = "";
    const columns = [
      { key: "path", label: "run", render: (r) => [r.opens === false ? el("span", { class: "muted", "data-opens": "no" }, r.path) : runLink(r.path),
        r.fork ? el("div", { class: "muted fork-of", "data-fork": r.fork.parent }, forkText(r.fork)) : null] },
      { key: "kind", label: "kind" },
      { key: "status", label: "status", wrap: true, render: (r) => [badge(r.status), r.problem ? el("div", { class: "muted problem", title: r.problem }, r.problem) : null] },
      { key: "scenario", label: "scenario" },
      { key: "started", label: "started", render: (r) => fmt.time(r.started) },
      { key: "duration", label: "duration", num: true, render: (r) => fmt.duration(r.duration) },
      { key: "calls", label: "calls", num: true, render: (r) => [fmt.num(r.calls), r.not_an_llm ?
        el("div", { class: "not-llm", "data-not-llm": "yes", title: notLLMText(r.not_an_llm) }, "not an LLM") : null] },
      { key: "tokens", label: "tokens", num: true },
      { key: "headline_text", label: "headline figures", wrap: true, render: (r) => el("span", { class: "headline" }, r.headline_text) },
    ];
    const pick = (label, values, set) => el("select", { "aria-label": label, "data-filter": label, onchange: (e) => { set(e.target.value); table.redraw(); } },
      el("option", { value: "" }, "every " + label), values.map((v) => el("option", { value: v }, v)));
    const table = grid(columns, listRows(data), { sortKey: "started", sortDir: -1, placeholder: "filter runs",
      keep: (r) => (!kind || r.kind === kind) && (!status || r.status === status),
      extra: [pick("kind", kindsSeen, (v) => (kind = v)), pick("status", statuses, (v) => (status = v))] });
    table.id = "runs";
    fill(main, el("h1", {}, "Runs ", el("span", { class: "muted" }, data.root || "")), table);
    const poll = async () => {
      let fresh;
      try {
        fresh = await api.runs();
      } catch (error) {
        if (token === view) {
          live.textContent = "live: no answer from the server, trying again";
          schedule(poll, 4000, token);
        }
        return;
      }
      if (token !== view) return;
      const rows = listRows(fresh);
      table.setRows(rows);
      const running = rows.some((r) => r.status === "running");
      live.textContent = running ? "live: a run is in progress" : "";
      if (!REPORT) schedule(poll, running ? 2000 : 10000, token);
    };
    live.textContent = data.runs.some((r) => r.status === "running") ? "live: a run is in progress" : "";
    if (!REPORT) schedule(poll, 2000, token);
  }

  // "fork of NAME at generation 3": a fork's mark (its row's `fork`).
  function forkText(fork) {
    return "fork of " + fork.parent + (fork.at !== null && fork.at !== undefined ? " at " + fork.unit + " " + fork.at : "");
  }

  // ---- a run's page ----
  function facts(row) {
    const items = [["kind", row.kind], ["status", badge(row.status)], ["forked", row.fork ? forkText(row.fork) : null],
      ["scenario", row.scenario], ["started", fmt.time(row.started)],
      ["duration", fmt.duration(row.duration)], ["calls", fmt.num(row.calls)], ["cache hits", fmt.num(row.cache_hits)], ["tokens", fmt.num(row.tokens)]];
    if (row.problem) items.push(["problem", row.problem]);
    if (row.not_an_llm) items.push(["not an LLM", el("span", { class: "not-llm" }, notLLMText(row.not_an_llm))]);
    return el("dl", { class: "facts", id: "facts" }, items.filter(([, v]) => v !== "" && v !== null && v !== undefined).map(([k, v]) => [el("dt", {}, k), el("dd", { "data-fact": k }, v)]));
  }

  // the roles a user's function answered (a `rules:` model for a dry pipeline): no LLM agents' results
  function notLLMText(roles) {
    return Object.entries(roles).map(([role, spec]) => role + " answered by " + spec).join("; ") + ": a dry pipeline, not an LLM";
  }

  function summaryBlock(summary) {
    const entries = Object.entries(summary || {}).filter(([k, v]) => !["schema_version", "kind", "scenario"].includes(k) &&
      (typeof v === "number" || typeof v === "string" || typeof v === "boolean"));
    if (!entries.length) return null;
    return [el("h2", {}, "Headline figures"), el("dl", { class: "facts", id: "summary" }, entries.map(([k, v]) => [el("dt", {}, k), el("dd", {}, fmt.num(v))]))];
  }

  function plotlyText(s) { return String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;"); }

  // Plotly's default colours, given to each group's line and its band alike (left to Plotly, a band would take
  // the colour of trace 2i and its line that of 2i+1).
  const PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"];
  function tint(hex, alpha) {
    const n = parseInt(hex.slice(1), 16);
    return "rgba(" + (n >> 16) + "," + ((n >> 8) & 255) + "," + (n & 255) + "," + alpha + ")";
  }

  // The y-axis of a chart whose values move little against their size starts at zero (auto-range would make a
  // 0.5% change fill the chart).
  function yRange(section) {
    const ys = section.traces.flatMap((t) => [...t.y, ...(t.low || []), ...(t.high || [])]).filter((v) => typeof v === "number");
    if (!ys.length) return {};
    const low = Math.min(...ys), high = Math.max(...ys);
    return low >= 0 && high > 0 && high - low < 0.1 * high ? { rangemode: "tozero" } : {};
  }

  function chart(section, index) {
    const node = el("div", { class: "chart", id: "chart-" + index, "data-title": section.title });
    const traces = [];
    const category = (v) => (typeof v === "string" ? plotlyText(v) : v); // a category is text, never markup
    section.traces.forEach((t, i) => {
      const color = PALETTE[i % PALETTE.length];
      const x = t.x.map(category);
      if (t.low && t.high) {
        traces.push({ x: [...x, ...[...x].reverse()], y: [...t.high, ...[...t.low].reverse()], fill: "toself", mode: "lines",
          line: { width: 0, color }, fillcolor: tint(color, 0.2), showlegend: false, hoverinfo: "skip", legendgroup: "g" + i,
          type: "scatter", name: plotlyText(t.name) + " 95% CI" });
      }
      traces.push(section.mode === "bars" ? { type: "bar", x, y: t.y, name: plotlyText(t.name), marker: { color } }
        : { type: "scatter", mode: section.mode === "markers" ? "markers" : "lines+markers", x, y: t.y, name: plotlyText(t.name),
            legendgroup: "g" + i, line: { color, width: t.current ? 4 : 2 }, marker: { color } });
    });
    const layout = { margin: { t: (section.marks || []).length ? 30 : 10, r: 10, b: 45, l: 55 }, xaxis: { title: { text: plotlyText(section.x_title) } },
      yaxis: { title: { text: plotlyText(section.y_title || "") }, ...yRange(section) }, legend: { orientation: "h", y: -0.2 },
      showlegend: true, hovermode: "closest" }; // one line too is named (its norm, its group)
    // marks: vertical lines at steps (a fork's), each labelled above the plot
    layout.shapes = (section.marks || []).map((m) => ({ type: "line", xref: "x", yref: "paper", x0: m.x, x1: m.x, y0: 0, y1: 1,
      line: { color: "#555", width: 1, dash: "dash" } }));
    layout.annotations = (section.marks || []).map((m) => ({ xref: "x", yref: "paper", x: m.x, y: 1, yanchor: "bottom",
      showarrow: false, text: plotlyText(m.label), font: { size: 11, color: "#555" } }));
    const xs = section.traces.flatMap((t) => t.x);
    if (xs.length && xs.every(Number.isInteger) && Math.max(...xs) - Math.min(...xs) <= 20) layout.xaxis.dtick = 1; // whole epochs
    requestAnimationFrame(() => window.Plotly.react(node, traces, layout, { displaylogo: false, responsive: true }));
    return node;
  }

  function tree(section, index) {
    const node = el("div", { class: "chart tree", id: "tree-" + index });
    const trace = { type: "sunburst", ids: section.ids.map(plotlyText), labels: section.labels.map(plotlyText),
      parents: section.parents.map(plotlyText), values: section.values, branchvalues: "total", maxdepth: 4,
      hovertemplate: "%{label}<br>%{value} rows" + (section.colors ? "<br>mean " + plotlyText(section.color_title) + " %{color:.3g}" : "") + "<extra></extra>" };
    if (section.colors) Object.assign(trace, { marker: { colors: section.colors, colorscale: "RdBu", showscale: true,
      colorbar: { title: { text: plotlyText(section.color_title) } } } });
    requestAnimationFrame(() => window.Plotly.react(node, [trace], { margin: { t: 10, r: 10, b: 10, l: 10 } }, { displaylogo: false, responsive: true }));
    return node;
  }

  // A run's family: the tree of its root ancestor and forks (each linked, with its fork step and changes, the
  // current run marked), then the divergence plot (a chart whose marks are the fork steps).
  function branches(section, index) {
    const kids = (parent) => section.runs.map((r, i) => [r, i]).filter(([r]) => r.parent === parent);
    const item = ([r, i]) => el("li", { "data-run": r.name, class: r.current ? "current" : null },
      r.current ? el("strong", {}, r.name) : r.link && !REPORT ? runLink(r.link, r.name) : el("span", {}, r.name),
      r.current ? el("span", { class: "muted" }, " (this run)") : null,
      !r.exists ? el("span", { class: "muted" }, " (deleted)") : !r.inside ? el("span", { class: "muted" }, " (outside this folder)") : null,
      r.parent !== null ? el("span", { class: "muted fork-at", title: r.changes_full }, " · forked at " + r.unit + " " + r.at +
        (r.fresh ? " (a new run)" : "") + ": " + r.changes) : null,
      kids(i).length ? el("ul", {}, kids(i).map(item)) : null);
    return [el("ul", { class: "branches" }, kids(null).map(item)),
      section.cut ? el("p", { class: "muted" }, "more forks than shown") : null,
      section.chart ? el("div", { "data-type": "divergence" }, el("h3", {}, section.chart.title), chart(section.chart, "branches-" + index)) : null];
  }

  function tableSection(section, base) {
    const columns = section.columns.map((c, i) => ({ key: "c" + i, label: c, num: section.rows.some((r) => typeof r[i] === "number") }));
    const rows = section.rows.map((r) => Object.fromEntries(r.map((v, i) => ["c" + i, v])));
    const href = api.file(base, section.file);
    const note = section.total > section.rows.length ? "the first " + section.rows.length + " of " + section.total + " rows" : null;
    return [grid(columns, rows, { extra: [note ? el("span", { class: "muted" }, note) : null, href ? el("a", { href, download: "" }, section.file) : el("span", { class: "muted" }, section.file)] })];
  }

  function cellsSection(section, base) {
    const columns = section.columns.map((c, i) => ({ key: "c" + i, label: c, num: section.rows.some((r) => typeof r[i] === "number"),
      render: c === section.columns[0] ? null : null }));
    const rows = section.rows.map((r, n) => ({ ...Object.fromEntries(r.map((v, i) => ["c" + i, v])), link: section.links[n] }));
    columns.unshift({ key: "link", label: "cell", render: (r) => (r.link ? (REPORT ? r.link : runLink(r.link)) : el("span", { class: "muted" }, "not started")) });
    return [grid(columns, rows, {})];
  }

  // "written from epoch 0's interactions · played in epoch 1": the epochs whose evidence a version holds.
  function versionEpochs(v) {
    const read = v.evidence_epochs || [];
    const from = !read.length ? "" : read.length === 1 ? " · written from epoch " + read[0] + "'s interactions"
      : " · written from epochs " + read[0] + "–" + read[read.length - 1] + "'s interactions";
    return from + (v.epoch !== null && v.epoch !== undefined ? " · played in epoch " + v.epoch : "");
  }

  function policies(section) {
    return section.runs.map((run) => el("div", { class: "policies", "data-run": run.run },
      section.runs.length > 1 ? el("h3", {}, "Run " + run.run) : null,
      run.versions.map((v) => el("div", { class: "version", "data-version": v.version },
        el("div", { class: "muted version-label" }, "version " + v.version + versionEpochs(v) +
          (v.source ? " · " + v.source : "") + (v.unchanged ? " · unchanged" : "") + (v.legal === false ? " · illegal answer, policy kept" : "") +
          (v.illegal_answers ? " · " + v.illegal_answers + " illegal answers" : "")),
        el("p", { class: "diff" }, v.diff.map(([op, text]) => op === "+" ? el("ins", {}, text) : op === "-" ? el("del", {}, text) : text)),
        v.evidence.length ? el("details", {}, el("summary", {}, "evidence: " + v.evidence.length + " interactions"),
          v.evidence_rows.length ? grid(Object.keys(v.evidence_rows[0]).map((k) => ({ key: k, label: k, num: typeof v.evidence_rows[0][k] === "number" })), v.evidence_rows, {})
            : el("p", { class: "muted" }, v.evidence.join(", "))) : null,
        v.answer ? el("details", {}, el("summary", {}, "the MetaLM's answer"), el("pre", {}, v.answer)) : null))));
  }

  function transcripts(section, path) {
    const q = { offset: 0, limit: 50, text: "", run: "", epoch: "", agent: "", role: "", illegal: "" };
    const node = el("div", { class: "transcripts", "data-file": section.file });
    const selects = {};
    const every = { run: "every run", epoch: "every epoch", agent: "every agent", role: "every role", illegal: "legal and illegal" };
    const shown = (k, v) => (k === "illegal" ? (v === "true" ? "illegal only" : "legal only") : v);
    for (const k of Object.keys(every)) {
      selects[k] = el("select", { "aria-label": k, "data-filter": k, onchange: (e) => { q[k] = e.target.value; q.offset = 0; load(); } }, el("option", { value: "" }, every[k]));
    }
    let typing = null;
    const search = el("input", { type: "search", placeholder: "search prompts and answers", "data-filter": "text",
      oninput: (e) => { clearTimeout(typing); typing = setTimeout(() => { q.text = e.target.value; q.offset = 0; load(); }, 200); } });
    const count = el("span", { class: "muted count" });
    const prev = el("button", { onclick: () => { q.offset = Math.max(0, q.offset - q.limit); load(); } }, "‹ previous");
    const next = el("button", { onclick: () => { q.offset += q.limit; load(); } }, "next ›");
    const body = el("tbody");
    const head = ["#", "run", "epoch", "agent", "role", "step", "answer", "parsed", "illegal", "tokens in/out", "cache"].map((h) => el("th", {}, h));
    node.append(el("div", { class: "controls" }, Object.values(selects), search, prev, next, count),
      el("div", { class: "scroll" }, el("table", {}, el("thead", {}, el("tr", {}, head)), body)));
    function detail(row) {
      return el("tr", { class: "detail" }, el("td", { colspan: head.length },
        row.prompt.map((m) => [el("div", { class: "muted" }, m.role), el("pre", {}, m.content)]),
        el("div", { class: "muted" }, "answer"), el("pre", { class: "answer" }, row.answer ?? ""),
        row.error ? el("div", { class: "illegal" }, row.error) : null,
        el("div", { class: "muted" }, [row.call_id ? "call " + row.call_id : null, row.model ? "model " + row.model : null,
          row.latency_s !== null && row.latency_s !== undefined ? row.latency_s.toFixed(2) + " s" : null,
          row.prompt_cached_tokens ? row.prompt_cached_tokens + " prompt tokens from the prompt cache" : null].filter(Boolean).join(" · "))));
    }
    let asked = 0; // the latest question: an answer to an older one (a quick second click) is dropped
    async function load() {
      const mine = ++asked;
      let page;
      try {
        page = await api.calls(path, section.file, q);
      } catch (error) {
        if (mine === asked) count.textContent = "the calls could not be read: " + (error.message || error);
        return;
      }
      if (mine !== asked) return;
      for (const [k, select] of Object.entries(selects)) {
        const values = page.facets[k] || [];
        if (select.options.length - 1 !== values.length) {
          fill(select, el("option", { value: "" }, every[k]), values.map((v) => el("option", { value: v }, shown(k, v))));
          select.value = q[k];
        }
      }
      body.replaceChildren(...page.rows.map((row) => {
        const illegal = row.illegal === true || row.error;
        const tr = el("tr", { class: "call", "data-index": row.index },
          el("td", { class: "num" }, row.index), el("td", {}, row.run ?? ""), el("td", {}, row.epoch ?? ""), el("td", {}, row.agent ?? ""),
          el("td", {}, row.role ?? ""), el("td", {}, row.step ?? ""), el("td", { class: "answer" }, String(row.answer ?? "").slice(0, 160)),
          el("td", {}, row.parsed === null || row.parsed === undefined ? "" : typeof row.parsed === "object" ? JSON.stringify(row.parsed) : String(row.parsed)),
          el("td", { class: illegal ? "illegal" : "" }, row.illegal === true ? "illegal" : row.error ? "error" : row.illegal === false ? "legal" : ""),
          el("td", { class: "num" }, fmt.num(row.input_tokens) + " / " + fmt.num(row.output_tokens)),
          el("td", {}, row.cache_hit ? "hit" : ""));
        tr.addEventListener("click", () => {
          if (tr.nextSibling && tr.nextSibling.classList.contains("detail")) tr.nextSibling.remove();
          else tr.after(detail(row));
        });
        return tr;
      }));
      const last = Math.min(page.offset + page.rows.length, page.matched);
      count.textContent = page.matched ? "calls " + (page.offset + 1) + "–" + last + " of " + page.matched +
        (page.matched !== page.total ? " matching (" + page.total + " in all)" : "") : "no call matches (" + page.total + " in all)";
      count.dataset.matched = page.matched;
      count.dataset.total = page.total;
      prev.disabled = page.offset === 0;
      next.disabled = last >= page.matched;
    }
    node.reload = load;
    load();
    return node;
  }

  // The step the network view shows, as a line on the branches' divergence plot (drawn once Plotly has drawn it).
  function markStep(step, tries = 50) {
    for (const plot of main.querySelectorAll('[data-type="divergence"] .chart')) {
      if (!plot.layout) { // not drawn yet: again in a moment
        if (tries > 0) setTimeout(() => markStep(step, tries - 1), 100);
        continue;
      }
      if (!plot.baseShapes) plot.baseShapes = (plot.layout.shapes || []).slice();
      window.Plotly.relayout(plot, { shapes: [...plot.baseShapes, { type: "line", xref: "x", yref: "paper", x0: step, x1: step,
        y0: 0, y1: 1, line: { color: "#d62728", width: 2 } }] });
      plot.dataset.scrubber = step;
    }
  }

  // The calls of one agent (a network view's click): the page's transcripts filtered by it.
  function showCalls(agent) {
    const select = main.querySelector('.transcripts select[data-filter="agent"]');
    if (!select) return;
    const value = [...select.options].map((o) => o.value).find((v) => v === String(agent) || v.endsWith("-" + agent));
    select.value = value === undefined ? "" : value;
    select.dispatchEvent(new Event("change"));
    select.closest("section").scrollIntoView({ behavior: "smooth" });
  }

  function renderSection(section, index, row, path) {
    const base = row.path;
    const title = el("h2", {}, section.title || "");
    switch (section.type) {
      case "chart": return el("section", { "data-type": "chart" }, title, chart(section, index));
      case "table": return el("section", { "data-type": "table" }, title, tableSection(section, base));
      case "cells": return el("section", { "data-type": "cells" }, title, cellsSection(section, base));
      case "tree": return el("section", { "data-type": "tree" }, title, tree(section, index));
      case "branches": return el("section", { "data-type": "branches" }, title, branches(section, index));
      case "figures": return el("section", { "data-type": "figures" }, title, el("div", { class: "figures" },
        section.items.map((f) => el("figure", { title: "click to enlarge", onclick: (e) => e.currentTarget.classList.toggle("wide") },
          el("img", { src: f.url, alt: f.name, loading: "lazy" }), el("figcaption", { class: "muted" }, f.name,
            REPORT ? null : [" · ", el("a", { href: f.url, target: "_blank", rel: "noopener", onclick: (e) => e.stopPropagation() }, "open")])))));
      case "policies": return el("section", { "data-type": "policies" }, title, policies(section));
      case "runs": return el("section", { "data-type": "runs" }, title, el("ul", {}, section.links.map((l) => el("li", {}, REPORT ? l : runLink(l)))));
      case "transcripts": return el("section", { "data-type": "transcripts" }, title,
        section.note ? el("p", { class: "muted note", "data-held": section.held, "data-total": section.total }, section.note) : null,
        transcripts(section, path));
      case "sweep": return el("section", { "data-type": "sweep" }, title, window.SandboxSweep
        ? window.SandboxSweep(section, { el, fill, PALETTE, tint, plotlyText })
        : el("p", { class: "error" }, "the sweep chart's script did not load"));
      case "network": return el("section", { "data-type": "network" }, title, window.SandboxNetwork
        ? window.SandboxNetwork(section, { el, fill, fmt, onAgent: (agent) => showCalls(agent) })
        : el("p", { class: "error" }, "the network view's script did not load"));
      case "error": return el("section", { "data-type": "error" }, title, el("div", { class: "error" }, section.text));
      default: return el("section", {}, title, el("p", { class: "muted" }, "a section this viewer does not draw: " + section.type));
    }
  }

  async function runPage(path, token, previous) {
    where.textContent = path;
    let data;
    try {
      data = await api.run(path);
    } catch (error) {
      if (!previous) throw error; // the first load shows the error; a live poll tries again
      if (token === view) {
        live.textContent = "live: no answer from the server, trying again";
        schedule(() => runPage(path, token, previous), 4000, token);
      }
      return;
    }
    if (token !== view) return;
    const row = data.row;
    const signature = JSON.stringify({ ...data, row: { ...row, duration: null } }); // the working time counts on alone
    const running = row.status === "running";
    if (previous && previous.signature === signature) {
      const shown = main.querySelector('#facts [data-fact="duration"]');
      if (shown) shown.textContent = fmt.duration(row.duration);
      if (running) schedule(() => runPage(path, token, previous), 2000, token);
      return;
    }
    live.textContent = running ? "live: updated " + new Date().toLocaleTimeString("en-GB") : "";
    const state = { signature, transcripts: {} };
    const scrolled = window.scrollY;
    const sections = data.sections.map((s, i) => (s.type === "transcripts" && previous && previous.transcripts[s.file]
      ? el("section", { "data-type": "transcripts" }, el("h2", {}, s.title), previous.transcripts[s.file]) : renderSection(s, i, row, path)));
    for (const node of sections) {
      const t = node.querySelector(".transcripts");
      if (t) state.transcripts[t.dataset.file] = t;
      if (t && previous && previous.transcripts[t.dataset.file] === t) t.reload(); // kept: its filters stay, its rows update
    }
    for (const chart of main.querySelectorAll(".js-plotly-plot")) window.Plotly.purge(chart); // the old charts let go
    for (const network of main.querySelectorAll(".network")) if (network.network) network.network.kill(); // their WebGL too
    fill(main, el("h1", {}, REPORT ? row.scenario || path : path), facts(row), summaryBlock(data.summary), sections);
    window.scrollTo(0, scrolled);
    const network = main.querySelector(".network");
    if (network) { // the divergence plot follows the network's scrubber
      network.addEventListener("frame", () => markStep(Number(network.dataset.step)));
      requestAnimationFrame(() => requestAnimationFrame(() => markStep(Number(network.dataset.step))));
    }
    if (!REPORT && running) schedule(() => runPage(path, token, state), 2000, token);
  }

  function schedule(fn, ms, token) {
    clearTimeout(timer);
    timer = setTimeout(() => { if (token === view) fn(); }, ms);
  }

  function route() {
    const token = ++view;
    clearTimeout(timer);
    const show = (error) => fill(main, el("div", { class: "error" }, String(error.message || error)));
    let hash;
    try {
      hash = decodeURIComponent(location.hash.slice(1));
    } catch (error) { // a % not followed by two hex digits: not an address this viewer made
      where.textContent = "";
      return fill(main, el("div", { class: "error", id: "bad-address" }, "This address does not name a run (" + error.message + "). ",
        el("a", { href: "#/" }, "The list of runs")));
    }
    if (REPORT) return runPage(REPORT.run.row.path, token).catch(show);
    if (hash.startsWith("/run/")) return runPage(hash.slice(5), token).catch(show);
    return listPage(token).catch(show);
  }

  window.addEventListener("hashchange", route);
  const start = () => {
    [main, live, where] = ["main", "live", "where"].map((id) => document.getElementById(id));
    return (window.plotlyReady || Promise.resolve()).then(route, (e) => fill(main, el("div", { class: "error" }, String(e))));
  };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start); else start();
})();
