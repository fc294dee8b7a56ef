/* The site search's rules, apart from the page so that Node can run them: a test holds
   fold() to the Python the index was built with (pipeline.text: search_fold of fold) and
   citedNumber() to the resolve command's reading of a citation (pipeline.query.search:
   number_query), on the bundled data and on generated strings. The number shape itself
   is not written here: the index carries the grammar's RULE_NUMBER (window.SEARCH_SHAPE).
   A plain script that sets window.searchCore (module.exports under Node). */
(function (root) {
  "use strict";
  // Python's str.split()/strip() whitespace, which JavaScript's \s is not quite.
  var WS = "\\t-\\r\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
  var RUNS = new RegExp("[" + WS + "]+", "g");
  var EDGES = new RegExp("^[" + WS + "]+|[" + WS + "]+$", "g");
  var QUOTES = { "\u201c": '"', "\u201d": '"', "\u2018": "'", "\u2019": "'" };

  function squash(s) { return s.replace(RUNS, " ").replace(EDGES, ""); }

  // Quote style, accents, case and spacing folded: "Assassin’s" and "Assassin's" are one.
  function fold(s) {
    s = s.replace(/[\u201c\u201d\u2018\u2019]/g, function (c) { return QUOTES[c]; });
    if (!/[^\x00-\x7f]/.test(s)) return squash(s.toLowerCase());
    s = s.replace(/Æ/g, "Ae").replace(/æ/g, "ae").normalize("NFKD").replace(/[\u0300-\u036f]/g, "");
    return squash(s.toLowerCase());
  }

  // A citation as resolve reads it ("CR 702.42a", "rule 702. 37a.", "(702.19a)", "702.42A"),
  // as the reference writes it ("702.42a"), or "" when the query is no rule or section number.
  function citedNumber(q, shape) {
    var text = q.normalize("NFKC").replace(EDGES, "").replace(/[,;:]+$/, "").replace(/^[()[\]]+|[()[\]]+$/g, "");
    var lead = new RegExp("^([^" + WS + "]+)[" + WS + "]+([^]*)$").exec(text);
    if (lead && ["cr", "rule", "rules", "section"].indexOf(lead[1].toLowerCase().replace(/\.+$/, "")) >= 0) {
      text = lead[2];
    }
    var number = text.replace(EDGES, "").replace(/ /g, "").replace(/\.+$/, "");
    if (/^\d+\.\d*[A-Za-z]+$/.test(number)) number = number.toLowerCase();
    if (/[^\x00-\x7f]/.test(number) || !new RegExp("^(?:" + shape + ")$").test(number)) return "";
    return number;
  }

  // The key the index lists numbers under: no dots or spaces ("702.42a" -> "70242a").
  function numberKey(number) { return number.replace(/[.\s]/g, ""); }

  // entry: [kind, label, text, href, numbers ("key@date", the current number first), words of
  //         older wordings, the numbers it had and when, date, current (1 or 0)]
  function prepare(index) {
    return index.map(function (e) {
      return {
        hay: fold(e[1] + " " + e[2] + " " + e[5]), label: fold(e[1]),
        nums: e[4] ? e[4].split(" ").map(function (n) { var at = n.indexOf("@"); return [n.slice(0, at), n.slice(at + 1)]; }) : [],
        date: e[7] || "", current: e[8] === 1
      };
    });
  }

  var KIND = { rule: 0, section: 1, glossary: 2, release: 3 };

  // Hits as [score, date, index]: a number's exact matches in the current release first, then
  // those under it (702.42a under 702.42), then the older holders of that number, newest first;
  // words: the current release first, then how well they match, then newer before older.
  function rank(index, prepared, q, shape) {
    var number = citedNumber(q, shape), key = number ? numberKey(number) : "";
    var words = fold(q).split(" ").filter(Boolean), phrase = fold(q), hits = [];
    if (!words.length) return hits;
    for (var i = 0; i < index.length; i++) {
      var p = prepared[i], score = 0, date = p.date, found = "";
      if (key) {
        for (var n = 0; n < p.nums.length; n++) {
          var k = p.nums[n][0], now = p.current && n === 0, s = 0;
          if (k === key) s = now ? 400 : 200;
          else if (k.indexOf(key) === 0 && (number.indexOf(".") < 0 || /^[a-z]+$/.test(k.slice(key.length)))) s = now ? 300 : 100;
          if (s > score || (s && s === score && p.nums[n][1] > date)) { score = s; date = p.nums[n][1]; found = k; }
        }
      }
      if (!score) {
        if (!words.every(function (w) { return p.hay.indexOf(w) >= 0; })) continue;
        score = (p.current ? 50 : 0) + (p.label === phrase ? 40 : p.label.indexOf(phrase) >= 0 ? 30 :
                                        p.hay.indexOf(phrase) >= 0 ? 20 : 10);
      }
      hits.push([score, date, i, found]);
    }
    hits.sort(function (a, b) {
      return b[0] - a[0] || (a[1] < b[1] ? 1 : a[1] > b[1] ? -1 : 0) || byNumber(a[3], b[3]) ||
        KIND[index[a[2]][0]] - KIND[index[b[2]][0]] || a[2] - b[2];
    });
    return hits;
  }

  // Number keys in rule order (pipeline.numbers.sort_key): 702.9a before 702.10a, 704.5z before 704.5aa.
  function byNumber(a, b) {
    if (!a || !b) return 0;
    var x = /^(\d{3})(\d*)([a-z]*)$/.exec(a), y = /^(\d{3})(\d*)([a-z]*)$/.exec(b);
    if (!x || !y) return a < b ? -1 : a > b ? 1 : 0;
    return (+x[1] - +y[1]) || ((x[2] ? +x[2] : -1) - (y[2] ? +y[2] : -1)) || (x[3].length - y[3].length) ||
      (x[3] < y[3] ? -1 : x[3] > y[3] ? 1 : 0);
  }

  var core = { fold: fold, citedNumber: citedNumber, numberKey: numberKey, prepare: prepare, rank: rank };
  if (typeof module !== "undefined" && module.exports) module.exports = core;
  else root.searchCore = core;
})(this);
