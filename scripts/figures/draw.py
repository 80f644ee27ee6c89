"""The drawing helpers and colours that the figures of every step share.

Hardware sizes (a warp, a sector, the shared-memory banks), the output size of
a convolution, the colour of each kind of data (input, halo, output, filter,
shared memory, registers), and the shapes the figures are built from: canvases
whose y grows downwards (row 0 at the top) in units of one cell, boxes, grids,
arrows, brackets, labels, the timeline lanes of steps 05 and 06, and save(),
which writes a PNG that is the same bytes for the same drawing.

matplotlib is imported only on first use, inside these functions, never when
the module is imported: `scripts/figures.py --check` imports it without
matplotlib.
"""

WARP = 32  # threads per warp: a property of the hardware, not of this code
SECTOR = 32  # bytes per L1/L2 sector
BANKS = 32  # shared-memory banks of 4 bytes


def out_size(size, filt, pad, stride=1, dil=1):
    """Output extent along one axis (conv_out_h() of common/conv_params.c)."""
    return (size + 2 * pad - (dil * (filt - 1) + 1)) // stride + 1


DPI = 120
COLORS = {
    "input": "#9ecae1",     # x, the image
    "input_dark": "#2171b5",
    "halo": "#fdae6b",      # the halo around a tile
    "output": "#a1d99b",    # y
    "output_dark": "#238b45",
    "weight": "#cbc9e2",    # w, the filter
    "weight_dark": "#6a51a3",
    "shared": "#fff3b0",    # shared memory
    "register": "#fcbba1",  # registers
    "register_dark": "#cb181d",
    "idle": "#d9d9d9",      # idle threads, unused bytes
    "grid": "#888888",
    "text": "#222222",
    "highlight": "#e31a1c",
}
# one colour per channel (or per filter tap), where a figure tells them apart
CHANNEL_COLORS = ["#9ecae1", "#fdae6b", "#a1d99b", "#cbc9e2", "#fcbba1", "#fdd0a2", "#c7e9c0",
                  "#dadaeb", "#9e9ac8", "#fee391"]
_PLT = []  # matplotlib.pyplot, once pyplot() has imported it


def pyplot():
    """matplotlib.pyplot, set up for these figures (imported only when drawing)."""
    if not _PLT:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        plt.rcParams.update({"font.family": "DejaVu Sans", "font.size": 9,
                             "axes.titlesize": 10, "axes.titleweight": "bold",
                             "figure.titlesize": 12, "figure.titleweight": "bold",
                             "hatch.linewidth": 0.6, "svg.hashsalt": "figures"})
        _PLT.append(plt)
    return _PLT[0]


def new_figure(width, height, title):
    """A figure of width x height inches (x DPI pixels) with a title."""
    fig = pyplot().figure(figsize=(width, height))
    fig.suptitle(title, x=0.01, ha="left", y=0.985, va="top")
    return fig


def canvas(fig, rect, xlim, ylim, title=None):
    """Axes in figure coordinates rect = (left, bottom, width, height) with
    data coordinates xlim x ylim, y growing downwards (row 0 at the top), equal
    units on both axes, no frame."""
    ax = fig.add_axes(rect)
    ax.set_xlim(*xlim)
    ax.set_ylim(ylim[1], ylim[0])
    ax.set_aspect("equal", adjustable="box", anchor="NW")
    ax.axis("off")
    if title:
        ax.set_title(title, loc="left", fontsize=10, fontweight="bold", pad=4)
    return ax


def canvas_below(fig, top, left, width, xlim, ylim, title=None):
    """canvas() whose height follows from its width and the data's aspect: its
    top edge at `top` (figure fraction). Returns the axes and its bottom edge,
    so that panels can be stacked without gaps."""
    fw, fh = fig.get_size_inches()
    height = width * fw * (ylim[1] - ylim[0]) / (xlim[1] - xlim[0]) / fh
    return canvas(fig, (left, top - height, width, height), xlim, ylim, title), top - height


def box(ax, x, y, w, h, fc, ec="#444444", lw=0.6, text=None, fs=7, tc=None, hatch=None,
        z=2, ls="-", weight="normal"):
    """A rectangle with its top-left corner at (x, y), and a centred label."""
    from matplotlib.patches import Rectangle
    ax.add_patch(Rectangle((x, y), w, h, facecolor=fc, edgecolor=ec, linewidth=lw, hatch=hatch,
                           zorder=z, linestyle=ls))
    if text is not None:
        ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=fs,
                color=tc or COLORS["text"], zorder=z + 0.5, fontweight=weight)


def outline(ax, x, y, w, h, color, lw=2.0, ls="-", z=6):
    """The edge of a rectangle only, drawn above the boxes."""
    box(ax, x, y, w, h, "none", ec=color, lw=lw, z=z, ls=ls)


