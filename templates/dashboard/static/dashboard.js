// The council dashboard: the list's search, parts loaded on demand, and live updates from
// server-sent events.
// No polling: the server pushes a `change` event when a file of the debate changes,
// and the page re-fetches its server-rendered fragment. While a run asks its models, an
// `in-flight` event carries each call's text so far, shown as plain text in its cell.
"use strict";

(function () {
  const body = document.body;
  const root = document.getElementById("live-root");
  const indicator = document.getElementById("live");
  const eventsUrl = body.dataset.events;
  const fragmentUrl = body.dataset.fragment;

  function setLive(state) {
    if (indicator) indicator.dataset.state = state;
  }

  // ---- list page: search and status filter, done on the server ----------------
  const search = document.getElementById("q");
  const statusFilter = document.getElementById("status-filter");
  const evalsFilter = document.getElementById("evals-filter");

  function listQuery(keepPage) {
    const params = new URLSearchParams();
    if (search && search.value) params.set("q", search.value);
    if (statusFilter && statusFilter.value) params.set("status", statusFilter.value);
    if (evalsFilter && evalsFilter.checked) params.set("evals", "1");
    const count = document.getElementById("count");
    const page = count ? count.dataset.page : "";
    if (keepPage && page && page !== "1") params.set("page", page);
    return params.toString();
  }

  let typing = null;

  function applyFilters() {
    const query = listQuery(false);
    history.replaceState(null, "", query ? "?" + query : location.pathname + location.hash);
    refresh();
  }

  if (search && statusFilter) {
    search.addEventListener("input", function () {
      clearTimeout(typing);
      typing = setTimeout(applyFilters, 120);
    });
    statusFilter.addEventListener("change", applyFilters);
    if (evalsFilter) evalsFilter.addEventListener("change", applyFilters);
    search.form.addEventListener("submit", function (event) {
      event.preventDefault();
      applyFilters();
    });
  }

  // ---- list page: a running debate's line counts on between changes -----------------
  // The same rule as the server's `running_line` (views/debate_list.py).
  function runningFor(since) {
    const started = Date.parse(since);
    if (isNaN(started)) return "running";
    const minutes = Math.floor(Math.max(0, Date.now() - started) / 60000);
    if (minutes < 1) return "running for less than a minute";
    if (minutes < 60) return "running for " + minutes + " min";
    const hours = Math.floor(minutes / 60);
    if (hours >= 48) return "running for " + Math.floor(hours / 24) + " days";
    const left = minutes % 60;
    return "running for " + hours + " h" + (left ? " " + left + " min" : "");
  }

  function countRuns() {
    if (!root) return;
    root.querySelectorAll(".run-state[data-since]").forEach(function (line) {
      const comma = line.textContent.indexOf(", ");
      const rest = comma < 0 ? "" : line.textContent.slice(comma);
      line.textContent = runningFor(line.dataset.since) + rest;
    });
  }

  // The timer runs only while the list shows a running debate; it fetches nothing.
  let counting = null;

  function watchRuns() {
    const any = search && root && root.querySelector(".run-state[data-since]");
    if (any && !counting) counting = setInterval(countRuns, 30000);
    if (!any && counting) { clearInterval(counting); counting = null; }
  }

  watchRuns();

  // ---- parts loaded on demand (a long debate's entries and transcripts) --------
  async function load(details) {
    if (!details.open || details.dataset.loaded) return;
    details.dataset.loaded = "loading";
    const target = details.querySelector(".lazy");
    try {
      const response = await fetch(details.dataset.load, { cache: "no-store", headers: { Accept: "text/html" } });
      if (!response.ok) throw new Error(String(response.status));
      // Server-rendered and escaped by the template engine; scripts in it never run.
      if (target) target.innerHTML = await response.text();
      details.dataset.loaded = "yes";
    } catch (error) {
      delete details.dataset.loaded;
      if (target) target.textContent = "Could not load this part; close and open it to try again.";
    }
  }

  function loadOpen() {
    if (!root) return;
    root.querySelectorAll("details[data-load]").forEach(function (d) { load(d); });
  }

  if (root) {
    // `toggle` does not bubble: listen in the capture phase.
    root.addEventListener("toggle", function (event) {
      const details = event.target;
      if (details instanceof HTMLDetailsElement && details.dataset.load) load(details);
    }, true);
  }

  // ---- live updates -----------------------------------------------------------
  // A debate page sends the digest of each of its parts; the server answers with the
  // parts that changed only, or with the whole fragment when the parts are not the same.
  // A cell's own text, without the streamed text of a call in progress.
  function recordText(el) {
    let text = "";
    el.childNodes.forEach(function (node) {
      if (!(node.classList && node.classList.contains("in-flight"))) text += node.textContent;
    });
    return text;
  }

  function snapshotState() {
    const open = {};
    root.querySelectorAll("details[id]").forEach(function (d) { open[d.id] = d.open; });
    const text = {};
    root.querySelectorAll("td.cell[id], tr[id^='board-']").forEach(function (el) {
      text[el.id] = recordText(el);
    });
    return { open: open, text: text };
  }

  function restoreState(state) {
    root.querySelectorAll("details[id]").forEach(function (d) {
      if (Object.prototype.hasOwnProperty.call(state.open, d.id)) d.open = state.open[d.id];
    });
    root.querySelectorAll("td.cell[id], tr[id^='board-']").forEach(function (el) {
      if (state.text[el.id] !== undefined && state.text[el.id] !== recordText(el)) {
        el.classList.add("flash");
        setTimeout(function () { el.classList.remove("flash"); }, 1500);
      }
    });
  }

  function partsHeld() {
    return Array.prototype.map.call(root.querySelectorAll("[data-part]"), function (el) {
      return el.dataset.part + ":" + (el.dataset.hash || "");
    }).join(",");
  }

  function swapParts(html) {
    const holder = document.createElement("template");
    holder.innerHTML = html;
    holder.content.querySelectorAll("template[data-part]").forEach(function (part) {
      const fresh = part.content.firstElementChild;
      const old = root.querySelector('[data-part="' + CSS.escape(part.dataset.part) + '"]');
      if (fresh && old) old.replaceWith(fresh);
    });
  }

  let busy = false;
  let again = false;

  async function refresh() {
    if (!root || !fragmentUrl) return;
    if (busy) { again = true; return; }
    busy = true;
    try {
      let url = fragmentUrl;
      if (body.dataset.parts) url += "?have=" + encodeURIComponent(partsHeld());
      else if (search) url += "?" + listQuery(location.search.includes("page="));
      const response = await fetch(url, { cache: "no-store", headers: { Accept: "text/html" } });
      if (response.ok) {
        const html = await response.text();
        const state = snapshotState();
        if (response.headers.get("X-Council-Parts") === "changed") {
          swapParts(html);
        } else {
          // Server-rendered and escaped by the template engine; scripts in it never run.
          root.innerHTML = html;
        }
        paintCalls();
        watchRuns();
        restoreState(state);
        loadOpen();
        body.dataset.updated = String(Date.now());
      }
    } catch (error) {
      setLive("off");
    } finally {
      busy = false;
      if (again) { again = false; refresh(); }
    }
  }

  // ---- calls in progress --------------------------------------------------------
  // The server sends every call's text so far at most a few times a second; the page
  // keeps the last list and paints it again after each re-fetch. Elapsed seconds count
  // up here, from the server's figure, only while a call is shown.
  let calls = [];
  let callKeys = {};
  let callsAt = 0;
  let ticking = null;

  function elapsed(call) {
    return Math.round(call.elapsed_s + (Date.now() - callsAt) / 1000);
  }

  // In its persona's cell a call needs no name; in a box of calls it does.
  function callHead(call, inCell) {
    if (call.state === "waiting") return "waiting for " + call.persona + " · " + elapsed(call) + " s";
    const who = inCell ? "" : call.persona + " · ";
    const state = call.state === "retrying"
      ? "retrying" + (call.detail ? ": " + call.detail : "")
      : call.state;
    return who + state + " · " + call.chars.toLocaleString("en-US") + " chars · " + elapsed(call) + " s";
  }

  function holder(call) {
    if (call.place.indexOf("cell-") === 0) {
      const cell = document.getElementById(call.place);
      if (cell && root.contains(cell)) return cell;
    }
    const anchor = call.place === "synthesis" ? "report" : "matrix";
    const id = "in-flight-" + (call.place === "synthesis" ? "synthesis" : "calls");
    let box = document.getElementById(id);
    if (!box) {
      const before = document.getElementById(anchor);
      if (!before || !root.contains(before)) return null;
      box = document.createElement("section");
      box.id = id;
      box.className = "card in-flight-box";
      const title = document.createElement("h2");
      title.textContent = call.place === "synthesis" ? "Synthesis in progress" : "Calls in progress";
      box.appendChild(title);
      before.parentNode.insertBefore(box, before);
    }
    return box;
  }

  function paintCalls() {
    if (!root) return;
    const kept = new Set();
    callKeys = {};
    calls.forEach(function (call) {
      const place = holder(call);
      if (!place) return;
      // The same call keeps its block (and its scroll) from one message to the next.
      let key = call.place + "|" + call.persona + "|" + call.phase;
      while (callKeys[key]) key += "+";
      callKeys[key] = call;
      let block = Array.prototype.find.call(place.children, function (el) {
        return el.classList.contains("in-flight") && el.dataset.call === key;
      });
      if (!block) {
        block = document.createElement("div");
        block.className = "in-flight";
        block.dataset.call = key;
        const head = document.createElement("p");
        head.className = "in-flight-head";
        const text = document.createElement("div");
        text.className = "in-flight-text";
        block.append(head, text);
        place.appendChild(block);
      }
      block.dataset.state = call.state;
      block.dataset.persona = call.persona;
      block.firstChild.textContent = callHead(call, place.tagName === "TD");
      const text = block.lastChild;
      const shown = (call.cut ? "…" : "") + call.text;
      if (text.textContent !== shown) {
        // Model output: plain text only, never parsed as HTML.
        text.textContent = shown;
        text.scrollTop = text.scrollHeight;
      }
      kept.add(block);
    });
    root.querySelectorAll(".in-flight").forEach(function (block) {
      if (!kept.has(block)) block.remove();
    });
    paintBoard();
    root.querySelectorAll(".in-flight-box").forEach(function (box) {
      if (!box.querySelector(".in-flight")) box.remove();
    });
    body.dataset.inFlight = String(calls.length);
  }

  // A board row with no verdict yet says what its persona's call is doing and links to
  // the cell where its text arrives; once the call ends it says "no verdict yet" again.
  function boardState(call) {
    if (call.state === "waiting") return "waiting for " + call.persona;
    if (call.state === "streaming" && !call.chars) return "thinking";
    return call.state + " · " + call.chars.toLocaleString("en-US") + " chars";
  }

  function paintBoard() {
    const byPersona = {};
    calls.forEach(function (call) {
      if (call.place.indexOf("cell-") === 0) byPersona[call.persona] = call;
    });
    root.querySelectorAll("#board td.pending").forEach(function (cell) {
      const call = byPersona[cell.parentNode.id.slice("board-".length)];
      if (!call) {
        if (cell.dataset.live) { cell.textContent = "no verdict yet"; delete cell.dataset.live; }
        return;
      }
      let link = cell.querySelector("a.board-live");
      if (!link) {
        cell.textContent = "";
        link = document.createElement("a");
        link.className = "board-live";
        cell.appendChild(link);
      }
      link.href = "#" + call.place;
      link.textContent = boardState(call);
      cell.dataset.live = call.state;
    });
  }

  function tick() {
    root.querySelectorAll(".in-flight").forEach(function (block) {
      const call = callKeys[block.dataset.call];
      if (call) block.firstChild.textContent = callHead(call, block.parentNode.tagName === "TD");
    });
  }

  // The seats the run waits on, as the last list told them: when they change, the page's
  // status ("waiting for alice") is fetched again like any other change (once more than
  // needed on a page opened during a wait: the parts that did not change stay).
  let waitingFor = "";

  function showCalls(list) {
    calls = list;
    callsAt = Date.now();
    paintCalls();
    const waiting = calls
      .filter(function (call) { return call.state === "waiting"; })
      .map(function (call) { return call.persona; })
      .sort()
      .join(",");
    if (waiting !== waitingFor) refresh();
    waitingFor = waiting;
    if (calls.length && !ticking) ticking = setInterval(tick, 1000);
    if (!calls.length && ticking) { clearInterval(ticking); ticking = null; }
  }

  if (eventsUrl && root && window.EventSource) {
    // Before the stream first opens, as while it was down, changes go unheard: the page
    // catches up once each time it opens (a run may have ended since the page was drawn).
    const source = new EventSource(eventsUrl);
    source.addEventListener("open", function () {
      setLive("on");
      refresh();
    });
    source.addEventListener("change", function () { refresh(); });
    source.addEventListener("in-flight", function (event) {
      try {
        showCalls(JSON.parse(event.data).calls || []);
      } catch (error) {
        showCalls([]);
      }
    });
    source.addEventListener("error", function () { setLive("off"); });
    window.addEventListener("pagehide", function () { source.close(); });
  }
})();
