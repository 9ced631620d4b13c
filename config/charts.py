"""Small server-side SVG charts: no JavaScript, no network, escaped labels.

Each function returns SafeString markup for an inline <svg> with a <title> and <desc> for
screen readers; values outside the axis are clipped to it. Colours live in static/css/app.css
(classes only, never inline colours). Layout uses a rough estimate of the text width at the
charts' 12px font (``_CHAR_W``), so labels are truncated with "…" rather than overlapping.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

_CHAR_W = 7.5  # a generous width in px of one character at the charts' 12px font
_NICE_STEPS = (1.0, 2.0, 2.5, 5.0, 10.0)
_SIN45 = math.sqrt(0.5)
_EN_DASH = "\u2013"  # en dash: for ranges (35-47%) and for a missing value
_TIMES = "\u00d7"  # multiplication sign: "rater A by rater B"


def _fmt(value: float) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".")


def _num(value: float, decimals: int = 3) -> str:
    """`value` with at most `decimals` decimals, trailing zeros dropped, never "-0"."""
    text = f"{value:.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def _stat(value: float) -> str:
    """A statistic (slope, intercept, r) for a sentence: three decimals, tiny values kept."""
    if value != 0 and abs(value) < 0.001:
        return f"{value:.2g}"
    return _num(value, 3)


def _pct(value: float) -> str:
    """A percentage without the % sign: whole numbers, one decimal close to 0 and 100."""
    if 0 < value < 1 or 99 < value < 100:
        return _num(value, 1)
    return f"{value:.0f}"


def _truncate(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(0, limit - 1)] + "…"


def _text_width(text: str) -> float:
    return len(text) * _CHAR_W


def _finite(value: object) -> bool:
    if value is None or isinstance(value, bool):
        return False
    try:
        return math.isfinite(float(value))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False


def _level(value: float, lowest: float, highest: float, top: int) -> int:
    """Which of the classes 0..top `value` falls in, on a linear scale from lowest to highest."""
    if highest <= lowest:
        raise ValueError("the scale's maximum must be greater than its minimum")
    share = (min(max(value, lowest), highest) - lowest) / (highest - lowest)
    return math.floor(share * top + 0.5)


def nice_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """About `count` round tick values covering [lo, hi], in steps of 1, 2, 2.5 or 5 * 10**k.

    The first tick is at or below `lo` and the last at or above `hi`; nice_ticks(0, 1) is
    [0, 0.2, 0.4, 0.6, 0.8, 1]. A zero-width range is widened around its value.
    """
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise ValueError("tick range must be finite")
    lo, hi = min(lo, hi), max(lo, hi)
    if hi == lo:
        pad = abs(lo) * 0.1 or 0.5
        lo, hi = lo - pad, hi + pad
    raw = (hi - lo) / max(1, count)
    power = 10.0 ** math.floor(math.log10(raw))
    step = next(m * power for m in _NICE_STEPS if m * power >= raw * (1 - 1e-9))
    decimals = max(0, 2 - math.floor(math.log10(step)))
    first = math.floor(lo / step + 1e-9)
    last = math.ceil(hi / step - 1e-9)
    return [round(i * step, decimals) + 0.0 for i in range(first, last + 1)]


def _tick_text(value: float, ticks: Sequence[float]) -> str:
    """A tick label with just enough decimals for the ticks' step (0.25 → 2, 0.5 → 1)."""
    step = ticks[1] - ticks[0] if len(ticks) > 1 else 1.0
    decimals = max(0, -math.floor(math.log10(step) + 1e-9))
    if abs(step * 10**decimals - round(step * 10**decimals)) > 1e-6:
        decimals += 1
    return _num(value, decimals)


def _svg_open(
    width: float, height: float, title: str, desc: str, *, natural: str | None = None
) -> str:
    """The opening <svg> tag with its <title> and <desc> (both escaped here).

    `natural` is None for the fluid layout of bar_chart (scaled to the page width), or extra
    classes for a chart drawn at its own size (shrunk, never enlarged, on narrow screens).
    """
    if natural is None:
        head = f'<svg class="chart" role="img" viewBox="0 0 {width} {height}" '
    else:
        width, height = math.ceil(width), math.ceil(height)
        classes = " ".join(("chart chart-natural", natural)).strip()
        head = (
            f'<svg class="{classes}" role="img" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" '
        )
    return (
        f'{head}xmlns="http://www.w3.org/2000/svg"><title>{escape(title)}</title>'
        f"<desc>{escape(desc)}</desc>"
    )


def _title_text(title: str, width: float, x: float = 8) -> str:
    """The visible title, truncated to the chart's width (the full one is in <title>)."""
    short = _truncate(title, int((width - x - 8) / _CHAR_W))
    return f'<text x="{x}" y="16" class="chart-title">{escape(short)}</text>'


