"""The server-side SVG charts: valid markup, escaped labels, and geometry that can go wrong."""

from __future__ import annotations

import itertools
import math
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable

import pytest

from config.charts import (
    bar_chart,
    confusion_matrix,
    heat_map,
    nice_ticks,
    scatter_chart,
    stacked_bars,
)

NS = "{http://www.w3.org/2000/svg}"
SCRIPT = "<script>alert(1)</script>"
IMG = '"><img src=x onerror=alert(2)>'


def parse(markup: str) -> ET.Element:
    root = ET.fromstring(str(markup))  # noqa: S314 - markup we just generated
    assert root.tag == f"{NS}svg"
    return root


def desc(root: ET.Element) -> str:
    return root.findtext(f"{NS}desc") or ""


def elements(root: ET.Element, tag: str, cls: str | None = None) -> list[ET.Element]:
    found = root.iter(f"{NS}{tag}")
    return [e for e in found if cls is None or cls in e.get("class", "").split()]


def texts(root: ET.Element) -> list[str]:
    """The visible text of every <text>, leaving out a tooltip <title> inside it."""
    return [(e.text or "") + "".join(c.tail or "" for c in e) for e in elements(root, "text")]


def level(element: ET.Element, prefix: str) -> str:
    (cls,) = [c for c in element.get("class", "").split() if c.startswith(prefix)]
    return cls.removeprefix(prefix)


def line_data(n: int = 10) -> tuple[list[float], list[float]]:
    xs = [float(i) for i in range(n)]
    return xs, [1 + 2 * x for x in xs]


def all_charts(label: str) -> dict[str, Callable[[], str]]:
    """One call of every chart, with `label` in every title, label and name."""
    return {
        "scatter": lambda: scatter_chart(
            [1, 2, 3], [2, 3, 5], title=label, x_label=label, y_label=label
        ),
        "stacked": lambda: stacked_bars(
            [label, "format"],
            [label, "tie", "simulated better"],
            [[0.4, 0.2, 0.4], [0.3, 0.3, 0.4]],
            intervals=[[(0.3, 0.5), None, None], [None, None, None]],
            title=label,
        ),
        "confusion": lambda: confusion_matrix(
            [label, "b"],
            [label, "b"],
            [[3, 1], [0, 2]],
            title=label,
            row_title=label,
            col_title=label,
        ),
        "heat": lambda: heat_map(
            [label, "b", "c"], [[1, 0.5, None], [0.5, 1, -0.2], [None, -0.2, 1]], title=label
        ),
        "bar": lambda: bar_chart([label], [0.5], title=label),
    }


# --- every chart ------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", list(all_charts("x")))
def test_chart_parses_with_title_and_desc(kind: str) -> None:
    root = parse(all_charts("Agreement")[kind]())
    assert root.get("role") == "img"
    assert root.findtext(f"{NS}title") == "Agreement"
    assert desc(root).startswith("Agreement")
    assert not elements(root, "script")


@pytest.mark.parametrize("label", [SCRIPT, IMG])
@pytest.mark.parametrize("kind", list(all_charts("x")))
def test_markup_in_labels_is_escaped(kind: str, label: str) -> None:
    markup = str(all_charts(label)[kind]())
    root = parse(markup)
    assert "<script" not in markup and "<img" not in markup
    assert "&lt;" in markup
    tags = {e.tag.removeprefix(NS) for e in root.iter()}
    assert tags <= {"svg", "title", "desc", "text", "rect", "line", "path", "circle", "g"}
    assert root.findtext(f"{NS}title") == label
    assert label in desc(root)


# --- nice ticks -------------------------------------------------------------------------------


def test_nice_ticks_unit_interval() -> None:
    assert nice_ticks(0, 1) == [0, 0.2, 0.4, 0.6, 0.8, 1.0]


def test_nice_ticks_symmetric_range() -> None:
    ticks = nice_ticks(-1, 1)
    assert {-1, 0, 1} <= set(ticks)
    assert ticks[0] == -1 and ticks[-1] == 1


