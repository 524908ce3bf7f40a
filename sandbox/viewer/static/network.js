// The network view of a population run (a section of type "network", `sandbox.viewer.network`): its agents at
// their places, coloured by what each holds at the step the scrubber shows; a play button; a legend with each
// colour's share at that step; hover for an agent's text, value and lineage; click for its calls; on a fork's page, the
// agents that hold what the parent's held faded, so that the branch's own changes stand out. Drawn with sigma.js on
// graphology (WebGL), both vendored in this folder. The data come as base64 typed arrays, decoded once.
// window.SandboxNetwork(section, tools) returns the section's element; tools: { el, fill, fmt, onAgent }.
"use strict";
(function () {
  function bytesOf(b64) {
    const text = atob(b64 || "");
    const bytes = new Uint8Array(text.length);
    for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
    return bytes;
  }
  function typed(b64, Type) {
    const bytes = bytesOf(b64);
    return new Type(bytes.buffer, 0, bytes.byteLength / Type.BYTES_PER_ELEMENT);
  }
  function webgl() {
    try {
      const canvas = document.createElement("canvas");
      return !!(canvas.getContext("webgl2") || canvas.getContext("webgl"));
    } catch (error) {
      return false;
    }
  }
  const short = (text, n) => (text.length > n ? text.slice(0, n - 1) + "…" : text);
  // a colour three quarters of the way to white: an agent that holds what the parent's held, on a fork's page
  function fade(hex) {
    const v = parseInt(hex.slice(1), 16);
    const mix = (c) => Math.round(c + (255 - c) * 0.75).toString(16).padStart(2, "0");
    return "#" + mix(v >> 16) + mix((v >> 8) & 255) + mix(v & 255);
  }

  window.SandboxNetwork = function (section, tools) {
    const { el, fmt } = tools;
    const n = section.agents, frames = section.frames;
    const x = typed(section.x, Float32Array), y = typed(section.y, Float32Array);
    const codes = section.code_bytes === 2 ? typed(section.codes, Uint16Array) : bytesOf(section.codes);
    const marked = section.marked ? bytesOf(section.marked) : null;
    const values = section.values ? typed(section.values, Float32Array) : null;
    const groupOf = Int32Array.from(section.group_of);
    const colourOfText = section.group_of.map((g) => section.colours[g]);
    const fadedOfText = colourOfText.map((c) => fade(c));
    // a fork's page: which agents hold other than the parent's agents did, a bit an agent, rows of whole bytes
    const differs = section.differs ? bytesOf(section.differs) : null;
    const rowBytes = Math.ceil(n / 8);
    let compare = !!differs;
    let frame = frames - 1;
    let timer = null;

    const canvas = el("div", { class: "network-canvas", "data-role": "canvas" });
    const tip = el("div", { class: "network-tip", "data-role": "tooltip", hidden: true });
    const step = el("span", { class: "network-step", "data-role": "step" });
    const scrubber = el("input", { type: "range", min: 0, max: frames - 1, value: frame, step: 1, "data-role": "scrubber",
      "aria-label": section.unit, oninput: (e) => show(Number(e.target.value)) });
    const play = el("button", { "data-role": "play", onclick: () => (timer ? stop() : start()) }, "▶ play");
    const speed = el("select", { "aria-label": "speed", "data-role": "speed" },
      [5, 10, 20, 40].map((fps) => el("option", { value: fps, selected: fps === 10 }, fps + " " + section.unit + "s/s")));
    const differCount = el("span", { class: "muted", "data-role": "differ-count" });
    const comparing = differs ? el("label", { class: "network-compare" }, el("input", { type: "checkbox", checked: true,
      "data-role": "compare", onchange: (e) => { compare = e.target.checked; if (renderer) renderer.refresh(); } }),
      " fade the agents that hold what " + section.parent + "'s held") : null;
    const legend = el("ul", { class: "network-legend", "data-role": "legend" });
    const shares = section.groups.map((name, g) => {
      const share = el("span", { class: "num", "data-share": g });
      legend.append(el("li", { "data-group": g, title: name }, el("span", { class: "swatch", style: "background:" + section.colours[g] }),
        el("span", { class: "name" }, short(name, 90)), share));
      return share;
    });
    const node = el("div", { class: "network", "data-agents": n, "data-frames": frames },
      section.caption ? el("p", { class: "muted caption" }, section.caption) : null,
      el("div", { class: "controls" }, play, scrubber, step, speed,
        marked ? el("span", { class: "muted" }, "larger: " + section.marked_name + " agents") : null),
      differs ? el("div", { class: "controls" }, comparing, differCount) : null,
      el("div", { class: "network-body" }, el("div", { class: "network-stage" }, canvas, tip), legend),
      (section.notes || []).map((note) => el("p", { class: "muted note" }, note)));

    function codeAt(f, i) { return codes[f * n + i]; }
    function differsAt(f, i) { return differs ? (differs[f * rowBytes + (i >> 3)] >> (7 - (i & 7))) & 1 : 0; }
    function colourAt(f, i) { return (compare && !differsAt(f, i) ? fadedOfText : colourOfText)[codeAt(f, i)]; }

    function count() {
      const counts = new Array(section.groups.length).fill(0);
      const base = frame * n;
      for (let i = 0; i < n; i++) counts[groupOf[codes[base + i]]]++;
      counts.forEach((c, g) => { shares[g].textContent = ((100 * c) / n).toFixed(1) + "%"; shares[g].dataset.count = c; });
      if (differs) {
        let k = 0;
        for (let i = 0; i < n; i++) k += differsAt(frame, i);
        differCount.textContent = k + " of " + n + " agents hold other than in " + section.parent + " at this " + section.unit;
        differCount.dataset.count = k;
      }
    }

    let renderer = null;
    function show(f) {
      const before = frame;
      frame = Math.max(0, Math.min(frames - 1, f));
      scrubber.value = frame;
      step.textContent = section.unit + " " + (section.steps[frame] < 0 ? "start" : section.steps[frame]) +
        " (" + (frame + 1) + " of " + frames + ")";
      node.dataset.frame = frame;
      node.dataset.step = section.steps[frame];
      count();
      if (renderer && before !== frame) {
        const changed = [];
        for (let i = 0; i < n; i++) if (colourAt(before, i) !== colourAt(frame, i)) changed.push(String(i));
        if (changed.length) renderer.refresh({ partialGraph: { nodes: changed }, skipIndexation: true });
      }
      node.dispatchEvent(new CustomEvent("frame", { detail: frame }));
    }
    function start() {
      if (frame >= frames - 1) show(0);
      play.textContent = "❚❚ pause";
      const tick = () => {
        if (frame >= frames - 1) return stop();
        show(frame + 1);
        timer = setTimeout(tick, 1000 / Number(speed.value));
      };
      timer = setTimeout(tick, 1000 / Number(speed.value));
    }
    function stop() {
      clearTimeout(timer);
      timer = null;
      play.textContent = "▶ play";
    }

    function describe(i) {
      const text = section.texts[codeAt(frame, i)];
      const group = section.groups[groupOf[codeAt(frame, i)]];
      const value = values ? values[frame * n + i] : NaN;
      return [el("div", { class: "tip-head" }, "agent " + i + (marked && marked[i] ? " (" + section.marked_name + ")" : "")),
        el("div", { "data-role": "text" }, short(text, 400)),
        group !== text ? el("div", { class: "muted" }, "colour: " + short(group, 120)) : null,
        Number.isFinite(value) ? el("div", {}, section.value_name + " " + fmt.num(value)) : null,
        el("div", { class: "muted", "data-role": "lineage" }, lineageOf(i)),
        tools.onAgent ? el("div", { class: "muted" }, "click: its calls") : null];
    }

    // lineage: an agent's revisions (its changes over the frames shown) and whom it took what it holds from, where
    // the run records it (events: step, agent, source, how); else the neighbours that held it the step before
    const events = section.lineage ? typed(section.lineage, Int32Array) : null;
    let eventAt = null, adjacency = null;
    function eventOf(s, i) {
      if (!events) return -1;
      if (!eventAt) {
        eventAt = new Map();
        for (let e = 0; e < events.length; e += 4) eventAt.set(events[e] * n + events[e + 1], e);
      }
      const e = eventAt.get(s * n + i);
      return e === undefined ? -1 : e;
    }
    function neighboursOf(i) {
      if (!section.edges) return null;
      if (!adjacency) {
        const edges = typed(section.edges, Uint32Array), degree = new Int32Array(n + 1);
        for (let e = 0; e < edges.length; e++) degree[edges[e] + 1]++;
        for (let k = 0; k < n; k++) degree[k + 1] += degree[k];
        const fill = degree.slice(0, n), list = new Int32Array(edges.length);
        for (let e = 0; e < edges.length; e += 2) {
          list[fill[edges[e]]++] = edges[e + 1];
          list[fill[edges[e + 1]]++] = edges[e];
        }
        adjacency = { start: degree, list };
      }
      return adjacency.list.subarray(adjacency.start[i], adjacency.start[i + 1]);
    }
    function lineageOf(i) {
      let changes = 0, last = -1;
      for (let f = 1; f <= frame; f++) if (codeAt(f, i) !== codeAt(f - 1, i)) { changes++; last = f; }
      const unit = section.unit;
      if (last < 0) return frame > 0 ? "no change since the first " + unit + " shown" : "";
      const s = section.steps[last];
      let line = "revision " + changes + (frames < (section.steps[frames - 1] - section.steps[0] + 1) ? " (of the " + unit + "s shown)" : "") +
        ": at " + unit + " " + s + ", after holding " + JSON.stringify(short(section.texts[codeAt(last - 1, i)], 60));
      const e = eventOf(s, i);
      if (e >= 0) {
        const source = events[e + 2];
        return line + "; " + section.hows[events[e + 3]] + (source >= 0 ? " from agent " + source : "");
      }
      const near = neighboursOf(i);
      if (!near) return line;
      const had = Array.from(near).filter((j) => codeAt(last - 1, j) === codeAt(last, i));
      return line + "; " + (had.length ? "neighbours that held it the " + unit + " before: " + had.slice(0, 6).join(", ") +
        (had.length > 6 ? " and " + (had.length - 6) + " more" : "") : "no neighbour held it the " + unit + " before");
    }

    function draw() {
      if (renderer || !canvas.isConnected) return;
      if (!webgl()) {
        tools.fill(canvas, el("p", { class: "error" }, "This browser has no WebGL, which the network view needs."));
        return;
      }
      const graph = new window.graphology.Graph({ type: "undirected", multi: true, allowSelfLoops: true });
      const size = Math.max(1.5, Math.min(8, 90 / Math.sqrt(n)));
      for (let i = 0; i < n; i++) {
        graph.addNode(String(i), { x: x[i], y: y[i], size: marked && marked[i] ? size * 1.8 : size, i, zIndex: marked && marked[i] ? 1 : 0 });
      }
      if (section.edges) {
        const edges = typed(section.edges, Uint32Array);
        for (let e = 0; e < edges.length; e += 2) graph.addEdge(String(edges[e]), String(edges[e + 1]));
      }
      const programs = window.Sigma.rendering;
      renderer = new window.Sigma(graph, canvas, {
        // points and 1-pixel lines: the cheapest programs, so that a frame of 10,000 agents draws fast even on a
        // software WebGL (headless Chromium's: 58 ms a frame against 711 ms with the disc program)
        nodeProgramClasses: { circle: programs.NodePointProgram },
        edgeProgramClasses: { line: programs.EdgeLineProgram }, defaultEdgeType: "line",
        renderLabels: false, renderEdgeLabels: false, hideEdgesOnMove: n > 2000, zIndex: true, enableEdgeEvents: false,
        defaultEdgeColor: "#d7dbe0", defaultNodeColor: "#999999", minEdgeThickness: 0.5,
        nodeReducer: (key, data) => ({ ...data, color: colourAt(frame, data.i) }),
      });
      renderer.on("enterNode", ({ node: key, event }) => {
        tools.fill(tip, describe(Number(key)));
        tip.hidden = false;
        tip.dataset.agent = key;
        tip.style.left = event.x + 12 + "px";
        tip.style.top = event.y + 12 + "px";
      });
      renderer.on("leaveNode", () => { tip.hidden = true; });
      if (tools.onAgent) renderer.on("clickNode", ({ node: key }) => tools.onAgent(Number(key)));
      canvas.dataset.drawnAt = performance.now();
      canvas.dataset.drawn = "yes";
    }

    // for the tests and the curious: where agent i is drawn (CSS pixels inside the canvas) and its colour now
    node.network = {
      frame: () => frame, show, agents: n, renderer: () => renderer, differs: (i) => differsAt(frame, i),
      colourAt: (i) => colourAt(frame, i), lineage: (i) => lineageOf(i),
      place: (i) => (renderer ? renderer.graphToViewport({ x: x[i], y: y[i] }) : null),
      kill: () => { stop(); if (renderer) renderer.kill(); renderer = null; },
    };
    show(frame);
    // sigma needs the container in the page with a size: draw once it is
    const watch = new MutationObserver(() => { if (canvas.isConnected) { watch.disconnect(); draw(); } });
    watch.observe(document, { childList: true, subtree: true });
    requestAnimationFrame(() => { if (canvas.isConnected) { watch.disconnect(); draw(); } });
    return node;
  };
})();