def _empty(title: str, width: float, height: float, message: str) -> SafeString:
    """A chart with nothing to draw: its title and `message` in the middle."""
    return mark_safe(  # noqa: S308 - the title and the message went through escape()
        _svg_open(width, height, title, f"{title}: {message}", natural="chart-nodata")
        + _title_text(title, width)
        + f'<text x="{width / 2:.1f}" y="{height / 2:.1f}" text-anchor="middle" '
        f'class="chart-empty">{escape(message)}</text></svg>'
    )


def bar_chart(
    labels: Sequence[str],
    values: Sequence[float | None],
    intervals: Sequence[Sequence[float] | None] | None = None,
    *,
    title: str,
    maximum: float | None = None,
    width: int = 720,
) -> SafeString:
    """Horizontal bars, one per label, with an interval whisker where one is given."""
    row, left, right, top = 26, 220, 60, 28
    height = top + row * len(labels) + 24
    present = [v for v in values if v is not None]
    upper = maximum or max([*present, *(iv[1] for iv in intervals or [] if iv)], default=1.0)
    upper = upper or 1.0
    span = width - left - right

    def x(value: float) -> float:
        return left + span * max(0.0, min(value, upper)) / upper

    desc = f"{title}: " + "; ".join(
        f"{label} {_fmt(v) if v is not None else 'none'}"
        for label, v in zip(labels, values, strict=True)
    )
    parts = [
        _svg_open(width, height, title, desc),
        f'<text x="{left}" y="16" class="chart-title">{escape(title)}</text>',
    ]
    for i, (label, value) in enumerate(zip(labels, values, strict=True)):
        y = top + i * row
        parts.append(
            f'<text x="{left - 8}" y="{y + 16}" text-anchor="end" class="chart-label">'
            f"{escape(_truncate(label, 30))}</text>"
        )
        if value is None:
            parts.append(f'<text x="{left + 4}" y="{y + 16}" class="chart-value">n/a</text>')
            continue
        parts.append(
            f'<rect x="{left}" y="{y + 4}" width="{x(value) - left:.1f}" height="{row - 10}" '
            f'class="chart-bar"/>'
        )
        interval = intervals[i] if intervals else None
        if interval:
            lo, hi = x(interval[0]), x(interval[1])
            mid = y + 4 + (row - 10) / 2
            parts.append(
                f'<path d="M{lo:.1f} {mid:.1f}H{hi:.1f}M{lo:.1f} {mid - 5:.1f}V{mid + 5:.1f}'
                f'M{hi:.1f} {mid - 5:.1f}V{mid + 5:.1f}" class="chart-whisker"/>'
            )
        parts.append(
            f'<text x="{max(x(value), x(interval[1]) if interval else 0) + 6:.1f}" '
            f'y="{y + 16}" class="chart-value">{_fmt(value)}</text>'
        )
    parts.append(
        f'<line x1="{left}" y1="{height - 20}" x2="{left + span}" y2="{height - 20}" '
        f'class="chart-axis"/><text x="{left}" y="{height - 6}" class="chart-tick">0</text>'
        f'<text x="{left + span}" y="{height - 6}" text-anchor="end" class="chart-tick">'
        f"{_fmt(upper)}</text></svg>"
    )
    return mark_safe("".join(parts))  # noqa: S308 - every text above went through escape()


def _fit_segment(
    intercept: float, slope: float, x_range: tuple[float, float], y_range: tuple[float, float]
) -> tuple[float, float] | None:
    """The part of x_range where the line y = intercept + slope·x stays inside y_range."""
    (x0, x1), (y0, y1) = x_range, y_range
    if slope == 0:
        return x_range if y0 <= intercept <= y1 else None
    a, b = sorted(((y0 - intercept) / slope, (y1 - intercept) / slope))
    start, end = max(x0, a), min(x1, b)
    return (start, end) if start < end else None


