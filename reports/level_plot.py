"""States per BFS level as a line chart (`txncheck report`): one line per run, e.g. "tiny tv2" and
"tiny kip98", from a check's `result.json` (`stats.levels`: the distinct states first reached at
each depth, level 0 being the initial states).

The x axis is the BFS level (depth), the y axis the number of new distinct states at that level;
the y axis is logarithmic when the largest count is more than `LOG_RATIO` (100) times the smallest
(a state space that fans out from 1 initial state to 16,880 at level 31 is unreadable on a linear
axis), linear otherwise. Each run's legend entry carries its total and depth ("tiny tv2: 174,886
states, depth 41"). Colours and markers follow a fixed cycle in the order of `series`.

The output is deterministic (`mpl_figure.py`): the same series give the same bytes, and the file
is written atomically.
"""
from __future__ import annotations

import math

from .atomic import write_atomic
from .mpl_figure import figure_bytes, figure_style, new_figure

WIDTH, HEIGHT = 7.5, 4.0        # inches
LOG_RATIO = 100                 # max / min above which the y axis is logarithmic
COLOURS = ("#1f4e89", "#c62828", "#2e7d32", "#ef6c00", "#6a1b9a", "#00838f", "#5d4037", "#757575")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
INK = "#222222"


def _total(levels: list[int]) -> str:
    n = len(levels)
    return f"{sum(levels):,} state{'s' if sum(levels) != 1 else ''}, depth {max(n - 1, 0)}"


def use_log(series: list[tuple[str, list[int]]]) -> bool:
    """Whether `plot_levels` draws a logarithmic y axis for these series."""
    vals = [v for _, levels in series for v in levels if v > 0]
    return bool(vals) and max(vals) > LOG_RATIO * min(vals)


def render_levels(series: list[tuple[str, list[int]]], fmt: str = "png", title: str = "") -> bytes:
    """The chart's bytes (see `plot_levels`)."""
    if fmt not in ("png", "svg"):
        raise ValueError(f"level plot format {fmt!r}: use png or svg")
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    series = [(str(name), [int(v) for v in levels]) for name, levels in series]
    log = use_log(series)
    sizes = {"axes.titlesize": 11, "axes.labelsize": 9, "xtick.labelsize": 8, "ytick.labelsize": 8,
             "legend.fontsize": 8}
    with figure_style("txncheck-level-plot", **sizes):
        fig = new_figure(WIDTH, HEIGHT)
        ax = fig.add_axes((0.11, 0.13, 0.86, 0.76 if title else 0.83))
        for n, (name, levels) in enumerate(series):
            xs = list(range(len(levels)))
            ys = [v if (v > 0 or not log) else math.nan for v in levels]   # log axis: a 0 is a gap
            ax.plot(xs, ys, color=COLOURS[n % len(COLOURS)], marker=MARKERS[n % len(MARKERS)], markersize=3.5,
                    lw=1.4, label=f"{name}: {_total(levels)}")
        if log:
            ax.set_yscale("log")
        else:
            ax.set_ylim(bottom=0)
            ax.yaxis.set_major_locator(MaxNLocator(integer=True))
            ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
        if log:
            ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}" if v >= 1 else f"{v:g}"))
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel("BFS level (depth from the initial states)")
        ax.set_ylabel("new distinct states at this level" + (" (log scale)" if log else ""))
        ax.grid(True, which="major", color="#dddddd", lw=0.6)
        ax.set_axisbelow(True)
        for side in ("top", "right"):
            ax.spines[side].set_visible(False)
        if title:
            ax.set_title(title, loc="left", fontweight="bold", color=INK)
        if series:
            ax.legend(loc="best", frameon=False)
        else:
            ax.text(0.5, 0.5, "no runs", transform=ax.transAxes, ha="center", va="center", color="#777777")
        return figure_bytes(fig, fmt, title or "txncheck states per BFS level")


def plot_levels(series: list[tuple[str, list[int]]], path: str, fmt: str = "png", title: str = "") -> None:
    """Draw the states per BFS level of each run in `series` ((name, levels) pairs, `levels[d]` the
    distinct states first reached at depth d) into `path` as `fmt` "png" or "svg", written
    atomically."""
    write_atomic(path, render_levels(series, fmt, title))
