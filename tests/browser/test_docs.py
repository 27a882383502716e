"""GIVEN the API's /docs in headless Chromium with every request beyond the API cut off WHEN
it loads THEN Swagger UI renders this API's document: its assets come from the API itself (the
pinned Powertools release's build), and no request leaves for a CDN or a validator."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import pytest

from tests.browser.conftest import CHROMIUM
from tests.e2e.support import Stack

if TYPE_CHECKING:
    from playwright.sync_api import Page, Route

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(),
    reason=f"no Chromium at {CHROMIUM}: install Debian's package (apt-get install -y chromium)",
)


def test_docs_render_with_the_network_cut_to_the_api_alone(
    stack: Stack, page: Page, api_url: str, token_link: Callable[[str], str]
) -> None:
    from playwright.sync_api import expect

    api = urlsplit(api_url).netloc
    served: list[str] = []
    cut: list[str] = []

    def only_the_api(route: Route) -> None:
        url = route.request.url
        if urlsplit(url).netloc == api:
            served.append(urlsplit(url).path)
            route.continue_()
        else:
            cut.append(url)
            route.abort("internetdisconnected")

    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.route("**/*", only_the_api)

    page.goto(token_link("/docs"))

    expect(page.locator(".swagger-ui .info .title")).to_contain_text("tickwork", timeout=15000)
    expect(page.locator(".opblock-summary-path", has_text="/actions/{id}").first).to_be_visible()
    assert cut == [], cut
    assert errors == []
    assert {"/docs", "/openapi.json"} <= set(served)
    assert any(path.startswith("/docs-assets/swagger-ui-bundle") for path in served)