def scatter_chart(
    x: Sequence[float | None],
    y: Sequence[float | None],
    *,
    title: str,
    x_label: str,
    y_label: str,
    fit: bool = True,
    jitter: float = 0.0,
    seed: int = 0,
    width: int = 480,
    height: int = 360,
    max_points: int = 5000,
) -> SafeString:
    """One small circle per item at (x, y), e.g. a metric against the mean human score.

    Pairs where either value is None or NaN are skipped. `jitter` moves every drawn point by a
    seeded random amount up to that fraction of the data's span on each axis (ratings are
    discrete, so many points would otherwise coincide); the statistics use the exact values.
    With more than `max_points` items a seeded random sample of them is drawn, but the
    least-squares line y = a + b·x (drawn when `fit` and there are two or more distinct x
    values), the slope, the intercept and Pearson's r in the description use all of them.
    """
    if jitter < 0:
        raise ValueError("jitter must not be negative")
    if max_points < 1:
        raise ValueError("max_points must be at least 1")
    pairs = [
        (float(a), float(b))  # type: ignore[arg-type]
        for a, b in zip(x, y, strict=True)
        if _finite(a) and _finite(b)
    ]
    skipped = len(x) - len(pairs)
    skipped_note = f" ({skipped} with a missing value skipped)" if skipped else ""
    if not pairs:
        return _empty(title, width, height, "no data" + skipped_note)

    n = len(pairs)
    xs, ys = [a for a, _ in pairs], [b for _, b in pairs]
    mean_x, mean_y = math.fsum(xs) / n, math.fsum(ys) / n
    sxx = math.fsum((a - mean_x) ** 2 for a in xs)
    syy = math.fsum((b - mean_y) ** 2 for b in ys)
    sxy = math.fsum((a - mean_x) * (b - mean_y) for a, b in pairs)
    distinct_x = len(set(xs)) >= 2 and sxx > 0
    slope = sxy / sxx if distinct_x else None
    intercept = mean_y - slope * mean_x if slope is not None else None
    r = max(-1.0, min(1.0, sxy / math.sqrt(sxx * syy))) if sxx > 0 and syy > 0 else None

    # Sentences for the description, and a shorter line under the title.
    sentences = [
        f"{title}: {n} item{'s' if n != 1 else ''}{skipped_note}",
        f"x is {x_label}, from {_stat(min(xs))} to {_stat(max(xs))}",
        f"y is {y_label}, from {_stat(min(ys))} to {_stat(max(ys))}",
    ]
    summary = [f"n = {n}"]
    if slope is not None and intercept is not None:
        sign = "-" if slope < 0 else "+"
        equation = f"y = {_stat(intercept)} {sign} {_stat(abs(slope))}x"
        sentences.append(
            f"least-squares line {equation} (slope {_stat(slope)}, intercept {_stat(intercept)})"
        )
        summary.append(equation)
    elif n == 1:
        sentences.append("only one point, so no fitted line")
        summary.append("one point: no fitted line")
    else:
        sentences.append("all x values are equal, so no fitted line")
        summary.append("all x equal: no fitted line")
    if r is not None:
        sentences.append(f"Pearson r = {_stat(r)}")
        summary.insert(1, f"r = {_stat(r)}")
    else:
        sentences.append("Pearson r undefined (no variation)")

    rng = random.Random(seed)
    drawn = pairs
    if n > max_points:
        drawn = [pairs[i] for i in sorted(rng.sample(range(n), max_points))]
        sentences.append(f"a random sample of {max_points} of the {n} points is drawn")
        summary.append(f"{max_points} of {n} drawn")
    x_ticks, y_ticks = nice_ticks(min(xs), max(xs)), nice_ticks(min(ys), max(ys))
    x_jitter = jitter * (x_ticks[-1] - x_ticks[0])  # a fraction of each axis's span
    y_jitter = jitter * (y_ticks[-1] - y_ticks[0])
    if jitter:
        sentences.append(f"points are jittered by up to {_num(jitter * 100, 1)}% of each axis")
        drawn = [
            (a + rng.uniform(-x_jitter, x_jitter), b + rng.uniform(-y_jitter, y_jitter))
            for a, b in drawn
        ]
    x_dom = (min(x_ticks[0], min(xs) - x_jitter), max(x_ticks[-1], max(xs) + x_jitter))
    y_dom = (min(y_ticks[0], min(ys) - y_jitter), max(y_ticks[-1], max(ys) + y_jitter))
    y_texts = [_tick_text(t, y_ticks) for t in y_ticks]
    left = 22 + max(_text_width(t) for t in y_texts) + 8
    right, top, bottom = 16, 46, 44
    plot_w, plot_h = width - left - right, height - top - bottom
    inset = 6  # keeps the circles at the domain's edges inside the plotting area

    def px(value: float) -> float:
        value = min(max(value, x_dom[0]), x_dom[1])
        return left + inset + (plot_w - 2 * inset) * (value - x_dom[0]) / (x_dom[1] - x_dom[0])

    def py(value: float) -> float:
        value = min(max(value, y_dom[0]), y_dom[1])
        return (
            top + plot_h - inset - (plot_h - 2 * inset) * (value - y_dom[0]) / (y_dom[1] - y_dom[0])
        )

    parts = [
        _svg_open(width, height, title, "; ".join(sentences) + ".", natural="chart-scatter"),
        _title_text(title, width),
        f'<text x="8" y="33" class="chart-note">{escape(" · ".join(summary))}</text>',
        f'<rect x="{left:.1f}" y="{top}" width="{plot_w:.1f}" height="{plot_h}" '
        f'class="chart-plot"/>',
    ]
    for tick, text in zip(x_ticks, (_tick_text(t, x_ticks) for t in x_ticks), strict=True):
        gx = px(tick)
        parts.append(
            f'<line x1="{gx:.1f}" y1="{top}" x2="{gx:.1f}" y2="{top + plot_h}" class="chart-grid"/>'
            f'<text x="{gx:.1f}" y="{top + plot_h + 15}" text-anchor="middle" '
            f'class="chart-tick">{text}</text>'
        )
    for tick, text in zip(y_ticks, y_texts, strict=True):
        gy = py(tick)
        parts.append(
            f'<line x1="{left:.1f}" y1="{gy:.1f}" x2="{left + plot_w:.1f}" y2="{gy:.1f}" '
            f'class="chart-grid"/><text x="{left - 6:.1f}" y="{gy + 4:.1f}" text-anchor="end" '
            f'class="chart-tick">{text}</text>'
        )
    parts.append(
        f'<line x1="{left:.1f}" y1="{top}" x2="{left:.1f}" y2="{top + plot_h}" class="chart-axis"/>'
        f'<line x1="{left:.1f}" y1="{top + plot_h}" x2="{left + plot_w:.1f}" y2="{top + plot_h}" '
        f'class="chart-axis"/>'
        f'<text x="{left + plot_w / 2:.1f}" y="{height - 8}" text-anchor="middle" '
        f'class="chart-axis-title">{escape(_truncate(x_label, int(plot_w / _CHAR_W)))}</text>'
        f'<text x="14" y="{top + plot_h / 2:.1f}" text-anchor="middle" '
        f'transform="rotate(-90 14 {top + plot_h / 2:.1f})" class="chart-axis-title">'
        f"{escape(_truncate(y_label, int(plot_h / _CHAR_W)))}</text>"
    )
    parts.append('<g class="chart-points">')
    parts.extend(
        f'<circle cx="{px(a):.1f}" cy="{py(b):.1f}" r="3" class="chart-point"/>' for a, b in drawn
    )
    parts.append("</g>")
    if fit and slope is not None and intercept is not None:
        segment = _fit_segment(intercept, slope, (min(xs), max(xs)), y_dom)
        if segment:
            x1, x2 = segment
            parts.append(
                f'<line x1="{px(x1):.1f}" y1="{py(intercept + slope * x1):.1f}" '
                f'x2="{px(x2):.1f}" y2="{py(intercept + slope * x2):.1f}" class="chart-fit"/>'
            )
    parts.append("</svg>")
    return mark_safe("".join(parts))  # noqa: S308 - every text above went through escape()


