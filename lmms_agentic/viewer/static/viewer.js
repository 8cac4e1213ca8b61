// lmms-agentic run viewer: overview, sample list with filters, sample pages, two runs side by side.
// Every element is built with createElement + textContent: nothing from the data ever becomes markup.
// Data files are scripts (fetch() of file:// is blocked) that fill window.VIEWER_DATA; lmms_agentic/viewer/site.py.
"use strict";
(function () {
  const DATA = window.VIEWER_DATA || {};
  const SITE = DATA.site;
  const PAGE_SIZE = 50;
  const MEDIA = /^media\/[0-9a-f]{20}(_t)?\.jpg$/;
  const main = document.getElementById("main");

  function el(tag, props, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(props || {})) {
      if (key === "class") node.className = value;
      else if (key === "href") node.setAttribute("href", value);
      else if (key.startsWith("data-")) node.setAttribute(key, String(value));
      else if (key === "title") node.title = String(value);
      else if (key === "id") node.id = String(value);
      else throw new Error("unsupported property " + key);
    }
    for (const child of children) {
      if (child === null || child === undefined) continue;
      node.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  function load(name) {
    if (DATA[name] !== undefined) return Promise.resolve(DATA[name]);
    if (!/^[a-z]+(_[0-9]+)*$/.test(name)) return Promise.reject(new Error("bad data file name " + name));
    return new Promise(function (resolve, reject) {
      const script = document.createElement("script");
      script.src = "data/" + name + ".js";
      script.onload = function () { resolve(DATA[name]); };
      script.onerror = function () { reject(new Error("cannot read data/" + name + ".js")); };
      document.head.appendChild(script);
    });
  }

  function loadRows() {
    const names = [];
    for (let k = 0; k < SITE.row_files; k++) names.push(load("rows_" + k));
    return Promise.all(names).then(function (parts) { return [].concat.apply([], parts); });
  }

  function table(headers, rows, props) {
    const head = el("tr", {}, ...headers.map(function (h) { return el("th", {}, h); }));
    return el("table", props || {}, el("thead", {}, head), el("tbody", {}, ...rows));
  }

  function kv(pairs) {
    return table(["field", "value"], pairs.map(function (p) { return el("tr", {}, el("td", {}, p[0]), el("td", {}, p[1])); }));
  }

  function statusCell(status) { return el("td", { class: "status-" + status }, status); }

  function sampleLink(key, text, metric) {  // metric: the sample page opens on that metric's verdict
    const query = metric ? "?" + new URLSearchParams({ metric: metric }).toString() : "";
    return el("a", { href: "#sample/" + encodeURIComponent(key) + query }, text);
  }

  function runLabel(index) { return SITE.runs[index] ? SITE.runs[index].label : "run " + index; }

  function renderOverview() {
    const rows = SITE.overview.map(function (r) {
      const query = new URLSearchParams({ run: String(r.run), task: r.task });
      const failed = new URLSearchParams({ run: String(r.run), task: r.task, fail: r.metric });
      const value = r.samples ? el("a", { href: "#samples?" + failed.toString(), title: "the samples that did not get full marks on " +
        r.metric + " (wrong, partial or unscored)" }, r.value) : r.value;
      return el("tr", { "data-model": r.model, "data-task": r.task },
        el("td", {}, r.model), el("td", {}, r.task), el("td", {}, r.metric),
        el("td", { class: "num value" }, value), el("td", { class: "num", title: r.method }, r.interval),
        el("td", { class: "num" }, String(r.n)), el("td", {}, r.coverage),
        el("td", {}, r.samples ? el("a", { href: "#samples?" + query.toString() }, r.samples + " samples") : "no samples logged"));
    });
    const parts = [el("h1", {}, "Overview"),
      table(["model", "task", "headline metric", "value", "interval", "n", "judged coverage", "samples"], rows, { id: "overview" }),
      el("p", {}, "Click a value for the samples that did not get full marks on its metric. " +
        "Intervals: 95%; hover an interval for its method (Wilson, bootstrap over questions, or ±1.96 SE).")];
    if (SITE.pairs.length) {
      parts.push(el("h2", {}, "Two runs side by side"));
      parts.push(el("ul", {}, ...SITE.pairs.map(function (p) {
        return el("li", {}, el("a", { href: "#compare/" + p.a + "/" + p.b }, runLabel(p.a) + " vs " + runLabel(p.b)),
          " — they disagree on " + p.disagree + " of " + p.shared + " shared samples");
      })));
    }
    parts.push(el("h2", {}, "Runs"));
    parts.push(el("ul", {}, ...SITE.runs.map(function (r) {
      return el("li", {}, el("b", {}, r.label), " (" + r.harness + ", " + r.samples + " samples) " + r.path,
        r.notes.length ? el("ul", {}, ...r.notes.map(function (n) { return el("li", {}, n); })) : null);
    })));
    main.replaceChildren(...parts);
  }

  const FILTERS = ["run", "task", "domain", "status", "why", "fail", "error", "flipped", "loop", "tool_error", "q"];

  function matches(row, f, groupLeaves) {
    if (f.run && String(row.run) !== f.run) return false;
    if (f.task && row.task !== f.task && !(groupLeaves && groupLeaves.has(row.task))) return false;
    if (f.domain && row.domain !== f.domain) return false;
    if (f.status && row.status !== f.status) return false;
    if (f.why && row.why !== f.why) return false;
    if (f.fail && !(row.fails && Object.prototype.hasOwnProperty.call(row.fails, f.fail))) return false;
    if (f.error && row.errors.indexOf(f.error) < 0) return false;
    for (const flag of ["flipped", "loop", "tool_error"]) {
      if (f[flag] && String(row[flag]) !== f[flag]) return false;
    }
    if (f.q && row.text.indexOf(f.q.toLowerCase()) < 0 && row.id.toLowerCase().indexOf(f.q.toLowerCase()) < 0) return false;
    return true;
  }

  function select(name, label, values, current) {
    const node = el("select", { "data-filter": name }, el("option", {}, ""));
    for (const value of values) {
      const option = el("option", {}, value[1]);
      option.value = value[0];
      if (value[0] === current) option.selected = true;
      node.appendChild(option);
    }
    return el("label", {}, label, node);
  }

  function distinct(rows, pick) {
    const seen = new Set();
    for (const row of rows) for (const v of [].concat(pick(row))) if (v !== "" && v !== null) seen.add(String(v));
    return Array.from(seen).sort().map(function (v) { return [v, v]; });
  }

  function renderList(params) {
    main.replaceChildren(el("h1", {}, "Samples"), el("p", {}, "Loading the sample list…"));
    loadRows().then(function (rows) {
      const f = {};
      for (const name of FILTERS) f[name] = params.get(name) || "";
      let page = parseInt(params.get("page") || "0", 10) || 0;
      const groups = new Map();
      for (const r of SITE.overview) groups.set(r.run + "/" + r.task, new Set(r.leaves));
      const taskValues = distinct(rows, function (r) { return r.task; });
      for (const r of SITE.overview) if (r.leaves.length > 1 || r.leaves[0] !== r.task) taskValues.unshift([r.task, r.task + " (group)"]);
      const search = el("input", { "data-filter": "q" });
      search.value = f.q;
      const yesNo = [["true", "yes"], ["false", "no"]];
      const controls = el("div", { class: "filters" },
        select("run", "run", SITE.runs.map(function (r) { return [String(r.index), r.label]; }), f.run),
        select("task", "task", taskValues, f.task),
        select("domain", "domain", distinct(rows, function (r) { return r.domain; }), f.domain),
        select("status", "correct / wrong / unscored", distinct(rows, function (r) { return r.status; }), f.status),
        select("why", "why", distinct(rows, function (r) { return r.why; }), f.why),
        select("fail", "failed metric (below full marks or unscored)", distinct(rows, function (r) { return Object.keys(r.fails || {}); }), f.fail),
        select("error", "error mode", distinct(rows, function (r) { return r.errors; }), f.error),
        select("flipped", "flipped under permutation", yesNo, f.flipped),
        select("loop", "loop", yesNo, f.loop), select("tool_error", "tool error", yesNo, f.tool_error),
        el("label", {}, "text search", search));
      const results = el("div", { id: "results" });
      function refresh() {
        const leaves = f.task ? (groups.get((f.run || "") + "/" + f.task) || mergedLeaves(f.task)) : null;
        const shown = rows.filter(function (r) { return matches(r, f, leaves); });
        if (f.fail) shown.sort(function (a, b) { return failScore(a) - failScore(b); });  // lowest first, unscored last
        const pages = Math.max(1, Math.ceil(shown.length / PAGE_SIZE));
        page = Math.min(Math.max(page, 0), pages - 1);
        const slice = shown.slice(page * PAGE_SIZE, (page + 1) * PAGE_SIZE);
        const body = slice.map(function (r) {
          const flags = el("td", {});
          if (r.flipped) flags.appendChild(el("span", { class: "flag" }, "flipped"));
          if (r.loop) flags.appendChild(el("span", { class: "flag" }, "loop"));
          if (r.tool_error) flags.appendChild(el("span", { class: "flag" }, "tool error"));
          return el("tr", { "data-key": r.key }, el("td", {}, runLabel(r.run)), el("td", {}, r.task),
            el("td", {}, sampleLink(r.key, r.id, f.fail)), el("td", {}, r.domain), statusCell(r.status), el("td", {}, r.why),
            el("td", {}, r.pred), el("td", {}, r.errors.join(", ")), flags,
            f.fail ? el("td", { class: "num" }, r.fails[f.fail] === null ? "unscored" : String(r.fails[f.fail])) : null);
        });
        const prev = el("button", {}, "← previous");
        const next = el("button", {}, "next →");
        prev.disabled = page === 0;
        next.disabled = page >= pages - 1;
        prev.addEventListener("click", function () { page -= 1; update(); });
        next.addEventListener("click", function () { page += 1; update(); });
        const from = shown.length ? page * PAGE_SIZE + 1 : 0;
        results.replaceChildren(
          el("div", { class: "pager" }, prev, el("span", { id: "count" }, "showing " + from + "–" +
            (page * PAGE_SIZE + slice.length) + " of " + shown.length + " (of " + rows.length + " samples)"), next),
          table(["run", "task", "id", "domain", "status", "why", "answer read", "error modes", "flags"].concat(
            f.fail ? [f.fail] : []), body, { id: "samples" }));
      }
      function failScore(row) {
        const score = row.fails[f.fail];
        return score === null || score === undefined ? Infinity : score;
      }
      function mergedLeaves(task) {
        const merged = new Set();
        for (const r of SITE.overview) if (r.task === task) for (const leaf of r.leaves) merged.add(leaf);
        return merged.size ? merged : null;
      }
      function update() {
        const query = new URLSearchParams();
        for (const name of FILTERS) if (f[name]) query.set(name, f[name]);
        if (page) query.set("page", String(page));
        history.replaceState(null, "", "#samples?" + query.toString());
        refresh();
      }
      controls.addEventListener("change", function (event) {
        const name = event.target.getAttribute("data-filter");
        if (name) { f[name] = event.target.value; page = 0; update(); }
      });
      search.addEventListener("input", function () { f.q = search.value; page = 0; update(); });
      main.replaceChildren(el("h1", {}, "Samples"), controls, results);
      refresh();
    }).catch(showError);
  }

  function mediaStrip(media) {
    return el("div", { class: "strip" }, ...media.map(function (m) {
      if (!MEDIA.test(m.thumb) || !MEDIA.test(m.full)) return el("span", {}, "[media reference refused]");
      const img = el("img", { title: m.label });
      img.src = m.thumb;
      img.alt = m.label;
      return el("figure", {}, el("a", { href: m.full }, img), el("figcaption", {}, m.label));
    }));
  }

  function returnedImage(round) {  // the thumbnail the sample log kept of an image the tool returned, or why not
    if (round.returned) return mediaStrip([round.returned]);
    return round.image ? round.image + (round.returned_note ? " (" + round.returned_note + ")" : "") : "";
  }

  function renderPrompt(page) {
    if (!page.messages) return [el("pre", { class: "prompt" }, page.input)];
    return page.messages.map(function (message) {
      const blocks = [];
      let run = [];  // consecutive media parts share one strip
      for (const part of message.parts.concat([{ text: null }])) {
        if (part.media !== undefined) { run.push(page.media[part.media]); continue; }
        if (run.length) blocks.push(mediaStrip(run));
        run = [];
        if (part.text !== null) blocks.push(el("pre", { class: "prompt" }, part.text));
      }
      return el("div", { class: "message" }, el("div", { class: "role" }, message.role), ...blocks);
    });
  }

  function section(title, ...content) { return [el("h2", {}, title), ...content.filter(function (c) { return c !== null; })]; }

  function focusBox(page, metric) {  // the verdict (or value) of the metric the list was filtered on, first
    const verdict = page.verdicts.find(function (v) { return v.metric === metric; });
    const value = page.metrics.find(function (m) { return m[0] === metric; });
    if (!verdict && !value) return null;
    const jump = el("button", { id: "jump" }, verdict ? "↓ show it in the judge's verdicts" : "↓ show every metric");
    jump.addEventListener("click", function () {
      const target = document.getElementById(verdict ? "verdict-focus" : "metrics");
      if (target) target.scrollIntoView({ block: "center" });
    });
    const lines = verdict ? [el("b", {}, metric + ": judge score " + verdict.score + " (" + verdict.verdict + ")"),
      el("div", {}, "reason (the judge's reply): "), el("pre", { class: "reason" }, verdict.reason), "judge: " + verdict.judge]
      : [el("b", {}, metric + ": " + value[1])];
    return el("div", { class: "focus", id: "focus", "data-metric": metric }, ...lines, " ", jump);
  }

  function renderSample(key, params) {
    const metric = params ? params.get("metric") || "" : "";
    const match = /^([0-9]+)-([0-9]+)$/.exec(key);
    if (!match) return showError(new Error("no sample " + key));
    const serial = SITE.offsets[parseInt(match[1], 10)] + parseInt(match[2], 10);
    main.replaceChildren(el("p", {}, "Loading sample…"));
    load("page_" + Math.floor(serial / SITE.pages_per_file)).then(function (pages) {
      const page = pages[key];
      if (!page) throw new Error("no sample " + key);
      const parts = [el("h1", {}, page.task + " · " + page.id),
        el("p", {}, el("a", { href: "#samples" }, "← sample list"), " · run: " + page.run),
        kv([["status", page.status + (page.why ? " (" + page.why + ")" : "")], ["score", page.score + " (" + page.decided_by + ")"],
          ["gold", page.gold], ["doc_id", page.doc_id], ...page.fields])];
      if (metric) parts.splice(2, 0, focusBox(page, metric));
      parts.push(...section("Media", page.note ? el("p", { class: "note" }, page.note) : null,
        page.media.length ? mediaStrip(page.media) : (page.note ? null : el("p", {}, "This sample has no media."))));
      parts.push(...section("Prompt as the model got it", ...renderPrompt(page)));
      parts.push(...section("Reply", el("pre", { class: "reply" }, page.reply)));
      parts.push(...section("What the extractor read (and its rule)", kv(page.extraction)));
      if (page.errors.length) parts.push(...section("Error modes", el("p", {}, page.errors.join(", "))));
      if (page.permutations) parts.push(...section("Every order of this question" + (page.flipped ? " (the answer flips)" : ""),
        permutationTable(page.permutations)));
      if (page.steps.length) parts.push(...section("Steps read from the reply", table(["step", "task", "tool", "input", "output", "thought"],
        page.steps.map(function (s) { return el("tr", {}, el("td", {}, s.step), el("td", {}, s.task), el("td", {}, s.tool),
          el("td", {}, s.input), el("td", {}, s.output), el("td", {}, s.thought)); }))), el("p", {}, "Final answer: " + page.final_answer));
      if (page.verdicts.length) parts.push(...section("Judge verdicts per metric", table(["metric", "score", "verdict", "dimensions", "reason (judge reply)", "judge"],
        page.verdicts.map(function (v) { return el("tr", v.metric === metric ? { id: "verdict-focus", class: "focus" } : {},
          el("td", {}, v.metric), el("td", { class: "num" }, v.score), el("td", {}, v.verdict),
          el("td", {}, v.dimensions), el("td", {}, v.reason), el("td", {}, v.judge)); }), { id: "verdicts" })));
      if (page.rounds.length) parts.push(...section("Executed tool rounds", table(["round", "reply", "parsed call", "backend", "status", "observation", "returned image"],
        page.rounds.map(function (r) { return el("tr", {}, el("td", {}, r.round), el("td", {}, el("pre", {}, r.reply)), el("td", {}, r.call || r.kind),
          el("td", {}, r.backend), el("td", {}, r.status), el("td", {}, el("pre", {}, r.observation)),
          el("td", {}, returnedImage(r))); }), { id: "rounds" })));
      parts.push(...section("Every metric of this sample", el("div", { id: "metrics" }, kv(page.metrics))));
      parts.push(el("details", {}, el("summary", {}, "The whole record"), el("pre", {}, JSON.stringify(page.record, null, 1))));
      main.replaceChildren(...parts.filter(function (p) { return p !== null; }));
    }).catch(showError);
  }

  function permutationTable(orders) {
    const rows = [["order", "perm_index"], ["option order", "permutation"], ["letter read", "pred"], ["gold letter", "answer"],
      ["chosen, mapped back", "chosen_original"], ["gold, original order", "gold_original"], ["correct", "correct"], ["reply", "reply"]];
    return table(["", ...orders.map(function (o) { return "order " + o.perm_index; })], rows.map(function (r) {
      return el("tr", {}, el("th", {}, r[0]), ...orders.map(function (o) {
        return el("td", {}, r[1] === "perm_index" ? sampleLink(o.key, o.perm_index) : r[1] === "reply" ? el("pre", {}, o.reply) : o[r[1]]);
      }));
    }), { class: "perm", id: "permutations" });
  }

  function renderCompare(a, b) {
    const name = "compare_" + a + "_" + b;
    load(name).then(function (found) {
      const rows = found.map(function (d) {
        return el("tr", {}, el("td", {}, d.task), el("td", {}, d.id), el("td", {}, d.domain),
          statusCell(d.a.status), el("td", {}, sampleLink(d.a.key, d.a.pred || "—")),
          statusCell(d.b.status), el("td", {}, sampleLink(d.b.key, d.b.pred || "—")));
      });
      main.replaceChildren(el("h1", {}, runLabel(a) + " vs " + runLabel(b)),
        el("p", {}, found.length + " samples where the two runs disagree (status or answer read)"),
        table(["task", "id", "domain", runLabel(a), "answer", runLabel(b), "answer"], rows, { id: "compare" }));
    }).catch(showError);
  }

  function showError(error) {
    main.replaceChildren(el("p", { class: "note" }, "Error: " + error.message));
    throw error;
  }

  function route() {
    if (!SITE) return showError(new Error("data/site.js is missing: rebuild with python -m lmms_agentic view"));
    const raw = location.hash.replace(/^#/, "");
    const cut = raw.indexOf("?");
    const path = decodeURIComponent(cut < 0 ? raw : raw.slice(0, cut));
    const params = new URLSearchParams(cut < 0 ? "" : raw.slice(cut + 1));
    let match;
    if (path === "samples") renderList(params);
    else if ((match = /^sample\/(.+)$/.exec(path))) renderSample(match[1], params);
    else if ((match = /^compare\/([0-9]+)\/([0-9]+)$/.exec(path))) renderCompare(parseInt(match[1], 10), parseInt(match[2], 10));
    else renderOverview();
    window.scrollTo(0, 0);
  }

  window.addEventListener("hashchange", route);
  route();
})();
