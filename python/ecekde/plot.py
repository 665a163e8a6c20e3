"""Pictures of calibration with matplotlib: reliability diagrams (the binned ECE's per-bin statistics, with
the ECE^KDE reliability curve over them) and, for three classes, the simplex view of the paper's Figure 1
(the Dirichlet KDE of the predictions next to the binned simplex histogram).

Every number drawn comes from the C++ library (ecekde.reliability_figure and ecekde.simplex_figure, the
definitions of the figures that `ecekde report --plot` draws too); this module only draws. Functions return a matplotlib Figure (or draw into the given
Axes) and save it when given a path; they never touch pyplot's global state, so they work with any
backend, including none.
"""
import math

import matplotlib
import numpy as np
from matplotlib.colors import LogNorm
from matplotlib.figure import Figure
from matplotlib.patches import Polygon
from matplotlib.tri import Triangulation

import ecekde

__all__ = ["reliability_diagram", "simplex_view"]

_BAR, _GAP, _CURVE = "#4C72B0", "#DD8452", "#2CA02C"


def _finish(fig, path):
    if path is not None:
        fig.savefig(path, dpi=150, bbox_inches="tight")
    return fig


def _panel(ax, bins, interval, curve, title, ece_text, level):
    """One reliability diagram: bars at each occupied bin's mean label, the gap to its mean confidence,
    each bin's interval, the diagonal, the KDE curve, and the bins' sample shares along the bottom."""
    lower = np.array([b.lower for b in bins])
    width = np.array([b.upper - b.lower for b in bins])
    label = np.array([b.mean_label for b in bins])
    confidence = np.array([b.mean_confidence for b in bins])
    count = np.array([b.count for b in bins], dtype=float)
    ax.bar(lower, label, width=width, align="edge", color=_BAR, edgecolor="white", linewidth=0.5,
           label="mean label (accuracy)")
    ax.bar(lower, confidence - label, bottom=label, width=width, align="edge", color=_GAP, alpha=0.45,
           edgecolor=_GAP, hatch="//", linewidth=0.5, label="gap to mean confidence")
    ax.vlines(lower + width / 2, interval[0], interval[1], color="0.15", lw=1,
              label=f"{100 * level:g}% Wilson interval of the frequency")
    ax.plot([0, 1], [0, 1], ls="--", color="0.3", lw=1, label="perfect calibration")
    if curve is not None:
        ax.plot(curve[0], curve[1], color=_CURVE, lw=2, label="ECE$^{KDE}$ estimate of E[y | f]")
    share = count / count.sum()
    ax.bar(lower, 0.15 * share / share.max(), width=width, align="edge", color="0.55", alpha=0.6,
           label="samples per bin (scaled)")
    for x, w, s in zip(lower, width, share):
        if s >= 0.01:
            ax.text(x + w / 2, 0.155 * s / share.max() + 0.005, f"{100 * s:.0f}%", ha="center", va="bottom",
                    fontsize=6, color="0.3")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_aspect("equal")
    ax.set_xlabel("confidence")
    ax.set_ylabel("observed frequency")
    ax.set_title(title, fontsize=10)
    ax.text(0.03, 0.97, ece_text, transform=ax.transAxes, va="top", fontsize=8,
            bbox=dict(boxstyle="round", facecolor="0.93", edgecolor="0.7"))


