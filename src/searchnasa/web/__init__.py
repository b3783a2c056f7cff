"""The web face of Search NASA: server-rendered pages, the JSON API and health checks (FastAPI)."""

from searchnasa.web.app import app_from_env, create_app

__all__ = ["app_from_env", "create_app"]
