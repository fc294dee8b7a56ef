/* Offline search over search-index.js (rule numbers of any era, rule wordings, glossary
   terms, section titles and releases), ranked by searchcore.js. The query lives in the
   address (?q=...), so a search can be shared and the back button steps through searches.
   Works from file:// (the index is a plain script). */
(function () {
  "use strict";
  var core = window.searchCore;
  var index = window.SEARCH_INDEX || [];
  var shape = window.SEARCH_SHAPE || "\\d{3}(?:\\.\\d{1,3}[a-z]{0,2})?";
  var prepared = core.prepare(index);
  var form = document.getElementById("search-form");
  var input = document.getElementById("q");
  var list = document.getElementById("results");
  var status = document.getElementById("search-status");
  var LIMIT = 100;

  function snippet(text, words) {
    var t = text.length > 240 ? text.slice(0, 240) + "…" : text;
    var frag = document.createDocumentFragment(), low = core.fold(t), pos = 0;
    // Highlight the first occurrence of each word where folding kept the length.
    var marks = [];
    if (low.length === t.length) {
      words.forEach(function (w) { var at = low.indexOf(w); if (at >= 0) marks.push([at, at + w.length]); });
      marks.sort(function (a, b) { return a[0] - b[0]; });
    }
    marks.forEach(function (m) {
      if (m[0] < pos) return;
      frag.appendChild(document.createTextNode(t.slice(pos, m[0])));
      var mk = document.createElement("mark"); mk.textContent = t.slice(m[0], m[1]); frag.appendChild(mk);
      pos = m[1];
    });
    frag.appendChild(document.createTextNode(t.slice(pos)));
    return frag;
  }

  function show(q) {
    list.textContent = "";
    if (!q.trim()) { status.textContent = "Type a rule number or words."; document.title = "Search"; return; }
    var hits = core.rank(index, prepared, q, shape), words = core.fold(q).split(" ").filter(Boolean);
    document.title = "Search: " + q;
    status.textContent = hits.length ? hits.length + " result" + (hits.length === 1 ? "" : "s") +
      (hits.length > LIMIT ? " (first " + LIMIT + " shown)" : "") : "No match for “" + q + "”.";
    hits.slice(0, LIMIT).forEach(function (h) {
      var e = index[h[2]], li = document.createElement("li"), a = document.createElement("a");
      a.href = e[3]; a.textContent = e[1];
      var kind = document.createElement("span"); kind.className = "kind";
      kind.textContent = e[0] + (e[8] === 1 ? " · current" : "");
      var p = document.createElement("p"); p.appendChild(snippet(e[2], words));
      li.appendChild(a); li.appendChild(kind);
      if (e[6]) { var was = document.createElement("span"); was.className = "numbers"; was.textContent = e[6]; li.appendChild(was); }
      li.appendChild(p); list.appendChild(li);
    });
    document.body.dataset.searched = q;
  }

  function fromAddress() { return new URLSearchParams(window.location.search).get("q") || ""; }

  // Typing replaces the address's query; a submitted search is a step of its own in the history.
  function remember(q, step) {
    var url = new URL(window.location.href);
    if ((url.searchParams.get("q") || "") === q) return;
    if (q) url.searchParams.set("q", q); else url.searchParams.delete("q");
    try {
      if (step) window.history.pushState({ q: q }, "", url.href);
      else window.history.replaceState({ q: q }, "", url.href);
    } catch (err) { /* some browsers refuse history on file:// pages: the search still runs */ }
  }

  input.value = fromAddress();
  show(input.value);
  var timer = null;
  input.addEventListener("input", function () {
    clearTimeout(timer);
    timer = setTimeout(function () { remember(input.value, false); show(input.value); }, 150);
  });
  form.addEventListener("submit", function (ev) {
    ev.preventDefault(); clearTimeout(timer); remember(input.value, true); show(input.value);
  });
  window.addEventListener("popstate", function () { input.value = fromAddress(); show(input.value); });
})();
