"""Learning curves drawn as PNG pictures: the web Lab's training runs and the docs' figures.

One drawing for both: win rate against training steps, one line per series with its 95%
interval shaded, the fair share dotted (matplotlib's Agg renderer, no display needed). A
series checks its numbers when it is made (a step count of hundreds of digits or a win rate
of NaN read from a file is a ``ValueError`` naming the series, not a failure inside the
drawing).
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from uno_env.config_values import check_float, check_int
from unolab.train.config_limits import MAX_STEPS

__all__ = ["Series", "curves_png"]


@dataclass(frozen=True)
class Series:
    """One line of a curve picture.

    Attributes:
        label: The legend's text (shown literally).
        steps: Training steps of the evaluations, ascending, each ``0..MAX_STEPS``.
        win_rate: The win rate at each evaluation, ``0..1``.
        ci_low: The interval's low end at each evaluation, ``0..1``.
        ci_high: The interval's high end at each evaluation, ``0..1``.

    Raises:
        ValueError: naming the series and the value, for sequences of different lengths, a
            step count that is not a whole number in bounds, or a rate that is not a finite
            number from 0 to 1.
    """

    label: str
    steps: Sequence[int]
    win_rate: Sequence[float]
    ci_low: Sequence[float]
    ci_high: Sequence[float]

    def __post_init__(self) -> None:
        where = f"curve {self.label!r}"
        columns = {"win_rate": self.win_rate, "ci_low": self.ci_low, "ci_high": self.ci_high}
        for name, column in columns.items():
            if len(column) != len(self.steps):
                raise ValueError(
                    f"{where}: {len(self.steps)} steps but {len(column)} values of {name}"
                )
        for index, step in enumerate(self.steps):
            check_int(f"{where}: steps[{index}]", step, 0, MAX_STEPS, "learner steps")
        for name, column in columns.items():
            for index, value in enumerate(column):
                check_float(f"{where}: {name}[{index}]", value, 0.0, 1.0, why="a rate")


def _literal(text: str) -> str:
    """Text as matplotlib shows it literally: ``$`` would start mathematics (and a malformed
    formula fails the drawing), a leading ``_`` hides a legend entry."""
    return text.replace("$", r"\$").lstrip("_") or "?"


def curves_png(
    title: str,
    series: Sequence[Series],
    *,
    fair_share: float | None = None,
    legend_title: str = "against",
    metadata: Mapping[str, str] | None = None,
) -> bytes:
    """Draw the series as a PNG.

    Args:
        title: The picture's title (shown literally).
        series: The lines.
        fair_share: Draw this win rate as a dotted line (e.g. 0.5 at 2 players).
        legend_title: The legend's heading.
        metadata: Text chunks stored in the PNG (e.g. the hash of the data it shows).

    Returns:
        The PNG's bytes; the same inputs give the same bytes.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(7, 4), dpi=100)
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    for line_series in series:
        (line,) = axes.plot(
            line_series.steps,
            line_series.win_rate,
            marker="o" if len(line_series.steps) <= 40 else None,
            label=_literal(line_series.label),
        )
        axes.fill_between(
            line_series.steps,
            line_series.ci_low,
            line_series.ci_high,
            color=line.get_color(),
            alpha=0.2,
            linewidth=0,
        )
    if fair_share is not None:
        axes.axhline(fair_share, color="grey", linestyle=":", linewidth=1)
    axes.set_ylim(0.0, 1.0)
    axes.set_xlabel("training steps")
    axes.set_ylabel("win rate (95% interval shaded)")
    axes.set_title(_literal(title))
    axes.grid(alpha=0.3)
    if series:
        axes.legend(title=legend_title, fontsize=8)
    else:
        axes.text(0.5, 0.5, "no evaluations yet", ha="center", transform=axes.transAxes)
    figure.tight_layout()
    data = io.BytesIO()
    # No date or software version in the file: the same data draws the same bytes.
    figure.savefig(data, format="png", metadata={"Software": None, **(metadata or {})})
    return data.getvalue()
