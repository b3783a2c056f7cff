"""``/docs``: the API's interactive reference (Swagger UI), served entirely from this server.

FastAPI's own ``/docs`` loads Swagger UI from a CDN and starts it with an inline script; both break
here: an offline install cannot reach a CDN, and the site's Content-Security-Policy
(``script-src 'self'``, web/middleware.py) refuses inline scripts. So the page is ours: Swagger
UI's files come from the pinned ``fastapi-offline`` package (its bundled copy of swagger-ui-dist,
mounted at :data:`ASSETS_URL`), and the start-up code is a static file of ours
(``static/docs-init.js``). With those two changes the page runs under the site's policy unchanged
(no ``'unsafe-inline'``, no ``'unsafe-eval'``): tests/test_api_docs.py drives it in Chromium and
fails on any policy violation or any request off this server.
"""

from __future__ import annotations

from pathlib import Path

import fastapi_offline
from fastapi import APIRouter
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

DOCS_URL = "/docs"
ASSETS_URL = "/docs/assets"
ASSETS_DIR = Path(fastapi_offline.__file__).parent / "static"

PAGE = f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Search NASA API</title>
<link rel="stylesheet" href="{ASSETS_URL}/swagger-ui.css">
<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">
</head>
<body>
<noscript><p>The API reference needs JavaScript; the spec itself is at <a href="/openapi.json">/openapi.json</a>.</p></noscript>
<div id="swagger-ui" data-spec-url="/openapi.json"></div>
<script src="{ASSETS_URL}/swagger-ui-bundle.js"></script>
<script src="/static/docs-init.js"></script>
</body>
</html>
"""

router = APIRouter()


@router.get(DOCS_URL, include_in_schema=False, response_class=HTMLResponse)
def docs_page() -> HTMLResponse:
    """The Swagger UI page over ``/openapi.json`` (see the module docstring)."""
    return HTMLResponse(PAGE)


def docs_assets() -> StaticFiles:
    """Swagger UI's script and style sheet from the installed package (no network at run time)."""
    return StaticFiles(directory=ASSETS_DIR)
