"""Real headless Chromium (Debian's ``chromium``) driven by Playwright, with the network cut off.

``.ci/run`` installs ``chromium`` and ``chromium-driver``; Playwright's own browser download is never
used. Under CI=true a missing browser or Playwright package fails the tests instead of skipping them.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import shared_path, unavailable

CHROMIUM = os.environ.get("STOPWISE_CHROMIUM", "/usr/bin/chromium")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
"""Chromium flags of every test run (the user-data dir is a fresh temporary folder per session)."""


@dataclass
class Rendered:
    """What the browser saw on one page."""

    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    blocked: list[str] = field(default_factory=list)
    charts: list[dict[str, Any]] = field(default_factory=list)
    screenshot: Path | None = None
    title: str = ""
    text: str = ""
    dialogs: list[str] = field(default_factory=list)
    answer: str = ""
    """The text of the answer block (``#answer``), drawn first under the heading; "" when the page has none."""
    notes: list[str] = field(default_factory=list)
    """The sentences that stand in for a panel left out (``p.note``)."""
    size: int = 0
    """The page's size in bytes."""


_CHART_STATE = """
() => Array.from(document.querySelectorAll('figure.chart')).map(fig => {
  const div = fig.querySelector('.plotly-graph-div');
  return {
    id: div ? div.id : null,
    svg: div ? div.querySelectorAll('svg.main-svg').length : 0,
    traces: div ? div.querySelectorAll('g.trace').length : 0,
    data: div && div.data ? div.data.length : 0,
    title: div && div.layout && div.layout.title ? (div.layout.title.text || '') : '',
    caption: (fig.querySelector('figcaption') || {}).textContent || '',
    points: div && div.data ? div.data.reduce((n, t) => n + Array.from(t.y || t.x || []).filter(v => v !== null && v !== undefined).length, 0) : 0,
  };
})
"""


class Browser:
    """One Chromium for the test session; :meth:`render` opens a file offline and reports what happened."""

    def __init__(self, context: Any) -> None:
        self.context = context

    def render(self, html: Path, screenshot: Path | None = None) -> Rendered:
        seen = Rendered()
        page = self.context.new_page()

        def route(request_route: Any) -> None:
            url = request_route.request.url
            if url.startswith(("file://", "data:", "about:")):
                request_route.continue_()
            else:
                seen.blocked.append(url)
                request_route.abort()

        page.route("**/*", route)
        page.on("console", lambda message: seen.console_errors.append(message.text) if message.type == "error" else None)
        page.on("pageerror", lambda error: seen.page_errors.append(str(error)))
        page.on("dialog", lambda dialog: (seen.dialogs.append(dialog.message), dialog.dismiss()))
        page.on("request", lambda request: None if request.url.startswith(("file://", "data:", "about:")) else seen.blocked.append(request.url))
        try:
            page.goto(html.resolve().as_uri(), wait_until="load")
            page.wait_for_function(
                "() => Array.from(document.querySelectorAll('.plotly-graph-div')).every(d => d.querySelector('svg.main-svg'))",
                timeout=30_000,
            )
            page.wait_for_timeout(300)
            seen.charts = page.evaluate(_CHART_STATE)
            seen.title = page.title()
            seen.text = page.inner_text("body")
            seen.answer = page.inner_text("#answer") if page.query_selector("#answer") else ""
            seen.notes = page.eval_on_selector_all("p.note", "nodes => nodes.map(n => n.textContent)")
            seen.size = html.stat().st_size
            if screenshot is not None:
                page.screenshot(path=str(screenshot), full_page=True)
                seen.screenshot = screenshot
        finally:
            page.close()
        return seen


@pytest.fixture(scope="session")
def terminal_bench_2() -> Path:
    """../shared/data/records/terminal_bench_2/outcomes.csv (fails under CI=true, skips elsewhere, when missing)."""
    return shared_path("records", "terminal_bench_2", "outcomes.csv")


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    """Headless Chromium with a fresh profile and the network disabled (offline, every non-file request aborted).

    Module-scoped: Playwright's sync API keeps an event loop running in this thread while it is open, so
    a later test that starts its own loop (``asyncio.run``: Inspect evaluations) would fail after it.
    """
    if not (Path(CHROMIUM).exists() or shutil.which(CHROMIUM)):
        unavailable(f"{CHROMIUM} not found: install Debian's chromium and chromium-driver (.ci/run does)")
    try:
        from playwright.sync_api import Error as PlaywrightError
        from playwright.sync_api import sync_playwright
    except ImportError:
        unavailable("the playwright package is missing: pip install -e '.[test]'")
        raise
    profile = tmp_path_factory.mktemp("chromium-profile")
    with sync_playwright() as playwright:
        try:
            context = playwright.chromium.launch_persistent_context(
                str(profile), executable_path=CHROMIUM, headless=True, args=FLAGS, offline=True, viewport={"width": 1280, "height": 900}
            )
        except PlaywrightError as exc:
            unavailable(f"Chromium did not start: {str(exc).splitlines()[0]}")
            raise
        try:
            yield Browser(context)
        finally:
            context.close()
