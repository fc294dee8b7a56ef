/* Offline search over search-index.js: rule numbers of any era, rule wordings, glossary
   terms, section titles and releases. Works from file:// (the index is a plain script). */
(function () {
  "use strict";
  var index = window.SEARCH_INDEX || [];
  var form = document.getElementById("search-form");
  var input = document.getElementById("q");
  var list = document.getElementById("results");
  var status = document.getElementById("search-status");
  var LIMIT = 100;

  function fold(s) {
    return s.replace(/Æ/g, "Ae").replace(/æ/g, "ae").normalize("NFKD").replace(/[\u0300-\u036f]/g, "")
      .toLowerCase().replace(/[“”]/g, '"').replace(/[‘’]/g, "'").replace(/\s+/g, " ").trim();
  }
  // A rule number typed any way: "702.89a", "R70289a", "702. 89a".
  function asNumber(q) {
    var m = /^r?(\d{3}(?:\.?\s*\d{0,3}[a-z]{0,2})?)\.?$/i.exec(q.trim());
    return m ? m[1].replace(/[.\s]/g, "").toLowerCase() : "";
  }
  // entry: [kind, label, text, href, numbers (no dots, space separated; the current one first),
  //         words of older wordings, the numbers it had and when]
  var hay = index.map(function (e) { return fold(e[1] + " " + e[2] + " " + e[5]); });
  var labels = index.map(function (e) { return fold(e[1]); });
  var nums = index.map(function (e) { return e[4] ? e[4].toLowerCase().split(" ") : []; });
  var kindRank = { rule: 0, glossary: 1, section: 2, release: 3 };

  function search(q) {
    var number = asNumber(q), words = fold(q).split(" ").filter(Boolean), hits = [];
    if (!words.length) return hits;
    for (var i = 0; i < index.length; i++) {
      var score = 0;
      if (number) {
        if (nums[i][0] === number) score = 110;
        else if (nums[i].indexOf(number) >= 0) score = 100;
        else if (nums[i].some(function (n) { return n.indexOf(number) === 0; })) score = 50;
      }
      if (!score) {
        var all = words.every(function (w) { return hay[i].indexOf(w) >= 0; });
        if (!all) continue;
        var phrase = fold(q);
        score = labels[i] === phrase ? 90 : labels[i].indexOf(phrase) >= 0 ? 60 : hay[i].indexOf(phrase) >= 0 ? 30 : 10;
      }
      hits.push([score, i]);
    }
    hits.sort(function (a, b) {
      return b[0] - a[0] || kindRank[index[a[1]][0]] - kindRank[index[b[1]][0]] || a[1] - b[1];
    });
    return hits;
  }

  function snippet(text, words) {
    var t = text.length > 240 ? text.slice(0, 240) + "…" : text;
    var frag = document.createDocumentFragment(), low = fold(t), pos = 0;
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
    if (!q.trim()) { status.textContent = "Type a rule number or words."; return; }
    var hits = search(q), words = fold(q).split(" ").filter(Boolean);
    status.textContent = hits.length ? hits.length + " result" + (hits.length === 1 ? "" : "s") +
      (hits.length > LIMIT ? " (first " + LIMIT + " shown)" : "") : "No match for “" + q + "”.";
    hits.slice(0, LIMIT).forEach(function (h) {
      var e = index[h[1]], li = document.createElement("li"), a = document.createElement("a");
      a.href = e[3]; a.textContent = e[1];
      var kind = document.createElement("span"); kind.className = "kind"; kind.textContent = e[0];
      var p = document.createElement("p"); p.appendChild(snippet(e[2], words));
      li.appendChild(a); li.appendChild(kind);
      if (e[6]) { var was = document.createElement("span"); was.className = "numbers"; was.textContent = e[6]; li.appendChild(was); }
      li.appendChild(p); list.appendChild(li);
    });
  }

  var q = new URLSearchParams(window.location.search).get("q") || "";
  input.value = q;
  show(q);
  var timer = null;
  input.addEventListener("input", function () { clearTimeout(timer); timer = setTimeout(function () { show(input.value); }, 150); });
  form.addEventListener("submit", function (ev) { ev.preventDefault(); show(input.value); });
})();
