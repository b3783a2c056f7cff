// Progressive enhancement of the results page (the page works without it: the Apply button
// submits the form, the filter panel is open). With it: the sort and the filter checkboxes
// apply as soon as they change, and on a narrow screen the filter panel starts folded so the
// first result is on the first screen. Served from /static under the page's CSP (script-src 'self').
(function () {
  "use strict";
  var panel = document.querySelector("details.filter-panel");
  if (!panel) { return; }
  if (window.matchMedia && window.matchMedia("(max-width: 50rem)").matches) {
    panel.open = false;
  }
  var form = panel.querySelector("form.filter-form");
  if (!form) { return; }
  form.addEventListener("change", function (event) {
    var target = event.target;
    // Year boxes wait for Enter or Apply: a change fires when the first box loses focus,
    // before the second one is typed.
    if (target.matches("select, input[type=checkbox]")) {
      form.submit();
    }
  });
}());
