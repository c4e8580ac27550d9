"""What every matplotlib figure of `reports/` shares (the state diagram, the sequence chart, the
level plot): drawn off-screen on an Agg canvas (never pyplot, which keeps global figures and picks
a GUI backend), measured without a renderer, and saved as the same bytes for the same picture.

Deterministic output: matplotlib's default style under fixed rc settings (a fixed SVG hash salt,
text kept as text, no path simplification), an SVG without a date and a PNG without the software
version. The settings apply only inside `figure_style`, so a drawing leaves `matplotlib.rcParams`
as it was.
"""
from __future__ import annotations

import io
from contextlib import contextmanager
from functools import lru_cache

DPI = 100
# where the viewer lacks DejaVu Sans (the font the texts were measured in), fonts of like widths
SVG_FONTS = "'DejaVu Sans', 'Bitstream Vera Sans', Verdana, sans-serif"


@lru_cache(maxsize=65536)
def text_width(text: str, size: float, style: str = "normal", weight: str = "normal") -> float:
    """A one-line string's drawn width in inches (the font's own metrics, no renderer needed)."""
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import text_to_path
    prop = FontProperties(family="DejaVu Sans", size=size, style=style, weight=weight)
    w, _, _ = text_to_path.get_text_width_height_descent(text, prop, ismath=False)
    return w / 72.0


@contextmanager
def figure_style(salt: str, **extra):
    """matplotlib's default style with the settings that make the bytes deterministic; `salt`
    names the figure kind (SVG ids are hashed with it); `extra`: further rc settings, passed as
    `**{"axes.titlesize": 11}`."""
    import matplotlib
    import matplotlib.style
    rc = {"svg.hashsalt": salt, "svg.fonttype": "none", "font.family": "DejaVu Sans",
          "svg.image_inline": True, "path.simplify": False, "text.usetex": False,
          "text.parse_math": False, "figure.dpi": DPI, "savefig.dpi": DPI, **extra}
    with matplotlib.style.context("default"), matplotlib.rc_context(rc):
        yield


def new_figure(width: float, height: float):
    """A `width` x `height` inch figure on its own Agg canvas."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    fig = Figure(figsize=(width, height), dpi=DPI)
    FigureCanvasAgg(fig)
    return fig


def inch_axes(fig, x0: float, x1: float, y0: float, y1: float):
    """One axes over the whole figure, without axis lines, whose data units are inches from
    (x0, y0) at the top left to (x1, y1) at the bottom right (y runs down)."""
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_axis_off()
    ax.set_xlim(x0, x1)
    ax.set_ylim(y1, y0)
    return ax


def figure_bytes(fig, fmt: str, title: str, svg_fonts: str | None = None) -> bytes:
    """`fig` as "png" or "svg" bytes, with `title` in its metadata and neither a date nor a
    software version; `svg_fonts`: the font-family list an SVG names instead of DejaVu Sans alone."""
    buf = io.BytesIO()
    if fmt != "svg":
        fig.savefig(buf, format="png", dpi=DPI, metadata={"Software": None, "Title": title})
        return buf.getvalue()
    fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": "txncheck", "Title": title})
    if svg_fonts is None:
        return buf.getvalue()
    svg = buf.getvalue().decode("utf-8")
    return svg.replace("font-family: 'DejaVu Sans'", f"font-family: {svg_fonts}").encode("utf-8")