def stacked_bars(
    rows: Sequence[str],
    segments: Sequence[str],
    shares: Sequence[Sequence[float]],
    *,
    intervals: Sequence[Sequence[tuple[float, float] | None]] | None = None,
    title: str,
    width: int = 720,
) -> SafeString:
    """One horizontal 100% bar per row, split into one segment per entry of `segments`.

    A row's shares are divided by their sum (fractions, percentages or counts all work;
    negative or missing shares count as 0). `intervals[row][segment]`, in the same unit as
    the shares, is shown as a confidence interval in the segment's tooltip and in the
    description. Segment k has the classes ``chart-seg chart-seg-{k}`` and the svg
    ``chart-segs-{len(segments)}``, so the stylesheet can pick a palette for that many.
    """
    if intervals is not None and len(intervals) != len(rows):
        raise ValueError("intervals needs one entry per row")
    if not rows or not segments:
        return _empty(title, width, 90, "no data")
    row_h, bar_h, right = 30, 20, 16
    short_rows = [_truncate(row, 28) for row in rows]
    left = max(60.0, max(_text_width(r) for r in short_rows) + 16)
    span = width - left - right

    # Legend: a swatch and a name per segment, wrapped onto more lines when needed.
    legend, lx, ly = [], left, 38
    for k, name in enumerate(segments):
        short = _truncate(name, 32)
        item_w = 16 + _text_width(short) + 18
        if lx > left and lx + item_w - 18 > width - right:
            lx, ly = left, ly + 18
        legend.append(
            f'<rect x="{lx:.1f}" y="{ly - 10}" width="12" height="12" '
            f'class="chart-swatch chart-seg-{k}"/><text x="{lx + 16:.1f}" y="{ly}" '
            f'class="chart-legend-text">{escape(short)}</text>'
        )
        lx += item_w
    top = ly + 14
    height = top + row_h * len(rows) + 6

    parts: list[str] = []
    sentences: list[str] = []
    for i, (row, short_row, row_shares) in enumerate(zip(rows, short_rows, shares, strict=True)):
        if len(row_shares) != len(segments):
            raise ValueError(f"row {row!r} needs one share per segment")
        values = [max(0.0, float(v)) if _finite(v) else 0.0 for v in row_shares]
        total = math.fsum(values)
        y = top + i * row_h
        parts.append(
            f'<text x="{left - 8:.1f}" y="{y + bar_h / 2 + 4:.1f}" text-anchor="end" '
            f'class="chart-label">{escape(short_row)}</text>'
        )
        if total <= 0:
            parts.append(
                f'<text x="{left + 4:.1f}" y="{y + bar_h / 2 + 4:.1f}" class="chart-empty">'
                "no data</text>"
            )
            sentences.append(f"{row}: no data")
            continue
        row_intervals = (intervals[i] or ()) if intervals is not None else ()
        cumulative, edges = 0.0, [round(left, 2)]
        for value in values:
            cumulative += value
            edges.append(round(left + span * min(cumulative / total, 1.0), 2))
        edges[-1] = round(left + span, 2)
        described = []
        for k, (name, value) in enumerate(zip(segments, values, strict=True)):
            share = 100 * value / total
            text = f"{name}: {_pct(share)}%"
            interval = row_intervals[k] if k < len(row_intervals) else None
            if interval is not None:
                lo, hi = (100 * float(bound) / total for bound in interval)
                text += f" (95% CI {_pct(lo)}{_EN_DASH}{_pct(hi)}%)"
            described.append(text)
            x0, seg_w = edges[k], round(edges[k + 1] - edges[k], 2)
            if value <= 0:
                continue
            parts.append(
                f'<rect x="{x0:.2f}" y="{y}" width="{seg_w:.2f}" height="{bar_h}" '
                f'class="chart-seg chart-seg-{k}"><title>{escape(text)}</title></rect>'
            )
            label = f"{_pct(share)}%"
            if share >= 6 and seg_w >= _text_width(label) * 1.2 + 2:  # "%" is wide
                parts.append(
                    f'<text x="{x0 + seg_w / 2:.1f}" y="{y + bar_h / 2 + 4:.1f}" '
                    f'text-anchor="middle" class="chart-seg-text chart-seg-text-{k}">'
                    f"{label}</text>"
                )
        sentences.append(f"{row}: " + ", ".join(described))

    desc = f"{title}: " + "; ".join(sentences) + "."
    head = _svg_open(
        width, height, title, desc, natural=f"chart-stacked chart-segs-{len(segments)}"
    )
    body = "".join([head, _title_text(title, width), *legend, *parts, "</svg>"])
    return mark_safe(body)  # noqa: S308 - every text above went through escape()