@pytest.mark.parametrize(
    ("lo", "hi"), [(1, 5), (0, 100), (0.013, 0.087), (-3.2, 17.9), (1234, 98765), (5, 5), (0, 0)]
)
def test_nice_ticks_are_round_and_cover_the_range(lo: float, hi: float) -> None:
    ticks = nice_ticks(lo, hi)
    assert ticks[0] <= lo and ticks[-1] >= hi
    assert 3 <= len(ticks) <= 8
    steps = {round(b - a, 9) for a, b in itertools.pairwise(ticks)}
    assert len(steps) == 1
    step = steps.pop()
    mantissa = step / 10 ** math.floor(math.log10(step))
    assert round(mantissa, 6) in {1, 2, 2.5, 5}


# --- scatter ----------------------------------------------------------------------------------


def plot_area(root: ET.Element) -> tuple[float, float, float, float]:
    (plot,) = elements(root, "rect", "chart-plot")
    x, y = float(plot.get("x")), float(plot.get("y"))
    return x, y, x + float(plot.get("width")), y + float(plot.get("height"))


def test_scatter_fits_an_increasing_line() -> None:
    xs, ys = line_data()
    root = parse(scatter_chart(xs, ys, title="t", x_label="metric", y_label="human"))
    (fit,) = elements(root, "line", "chart-fit")
    assert float(fit.get("x2")) > float(fit.get("x1"))
    assert float(fit.get("y2")) < float(fit.get("y1"))  # SVG y grows downwards
    text = desc(root)
    assert text.startswith("t: 10 items;")
    # Exactly 2, 1 and 1: not followed by more digits or decimals.
    assert re.search(r"slope 2(?![.\d]\d|\d)", text)
    assert re.search(r"intercept 1(?![.\d]\d|\d)", text)
    assert re.search(r"Pearson r = 1(?![.\d]\d|\d)", text)


def test_scatter_decreasing_line_goes_down() -> None:
    xs = [0, 1, 2, 3, 4]
    root = parse(scatter_chart(xs, [10 - 3 * x for x in xs], title="t", x_label="x", y_label="y"))
    (fit,) = elements(root, "line", "chart-fit")
    assert float(fit.get("y2")) > float(fit.get("y1"))
    assert re.search(r"slope -3(?![.\d]\d|\d)", desc(root))
    assert re.search(r"Pearson r = -1(?![.\d]\d|\d)", desc(root))


def test_scatter_fit_is_optional() -> None:
    xs, ys = line_data()
    root = parse(scatter_chart(xs, ys, title="t", x_label="x", y_label="y", fit=False))
    assert not elements(root, "line", "chart-fit")
    assert "slope 2" in desc(root)  # the statistics are still described


@pytest.mark.parametrize("jitter", [0.0, 0.05])
def test_scatter_points_lie_inside_the_plot(jitter: float) -> None:
    xs = [1, 1, 2, 3, 5, 5, 4, -2.5, 7]
    ys = [1, 5, 3, 3, 1, 5, 2, 4, 4.5]
    root = parse(scatter_chart(xs, ys, title="t", x_label="x", y_label="y", jitter=jitter))
    left, top, right, bottom = plot_area(root)
    points = elements(root, "circle", "chart-point")
    assert len(points) == len(xs)
    for point in points:
        cx, cy, r = (float(point.get(a)) for a in ("cx", "cy", "r"))
        assert left <= cx - r and cx + r <= right
        assert top <= cy - r and cy + r <= bottom
    for fit in elements(root, "line", "chart-fit"):
        for a in ("x1", "x2"):
            assert left <= float(fit.get(a)) <= right
        for a in ("y1", "y2"):
            assert top <= float(fit.get(a)) <= bottom


def test_scatter_jitter_is_seeded() -> None:
    xs, ys = [1, 2, 2, 3, 3, 3], [1, 2, 2, 3, 3, 3]

    def chart(**kwargs: object) -> str:
        return str(scatter_chart(xs, ys, title="t", x_label="x", y_label="y", **kwargs))

    assert chart(jitter=0.03, seed=1) == chart(jitter=0.03, seed=1)
    assert chart(jitter=0.03, seed=1) != chart(jitter=0.03, seed=2)
    assert chart(jitter=0.03) != chart()
    # Jitter moves the drawn points only: the statistics are the same.
    assert desc(parse(chart(jitter=0.03))).split("; points are")[0] == desc(parse(chart()))[:-1]


