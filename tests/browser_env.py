"""A real headless Chromium for the tests of pages people look at (the viewer, the report).

Debian's `chromium` is driven through Playwright's `executable_path` (Playwright's own browser
download is never used). Where Chromium is missing the module is skipped with the fix, except in
CI (`CI` set), where `.ci/run` installs it, so a missing browser fails rather than hides the tests.
"""
import contextlib
import importlib.util
import os
import shutil

import pytest

ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
HOW = "install it with: apt-get install -y chromium (and pip install 'txncheck[test]' for playwright)"


def chromium_path() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def require_browser() -> str:
    path = chromium_path()
    missing = [] if path else ["no Chromium on PATH"]
    if importlib.util.find_spec("playwright") is None:
        missing.append("the playwright package is not installed")
    if missing:
        why = "; ".join(missing) + f"; {HOW}"
        if os.environ.get("CI"):
            pytest.fail(f"browser tests cannot run in CI: {why}")
        pytest.skip(why, allow_module_level=True)
    return path


@contextlib.contextmanager
def browser():
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=require_browser(), args=ARGS)
        try:
            yield b
        finally:
            b.close()


class Page:
    """A page opened from a file:// URL that records every console error and uncaught exception."""

    def __init__(self, b, path: str, width: int = 1400, height: int = 900):
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.page = b.new_page(viewport={"width": width, "height": height})
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.goto("file://" + os.path.abspath(path))

    def network(self) -> list[str]:
        """Requests to anything but the page itself and inline data."""
        return [u for u in self.requests if not u.startswith(("file://", "data:"))]