# A matrix cell: its text, the classes of its rect and of its text, and its tooltip.
_Cell = tuple[str, str, str, str]


def _grid(
    *,
    title: str,
    desc: str,
    row_labels: Sequence[str],
    col_labels: Sequence[str],
    cells: Sequence[Sequence[_Cell]],
    row_title: str = "",
    col_title: str = "",
    outlined: Sequence[tuple[int, int]] = (),
    kind: str = "",
) -> SafeString:
    """A matrix of square cells with row labels on the left and column labels on top.

    Column labels are written across when they all fit in a cell and at 45° otherwise; labels
    longer than 24 characters are truncated (the full one is in a tooltip). The row title goes
    up the left side when it fits there and above the row labels otherwise.
    """
    longest_text = max((_text_width(cell[0]) for row in cells for cell in row), default=0)
    cell = max(44.0, longest_text + 14)
    grid_w, grid_h = cell * len(col_labels), cell * len(rows := row_labels)
    short_rows = [_truncate(label, 24) for label in rows]
    short_cols = [_truncate(label, 24) for label in col_labels]
    row_label_w = max(_text_width(label) for label in short_rows)
    col_label_w = max(_text_width(label) for label in short_cols)

    short_row_title = _truncate(row_title, 40)
    side_title = bool(row_title) and _text_width(short_row_title) <= grid_h
    corner_w = 0.0 if side_title or not row_title else _text_width(short_row_title)
    left = (24 if side_title else 8) + max(row_label_w, corner_w) + 10
    across = col_label_w <= cell - 6
    band = 20 if across else col_label_w * _SIN45 + 12
    top = 26 + (18 if col_title else 0) + band
    overflow = (
        0.0
        if across
        else max(
            left + (j + 0.5) * cell + _text_width(label) * _SIN45 + 8 - (left + grid_w)
            for j, label in enumerate(short_cols)
        )
    )
    short_col_title = _truncate(col_title, 60)
    width = left + max(grid_w + max(8.0, overflow), _text_width(short_col_title) + 8)
    height = top + grid_h + 8

    parts = [
        _svg_open(width, height, title, desc, natural=f"chart-grid-chart {kind}".strip()),
        _title_text(title, width),
    ]
    if col_title:
        anchor_x = left + grid_w / 2 - _text_width(short_col_title) / 2
        parts.append(
            f'<text x="{max(left, anchor_x):.1f}" y="40" class="chart-axis-title">'
            f"{escape(short_col_title)}</text>"
        )
    if side_title:
        mid = top + grid_h / 2
        parts.append(
            f'<text x="14" y="{mid:.1f}" text-anchor="middle" transform="rotate(-90 14 '
            f'{mid:.1f})" class="chart-axis-title">{escape(short_row_title)}</text>'
        )
    elif row_title:
        parts.append(
            f'<text x="{left - 8:.1f}" y="{top - 8:.1f}" text-anchor="end" '
            f'class="chart-axis-title">{escape(short_row_title)}</text>'
        )

    def label(full: str, short: str, attributes: str) -> str:
        tip = f"<title>{escape(full)}</title>" if short != full else ""
        return f'<text {attributes} class="chart-label">{tip}{escape(short)}</text>'

    for j, (full, short) in enumerate(zip(col_labels, short_cols, strict=True)):
        cx = left + (j + 0.5) * cell
        if across:
            parts.append(label(full, short, f'x="{cx:.1f}" y="{top - 7:.1f}" text-anchor="middle"'))
        else:
            parts.append(
                label(
                    full,
                    short,
                    f'x="{cx:.1f}" y="{top - 7:.1f}" '
                    f'transform="rotate(-45 {cx:.1f} {top - 7:.1f})"',
                )
            )
    for i, (full, short, row) in enumerate(zip(rows, short_rows, cells, strict=True)):
        y = top + i * cell
        parts.append(
            label(full, short, f'x="{left - 8:.1f}" y="{y + cell / 2 + 4:.1f}" text-anchor="end"')
        )
        for j, (text, rect_class, text_class, tooltip) in enumerate(row):
            x = left + j * cell
            parts.append(
                f'<rect x="{x:.1f}" y="{y:.1f}" width="{cell:.1f}" height="{cell:.1f}" '
                f'class="chart-cell {rect_class}"><title>{escape(tooltip)}</title></rect>'
                f'<text x="{x + cell / 2:.1f}" y="{y + cell / 2 + 4:.1f}" text-anchor="middle" '
                f'class="chart-cell-text {text_class}">{escape(text)}</text>'
            )
    parts.extend(
        f'<rect x="{left + j * cell + 1.5:.1f}" y="{top + i * cell + 1.5:.1f}" '
        f'width="{cell - 3:.1f}" height="{cell - 3:.1f}" class="chart-diag"/>'
        for i, j in outlined
    )
    parts.append("</svg>")
    return mark_safe("".join(parts))  # noqa: S308 - every text above went through escape()


