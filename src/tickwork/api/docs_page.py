"""``/docs``: Swagger UI over this API's OpenAPI document, served whole by the API itself.

The page and its two assets come from here: the assets are the Swagger UI build that the pinned
Powertools release ships (``aws_lambda_powertools/event_handler/openapi/swagger_ui``), served at
``/docs-assets/`` with the release in their URL, so the page loads with no network beyond this
API (no CDN, no validator badge). The page holds no data: it reads ``/openapi.json`` with the
token of the dashboard link (``#token=``) locally, or through ``tickwork dashboard``'s signing
proxy on a deployed stack.
"""

from __future__ import annotations

from http import HTTPStatus
from importlib import metadata
from pathlib import Path

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi import swagger_ui

from tickwork.api.documented import new_router

__all__ = ["ASSETS", "DOCS_HTML", "router"]

router = new_router()

_SWAGGER_UI = Path(swagger_ui.__file__).parent
_RELEASE = metadata.version("aws-lambda-powertools")
ASSETS = {
    "swagger-ui-bundle.min.js": "application/javascript; charset=utf-8",
    "swagger-ui.min.css": "text/css; charset=utf-8",
}

DOCS_HTML = f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>tickwork API</title>
<link rel="stylesheet" href="docs-assets/swagger-ui.min.css?v={_RELEASE}">
</head>
<body>
<div id="swagger-ui">Loading the API document…</div>
<script src="docs-assets/swagger-ui-bundle.min.js?v={_RELEASE}"></script>
<script>
  // The token of the link `tickwork local` prints (#token=...); kept for this tab only.
  const given = new URLSearchParams(location.hash.slice(1)).get("token");
  if (given) sessionStorage.setItem("tickwork-token", given);
  const token = sessionStorage.getItem("tickwork-token");
  window.ui = SwaggerUIBundle({{
    url: "openapi.json",
    dom_id: "#swagger-ui",
    deepLinking: true,
    validatorUrl: null,
    requestInterceptor: (request) => {{
      if (token) request.headers.Authorization = "Bearer " + token;
      return request;
    }},
  }});
</script>
</body>
</html>
"""


@router.get("/docs", include_in_schema=False)
def docs() -> Response[str]:
    return Response(
        HTTPStatus.OK,
        "text/html; charset=utf-8",
        DOCS_HTML,
        headers={"Cache-Control": "no-store"},
    )


@router.get("/docs-assets/<name>", include_in_schema=False)
def docs_asset(name: str) -> Response[str]:
    if name not in ASSETS:
        return Response(HTTPStatus.NOT_FOUND, "text/plain", f"no asset {name}")
    return Response(
        HTTPStatus.OK,
        ASSETS[name],
        (_SWAGGER_UI / name).read_text(encoding="utf-8"),
        headers={"Cache-Control": "public, max-age=31536000, immutable"},
    )
