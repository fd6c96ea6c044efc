// The council dashboard: list filtering and live updates from server-sent events.
// No polling: the server pushes a `change` event when a file of the debate changes,
// and the page re-fetches its server-rendered fragment.
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

  // ---- list page: search box and status filter --------------------------------
  const search = document.getElementById("q");
  const statusFilter = document.getElementById("status-filter");
  const count = document.getElementById("count");

  function applyFilters() {
    if (!search || !statusFilter) return;
    const words = search.value.toLowerCase().split(/\s+/).filter(Boolean);
    const status = statusFilter.value;
    let shown = 0;
    const rows = document.querySelectorAll(".debate-row");
    rows.forEach(function (row) {
      const text = row.dataset.search || "";
      const groups = (row.dataset.groups || "").split(" ");
      const visible = words.every(function (w) { return text.includes(w); }) &&
        (!status || groups.includes(status));
      row.hidden = !visible;
      if (visible) shown += 1;
    });
    const none = document.getElementById("no-match");
    if (none) none.hidden = shown > 0 || rows.length === 0;
    if (count) count.textContent = rows.length ? shown + " of " + rows.length : "";
    const params = new URLSearchParams();
    if (search.value) params.set("q", search.value);
    if (status) params.set("status", status);
    const query = params.toString();
    history.replaceState(null, "", query ? "?" + query : location.pathname + location.hash);
  }

  if (search && statusFilter) {
    search.addEventListener("input", applyFilters);
    statusFilter.addEventListener("change", applyFilters);
    search.form.addEventListener("submit", function (event) {
      event.preventDefault();
      applyFilters();
    });
    applyFilters();
  }

  // ---- live updates -----------------------------------------------------------
  function snapshotState() {
    const open = {};
    root.querySelectorAll("details[id]").forEach(function (d) { open[d.id] = d.open; });
    const text = {};
    root.querySelectorAll("td.cell[id], tr[id]").forEach(function (el) {
      text[el.id] = el.textContent;
    });
    return { open: open, text: text };
  }

  function restoreState(state) {
    root.querySelectorAll("details[id]").forEach(function (d) {
      if (Object.prototype.hasOwnProperty.call(state.open, d.id)) d.open = state.open[d.id];
    });
    root.querySelectorAll("td.cell[id], tr[id]").forEach(function (el) {
      if (state.text[el.id] !== undefined && state.text[el.id] !== el.textContent) {
        el.classList.add("flash");
        setTimeout(function () { el.classList.remove("flash"); }, 1500);
      }
    });
  }

  let busy = false;
  let again = false;

  async function refresh() {
    if (!root || !fragmentUrl) return;
    if (busy) { again = true; return; }
    busy = true;
    try {
      const response = await fetch(fragmentUrl, { cache: "no-store", headers: { Accept: "text/html" } });
      if (response.ok) {
        const html = await response.text();
        const state = snapshotState();
        // Server-rendered and escaped by the template engine; scripts in it never run.
        root.innerHTML = html;
        restoreState(state);
        applyFilters();
        body.dataset.updated = String(Date.now());
      }
    } catch (error) {
      setLive("off");
    } finally {
      busy = false;
      if (again) { again = false; refresh(); }
    }
  }

  if (eventsUrl && root && window.EventSource) {
    let dropped = false;
    const source = new EventSource(eventsUrl);
    source.addEventListener("open", function () {
      setLive("on");
      // Changes made while the stream was down were missed: catch up once.
      if (dropped) { dropped = false; refresh(); }
    });
    source.addEventListener("change", function () { refresh(); });
    source.addEventListener("error", function () { setLive("off"); dropped = true; });
    window.addEventListener("pagehide", function () { source.close(); });
  }
})();