def confusion_matrix(
    row_labels: Sequence[str],
    col_labels: Sequence[str],
    counts: Sequence[Sequence[int]],
    *,
    title: str,
    row_title: str,
    col_title: str,
) -> SafeString:
    """How often each row category met each column category (e.g. human against judge).

    Each cell shows its count and is shaded by count / largest count through the classes
    ``chart-heat-0`` (zero) to ``chart-heat-5`` (the largest); a non-zero count never gets 0.
    Cells whose row and column label are the same category are outlined (``chart-diag``).
    """
    if not row_labels or not col_labels:
        return _empty(title, 480, 120, "no data")
    if len(counts) != len(row_labels) or any(len(row) != len(col_labels) for row in counts):
        raise ValueError("counts needs one row per row label and one column per column label")
    table = [[max(0, int(count)) for count in row] for row in counts]
    largest = max(max(row) for row in table)
    total = sum(map(sum, table))

    def level(count: int) -> int:
        return 0 if count <= 0 else max(1, _level(count, 0, largest, 5))

    cells = [
        [
            (
                str(count),
                f"chart-heat-{level(count)}",
                f"chart-heat-text-{level(count)}",
                f"{row_title} {row_label}, {col_title} {col_label}: {count}",
            )
            for col_label, count in zip(col_labels, row, strict=True)
        ]
        for row_label, row in zip(row_labels, table, strict=True)
    ]
    outlined = [
        (i, j)
        for i, row_label in enumerate(row_labels)
        for j, col_label in enumerate(col_labels)
        if row_label == col_label
    ]
    sentences = [f"{title}: rows are {row_title}, columns are {col_title}; {total} items"]
    if not total:
        sentences[0] += " (no data)"
    elif outlined:
        same = sum(table[i][j] for i, j in outlined)
        sentences.append(f"{same} of {total} ({_pct(100 * same / total)}%) on the diagonal")
    sentences.extend(
        f"{row_label}: "
        + ", ".join(
            f"{col_label} {count}" for col_label, count in zip(col_labels, row, strict=True)
        )
        for row_label, row in zip(row_labels, table, strict=True)
    )
    return _grid(
        title=title,
        desc="; ".join(sentences) + ".",
        row_labels=row_labels,
        col_labels=col_labels,
        cells=cells,
        row_title=row_title,
        col_title=col_title,
        outlined=outlined,
        kind="chart-confusion",
    )


