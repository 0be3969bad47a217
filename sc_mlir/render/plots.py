"""Figures (matplotlib): the scoped stack against program order, the allocas on the stack
at the crossing, and a diff. They draw analysis records; they never read MLIR.

Legibility with hundreds of allocas: only the largest allocas get labels (and, in the
bar charts, their own bars); the rest are aggregated and said to be.
"""

from __future__ import annotations

from pathlib import PurePath
from typing import TYPE_CHECKING

from sc_mlir.analysis.report import PlacedAlloca, SpaceReport
from sc_mlir.support.numbers import ABSENT, num, num_short

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.axis import Axis
    from matplotlib.figure import Figure
    from matplotlib.text import Annotation

    from sc_mlir.analysis.rollup import Rollup
    from sc_mlir.compare.diff import DiffResult

LIVE = "#2f6fb0"
RESERVED = "#b9cde5"
CROSSING = "#d62728"
BOUND = "#d62728"
DEAD = "#bdbdbd"
GROW = "#d62728"
SHRINK = "#2ca02c"


def new_figure(size: tuple[float, float]) -> Figure:
    """A figure that draws itself in notebooks (PNG) without pyplot, on an Agg canvas so
    text sizes can be measured before drawing."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    class Plot(Figure):
        def _repr_png_(self) -> bytes:
            return figure_png(self)

    figure = Plot(figsize=size, layout="constrained")
    FigureCanvasAgg(figure)
    return figure


def _figure(ax: Axes | None, size: tuple[float, float]) -> tuple[Figure, Axes]:
    if ax is not None:
        return ax.figure, ax  # type: ignore[return-value]
    figure = new_figure(size)
    return figure, figure.add_subplot()


def _label(placed: PlacedAlloca) -> str:
    where = placed.record.loc.short()
    return f"{placed.name} {num_short(placed.words)}w" + (f"\n{where}" if where else "")


def plot_stack(report: SpaceReport, ax: Axes | None = None, labels: int = 12) -> Figure:
    """The scoped stack: x = program order, y = offset in words.

    Each alloca is a rectangle from its op to the end of its scope, between its offset
    and upper bound; the part of it where the buffer is live is drawn darker, so what the
    scopes keep reserved after the last use stands out. The liveness curve (words live at
    each point) is overlaid, the bound drawn as a line, and the crossing alloca (the one
    the compiler fails on) highlighted and labelled with its source location. At most
    `labels` allocas are labelled, largest first, and never where labels would overlap.
    """
    from matplotlib.patches import Patch, Rectangle

    figure, ax = _figure(ax, (11, 6))
    allocas = report.allocas
    crossing = report.crossing.alloca if report.crossing else None
    x_max = 1
    for a in allocas:
        end = max(a.record.scope_end, a.live_end) + 1
        x_max = max(x_max, end)
        height = max(a.upper_bound - a.offset, 0)
        is_crossing = a is crossing
        ax.add_patch(Rectangle((a.record.order, a.offset), end - a.record.order, height,
                               facecolor=RESERVED, edgecolor=CROSSING if is_crossing else "white",
                               linewidth=2 if is_crossing else 0.4))
        ax.add_patch(Rectangle((a.live_start, a.offset), a.live_end + 1 - a.live_start, height,
                               facecolor=CROSSING if is_crossing else LIVE, alpha=0.85,
                               linewidth=0))
    points, live = _liveness_curve(report)
    if points:
        ax.step(points, live, where="post", color="black", linewidth=1.2,
                label="words live (liveness)")
    top = max([report.stack_peak_words, report.liveness_peak_words, 1]
              + ([report.bound_words] if report.bound_words else []))
    ax.set_xlim(0, x_max + 1)
    ax.set_ylim(0, top * 1.15)
    taken: list[tuple[float, float, float, float]] = []
    if report.bound_words is not None:
        ax.axhline(report.bound_words, color=BOUND, linestyle="--", linewidth=1.2)
        taken.append(_place(ax, ax.annotate(
            f"bound {num_short(report.bound_words)} words", (0, report.bound_words),
            xycoords=("axes fraction", "data"), xytext=(3, 3), textcoords="offset points",
            color=BOUND, fontsize=8)))
    if crossing is not None and report.crossing is not None:
        c = report.crossing
        where = crossing.record.loc.short() or f"line {crossing.record.line}"
        taken.append(_place(ax, ax.annotate(
            f"{crossing.name} crosses: {num_short(c.offset_upper_bound_words)} > "
            f"{num_short(c.bound_words)}\n"
            f"{where}", (crossing.record.order, crossing.upper_bound), xytext=(10, 12),
            textcoords="offset points", color=CROSSING, fontsize=9, weight="bold",
            arrowprops={"arrowstyle": "->", "color": CROSSING})))
    placed = 1 if crossing is not None else 0
    for a in sorted(allocas, key=lambda a: -a.words):
        if placed >= labels or a is crossing or a.words == 0:
            continue
        text = ax.annotate(_label(a), (a.record.order, a.offset + (a.upper_bound - a.offset) / 2),
                           xytext=(4, 0), textcoords="offset points", va="center", fontsize=7)
        box = _place(ax, text)
        if any(_overlap(box, other) for other in taken):
            text.remove()
            continue
        taken.append(box)
        placed += 1
    ax.set_xlabel("program order (op number in the dump file)")
    ax.set_ylabel("offset (4-byte words)")
    ax.set_title(f"{report.func or '(no func)'}: memory space {report.space_label}, "
                 "scoped stack", fontsize=11, loc="left")
    handles = [Patch(facecolor=LIVE, label="alloca, live"),
               Patch(facecolor=RESERVED, label="alloca, reserved by its scope after last use")]
    if crossing is not None:
        handles.append(Patch(facecolor=CROSSING, label="crossing alloca"))
    handles.extend(ax.get_legend_handles_labels()[0])
    hidden = len(allocas) - placed
    if hidden > 0:
        handles.append(Patch(alpha=0, label=f"{counted(hidden, 'smaller alloca')} not "
                             "labelled"))
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=3,
              fontsize=7, frameon=False)
    return figure


Box = tuple[float, float, float, float]


def _place(ax: Axes, text: Annotation) -> Box:
    """The display-space box a text takes (x0, y0, x1, y1)."""
    canvas = ax.figure.canvas
    if not hasattr(canvas, "get_renderer"):
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        canvas = FigureCanvasAgg(ax.figure)
    extent = text.get_window_extent(canvas.get_renderer())
    return (extent.x0, extent.y0, extent.x1, extent.y1)


def _overlap(a: Box, b: Box, pad: float = 2.0) -> bool:
    return not (a[2] + pad < b[0] or b[2] + pad < a[0] or a[3] + pad < b[1] or b[3] + pad < a[1])


def _liveness_curve(report: SpaceReport) -> tuple[list[int], list[int]]:
    events: dict[int, int] = {}
    for a in report.allocas:
        events[a.live_start] = events.get(a.live_start, 0) + a.words
        events[a.live_end + 1] = events.get(a.live_end + 1, 0) - a.words
    points, live, current = [], [], 0
    for point in sorted(events):
        current += events[point]
        points.append(point)
        live.append(current)
    return points, live


def stack_at_focus(report: SpaceReport) -> tuple[list[PlacedAlloca], str]:
    """The allocas on the stack at the crossing, else at the stack peak."""
    if report.crossing is not None:
        return [c.alloca for c in report.crossing.contributors], "at the crossing"
    on_stack = [report.allocas[i] for i in report.peak_stack]
    return sorted(on_stack, key=lambda a: (-a.words, a.record.order)), "at the stack peak"


def plot_contributors(report: SpaceReport, ax: Axes | None = None, top: int = 15) -> Figure:
    """Horizontal bars: the allocas on the stack at the crossing (or at the peak), largest
    first, with the cumulative percent; the smallest are aggregated into one bar."""
    allocas, when = stack_at_focus(report)
    shown = allocas[:top]
    rest = allocas[top:]
    point = report.crossing.alloca.live_start if report.crossing else None
    figure, ax = _figure(ax, (9, 0.6 + 0.32 * (len(shown) + (1 if rest else 0)) + 1.2))
    names, words, colors = [], [], []
    for a in shown:
        names.append(f"{a.name}  {a.record.loc.short() or 'line ' + str(a.record.line)}")
        words.append(a.words)
        dead = point is not None and a.live_end < point
        colors.append(DEAD if dead else (CROSSING if report.crossing and
                                          a is report.crossing.alloca else LIVE))
    if rest:
        names.append(counted(len(rest), "smaller alloca"))
        words.append(sum(a.words for a in rest))
        colors.append("#999999")
    total = sum(a.words for a in allocas) or 1
    y = list(range(len(names)))
    ax.barh(y, _floats(words), color=colors)
    ax.set_yticks(y, names, fontsize=8)
    ax.invert_yaxis()
    running = 0
    for i, w in enumerate(words):
        running += w
        ax.annotate(f"{num_short(w)}  ({100 * running / total:.0f}% cum.)", (float(w), i),
                    xytext=(3, 0), textcoords="offset points", va="center", fontsize=7)
    ax.set_xlim(0, float(max(words or [1])) * 1.35)
    ax.set_xlabel("words")
    ax.set_title(f"{report.func}: space {report.space_label}\nallocas on the stack {when} "
                 f"({num_short(total)} words), largest first", fontsize=10, loc="left")
    if point is not None:
        from matplotlib.patches import Patch

        ax.legend(handles=[Patch(facecolor=LIVE, label="live"),
                           Patch(facecolor=DEAD, label="dead but reserved"),
                           Patch(facecolor=CROSSING, label="crossing alloca")],
                  fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=3,
                  frameon=False)
    return figure


def plot_groups(report: SpaceReport, rollup: Rollup, ax: Axes | None = None, top: int = 15
                ) -> Figure:
    """Horizontal bars: the groups of the entries on the stack at the peak, largest first,
    each with its words and percent of the stack peak; the smallest groups and the
    alignment padding get a bar each, so the bars add up to the stack peak."""
    shown = list(rollup.groups[:top])
    rest = rollup.groups[top:]
    names = [f"{g.key}  ({g.n_allocas} entr{'y' if g.n_allocas == 1 else 'ies'})"
             for g in shown]
    words = [g.words for g in shown]
    colors = [LIVE] * len(shown)
    if rest:
        names.append(f"{len(rest)} smaller groups ({sum(g.n_allocas for g in rest)} entries)")
        words.append(sum(g.words for g in rest))
        colors.append("#999999")
    if rollup.padding_words:
        names.append("alignment padding")
        words.append(rollup.padding_words)
        colors.append(RESERVED)
    figure, ax = _figure(ax, (9, 0.6 + 0.32 * max(len(names), 1) + 1.0))
    y = list(range(len(names)))
    ax.barh(y, _floats(words), color=colors)
    ax.set_yticks(y, names, fontsize=8)
    ax.invert_yaxis()
    total = rollup.total_words
    for i, w in enumerate(words):
        share = f"{100 * w / total:.1f}%" if total else "-"
        ax.annotate(f"{num_short(w)}  ({share})", (float(w), i), xytext=(3, 0),
                    textcoords="offset points", va="center", fontsize=7)
    ax.set_xlim(0, float(max(words or [1])) * 1.35)
    ax.set_xlabel("words")
    if report.bound_words is not None:
        over = total - report.bound_words
        bound_note = (f"; {num_short(over)} words over the bound of "
                      f"{num_short(report.bound_words)}" if over > 0
                      else f"; bound {num_short(report.bound_words)}")
    else:
        bound_note = ""
    ax.set_title(f"{report.func}: space {report.space_label}\nwho holds the stack peak "
                 f"({num_short(total)} words{bound_note}), by {rollup.by}", fontsize=10, loc="left")
    return figure


def plot_diff(result: DiffResult, top: int = 12) -> Figure:
    """Left: stack peak before and after per (func, space). Right: the largest per-alloca
    changes (red grew in AFTER, green shrank); small changes aggregated."""
    figure = new_figure((13, 5))
    left, right = figure.subplots(1, 2, width_ratios=[1, 1.2])
    spaces = [c for c in result.spaces if c.before or c.after][:top]
    labels = [f"{c.func}\n{c.space_label}" for c in spaces]
    before = [c.before.stack_peak_words if c.before else 0 for c in spaces]
    after = [c.after.stack_peak_words if c.after else 0 for c in spaces]
    y = list(range(len(spaces)))
    left.barh([i - 0.2 for i in y], _floats(before), height=0.4, color="#8c8c8c",
              label="before")
    left.barh([i + 0.2 for i in y], _floats(after), height=0.4, color=LIVE, label="after")
    for i, c in enumerate(spaces):
        bound = (c.after or c.before).bound_words if (c.after or c.before) else None
        if bound:
            left.plot([bound, bound], [i - 0.45, i + 0.45], color=BOUND, linestyle="--")
        if c.delta_words:
            left.annotate(num_short(c.delta_words, signed=True), (max(before[i], after[i]), i),
                          xytext=(3, 0), textcoords="offset points", va="center", fontsize=7,
                          color=GROW if c.delta_words > 0 else SHRINK)
    left.set_yticks(y, labels, fontsize=7)
    left.invert_yaxis()
    left.set_xlabel("stack peak (words); dashed: bound")
    left.set_title("before → after, per func and space", fontsize=10, loc="left")
    left.legend(fontsize=7)
    from sc_mlir.compare.diff import KIND

    changed = result.changed
    shown = changed[:top]
    rest = changed[top:]
    names = []
    for e in shown:
        before = getattr(e, "before", None)
        after = getattr(e, "after", None)
        names.append(f"{KIND[type(e)]} {before.name if before else '—'} → "
                     f"{after.name if after else '—'}  "
                     f"({_words(before)} → {_words(after)})\n{e.func}")
    deltas = [e.delta_words for e in shown]
    if rest:
        names.append(counted(len(rest), "smaller change"))
        deltas.append(sum(e.delta_words for e in rest))
    yy = list(range(len(names)))
    right.barh(yy, _floats(deltas), color=[GROW if d > 0 else SHRINK for d in deltas])
    right.axvline(0, color="black", linewidth=0.8)
    for i, d in enumerate(deltas):
        right.annotate(num_short(d, signed=True), (d, i), xytext=(3 if d >= 0 else -3, 0),
                       textcoords="offset points", ha="left" if d >= 0 else "right",
                       va="center", fontsize=7)
    lowest, highest = min([0, *deltas]), max([0, *deltas])
    span = (highest - lowest) or 1
    right.set_xlim(lowest - 0.25 * span * (lowest < 0), highest + 0.25 * span * (highest > 0))
    for axis in (left.xaxis, right.xaxis):
        _compact_ticks(axis)
    right.set_yticks(yy, names, fontsize=7)
    right.invert_yaxis()
    right.set_xlabel("Δ words (after − before)")
    right.set_title("largest alloca changes" if names else "no alloca changed", fontsize=10,
                    loc="left")
    before_name, after_name = distinct_names(result.before, result.after)
    figure.suptitle(f"before: {before_name}  →  after: {after_name}", fontsize=9)
    return figure


def counted(count: int, noun: str) -> str:
    """`1 smaller alloca`, `2 smaller allocas`.

    >>> counted(1, "smaller alloca"), counted(3, "smaller change")
    ('1 smaller alloca', '3 smaller changes')
    """
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def distinct_names(first: str, second: str) -> tuple[str, str]:
    """Two paths by their file names, with as many parent folders as tell them apart.

    >>> distinct_names("/data/runs/dump_a/module_7.mlir", "/data/runs/dump_b/module_9.mlir")
    ('module_7.mlir', 'module_9.mlir')
    >>> distinct_names("/x/limit_halved/before", "/x/limit_halved/after")
    ('before', 'after')
    >>> distinct_names("/runs/a/sparse_core", "/runs/b/sparse_core")
    ('a/sparse_core', 'b/sparse_core')
    """
    a = PurePath(first).parts or (first,)
    b = PurePath(second).parts or (second,)
    for depth in range(1, max(len(a), len(b)) + 1):
        tail_a, tail_b = "/".join(a[-depth:]), "/".join(b[-depth:])
        if tail_a != tail_b:
            return tail_a, tail_b
    return "/".join(a[-1:]), "/".join(b[-1:])


def _words(view: object) -> str:
    return ABSENT if view is None else num(getattr(view, "words", None))


def _compact_ticks(axis: Axis) -> None:
    """At most six ticks, large values as 120k."""
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    axis.set_major_locator(MaxNLocator(6))
    axis.set_major_formatter(FuncFormatter(
        lambda value, _: f"{value / 1000:g}k" if abs(value) >= 10_000 else f"{value:g}"))


def figure_png(figure: Figure, dpi: int = 110) -> bytes:
    import io

    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=dpi)
    return buffer.getvalue()


def _floats(values: list[int]) -> list[float]:
    """Word counts for matplotlib, which cannot take integers beyond 64 bits (a dump can
    declare `memref<9223372036854775807x3xf32>`)."""
    return [float(v) for v in values]