def reliability_diagram(probs, labels, *, type="top-label", bins=15, binning="equal-width", kde=True,
                        bandwidth=None, p=1.0, ax=None, path=None, title=None):
    """Reliability diagram(s) of the predictions.

    Args:
        probs, labels: as for ecekde.binned_calibration_error (n x K probabilities, or n values P(y = 1)).
        type: "top-label" (one diagram of the top class's confidence and correctness), "binary" (one, of
            P(y = 1)) or "marginal" (one per class).
        bins, binning: the binning (ecekde.binned_calibration_error).
        kde: also draw the ECE^KDE estimate of E[y | f] (ecekde.kernel_regression) over the bars, and print
            ECE^KDE next to ECE^bin.
        bandwidth: the KDE's bandwidth; None = automatic (the paper's leave-one-out likelihood).
        p: order of the L_p calibration errors printed.
        ax: draw into this Axes (one diagram only); otherwise a new Figure is made.
        path: save the figure there (any format matplotlib knows from the extension: .png, .svg, .pdf).
        title: the figure's title.

    Returns:
        The matplotlib Figure.
    """
    if type not in ("top-label", "binary", "marginal"):
        raise ecekde.Error(f"reliability diagrams are for top-label, binary or marginal, got '{type}'")
    # What the diagrams show is the library's (ecekde.reliability_figure), as `ecekde report --plot` draws it.
    figure = ecekde.reliability_figure(probs, labels, type=type, p=p, bins=bins, binning=binning,
                                       bandwidth=bandwidth, curve_points=200)
    panels = len(figure.panels)
    if ax is not None and panels != 1:
        raise ecekde.Error(f"type '{type}' draws {panels} diagrams; ax holds only one")
    if ax is None:
        columns = min(panels, 4)
        rows = math.ceil(panels / columns)
        fig = Figure(figsize=(4.2 * columns, 4.4 * rows), layout="constrained")
        axes = [fig.add_subplot(rows, columns, i + 1) for i in range(panels)]
    else:
        fig, axes = ax.figure, [ax]

    for c, (panel_ax, panel) in enumerate(zip(axes, figure.panels)):
        curve = (panel.curve_x, panel.curve_y) if kde else None
        text = f"ECE$^{{bin}}$ = {panel.ece_bin:.4f}"
        if kde:
            text += f"\nECE$^{{KDE}}$ = {panel.ece_kde:.4f} (h = {figure.bandwidth:.3g}, the paper's)"
        if p != 1:
            text += f"\n(CE$_p^p$, p = {p:g})"
        name = {"top-label": "top-label", "binary": "P(y = 1)", "marginal": f"class {c}"}[type]
        _panel(panel_ax, panel.bins, (panel.lower, panel.upper), curve, name, text, figure.level)
    axes[0].legend(loc="upper left", bbox_to_anchor=(0.0, 0.85), fontsize=7, framealpha=0.9)
    if title:
        fig.suptitle(title)
    return _finish(fig, path)


# ---- The simplex view (K = 3) ------------------------------------------------------------------------------

_CORNERS = np.array([[0.0, 0.0], [1.0, 0.0], [0.5, math.sqrt(3) / 2]])


def _to_plane(x):
    """Barycentric points (rows summing to 1) to the plane of the equilateral triangle."""
    return np.asarray(x) @ _CORNERS


def _cell_triangle(cell_bins, b):
    """The corners of canonical cell (b0, b1, b2) of b equal-width bins per class: an upward triangle when
    the bins sum to b - 1, a downward one when they sum to b - 2."""
    i = np.array(cell_bins, dtype=float)
    if i.sum() == b - 1:
        corners = [i + np.eye(3)[c] for c in range(3)]
    else:
        corners = [i + 1 - np.eye(3)[c] for c in range(3)]
    return _to_plane(np.array(corners) / b)


def _simplex_axes(ax, title):
    ax.add_patch(Polygon(_CORNERS, closed=True, fill=False, edgecolor="0.2", lw=1))
    for c, (x, y) in enumerate(_CORNERS):
        ax.text(x + (-0.04 if c == 0 else 0.04 if c == 1 else 0), y + (0.04 if c == 2 else -0.05),
                f"class {c}", ha="center", fontsize=8)
    ax.set_xlim(-0.08, 1.08)
    ax.set_ylim(-0.1, 0.95)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title(title, fontsize=10)