def test_scatter_draws_a_sample_but_fits_all() -> None:
    xs, ys = line_data(300)
    chart = scatter_chart(xs, ys, title="t", x_label="x", y_label="y", max_points=50, seed=4)
    root = parse(chart)
    assert len(elements(root, "circle", "chart-point")) == 50
    assert "random sample of 50 of the 300 points" in desc(root)
    assert "300 items" in desc(root) and "slope 2," in desc(root)
    again = scatter_chart(xs, ys, title="t", x_label="x", y_label="y", max_points=50, seed=4)
    assert str(again) == str(chart)


def test_scatter_skips_missing_values() -> None:
    xs = [0, 1, None, 2, float("nan"), 3]
    ys = [1, 3, 4, 5, 2, float("nan")]
    root = parse(scatter_chart(xs, ys, title="t", x_label="x", y_label="y"))
    assert len(elements(root, "circle", "chart-point")) == 3
    assert "3 items (3 with a missing value skipped)" in desc(root)
    assert re.search(r"slope 2\b", desc(root))


def test_scatter_without_points_says_no_data() -> None:
    root = parse(scatter_chart([], [], title="t", x_label="x", y_label="y"))
    assert "no data" in texts(root)
    assert "no data" in desc(root)
    assert not elements(root, "circle")
    root = parse(scatter_chart([None], [1.0], title="t", x_label="x", y_label="y"))
    assert "no data" in desc(root)


def test_scatter_with_one_point() -> None:
    root = parse(scatter_chart([2.0], [3.0], title="t", x_label="x", y_label="y"))
    assert len(elements(root, "circle", "chart-point")) == 1
    assert not elements(root, "line", "chart-fit")
    assert "only one point" in desc(root) and "r undefined" in desc(root)
    assert any("one point" in t for t in texts(root))
    left, top, right, bottom = plot_area(root)
    (point,) = elements(root, "circle", "chart-point")
    assert left < float(point.get("cx")) < right and top < float(point.get("cy")) < bottom


def test_scatter_with_all_x_equal() -> None:
    root = parse(scatter_chart([4, 4, 4], [1, 2, 3], title="t", x_label="x", y_label="y"))
    assert len(elements(root, "circle", "chart-point")) == 3
    assert not elements(root, "line", "chart-fit")
    assert "all x values are equal" in desc(root)
    assert any("all x equal" in t for t in texts(root))


def test_scatter_rejects_mismatched_lengths() -> None:
    with pytest.raises(ValueError):
        scatter_chart([1, 2], [1], title="t", x_label="x", y_label="y")


# --- stacked bars -----------------------------------------------------------------------------


def segments_by_row(root: ET.Element) -> dict[str, list[ET.Element]]:
    rows: dict[str, list[ET.Element]] = {}
    for rect in elements(root, "rect", "chart-seg"):
        rows.setdefault(rect.get("y"), []).append(rect)
    return rows


def test_stacked_segment_widths_follow_the_shares() -> None:
    shares = [[0.41, 0.2, 0.39], [30, 55, 15], [1, 1, 2]]
    root = parse(
        stacked_bars(
            ["overall", "format", "relevance"],
            ["real better", "tie", "simulated better"],
            shares,
            title="Turing test",
            width=720,
        )
    )
    rows = list(segments_by_row(root).values())
    assert len(rows) == 3
    bar_widths = set()
    for row_shares, rects in zip(shares, rows, strict=True):
        widths = [float(r.get("width")) for r in rects]
        total = sum(widths)
        bar_widths.add(round(total, 1))
        for share, w in zip(row_shares, widths, strict=True):
            assert w / total == pytest.approx(share / sum(row_shares), abs=0.001)
        # Contiguous: each segment starts where the one before it ends.
        starts = [float(r.get("x")) for r in rects]
        for x, w, nxt in zip(starts, widths, starts[1:], strict=False):
            assert x + w == pytest.approx(nxt, abs=0.011)
        assert [level(r, "chart-seg-") for r in rects] == ["0", "1", "2"]
    assert len(bar_widths) == 1  # every bar is the same full width


