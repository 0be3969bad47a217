"""The figure of a pass timeline: stack and liveness peaks after every pass, the bound, and
the first pass after which the stack crosses it.

Hundreds of passes stay readable: only passes after which a peak changed get a label
(the largest changes first when even those are too many); the others are plain ticks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sc_mlir.render.plots import BOUND, CROSSING, LIVE, _compact_ticks, _figure, _floats

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from sc_mlir.compare.passes import PassStep, Timeline

LIVENESS = "#ff7f0e"


def labelled_steps(steps: tuple[PassStep, ...], limit: int) -> list[int]:
    """Positions of the passes to label: those after which the stack or liveness peak
    changed, the largest changes first when there are more than `limit`."""
    changes: list[tuple[int, int]] = []
    for i, s in enumerate(steps):
        if i == 0:
            continue
        before = steps[i - 1]
        size = abs(s.stack_peak_words - before.stack_peak_words) + abs(
            s.liveness_peak_words - before.liveness_peak_words)
        if size:
            changes.append((size, i))
    changes.sort(key=lambda item: (-item[0], item[1]))
    return sorted(i for _, i in changes[:limit])


def plot_passes(timeline: Timeline, ax: Axes | None = None, labels: int = 24) -> Figure:
    """x: passes in order; y: words. The stack peak (solid) and liveness peak (dashed)
    after each pass, the bound, and the first crossing marked."""
    steps = timeline.steps
    width = min(max(6.0, 0.28 * len(steps)), 14.0)
    figure, axes = _figure(ax, (width, 4.6))
    x = list(range(len(steps)))
    marker = "o" if len(steps) <= 60 else None
    # Steps: a peak holds from one pass to the next.
    axes.plot(x, _floats([s.stack_peak_words for s in steps]), color=LIVE, marker=marker,
              markersize=3, drawstyle="steps-mid", label="stack peak (scoped)")
    axes.plot(x, _floats([s.liveness_peak_words for s in steps]), color=LIVENESS,
              linestyle="--", marker=marker, markersize=3, drawstyle="steps-mid",
              label="liveness peak")
    if timeline.bound_words is not None:
        axes.axhline(float(timeline.bound_words), color=BOUND, linestyle=":", linewidth=1.2,
                     label=f"bound {timeline.bound_words:,}")
    crossing = timeline.first_crossing
    at = next((i for i, s in enumerate(steps) if crossing and s.index == crossing.index), None)
    if crossing is not None and at is not None:
        axes.axvline(at, color=CROSSING, linewidth=1, alpha=0.6)
        axes.annotate(f"crosses after #{crossing.index} {crossing.arg or crossing.pass_name}",
                      (at, float(steps[at].stack_peak_words)), xytext=(6, -30),
                      textcoords="offset points", color=CROSSING, fontsize=8,
                      fontweight="bold", ha="left" if at < len(steps) / 2 else "right")
    shown = set(labelled_steps(steps, labels))
    if at is not None:
        shown.add(at)
    shown.add(0)
    ticks = sorted(shown)
    axes.set_xticks(ticks, [f"#{steps[i].index} {steps[i].arg or steps[i].pass_name}"[:32]
                            for i in ticks], rotation=60, ha="right", fontsize=7)
    if len(steps) > len(ticks):
        axes.set_xticks(x, minor=True)
    axes.set_xlim(-0.5, max(len(steps) - 0.5, 0.5))
    highest = max([s.stack_peak_words for s in steps] + [timeline.bound_words or 0, 1])
    axes.set_ylim(0, float(highest) * 1.12)
    _compact_ticks(axes.yaxis)
    axes.set_ylabel("words")
    unlabelled = len(steps) - len(ticks)
    axes.set_xlabel("pass (labelled: those after which a peak changed"
                    + (f"; {unlabelled} others are plain ticks)" if unlabelled else ")"))
    where = f"{timeline.module} " if timeline.module else ""
    axes.set_title(f"{where}{timeline.func} · space {timeline.space_label} · peaks per pass",
                   fontsize=10, loc="left")
    axes.legend(fontsize=7, loc="upper left")
    return figure
