// Starts Swagger UI on /docs (web/docs.py). A file, not an inline script: the site's
// Content-Security-Policy allows scripts from this server only.
window.addEventListener("DOMContentLoaded", function () {
  var root = document.getElementById("swagger-ui");
  window.ui = SwaggerUIBundle({
    url: root.getAttribute("data-spec-url"),
    dom_id: "#swagger-ui",
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
    validatorUrl: null,  // never ask validator.swagger.io: the page makes no request off this server
    tryItOutEnabled: false,
  });
});