def test_stacked_labels_tooltips_and_legend() -> None:
    root = parse(
        stacked_bars(
            ["overall"],
            ["real better", "tie", "simulated better"],
            [[0.41, 0.04, 0.55]],
            intervals=[[(0.35, 0.47), None, (0.49, 0.61)]],
            title="t",
        )
    )
    rects = elements(root, "rect", "chart-seg")
    tips = [r.findtext(f"{NS}title") for r in rects]
    assert tips == [
        "real better: 41% (95% CI 35\u201347%)",
        "tie: 4%",
        "simulated better: 55% (95% CI 49\u201361%)",
    ]
    shown = texts(root)
    assert "41%" in shown and "55%" in shown
    assert "4%" not in shown  # narrower than 6% of the bar: only in the tooltip
    assert {"real better", "tie", "simulated better"} <= set(shown)  # the legend
    assert len(elements(root, "rect", "chart-swatch")) == 3
    assert "overall: real better: 41% (95% CI 35\u201347%), tie: 4%" in desc(root)
    assert "chart-segs-3" in root.get("class")


def test_stacked_degenerate_inputs() -> None:
    root = parse(stacked_bars(["a", "b"], ["x", "y"], [[0, 0], [1, 0]], title="t"))
    assert "no data" in texts(root)
    assert "a: no data" in desc(root)
    (only,) = elements(root, "rect", "chart-seg")  # b's second share is 0: not drawn
    assert "x: 100%" in only.findtext(f"{NS}title")
    root = parse(stacked_bars([], ["x"], [], title="t"))
    assert "no data" in texts(root)
    with pytest.raises(ValueError):
        stacked_bars(["a"], ["x", "y"], [[1.0]], title="t")


# --- confusion matrix -------------------------------------------------------------------------


def test_confusion_matrix_shades_by_count_over_max() -> None:
    counts = [[10, 0, 1], [5, 8, 2], [3, 0, 6]]
    root = parse(
        confusion_matrix(
            ["1", "2", "3"],
            ["1", "2", "3"],
            counts,
            title="t",
            row_title="human",
            col_title="judge",
        )
    )
    cells = elements(root, "rect", "chart-cell")
    assert len(cells) == 9
    levels = [int(level(c, "chart-heat-")) for c in cells]
    flat = [c for row in counts for c in row]
    for count, got in zip(flat, levels, strict=True):
        expected = 0 if count == 0 else max(1, math.floor(5 * count / 10 + 0.5))
        assert got == expected, count
    assert levels[0] == 5 and levels[1] == 0 and levels[2] == 1  # 10 is the max; 1 is not 0
    shown = texts(root)
    for count in flat:
        assert str(count) in shown
    assert "human" in shown and "judge" in shown
    assert len(elements(root, "rect", "chart-diag")) == 3
    assert "24 of 35 (69%) on the diagonal" in desc(root)


def test_confusion_matrix_outlines_only_matching_categories() -> None:
    root = parse(
        confusion_matrix(
            ["yes", "no"],
            ["no", "yes", "unsure"],
            [[1, 2, 0], [3, 4, 0]],
            title="t",
            row_title="a",
            col_title="b",
        )
    )
    diag = elements(root, "rect", "chart-diag")
    cells = elements(root, "rect", "chart-cell")
    # yes/yes is row 0 column 1; no/no is row 1 column 0.
    positions = {(c.get("x"), c.get("y")) for c in cells}
    assert len(diag) == 2 and len(positions) == 6
    outlined_tips = set()
    for d in diag:
        x, y = float(d.get("x")), float(d.get("y"))
        for c in cells:
            if (
                float(c.get("x")) < x < float(c.get("x")) + 5
                and float(c.get("y")) < y < float(c.get("y")) + 5
            ):
                outlined_tips.add(c.findtext(f"{NS}title"))
    assert outlined_tips == {"a yes, b yes: 2", "a no, b no: 3"}


def test_confusion_matrix_degenerate_inputs() -> None:
    root = parse(confusion_matrix(["a"], ["a"], [[0]], title="t", row_title="r", col_title="c"))
    assert level(elements(root, "rect", "chart-cell")[0], "chart-heat-") == "0"
    assert "no data" in desc(root)
    root = parse(confusion_matrix([], [], [], title="t", row_title="r", col_title="c"))
    assert "no data" in texts(root)
    with pytest.raises(ValueError):
        confusion_matrix(["a"], ["a", "b"], [[1]], title="t", row_title="r", col_title="c")