def heat_map(
    labels: Sequence[str],
    values: Sequence[Sequence[float | None]],
    *,
    title: str,
    minimum: float = -1.0,
    maximum: float = 1.0,
) -> SafeString:
    """A square rater-by-rater matrix, e.g. Cohen's kappa or Pearson's r for every two raters.

    Each cell shows its value with two decimals (an en dash for None or NaN) and is shaded on a
    diverging scale through the classes ``chart-div-0`` (`minimum`) … ``chart-div-4`` (the
    middle) … ``chart-div-8`` (`maximum`); values outside the scale get its end classes.
    """
    if maximum <= minimum:
        raise ValueError("maximum must be greater than minimum")
    if not labels:
        return _empty(title, 480, 120, "no data")
    if len(values) != len(labels) or any(len(row) != len(labels) for row in values):
        raise ValueError("values needs one row and one column per label")
    table = [[float(v) if _finite(v) else None for v in row] for row in values]  # type: ignore[arg-type]

    def cell(a: str, b: str, value: float | None) -> _Cell:
        if value is None:
            return (
                _EN_DASH,
                "chart-div-none",
                "chart-div-text-none",
                f"{a} {_TIMES} {b}: no value",
            )
        level = _level(value, minimum, maximum, 8)
        return (
            f"{value:.2f}",
            f"chart-div-{level}",
            f"chart-div-text-{level}",
            f"{a} {_TIMES} {b}: {value:.2f}",
        )

    cells = [
        [cell(a, b, value) for b, value in zip(labels, row, strict=True)]
        for a, row in zip(labels, table, strict=True)
    ]
    n = len(labels)
    symmetric = all(table[i][j] == table[j][i] for i in range(n) for j in range(i))
    pairs = [(i, j) for i in range(n) for j in range(n) if (i < j if symmetric else i != j)]
    listed = "; ".join(
        f"{labels[i]} {_TIMES} {labels[j]} "
        + (f"{table[i][j]:.2f}" if table[i][j] is not None else "no value")
        for i, j in pairs
    )
    desc = (
        f"{title}: {n} raters, scale from {_stat(minimum)} to {_stat(maximum)}"
        + (f"; {listed}" if listed else "")
        + "."
    )
    return _grid(
        title=title,
        desc=desc,
        row_labels=labels,
        col_labels=labels,
        cells=cells,
        kind="chart-heatmap",
    )


# --- several series over ordered groups (run analyses) -----------------------------------------

SERIES_COLOURS = 8  # .chart-series-0 .. -7 in app.css; a ninth series takes the first colour