def grid_lines(ax, x, y, cols, rows, color=COLORS["grid"], lw=0.3, z=3, step=1.0):
    """Thin lines between the cells of a cols x rows grid of unit cells."""
    for i in range(cols + 1):
        ax.plot([x + i * step, x + i * step], [y, y + rows * step], color=color, lw=lw, zorder=z)
    for j in range(rows + 1):
        ax.plot([x, x + cols * step], [y + j * step, y + j * step], color=color, lw=lw, zorder=z)


def arrow(ax, start, end, color="#333333", lw=1.2, style="-|>", rad=0.0, z=8, ms=10):
    """An arrow from start to end (data coordinates), bent by rad."""
    from matplotlib.patches import FancyArrowPatch
    ax.add_patch(FancyArrowPatch(start, end, arrowstyle=style, mutation_scale=ms, color=color,
                                 lw=lw, zorder=z, connectionstyle=f"arc3,rad={rad}",
                                 shrinkA=0, shrinkB=0))


def brace(ax, x0, x1, y, text, above=True, color="#333333", fs=8, lw=0.9):
    """A bracket from x0 to x1 at height y with a label (above or below it)."""
    d = -0.35 if above else 0.35
    ax.plot([x0, x0, x1, x1], [y - d, y, y, y - d], color=color, lw=lw, zorder=7)
    ax.text((x0 + x1) / 2, y + (-0.25 if above else 0.25), text, ha="center",
            va="bottom" if above else "top", fontsize=fs, color=color, zorder=7)


def vbrace(ax, x, y0, y1, text, left=True, color="#333333", fs=8, lw=0.9):
    """A vertical bracket from y0 to y1 at x with a label beside it."""
    d = 0.35 if left else -0.35
    ax.plot([x + d, x, x, x + d], [y0, y0, y1, y1], color=color, lw=lw, zorder=7)
    ax.text(x + (-0.25 if left else 0.25), (y0 + y1) / 2, text, ha="right" if left else "left",
            va="center", fontsize=fs, color=color, zorder=7)


def lane_color(i, n=WARP, light=0.78):
    """A distinct light colour for thread (lane) i of n, the same in every figure."""
    import colorsys
    r, g, b = colorsys.hls_to_rgb((i * 0.61803398875) % 1.0, light, 0.65)
    return (r, g, b)


def note(fig, x, y, text, fs=8.5, **kw):
    """Text in figure coordinates (0..1), top-left aligned unless told."""
    kw.setdefault("ha", "left")
    kw.setdefault("va", "top")
    kw.setdefault("color", COLORS["text"])
    fig.text(x, y, text, fontsize=fs, **kw)


def swatch(fig, x, y, color, size=0.022):
    """A small square legend patch with its top-left corner at (x, y), figure
    coordinates; size is its height as a fraction of the figure's height."""
    from matplotlib.patches import Rectangle
    fw, fh = fig.get_size_inches()
    fig.patches.append(Rectangle((x, y - size), size * fh / fw, size, transform=fig.transFigure,
                                 facecolor=color, edgecolor="#444444", lw=0.6))


def gantt_bar(ax, x0, x1, lane, fc, text=None, hatch=None, ec="#444444", h=0.62, fs=7.5):
    """A bar from time x0 to x1 on lane `lane` of gantt_axes(), with a centred label."""
    from matplotlib.patches import Rectangle
    ax.add_patch(Rectangle((x0, lane - h / 2), x1 - x0, h, facecolor=fc, edgecolor=ec, lw=0.7,
                           hatch=hatch, zorder=3))
    if text:
        ax.text((x0 + x1) / 2, lane, text, ha="center", va="center", fontsize=fs, zorder=4)


def gantt_axes(fig, rect, lanes, xmax, title):
    """Axes for a timeline: one lane per entry of `lanes`, top to bottom."""
    ax = fig.add_axes(rect)
    ax.set_xlim(-0.2, xmax)
    ax.set_ylim(len(lanes) - 0.4, -0.6)
    ax.set_yticks(range(len(lanes)))
    ax.set_yticklabels(lanes, fontsize=8)
    ax.set_xticks([])
    ax.set_xlabel("time ->", loc="right", fontsize=8)
    for side in ("top", "right", "left"):
        ax.spines[side].set_visible(False)
    ax.set_title(title, loc="left")
    return ax


def save(fig, path):
    """Writes the PNG: trimmed to its content, reduced to a palette of 128
    colours (flat diagrams lose nothing, the file shrinks about threefold) and
    without metadata, so that the same drawing always gives the same bytes."""
    import io
    from PIL import Image
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, metadata={"Software": None}, facecolor="white",
                bbox_inches="tight", pad_inches=0.12)
    pyplot().close(fig)
    buf.seek(0)
    image = Image.open(buf).convert("RGB")
    image.quantize(colors=128, method=Image.Quantize.MEDIANCUT,
                   dither=Image.Dither.NONE).save(path, optimize=True)


def fmt(n):
    """1234567 -> '1,234,567'."""
    return f"{n:,}"