# --- heat map ---------------------------------------------------------------------------------


def test_heat_map_classes_follow_the_value() -> None:
    values = [[1.0, -1.0, 0.0], [-1.0, 1.0, None], [0.0, None, 0.5]]
    root = parse(heat_map(["a", "b", "c"], values, title="kappa"))
    cells = elements(root, "rect", "chart-cell")
    got = [level(c, "chart-div-") for c in cells]
    assert got == ["8", "0", "4", "0", "8", "none", "4", "none", "6"]
    cell_texts = [t for t in texts(root) if t[:1] in "-0123456789\u2013"]
    dash = "\u2013"
    assert cell_texts == ["1.00", "-1.00", "0.00", "-1.00", "1.00", dash, "0.00", dash, "0.50"]


def test_heat_map_scale_and_clipping() -> None:
    root = parse(heat_map(["a", "b"], [[0.0, 0.25], [2.0, -5]], title="t", minimum=0, maximum=1))
    got = [level(c, "chart-div-") for c in elements(root, "rect", "chart-cell")]
    assert got == ["0", "2", "8", "0"]
    assert "a \u00d7 b 0.25" in desc(root)  # not symmetric: every pair listed
    assert "b \u00d7 a 2.00" in desc(root)
    with pytest.raises(ValueError):
        heat_map(["a"], [[1.0]], title="t", minimum=1, maximum=1)


def test_heat_map_long_names_are_truncated_and_rotated() -> None:
    names = [f"rater-{i:02d}-" + "x" * 30 for i in range(12)]
    values = [[1.0 if i == j else 0.3 for j in range(12)] for i in range(12)]
    root = parse(heat_map(names, values, title="t"))
    labels = elements(root, "text", "chart-label")
    assert len(labels) == 24
    for label in labels:
        shown = (label.text or "") + "".join(c.tail or "" for c in label)
        assert len(shown) == 24 and shown.endswith("\u2026")
        assert label.findtext(f"{NS}title") in names  # the full name as a tooltip
    rotated = [e for e in labels if "rotate(-45" in e.get("transform", "")]
    assert len(rotated) == 12
    # The viewBox leaves room for the rotated labels on the right and on top.
    width = float(root.get("width"))
    (last_col_x,) = {float(e.get("x")) for e in rotated if e.findtext(f"{NS}title") == names[-1]}
    assert last_col_x + 24 * 7 * math.sqrt(0.5) < width
    assert min(float(e.get("y")) for e in rotated) > 24 * 7 * math.sqrt(0.5)
    assert "rater-00" in desc(root) and desc(root).count("\u00d7") == 66  # symmetric: i < j


def test_heat_map_degenerate_inputs() -> None:
    root = parse(heat_map([], [], title="t"))
    assert "no data" in texts(root)
    root = parse(heat_map(["only"], [[None]], title="t"))
    assert texts(root)[-1] == "\u2013"
    with pytest.raises(ValueError):
        heat_map(["a", "b"], [[1.0, 0.0]], title="t")


# --- the existing bar chart -------------------------------------------------------------------


def test_bar_chart_output_is_unchanged() -> None:
    chart = bar_chart(["run"], [42.0], title="x", maximum=100.0, width=500)
    assert str(chart) == (
        '<svg class="chart" role="img" viewBox="0 0 500 78" xmlns="http://www.w3.org/2000/svg">'
        '<title>x</title><desc>x: run 42</desc><text x="220" y="16" class="chart-title">x</text>'
        '<text x="212" y="44" text-anchor="end" class="chart-label">run</text>'
        '<rect x="220" y="32" width="92.4" height="16" class="chart-bar"/>'
        '<text x="318.4" y="44" class="chart-value">42</text>'
        '<line x1="220" y1="58" x2="440" y2="58" class="chart-axis"/>'
        '<text x="220" y="72" class="chart-tick">0</text>'
        '<text x="440" y="72" text-anchor="end" class="chart-tick">100</text></svg>'
    )
