/* Compare any two sources in the browser, matched through lineages, with the rules of
   pipeline.changes.compare as pipeline/site/changes.py applies it, in its order (a test holds the two equal), and the word diff of wordops.js. Wordings are compared by the
   number the site gave their folded form (pipeline.text.folded), not refolded here.
   Each source's rules are a plain script, data/<source>.js, loaded on demand, so this
   works from file:// too. Lineages are known by the names of their pages
   (lineage/<name>.html), one name per lineage. */
(function () {
  "use strict";
  var KINDS = ["added", "removed", "moved", "edited", "moved+edited", "split", "merged"];
  var sources = JSON.parse(document.getElementById("site-sources").textContent);
  var byId = {};
  sources.forEach(function (s) { byId[s.id] = s; });
  var lineages = window.SITE_LINEAGES || {};
  var status = document.getElementById("compare-status");
  var results = document.getElementById("compare-results");
  var countsTable = document.getElementById("compare-counts");

  function normNumber(n) { return n.replace(/ /g, "").replace(/\.+$/, ""); }
  // Document order, as pipeline.numbers.sort_key: 704.5z before 704.5aa; what is no rule number, last.
  function numberOrder(n) {
    var m = /^(\d{3})(?:\.(\d{0,3})([a-z]{0,2}))?$/.exec(normNumber(n));
    if (!m) return [1000000, 0, 0, n];
    var letters = m[3] || "";
    return [parseInt(m[1], 10), m[2] ? parseInt(m[2], 10) : -1, letters.length, letters];
  }
  function cmp(a, b) {
    for (var i = 0; i < a.length; i++) { if (a[i] < b[i]) return -1; if (a[i] > b[i]) return 1; }
    return 0;
  }

  function load(id) {
    return new Promise(function (resolve, reject) {
      window.SITE_DATA = window.SITE_DATA || {};
      if (window.SITE_DATA[id]) { resolve(window.SITE_DATA[id]); return; }
      var s = document.createElement("script");
      s.src = byId[id].data;
      s.onload = function () { resolve(window.SITE_DATA[id]); };
      s.onerror = function () { reject(new Error("cannot load " + byId[id].data)); };
      document.head.appendChild(s);
    });
  }
  function asMap(d) {
    var m = {};
    for (var i = 0; i < d.k.length; i++) m[d.k[i]] = { number: d.n[i], text: d.t[i], fold: d.f[i] };
    return m;
  }

  // lineages[name] = [split from, merged into, first date, ended ("removed", "merged" or ""), ended date]
  // An old source that is no whole release (official false) lacks rules without their
  // being added since: only those newer than the release it is numbered like (placed) are.
  function compare(old, neu, dateOld, dateNew, officialOld, placedOld) {
    var keys = Object.keys(neu).concat(Object.keys(old).filter(function (k) { return !(k in neu); }));
    var out = [];
    keys.forEach(function (k) {
      var a = old[k], b = neu[k], rel = lineages[k];
      if (a && b) {
        var moved = normNumber(a.number) !== normNumber(b.number), edited = a.fold !== b.fold;
        if (moved || edited) out.push({ kind: moved && edited ? "moved+edited" : moved ? "moved" : "edited", key: k,
          oldNumber: a.number, newNumber: b.number, oldText: a.text, newText: b.text, otherNumber: "" });
      } else if (b) {
        if (!officialOld && (!placedOld || !rel || rel[2] <= placedOld)) return;
        var split = rel && rel[0] && (!dateOld || rel[2] > dateOld), parent = split && old[rel[0]];
        out.push({ kind: split ? "split" : "added", key: k, oldNumber: "", newNumber: b.number, oldText: "",
          newText: b.text, otherNumber: parent ? parent.number : "" });
      } else if (rel && rel[3] && dateNew && dateOld < rel[4] && rel[4] <= dateNew) {
        var into = rel[3] === "merged" && rel[1] && neu[rel[1]];
        out.push({ kind: rel[3], key: k, oldNumber: a.number, newNumber: "", oldText: a.text,
          newText: "", otherNumber: into ? into.number : "" });
      }
    });
    out.sort(function (x, y) {
      return cmp(numberOrder(x.newNumber || x.otherNumber || x.oldNumber), numberOrder(y.newNumber || y.otherNumber || y.oldNumber))
        || cmp(numberOrder(x.oldNumber), numberOrder(y.oldNumber));
    });
    return out;
  }

  function diffNode(a, b) {
    var p = document.createElement("p"); p.className = "vtext";
    window.wordOps(a, b).forEach(function (op, idx) {
      if (idx) p.appendChild(document.createTextNode(" "));
      var words = op[1].join(" ");
      if (op[0] === "=") { p.appendChild(document.createTextNode(words)); return; }
      var el = document.createElement(op[0] === "-" ? "del" : "ins"); el.textContent = words; p.appendChild(el);
    });
    return p;
  }
  function link(text, href, cls) {
    var a = document.createElement("a"); a.textContent = text; a.href = href; if (cls) a.className = cls; return a;
  }
  function anchor(n) { return "R" + n.replace(/[. ]/g, ""); }

  function render(aId, bId, changes) {
    results.textContent = "";
    var counts = {};
    KINDS.forEach(function (k) { counts[k] = 0; });
    changes.forEach(function (c) { counts[c.kind]++; });
    var head = countsTable.tHead.rows[0], body = countsTable.tBodies[0].rows[0];
    head.textContent = ""; body.textContent = "";
    KINDS.forEach(function (k) {
      var th = document.createElement("th"); th.scope = "col"; th.textContent = k; head.appendChild(th);
      var td = document.createElement("td"); td.textContent = counts[k]; td.dataset.kind = k; body.appendChild(td);
    });
    countsTable.hidden = false;
    status.textContent = changes.length + " changes from " + byId[aId].label + " to " + byId[bId].label + ".";
    var frag = document.createDocumentFragment();
    changes.forEach(function (c) {
      var li = document.createElement("li"); li.className = "change " + c.kind.replace("+", "-");
      var kind = document.createElement("span"); kind.className = "kind"; kind.textContent = c.kind; li.appendChild(kind);
      li.appendChild(document.createTextNode(" "));
      var same = c.oldNumber === c.newNumber;
      if (c.oldNumber && !same) li.appendChild(link(c.oldNumber, byId[aId].page + "#" + anchor(c.oldNumber), "num"));
      if (c.oldNumber && c.newNumber && !same) li.appendChild(document.createTextNode(" → "));
      if (c.newNumber) li.appendChild(link(c.newNumber, byId[bId].page + "#" + anchor(c.newNumber), "num"));
      if (c.otherNumber) li.appendChild(document.createTextNode(" (" + (c.kind === "split" ? "from " : "into ") + c.otherNumber + ")"));
      li.appendChild(link("history", "lineage/" + c.key + ".html", "history"));
      if (c.kind === "edited" || c.kind === "moved+edited" || (c.kind === "moved" && c.oldText !== c.newText)) {
        li.appendChild(diffNode(c.oldText, c.newText));
      } else if (c.kind !== "moved") {
        var p = document.createElement("p"); p.className = "vtext"; p.textContent = c.newText || c.oldText; li.appendChild(p);
      }
      frag.appendChild(li);
    });
    results.appendChild(frag);
    document.body.dataset.compared = aId + ".." + bId;
  }

  function run(aId, bId) {
    if (!byId[aId] || !byId[bId]) { status.textContent = "Choose two releases."; return; }
    status.textContent = "Loading…";
    Promise.all([load(aId), load(bId)]).then(function (d) {
      render(aId, bId, compare(asMap(d[0]), asMap(d[1]), byId[aId].date, byId[bId].date,
                                      byId[aId].official, byId[aId].placed));
    }, function (err) { status.textContent = String(err.message || err); });
  }

  var params = new URLSearchParams(window.location.search);
  var a = document.getElementById("a"), b = document.getElementById("b");
  var official = sources.filter(function (s) { return s.official; });
  if (params.get("a") && byId[params.get("a")]) a.value = params.get("a");
  else if (official.length > 1) a.value = official[official.length - 2].id;
  if (params.get("b") && byId[params.get("b")]) b.value = params.get("b");
  else if (official.length) b.value = official[official.length - 1].id;
  document.getElementById("compare-form").addEventListener("submit", function (ev) {
    ev.preventDefault(); run(a.value, b.value);
  });
  if (params.get("a") && params.get("b")) run(a.value, b.value);
})();
