// The dashboard's forms: a draft kept in this browser until it is recorded, and the debate
// page's desk (its run and the person's seats) fetched again when it changes.
"use strict";

(function () {
  const PREFIX = "council-draft:";

  function store() {
    try { return window.localStorage; } catch (error) { return null; }
  }

  function fieldsOf(form) {
    return Array.prototype.filter.call(form.elements, function (el) {
      return el.name && el.name !== "token" && el.type !== "submit";
    });
  }

  function save(form) {
    const storage = store();
    if (!storage) return;
    const values = {};
    fieldsOf(form).forEach(function (el) { values[el.name] = el.value; });
    try { storage.setItem(PREFIX + form.dataset.draft, JSON.stringify(values)); } catch (error) { /* full */ }
  }

  // A draft fills only what the server left empty: a refused form comes back with its words.
  function restore(form) {
    const storage = store();
    if (!storage || form.dataset.kept) return;
    let values = null;
    try { values = JSON.parse(storage.getItem(PREFIX + form.dataset.draft) || "null"); } catch (error) { values = null; }
    if (!values) return;
    fieldsOf(form).forEach(function (el) {
      if (typeof values[el.name] === "string" && !el.value) el.value = values[el.name];
    });
  }

  function watch(scope) {
    scope.querySelectorAll("form[data-draft]").forEach(function (form) {
      restore(form);
      form.addEventListener("input", function () { save(form); });
      form.addEventListener("change", function () { save(form); });
    });
  }

  // The drafts of this debate whose seat is no longer open were recorded: dropped.
  function forget(desk) {
    const storage = store();
    if (!storage || !desk) return;
    const debate = desk.dataset.desk.split("/")[2];
    const open = {};
    desk.querySelectorAll("form[data-draft]").forEach(function (form) { open[form.dataset.draft] = true; });
    for (let i = storage.length - 1; i >= 0; i--) {
      const key = storage.key(i);
      if (key && key.indexOf(PREFIX + debate + "/") === 0 && !open[key.slice(PREFIX.length)]) {
        storage.removeItem(key);
      }
    }
  }

  const ask = document.getElementById("ask-form");
  if (ask) {
    watch(ask.parentNode);
    // Refused, the page comes back with the words kept; started, the draft is done.
    ask.addEventListener("submit", function () {
      const storage = store();
      if (storage) storage.removeItem(PREFIX + ask.dataset.draft);
    });
  }

  let desk = document.getElementById("desk");
  if (!desk) return;
  watch(desk);
  forget(desk);

  let fetching = false;
  async function refreshDesk() {
    if (fetching) return;
    fetching = true;
    try {
      const response = await fetch(desk.dataset.desk, { cache: "no-store", headers: { Accept: "text/html" } });
      if (!response.ok) return;
      const holder = document.createElement("template");
      // Server-rendered and escaped by the template engine; scripts in it never run.
      holder.innerHTML = await response.text();
      const fresh = holder.content.getElementById("desk");
      if (!fresh || fresh.dataset.key === desk.dataset.key) return;
      desk.querySelectorAll("form[data-draft]").forEach(save);
      desk.replaceWith(fresh);
      desk = fresh;
      watch(desk);
      forget(desk);
    } catch (error) {
      /* the next change tries again */
    } finally {
      fetching = false;
    }
  }

  // The page's live part is fetched again on each change (dashboard.js marks it on the body).
  new MutationObserver(refreshDesk).observe(document.body, { attributes: true, attributeFilter: ["data-updated"] });
})();
