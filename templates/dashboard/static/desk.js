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

  // The draft holds the last words typed in this browser: a refused form came back with the
  // words sent, and anything typed after them (before a reload) is in the draft.
  function restore(form) {
    const storage = store();
    if (!storage) return;
    let values = null;
    try { values = JSON.parse(storage.getItem(PREFIX + form.dataset.draft) || "null"); } catch (error) { values = null; }
    if (!values) return;
    fieldsOf(form).forEach(function (el) {
      if (typeof values[el.name] === "string") el.value = values[el.name];
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

  // A refused form comes back as the answer to its POST: the address becomes the page's
  // own, so a reload asks for the page (the draft refills it) instead of sending it again.
  const desk0 = document.getElementById("desk");
  const own = desk0 ? "/d/" + desk0.dataset.desk.split("/")[2] : "/";
  if (location.pathname !== own && (desk0 || location.pathname === "/ask")) {
    history.replaceState(null, "", own);
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
