/* The word diff of pipeline/changes.py (word_ops), for the in-browser comparison: the
   same runs, word for word (a test runs this file under Node and holds it to the Python).
   Words are matched with quote style folded, as difflib's SequenceMatcher matches them
   (autojunk off): the longest matching block first, then the same on each side of it.
   A plain script that sets window.wordOps (module.exports under Node). */
(function (root) {
  "use strict";
  var QUOTES = { "\u201c": '"', "\u201d": '"', "\u2018": "'", "\u2019": "'" };
  function fold(w) { return w.replace(/[\u201c\u201d\u2018\u2019]/g, function (c) { return QUOTES[c]; }); }
  function words(text) { return text.split(/\s+/).filter(Boolean); }

  function matchingBlocks(a, b) {
    var b2j = Object.create(null);
    b.forEach(function (w, j) { (b2j[w] = b2j[w] || []).push(j); });
    function longest(alo, ahi, blo, bhi) {
      var besti = alo, bestj = blo, bestsize = 0, j2len = Object.create(null);
      for (var i = alo; i < ahi; i++) {
        var next = Object.create(null), js = b2j[a[i]] || [];
        for (var n = 0; n < js.length; n++) {
          var j = js[n];
          if (j < blo) continue;
          if (j >= bhi) break;
          var k = next[j] = (j2len[j - 1] || 0) + 1;
          if (k > bestsize) { besti = i - k + 1; bestj = j - k + 1; bestsize = k; }
        }
        j2len = next;
      }
      while (besti > alo && bestj > blo && a[besti - 1] === b[bestj - 1]) { besti--; bestj--; bestsize++; }
      while (besti + bestsize < ahi && bestj + bestsize < bhi && a[besti + bestsize] === b[bestj + bestsize]) bestsize++;
      return [besti, bestj, bestsize];
    }
    var queue = [[0, a.length, 0, b.length]], found = [];
    while (queue.length) {
      var q = queue.pop(), m = longest(q[0], q[1], q[2], q[3]), i = m[0], j = m[1], k = m[2];
      if (k) {
        found.push(m);
        if (q[0] < i && q[2] < j) queue.push([q[0], i, q[2], j]);
        if (i + k < q[1] && j + k < q[3]) queue.push([i + k, q[1], j + k, q[3]]);
      }
    }
    found.sort(function (x, y) { return x[0] - y[0] || x[1] - y[1] || x[2] - y[2]; });
    var blocks = [], i1 = 0, j1 = 0, k1 = 0;
    found.forEach(function (m) {
      if (i1 + k1 === m[0] && j1 + k1 === m[1]) { k1 += m[2]; return; }
      if (k1) blocks.push([i1, j1, k1]);
      i1 = m[0]; j1 = m[1]; k1 = m[2];
    });
    if (k1) blocks.push([i1, j1, k1]);
    blocks.push([a.length, b.length, 0]);
    return blocks;
  }

  // [op, [words]] runs: "=" kept (as the new version writes them), "-" removed, "+" added.
  function wordOps(oldText, newText) {
    var a = words(oldText), b = words(newText), ops = [], i = 0, j = 0;
    matchingBlocks(a.map(fold), b.map(fold)).forEach(function (m) {
      if (i < m[0]) ops.push(["-", a.slice(i, m[0])]);
      if (j < m[1]) ops.push(["+", b.slice(j, m[1])]);
      i = m[0] + m[2]; j = m[1] + m[2];
      if (m[2]) ops.push(["=", b.slice(m[1], j)]);
    });
    return ops;
  }

  if (typeof module !== "undefined" && module.exports) module.exports = wordOps;
  else root.wordOps = wordOps;
})(this);
