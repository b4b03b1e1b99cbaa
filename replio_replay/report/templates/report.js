// The report's filters and expanders. It reads only the page's data-* attributes it wrote itself.
(function () {
  "use strict";
  var boxes = Array.prototype.slice.call(document.querySelectorAll("input[data-filter]"));
  var rows = document.querySelectorAll("tr[data-fixture]");
  var details = document.querySelectorAll("details[data-fixture]");
  var shown = document.getElementById("shown");

  function matches(el, filters) {
    return filters.every(function (f) { return el.getAttribute("data-" + f) === "1"; });
  }

  function apply() {
    var filters = boxes.filter(function (b) { return b.checked; })
      .map(function (b) { return b.getAttribute("data-filter"); });
    var count = 0;
    rows.forEach(function (el) {
      el.hidden = !matches(el, filters);
      count += el.hidden ? 0 : 1;
    });
    details.forEach(function (el) { el.hidden = !matches(el, filters); });
    shown.textContent = count + " of " + rows.length + " fixtures shown";
  }

  function open(id) {
    var el = document.getElementById(id);
    if (el && el.tagName === "DETAILS") { el.open = true; }
  }

  function openAll(value) {
    details.forEach(function (el) { if (!el.hidden) { el.open = value; } });
  }

  boxes.forEach(function (b) { b.addEventListener("change", apply); });
  document.querySelectorAll("a[data-open]").forEach(function (a) {
    a.addEventListener("click", function () { open(a.getAttribute("data-open")); });
  });
  document.getElementById("expand").addEventListener("click", function () { openAll(true); });
  document.getElementById("collapse").addEventListener("click", function () { openAll(false); });
  // "#open=all" opens every conversation (to print the page, or take a screenshot of it).
  function follow() {
    if (location.hash === "#open=all") { openAll(true); }
    else if (location.hash) { open(decodeURIComponent(location.hash.slice(1))); }
  }
  window.addEventListener("hashchange", follow);
  apply();
  follow();
})();