def simplex_view(probs, labels, *, bins=4, bandwidth=None, resolution=80, points=True, path=None, title=None):
    """The paper's Figure 1 for three classes: the predictions on the simplex with the triangular bins of
    the canonical binned estimator, the binned simplex histogram, and the Dirichlet KDE of the predictions.

    Both densities are per unit area of the simplex (the uniform distribution is 1) and share one
    logarithmic colour scale, so the histogram's blocks can be compared with the smooth estimate.

    Args:
        probs: n x 3 probabilities. labels: n labels in {0, 1, 2}.
        bins: equal-width bins per class (the simplex is cut into bins**2 triangles).
        bandwidth: the Dirichlet kernel's bandwidth; None = automatic (leave-one-out likelihood).
        resolution: the KDE is read at the centroids of a triangular grid of this many segments per side.
        points: draw the predictions in the first panel.
        path: save the figure there. title: the figure's title.

    Returns:
        The matplotlib Figure.
    """
    probs_array = np.asarray(probs)
    if probs_array.ndim != 2 or probs_array.shape[1] != 3:
        raise ecekde.Error(f"the simplex view needs n x 3 probabilities, got shape {probs_array.shape}")
    # What the view shows is the library's (ecekde.simplex_figure), as `ecekde report --plot` draws it.
    figure = ecekde.simplex_figure(probs, labels, bins=bins, bandwidth=bandwidth, grid=resolution)
    binned = figure.binned
    n = binned.n
    # Dirichlet densities are per unit of (x0, x1)-area, in which the simplex has area 1 / (K - 1)! = 1/2.
    grid = figure.points
    kde_density = np.exp(figure.log_density) / 2

    hist_density = np.array([cell.count * bins**2 / n for cell in binned.cells])
    positive = np.concatenate([kde_density[kde_density > 0], hist_density])
    norm = LogNorm(vmin=max(positive.min(), positive.max() * 1e-4), vmax=positive.max())

    fig = Figure(figsize=(14, 4.6), layout="constrained")
    ax_points, ax_hist, ax_kde = (fig.add_subplot(1, 3, i + 1) for i in range(3))

    _simplex_axes(ax_points, f"{n} predictions, {bins * bins} bins")
    for k in range(1, bins):
        for c in range(3):  # the lines x_c = k / bins
            a, b = np.eye(3)[(c + 1) % 3], np.eye(3)[(c + 2) % 3]
            ends = np.array([k / bins * np.eye(3)[c] + (1 - k / bins) * a,
                             k / bins * np.eye(3)[c] + (1 - k / bins) * b])
            xy = _to_plane(ends)
            ax_points.plot(xy[:, 0], xy[:, 1], color="0.6", lw=0.8)
    if points:
        xy = _to_plane(probs_array)
        colours = np.array(["#1f3fbf", "#d62728", "#2ca02c"])[np.asarray(labels)]
        ax_points.scatter(xy[:, 0], xy[:, 1], s=4, c=colours, alpha=0.5, linewidths=0)
        for c, colour in enumerate(("#1f3fbf", "#d62728", "#2ca02c")):
            ax_points.scatter([], [], s=12, c=colour, label=f"label {c}")
        ax_points.legend(loc="upper right", fontsize=7, frameon=False)

    _simplex_axes(ax_hist, f"binned simplex histogram\nECE$^{{bin}}$ = {binned.ce_pow_p:.4f}")
    cmap = matplotlib.colormaps["viridis"]
    for cell, density in zip(binned.cells, hist_density):
        ax_hist.add_patch(Polygon(_cell_triangle(cell.bins, bins), closed=True, facecolor=cmap(norm(density)),
                                  edgecolor="white", lw=0.5))

    _simplex_axes(ax_kde, f"Dirichlet KDE (h = {figure.bandwidth:.3g})\nECE$^{{KDE}}$ = {figure.ece_kde:.4f}")
    xy = _to_plane(grid)
    shown = np.clip(kde_density, norm.vmin, norm.vmax)
    levels = np.geomspace(norm.vmin, norm.vmax, 25)
    contour = ax_kde.tricontourf(Triangulation(xy[:, 0], xy[:, 1]), shown, levels=levels, norm=norm, cmap=cmap)
    fig.colorbar(contour, ax=[ax_hist, ax_kde], shrink=0.8, label="density (uniform = 1)", ticks=_decades(norm))
    if title:
        fig.suptitle(title)
    return _finish(fig, path)


def _decades(norm):
    lo, hi = math.floor(math.log10(norm.vmin)), math.ceil(math.log10(norm.vmax))
    return [10.0**e for e in range(lo, hi + 1) if norm.vmin <= 10.0**e <= norm.vmax]