def series_chart(
    groups: Sequence[str],
    series: Sequence[str],
    values: Sequence[Sequence[float | None]],
    *,
    title: str,
    kind: str = "bar",
    x_title: str = "",
    y_title: str = "",
    maximum: float | None = None,
    width: int = 720,
    height: int = 300,
) -> SafeString:
    """Groups along the x axis, in the order given (an analysis's natural order), and one
    series per run or model: `values[s][g]` is series s at group g (None: no value, a gap).

    kind "bar": a cluster of vertical bars per group, one bar per series. kind "line": a line
    per series through its groups, a point on each value (a line breaks at a gap). A legend
    names the series (a single series needs none). The y axis starts at 0 and ends at
    `maximum` (100 for percentages) or at a round value above the largest."""
    if kind not in ("bar", "line"):
        raise ValueError("kind must be bar or line")
    if len(values) != len(series):
        raise ValueError("values needs one row per series")
    for name, row in zip(series, values, strict=True):
        if len(row) != len(groups):
            raise ValueError(f"series {name!r} needs one value per group")
    present = [float(v) for row in values for v in row if _finite(v)]  # type: ignore[arg-type]
    if not groups or not series or not present:
        return _empty(title, width, 90, "no data")

    # Legend under the title, wrapped; none for one series.
    legend: list[str] = []
    lx, ly, left = 60.0, 38.0, 60.0
    if len(series) > 1:
        for k, name in enumerate(series):
            short = _truncate(name, 32)
            item_w = 16 + _text_width(short) + 18
            if lx > left and lx + item_w - 18 > width - 16:
                lx, ly = left, ly + 18
            legend.append(
                f'<rect x="{lx:.1f}" y="{ly - 10}" width="12" height="12" '
                f'class="chart-swatch chart-series-{k % SERIES_COLOURS}"/>'
                f'<text x="{lx + 16:.1f}" y="{ly}" class="chart-legend-text">'
                f"{escape(short)}</text>"
            )
            lx += item_w
        top = ly + 16
    else:
        top = 32.0
    upper = maximum if maximum is not None else nice_ticks(0.0, max(present))[-1]
    upper = upper or 1.0
    ticks = nice_ticks(0.0, upper)
    bottom = 44.0 if x_title else 28.0
    plot_top = top + 8.0
    plot_h = height - 32.0 - bottom
    right = 16.0
    span = width - left - right
    band = span / len(groups)
    total_h = plot_top + plot_h + bottom

    def y(value: float) -> float:
        share = max(0.0, min(value, upper)) / upper
        return plot_top + plot_h * (1.0 - share)

    base = y(0.0)
    parts: list[str] = []
    for tick in ticks:
        if tick > upper + 1e-9:
            continue
        parts.append(
            f'<line x1="{left}" y1="{y(tick):.1f}" x2="{left + span:.1f}" y2="{y(tick):.1f}" '
            f'class="chart-grid"/><text x="{left - 6}" y="{y(tick) + 4:.1f}" text-anchor="end" '
            f'class="chart-tick">{_tick_text(tick, ticks)}</text>'
        )
    label_limit = max(3, int(band / _CHAR_W))
    for g, group in enumerate(groups):
        cx = left + band * (g + 0.5)
        parts.append(
            f'<text x="{cx:.1f}" y="{base + 16:.1f}" text-anchor="middle" class="chart-label">'
            f"{escape(_truncate(group, label_limit))}<title>{escape(group)}</title></text>"
        )
    sentences = []
    for k, (name, row) in enumerate(zip(series, values, strict=True)):
        colour = f"chart-series-{k % SERIES_COLOURS}"
        shown = [
            f"{group} {_fmt(float(v)) if _finite(v) else 'none'}"  # type: ignore[arg-type]
            for group, v in zip(groups, row, strict=True)
        ]
        sentences.append(f"{name}: " + ", ".join(shown))
        if kind == "bar":
            inner = band * 0.8
            bar_w = inner / len(series)
            for g, v in enumerate(row):
                if not _finite(v):
                    continue
                value = float(v)  # type: ignore[arg-type]
                x0 = left + band * g + band * 0.1 + bar_w * k
                parts.append(
                    f'<rect x="{x0:.1f}" y="{y(value):.1f}" width="{max(bar_w - 1, 1):.1f}" '
                    f'height="{base - y(value):.1f}" class="chart-series-bar {colour}">'
                    f"<title>{escape(name)}, {escape(groups[g])}: {_fmt(value)}</title></rect>"
                )
        else:
            path: list[str] = []
            for g, v in enumerate(row):
                if not _finite(v):
                    path.append("")
                    continue
                value = float(v)  # type: ignore[arg-type]
                cx = left + band * (g + 0.5)
                command = "L" if path and path[-1] else "M"
                path.append(f"{command}{cx:.1f} {y(value):.1f}")
                parts.append(
                    f'<circle cx="{cx:.1f}" cy="{y(value):.1f}" r="3.5" '
                    f'class="chart-series-point {colour}"><title>{escape(name)}, '
                    f"{escape(groups[g])}: {_fmt(value)}</title></circle>"
                )
            drawn = "".join(p for p in path if p)
            if drawn:
                parts.insert(0, f'<path d="{drawn}" class="chart-series-line {colour}"/>')
    parts.append(
        f'<line x1="{left}" y1="{base:.1f}" x2="{left + span:.1f}" y2="{base:.1f}" '
        f'class="chart-axis"/>'
    )
    if x_title:
        parts.append(
            f'<text x="{left + span / 2:.1f}" y="{base + 34:.1f}" text-anchor="middle" '
            f'class="chart-axis-title">{escape(_truncate(x_title, 60))}</text>'
        )
    if y_title:
        middle = plot_top + plot_h / 2
        parts.append(
            f'<text x="14" y="{middle:.1f}" text-anchor="middle" '
            f'transform="rotate(-90 14 {middle:.1f})" class="chart-axis-title">'
            f"{escape(_truncate(y_title, int(plot_h / _CHAR_W)))}</text>"
        )
    desc = f"{title}: " + "; ".join(sentences) + "."
    head = _svg_open(width, total_h, title, desc)
    body = "".join([head, _title_text(title, width), *legend, *parts, "</svg>"])
    return mark_safe(body)  # noqa: S308 - every text above went through escape()
