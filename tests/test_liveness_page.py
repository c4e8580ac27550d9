"""A lasso in the viewer: the page says where the behaviour loops back, in a real Chromium."""
import os

import pytest

from txncheck.checker.run import check_spec
from txncheck.reports.viewer import render_trace_page

from browser_env import browser, require_browser

require_browser()
MUTEX = os.path.join(os.path.dirname(__file__), "models", "fair_mutex.py")


@pytest.mark.parametrize("variant, prop, expect", [
    ("weak", "FirstEnters", "then back to step 1, forever"),
    ("unfair", "SomeoneEnters", "then it stutters forever"),
])
def test_viewer_shows_the_loop(tmp_path, variant, prop, expect):
    tr = check_spec(MUTEX, "tiny", variant=variant).traces[prop]
    page = tmp_path / "lasso.html"
    page.write_text(render_trace_page(tr)[0], encoding="utf-8")
    with browser() as b:
        p = b.new_page()
        p.goto(page.as_uri())
        assert expect in p.locator("#loop").inner_text()
        assert "violated" in p.locator("h1").inner_text()
        assert "repeat forever" in p.locator("#property").inner_text() or "stuttering" in p.locator("#property").inner_text()
