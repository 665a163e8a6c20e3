"""ecekde.plot: the figures are written, and what they draw is what the library computed."""
import numpy as np
import pytest

import ecekde

import ecekde.plot as ep


@pytest.fixture(scope="module")
def three_classes():
    d = ecekde.generate_synthetic(600, classes=3, t1=0.6, t2=0.6, seed=2)
    return d.probs, d.labels


def written(path):
    data = path.read_bytes()
    assert len(data) > 10_000, len(data)
    return data


def test_reliability_diagram_draws_the_binned_statistics(tmp_path, three_classes):
    probs, labels = three_classes
    fig = ep.reliability_diagram(probs, labels, bins=10, path=tmp_path / "top.png", title="top-label")
    assert written(tmp_path / "top.png").startswith(b"\x89PNG\r\n\x1a\n")
    binned = ecekde.binned_calibration_error(probs, labels, bins=10)
    figure = ecekde.reliability_figure(probs, labels, bins=10, curve_points=200)
    ax = fig.axes[0]
    bands = ax.collections[0].get_segments()  # the Wilson intervals, from the library
    assert [(s[0][1], s[1][1]) for s in bands] == list(zip(figure.panels[0].lower, figure.panels[0].upper))
    accuracy, gap = ax.containers[0], ax.containers[1]  # bar containers, in drawing order
    assert [round(p.get_height(), 12) for p in accuracy] == [round(b.mean_label, 12) for b in binned.diagrams[0]]
    assert [round(p.get_y() + p.get_height(), 12) for p in gap] == \
        [round(b.mean_confidence, 12) for b in binned.diagrams[0]]
    assert [round(p.get_x(), 12) for p in accuracy] == [round(b.lower, 12) for b in binned.diagrams[0]]
    text = "\n".join(t.get_text() for t in ax.texts)
    kde = ecekde.estimate(probs, labels, type="top-label", estimator="paper")  # the figure's KDE is the paper's
    assert f"{binned.ce_pow_p:.4f}" in text and f"{kde.ce_pow_p:.4f}" in text
    curve = ax.lines[1].get_ydata()
    assert len(curve) == 200 and np.all((curve >= 0) & (curve <= 1))


def test_marginal_diagrams_one_per_class_and_other_formats(tmp_path, three_classes):
    probs, labels = three_classes
    fig = ep.reliability_diagram(probs, labels, type="marginal", kde=False, path=tmp_path / "marginal.svg")
    assert len(fig.axes) == 3 and b"<svg" in written(tmp_path / "marginal.svg")
    binary = ep.reliability_diagram(probs[:, 1], (labels == 1).astype(np.int64), type="binary", bandwidth=0.05)
    assert len(binary.axes) == 1
    with pytest.raises(ecekde.Error, match="draws 3 diagrams"):
        ep.reliability_diagram(probs, labels, type="marginal", ax=fig.axes[0])
    with pytest.raises(ecekde.Error, match="reliability diagrams are for"):
        ep.reliability_diagram(probs, labels, type="canonical")


def test_simplex_view(tmp_path, three_classes):
    probs, labels = three_classes
    fig = ep.simplex_view(probs, labels, bins=4, resolution=40, path=tmp_path / "simplex.png")
    written(tmp_path / "simplex.png")
    binned = ecekde.binned_calibration_error(probs, labels, type="canonical", bins=4)
    hist_ax = fig.axes[1]
    assert len(hist_ax.patches) == 1 + len(binned.cells)  # the outline and one triangle per occupied cell
    assert f"{binned.ce_pow_p:.4f}" in hist_ax.get_title()
    with pytest.raises(ecekde.Error, match="needs n x 3 probabilities"):
        ep.simplex_view(np.full((10, 4), 0.25), np.zeros(10, dtype=np.int64))


def test_the_triangular_cells_tile_the_simplex():
    # Every canonical cell of b equal-width bins per class is one of the b^2 triangles, each of area 1/b^2.
    b = 5
    cells = {(i, j, b - 1 - i - j) for i in range(b) for j in range(b - i)}
    cells |= {(i, j, b - 2 - i - j) for i in range(b - 1) for j in range(b - 1 - i)}
    area = sum(abs(np.cross(t[1] - t[0], t[2] - t[0])) / 2 for t in (ep._cell_triangle(c, b) for c in cells))
    assert len(cells) == b * b and area == pytest.approx(np.sqrt(3) / 4)


def test_simplex_figure_is_the_librarys_estimates(three_classes):
    probs, labels = three_classes
    f = ecekde.simplex_figure(probs, labels, bins=4, grid=10)
    assert f.points.shape == (100, 3) and f.log_density.shape == (100,)
    kde = ecekde.estimate(probs, labels, type="canonical", estimator="paper")
    assert f.bandwidth == kde.bandwidth and f.ece_kde == pytest.approx(kde.ce_pow_p, rel=1e-12)
    density = ecekde.kernel_regression(probs, labels, f.points, type="canonical", bandwidth=f.bandwidth)
    assert np.array_equal(f.log_density, density.log_density[:, 0])
    assert f.binned.ce_pow_p == ecekde.binned_calibration_error(probs, labels, type="canonical", bins=4).ce_pow_p
