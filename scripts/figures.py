#!/usr/bin/env python3
"""The concept figures of the lecture notes, drawn from the code's own constants.

    python3 scripts/figures.py            draws every figure into docs/figures/,
                                          writes docs/figures/figures.json and
                                          docs/figures/README.md
    python3 scripts/figures.py NAME ...   draws only those (e.g. 04_halo_tile)
    python3 scripts/figures.py --check    says which figures are stale (exit 1)
    python3 scripts/figures.py --list-inputs
                                          the files the check reads, one a line

Every size a figure shows (tile widths, threads per block, the tile of a GEMM
block, the problems of the notes) is read from the sources: `#define NAME
value` lines, the template arguments of step 04's launchers and the problem
table of the benchmark. Constants are found by name anywhere in the tree, not
in a fixed file, so moving code between files changes nothing.

Each figure is one function `fig_<step>_<name>()` below, registered with the
constants it uses. figures.json records, for each figure, those constants
with their values, a hash of the figure's drawing code (its function and every
helper it calls) and a hash of the PNG. `--check` reads the sources again and
reports, one line per figure, what changed since: a constant (named, with its
old and new value), the drawing code, a missing or edited PNG. It imports no
matplotlib, so it runs wherever Python does; drawing needs matplotlib
(`scripts/setup.sh --plots` installs it).
"""
import argparse
import ast
import hashlib
import json
import os
import re
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
FIG_DIR = os.path.join("docs", "figures")
MANIFEST = os.path.join(FIG_DIR, "figures.json")
README = os.path.join(FIG_DIR, "README.md")
SOURCE_EXT = (".c", ".h", ".cu", ".cuh")
WARP = 32  # threads per warp: a property of the hardware, not of this code
SECTOR = 32  # bytes per L1/L2 sector
BANKS = 32  # shared-memory banks of 4 bytes


# ---------------------------------------------------------------------------
# Reading the constants from the sources


def source_files(root):
    """Every C/CUDA file of the tree (build folders and hidden folders skipped)."""
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith((".", "build", "__")))
        for f in sorted(files):
            if f.endswith(SOURCE_EXT):
                found.append(os.path.relpath(os.path.join(folder, f), root))
    return found


def strip_comments(text):
    """C comments blanked out (line breaks kept, so lines stay lines)."""
    text = re.sub(r"/\*.*?\*/", lambda m: re.sub(r"[^\n]", " ", m.group(0)), text,
                  flags=re.DOTALL)
    return re.sub(r"//[^\n]*", "", text)


class Sources:
    """The tree's C/CUDA text, read once, and lookups in it."""

    def __init__(self, root):
        self.root = root
        self.files = {}
        for rel in source_files(root):
            with open(os.path.join(root, rel), errors="replace") as fh:
                self.files[rel] = strip_comments(fh.read())
        self.defines = {}  # name -> [(expression, file)]
        for rel, text in self.files.items():
            for m in re.finditer(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)[ \t]+([^\n]+)$",
                                 text, flags=re.MULTILINE):
                self.defines.setdefault(m.group(1), []).append((m.group(2).strip(), rel))
        self.used_files = set()

    def define(self, name, seen=()):
        """The integer value of `#define name ...` (expressions of other defines too)."""
        if name in seen:
            raise LookupError(f"{name} is defined in terms of itself")
        entries = self.defines.get(name)
        if not entries:
            raise LookupError(f"{name}: no '#define {name}' in any source file")
        values = {}
        for expr, rel in entries:
            values.setdefault(self.eval_int(expr, seen + (name,)), []).append(rel)
        if len(values) > 1:
            where = "; ".join(f"{v} in {', '.join(f)}" for v, f in values.items())
            raise LookupError(f"{name} has different values: {where}")
        value, files = next(iter(values.items()))
        self.used_files.update(files)
        return value

    def eval_int(self, expr, seen=()):
        """A C integer expression of literals, defines and + - * / % << >> ( )."""
        expr = re.sub(r"\b(\d+)[uUlL]*\b", r"\1", expr)
        expr = re.sub(r"\(\s*(?:long long|int|unsigned|size_t)\s*\)", "", expr)
        if not re.fullmatch(r"[\w\s()+\-*/%<>]*", expr):
            raise LookupError(f"cannot read '{expr}' as an integer")
        names = set(re.findall(r"\b[A-Za-z_]\w*\b", expr))
        for n in names:
            expr = re.sub(r"\b" + n + r"\b", f"({self.define(n, seen)})", expr)
        tree = ast.parse(expr.replace("/", "//").strip(), mode="eval")
        allowed = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Constant, ast.Add, ast.Sub,
                   ast.Mult, ast.FloorDiv, ast.Mod, ast.LShift, ast.RShift, ast.USub, ast.UAdd)
        if not all(isinstance(node, allowed) for node in ast.walk(tree)):
            raise LookupError(f"cannot read '{expr}' as an integer")
        return int(eval(compile(tree, "<define>", "eval")))

    def template_args(self, function):
        """The template arguments of every call `function<a, b, ...>(` in the tree."""
        pattern = re.compile(re.escape(function) + r"<([\d\s,]+)>\s*\(")
        calls = []
        for rel, text in self.files.items():
            found = [tuple(int(a) for a in m.group(1).split(",")) for m in pattern.finditer(text)]
            if found:
                calls += found
                self.used_files.add(rel)
        if not calls:
            raise LookupError(f"{function}<...>: no call with template arguments in any source")
        return [list(c) for c in calls]

    def problem(self, name):
        """A problem of the benchmark's table, an entry {"name", "description",
        shape(n, c, h, w, k, r, s, pad_h, pad_w), ...} (the shape wrapped in nhwc() for
        the NHWC problems), as a dict of those nine values and the layout."""
        pattern = re.compile(r'\{\s*"' + re.escape(name) + r'"\s*,\s*"[^"]*"\s*,\s*'
                             r"(nhwc\()?\s*shape\(([^)]*)\)")
        for rel, text in self.files.items():
            m = pattern.search(text)
            if m:
                self.used_files.add(rel)
                args = [self.eval_int(a) for a in m.group(2).split(",")]
                keys = ["n", "c", "h", "w", "k", "r", "s", "pad_h", "pad_w"]
                shape = dict(zip(keys, args))
                shape["layout"] = "nhwc" if m.group(1) else "nchw"
                return shape
        raise LookupError(f"problem '{name}': not in the benchmark's problem table")

    def value(self, key):
        """One constant by its key: NAME (a #define), launch_s1<> (the template
        arguments of its calls) or 'problem NAME' (a benchmark problem)."""
        if key.startswith("problem "):
            return self.problem(key[len("problem "):])
        if key.endswith("<>"):
            return self.template_args(key[:-2])
        return self.define(key)


def out_size(size, filt, pad, stride=1, dil=1):
    """Output extent along one axis (conv_out_h() of common/conv_params.c)."""
    return (size + 2 * pad - (dil * (filt - 1) + 1)) // stride + 1


# ---------------------------------------------------------------------------
# The registry: every figure, the constants it uses

FIGURES = []


def figure(name, note, section, uses):
    """Registers fig_<name>(): it draws docs/figures/<name>.png from the
    constants `uses` (keys for Sources.value) and returns the matplotlib figure.
    note and section say where the figure belongs (docs/<note>, that section);
    the first line of the function's docstring says what it shows. All three go
    into docs/figures/README.md."""
    def register(function):
        FIGURES.append({"name": name, "function": function, "uses": list(uses), "note": note,
                        "section": section})
        return function
    return register


class Constants(dict):
    """The constants a figure declared; asking for another one is an error, so
    the manifest always lists everything a figure was drawn from."""

    def __missing__(self, key):
        raise KeyError(f"constant {key!r} is not in this figure's `uses` list")


# ---------------------------------------------------------------------------
# Drawing helpers (matplotlib is imported here, on first use, never by --check)

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
_PLT = []


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
    box(ax, x, y, w, h, "none", ec=color, lw=lw, z=z, ls=ls)


def grid_lines(ax, x, y, cols, rows, color=COLORS["grid"], lw=0.3, z=3, step=1.0):
    """Thin lines between the cells of a cols x rows grid of unit cells."""
    for i in range(cols + 1):
        ax.plot([x + i * step, x + i * step], [y, y + rows * step], color=color, lw=lw, zorder=z)
    for j in range(rows + 1):
        ax.plot([x, x + cols * step], [y + j * step, y + j * step], color=color, lw=lw, zorder=z)


def arrow(ax, start, end, color="#333333", lw=1.2, style="-|>", rad=0.0, z=8, ms=10):
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
    fig.text(x, y, text, fontsize=fs, color=COLORS["text"], **kw)


def swatch(fig, x, y, color):
    """A small legend square with its top-left corner at (x, y), figure coordinates."""
    from matplotlib.patches import Rectangle
    fig.patches.append(Rectangle((x, y - 0.022), 0.018, 0.022, transform=fig.transFigure,
                                 facecolor=color, edgecolor="#444444", lw=0.6))


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


# ---------------------------------------------------------------------------
# Step 01: the convolution on the CPU


def stack_of_planes(ax, x, y, rows, cols, count, dx, dy, fc, window=None, wfc=None,
                    label=None, z0=10):
    """count planes of rows x cols unit cells, plane i drawn i*(dx, -dy) behind
    plane 0 (the front one, bottom-left). window = (row, col, height, width) is
    filled on the front plane and outlined (dashed) on the planes behind it,
    as if seen through them."""
    for i in reversed(range(count)):
        px, py, z = x + i * dx, y - i * dy, z0 + 3 * (count - i)
        box(ax, px, py, cols, rows, fc, ec="#555555", lw=0.8, z=z)
        grid_lines(ax, px, py, cols, rows, lw=0.25, z=z + 0.1)
        if window:
            wr, wc, wh, ww = window
            if i == 0:
                box(ax, px + wc, py + wr, ww, wh, wfc, ec=COLORS["highlight"], lw=1.4, z=z + 0.2)
            else:
                outline(ax, px + wc, py + wr, ww, wh, COLORS["highlight"], lw=0.9, ls="--",
                        z=z0 + 3 * count + 2)
        if label:
            ax.text(px + cols + 0.2, py + 0.5, label(i), fontsize=7, va="center", ha="left",
                    color="#555555", zorder=z + 0.3)


@figure("01_sliding_window", note="01_cpu_serial.md",
        section="What is computed",
        uses=["problem lecture"])
def fig_01_sliding_window(k):
    """One output is the sum, over the C channels, of an R x S window times one filter."""
    pr = k["problem lecture"]
    C, R, S, K = pr["c"], pr["r"], pr["s"], pr["k"]
    P, Q = out_size(pr["h"], R, pr["pad_h"]), out_size(pr["w"], S, pr["pad_w"])
    rows, cols = R + 4, S + 6  # the corner of the image that is drawn
    p, q = 2, 3  # the output drawn
    fig = new_figure(11, 5.0, f"Step 01: one output y[n][k][p][q] is a sum over C = {C} "
                     f"channels of an R x S = {R} x {S} window (the lecture problem)")
    dx, dy = 0.9, 0.75
    ax = canvas(fig, (0.01, 0.24, 0.98, 0.68), (-0.5, 57), (0.5, 19.3))
    top = 6  # the front planes' top edge
    # the input: C planes of H x W, a corner drawn
    stack_of_planes(ax, 0, top, rows, cols, C, dx, dy, COLORS["input"], (p, q, R, S),
                    COLORS["input_dark"] + "55", label=lambda i: f"c = {i}")
    ax.text(q + S / 2, top + p + R + 0.9, f"window of (p, q) = ({p}, {q})", ha="center",
            va="center", fontsize=7.5, color=COLORS["highlight"], zorder=40)
    ax.text(0, top + rows + 0.7, f"input x[n]: C = {C} planes of H x W = {pr['h']} x "
            f"{pr['w']}\n(the top-left {rows} x {cols} corner of each)", ha="left", va="top",
            fontsize=9)
    # the filter k: C planes of R x S
    fx = cols + 10
    stack_of_planes(ax, fx, top + p, R, S, C, dx, dy, COLORS["weight"],
                    label=lambda i: f"c = {i}")
    ax.text(fx + S / 2, top + rows + 0.7, f"filter w[k]: C = {C} planes\nof R x S = {R} x {S}",
            ha="center", va="top", fontsize=9)
    ax.text(fx - 3.8, top + p + R / 2, "x", fontsize=20, ha="center", va="center")
    # the output plane k
    ox = fx + S + 12
    box(ax, ox, top, cols, rows, COLORS["output"], ec="#555555", lw=0.8)
    grid_lines(ax, ox, top, cols, rows, lw=0.25)
    box(ax, ox + q, top + p, 1, 1, COLORS["output_dark"], ec=COLORS["highlight"], lw=1.5, z=5)
    ax.text(ox - 3.2, top + p + R / 2, "=", fontsize=20, ha="center", va="center")
    ax.text(ox + cols / 2, top + rows + 0.7, f"output plane y[n][k]: P x Q = {P} x {Q}\n"
            f"(K = {K} filters give K such planes)", ha="center", va="top", fontsize=9)
    ax.text(ox + q + 0.5, top + p - 0.4, f"y[n][k][{p}][{q}]", fontsize=8, ha="center",
            va="bottom", color=COLORS["highlight"], zorder=9)
    note(fig, 0.02, 0.205,
         "y[n][k][p][q] = sum over c < C, r < R, s < S of  x[n][c][p*stride_h - pad_h + r*dil_h]"
         "[q*stride_w - pad_w + s*dil_w] * w[k][c][r][s]", fs=9.5)
    note(fig, 0.02, 0.14,
         f"Here stride 1, no padding, no dilation: the window of (p, q) starts at input (p, q). "
         f"Each output costs C*R*S = {C * R * S} multiply-adds.\nThe window moves by one column "
         f"for q + 1 and by one row for p + 1: neighbouring outputs share most of their inputs, "
         f"and every input\nis read by up to K*R*S = {K * R * S} outputs (R*S windows of each of "
         f"the K filters).", fs=9)
    return fig


CHANNEL_COLORS = ["#9ecae1", "#fdae6b", "#a1d99b", "#cbc9e2", "#fcbba1", "#fdd0a2", "#c7e9c0",
                  "#dadaeb", "#9e9ac8", "#fee391"]


@figure("01_layouts", note="01_cpu_serial.md",
        section="Layouts: where an element lives; The five loops, and why this order",
        uses=["problem lecture"])
def fig_01_layouts(k):
    """The loop nest of conv2d_cpu_serial(), and where x's elements live in NCHW and NHWC."""
    pr = k["problem lecture"]
    C = pr["c"]
    H, W = 2, 3  # a toy image with the lecture's channel count
    fig = new_figure(11.5, 5.6, "Step 01: the loop nest, and one image in NCHW and NHWC "
                     "memory order")
    loops = ("for n < N                 batch\n"
             "  for oc < K               output channel: one filter\n"
             "    for oh < P             output row\n"
             "      for ow < Q           output column   (conv_row)\n"
             "        acc = 0\n"
             "        for ic < C         input channel\n"
             "          for kh < R       filter row\n"
             "            for kw < S     filter column\n"
             "              acc += x[n][ic][oh*sh - ph + kh*dh][ow*sw - pw + kw*dw]\n"
             "                     * w[oc][ic][kh][kw]\n"
             "        y[n][oc][oh][ow] = acc")
    fig.text(0.015, 0.91, loops, family="DejaVu Sans Mono", fontsize=8, va="top", ha="left",
             bbox=dict(boxstyle="round,pad=0.5", fc="#f7f7f7", ec="#bbbbbb"))
    # the toy image, one plane per channel
    ax = canvas(fig, (0.55, 0.60, 0.44, 0.31), (-0.5, C * (W + 1)), (-2.6, H + 0.2))
    ax.text(-0.4, -2.5, f"x[0][c][h][w], C = {C} channels as in the lecture problem, a toy "
            f"{H} x {W} image;\neach cell shows h,w, its colour is the channel c",
            fontsize=8.5, va="top")
    for c in range(C):
        for h in range(H):
            for w in range(W):
                box(ax, c * (W + 1) + w, h, 1, 1, CHANNEL_COLORS[c % len(CHANNEL_COLORS)],
                    text=f"{h},{w}", fs=7.5)
        ax.text(c * (W + 1) + W / 2, -0.15, f"c = {c}", ha="center", va="bottom", fontsize=8)
    # the two memory orders
    n = C * H * W
    ax2 = canvas(fig, (0.015, 0.13, 0.97, 0.44), (-4.5, n + 14.5), (-2.4, 11.4))
    orders = [("NCHW", 0, "offset = ((n*C + c)*H + h)*W + w",
               [(c, h, w) for c in range(C) for h in range(H) for w in range(W)]),
              ("NHWC", 6.3, "offset = ((n*H + h)*W + w)*C + c",
               [(c, h, w) for h in range(H) for w in range(W) for c in range(C)])]
    for name, y, formula, order in orders:
        ax2.text(-4.3, y + 0.5, name, fontsize=11, fontweight="bold", va="center")
        for off, (c, h, w) in enumerate(order):
            box(ax2, off, y, 1, 1, CHANNEL_COLORS[c % len(CHANNEL_COLORS)],
                text=f"{h},{w}", fs=6.5)
            if off % 6 == 0:
                ax2.text(off + 0.5, y + 1.1, str(off), ha="center", va="top", fontsize=6.5,
                         color="#666666")
        # what the innermost loops walk for output (0, 0): taps kw = 0 and 1 of
        # filter row kh = 0, then the same tap one input channel later
        kw0, kw1, ic1 = order.index((0, 0, 0)), order.index((0, 0, 1)), order.index((1, 0, 0))
        for off in (kw0, kw1):
            outline(ax2, off, y, 1, 1, COLORS["highlight"], lw=2)
        outline(ax2, ic1, y, 1, 1, COLORS["input_dark"], lw=2)
        arrow(ax2, (kw0 + 0.5, y - 0.1), (kw1 + 0.5, y - 0.1), color=COLORS["highlight"],
              rad=-0.5, ms=8)
        arrow(ax2, (kw0 + 0.5, y + 1.7), (ic1 + 0.5, y + 1.7), color=COLORS["input_dark"],
              rad=0.25, ms=8)
        step_kw, step_ic = kw1 - kw0, ic1 - kw0
        ax2.text(n + 0.7, y + 0.5,
                 f"{formula}\n"
                 f"kw -> kw + 1:  +{step_kw} float{'s' if step_kw > 1 else ''}"
                 f"{'  (= C)' if name == 'NHWC' else ''}\n"
                 f"ic -> ic + 1:  +{step_ic} float{'s' if step_ic > 1 else ''}"
                 f"{'  (= H*W)' if name == 'NCHW' else ''}", fontsize=8.5, va="center")
    note(fig, 0.015, 0.11,
         "Red: taps kw = 0 and 1 of filter row kh = 0 for output (0, 0); blue: the same tap one "
         "input channel later. NCHW (steps 01 to 05) keeps a channel's plane contiguous,\nso the "
         "innermost loop (kw) walks along a row; NHWC (step 06, the HPC101 lab's layout) keeps "
         "the C channels of a pixel contiguous, the order (r, s, c) that step 06's GEMM reads.",
         fs=8.5)
    return fig


# ---------------------------------------------------------------------------
# Step 02: the naive GPU convolution


def decompose_nchw(i, K, P, Q):
    """conv2d_naive_kernel's NCHW decomposition of the flat output index i."""
    q, t = i % Q, i // Q
    p, t = t % P, t // P
    return t // K, t % K, p, q


@figure("02_thread_mapping", note="02_naive_gpu.md",
        section="The thread-to-output mapping",
        uses=["CONV2D_NAIVE_THREADS", "CONV2D_NAIVE_MAX_BLOCKS", "CONV2D_NAIVE_2D_BLOCK",
              "problem lecture"])
def fig_02_thread_mapping(k):
    """Which thread computes which output, in both kernels of step 02."""
    pr = k["problem lecture"]
    T, cap, B = k["CONV2D_NAIVE_THREADS"], k["CONV2D_NAIVE_MAX_BLOCKS"], k["CONV2D_NAIVE_2D_BLOCK"]
    N, K = pr["n"], pr["k"]
    P, Q = out_size(pr["h"], pr["r"], pr["pad_h"]), out_size(pr["w"], pr["s"], pr["pad_w"])
    total = N * K * P * Q
    blocks = min((total + T - 1) // T, cap)
    fig = new_figure(11.5, 6.2, "Step 02: which thread computes which output (the lecture "
                     f"problem, N*K*P*Q = {fmt(total)} outputs)")
    # (a) the grid-stride loop
    ax = canvas(fig, (0.01, 0.05, 0.52, 0.85), (-0.5, 24.5), (-0.8, 24),
                title="(a) conv2d_naive_kernel: one flat index i, a grid-stride loop")
    ax.text(0, 0.2, "all outputs in memory order, i = ((n*K + k)*P + p)*Q + q, "
            "0 <= i < N*K*P*Q:", fontsize=8.5, va="top")
    for kk in range(K):
        x0 = 24.0 * kk / K
        box(ax, x0, 1.3, 24.0 / K, 1.1, COLORS["output"], text=f"(n, k) = (0, {kk})", fs=7.5)
    ax.text(12, 2.6, f"K = {K} planes of P*Q = {P} x {Q} = {fmt(P * Q)} outputs", ha="center",
            va="top", fontsize=8)
    # a small grid, as in the tests: every thread loops
    g_blocks, passes = 3, 4
    G = g_blocks * T
    seg = 24.0 / (g_blocks * passes)
    y = 6.8
    ax.text(0, y - 2.6, f"With a grid of {g_blocks} blocks (the tests use 1 and 3), "
            f"G = {g_blocks} x {T} = {G} threads:\nthread g computes i = g, g + G, g + 2G, ... "
            f"until i >= N*K*P*Q", fontsize=8.5, va="top")
    ax.plot([0, 0], [2.4, y], color="#999999", lw=0.6, ls=":")
    ax.plot([24.0 / K * 0.02, 24], [2.4, y], color="#999999", lw=0.6, ls=":")
    for j in range(passes):
        for b in range(g_blocks):
            x0 = (j * g_blocks + b) * seg
            box(ax, x0, y, seg, 1.1, lane_color(b, 3, 0.8), text=f"block {b}", fs=7)
        ax.text((j * g_blocks + 1.5) * seg, y + 1.25, f"pass {j}\ni = {fmt(j * G)} .. "
                f"{fmt(j * G + G - 1)}", ha="center", va="top", fontsize=7.5)
        ax.plot([j * g_blocks * seg + seg * 5 / T] * 2, [y - 0.1, y + 1.2],
                color=COLORS["highlight"], lw=2)
        ax.text(j * g_blocks * seg + seg * 5 / T, y - 0.15, f"{j * G + 5}", fontsize=7,
                ha="left", va="bottom", color=COLORS["highlight"])
    ax.text(24, y + 3.0, "red: the outputs of thread g = 5", ha="right", va="top", fontsize=8,
            color=COLORS["highlight"])
    n0, k0, p0, q0 = decompose_nchw(1000000, K, P, Q)
    lines = (f"The launch: ceil({fmt(total)} / {T}) = {fmt((total + T - 1) // T)} blocks of "
             f"{T} threads, capped at {fmt(cap)}\n(CONV2D_NAIVE_MAX_BLOCKS): here {fmt(blocks)} "
             f"blocks, so every thread computes "
             f"{'one output' if blocks * T >= total else 'several outputs'}.\n\n"
             f"Each thread turns i back into (n, k, p, q) with divisions:\n"
             f"    q = i % Q;  t = i / Q;  p = t % P;  t = t / P;  k = t % K;  n = t / K\n"
             f"e.g. i = 1,000,000:  q = 1,000,000 % {Q} = {q0},  t = {1000000 // Q},\n"
             f"    p = {1000000 // Q} % {P} = {p0},  k = {1000000 // Q} / {P} = {k0},  n = {n0}\n\n"
             f"Consecutive threads own consecutive i: the same (n, k), consecutive q\n"
             f"(except where a row of Q outputs ends), so a warp's stores are contiguous.")
    ax.text(0, 11.0, lines, fontsize=8.5, va="top", linespacing=1.35)
    # (b) the 2D block over the output plane
    gx, gy = (Q + B - 1) // B, (P + B - 1) // B
    s = min(1.45, (gy - 3) / B)  # size of a thread cell in the enlarged block
    x0, y0 = gx + 3, 3
    ax2 = canvas(fig, (0.545, 0.05, 0.45, 0.85), (-0.5, x0 + B * s + 0.5), (-3.2, gy + 8.5),
                 title=f"(b) conv2d_naive_2d_kernel: {B} x {B} threads per block")
    ax2.text(0, -0.4, f"one output plane (n, k): P x Q = {P} x {Q},\n"
             f"{gx} x {gy} blocks (one cell each)", fontsize=8, va="bottom")
    for by in range(gy):
        for bx in range(gx):
            full_x, full_y = bx < gx - 1 or Q % B == 0, by < gy - 1 or P % B == 0
            fc = COLORS["output"] if full_x and full_y else "#d9f0d3"
            box(ax2, bx, by, 1, 1, fc, ec="#ffffff", lw=0.3, z=2)
    outline(ax2, 0, 0, gx, gy, "#555555", lw=0.8, z=3)
    zx, zy = 2, 1  # the block shown enlarged
    outline(ax2, zx, zy, 1, 1, COLORS["highlight"], lw=1.5)
    ax2.text(0, gy + 0.6, f"blockIdx = (x, y, z) with x < {gx}, y < {gy}, z = n*K + k < {N * K}."
             f"\nPale: the last column of blocks has {Q - (gx - 1) * B} of its {B} columns "
             f"inside Q, the last row\n{P - (gy - 1) * B} of {B} rows inside P; threads past "
             f"the edge exit (q >= Q) or skip the p loop.", fontsize=8, va="top")
    # the enlarged block: its threads coloured by warp
    for ty in range(B):
        for tx in range(B):
            warp = (ty * B + tx) // WARP
            box(ax2, x0 + tx * s, y0 + ty * s, s, s, lane_color(warp, 8, 0.8), ec="#ffffff",
                lw=0.3)
    outline(ax2, x0, y0, B * s, B * s, COLORS["highlight"], lw=1.5)
    n_warps = B * B // WARP
    for warp in range(0, n_warps, max(1, n_warps // 8)):
        ty0 = warp * WARP // B
        ax2.text(x0 + B * s - 0.3, y0 + (ty0 + WARP / B / 2) * s, f"warp {warp}", fontsize=7,
                 va="center", ha="right", zorder=9)
    ax2.plot([zx + 1, x0], [zy, y0], color=COLORS["highlight"], lw=0.6, ls=":")
    ax2.plot([zx + 1, x0], [zy + 1, y0 + B * s], color=COLORS["highlight"], lw=0.6, ls=":")
    tx, ty = 5, 3
    box(ax2, x0 + tx * s, y0 + ty * s, s, s, COLORS["output_dark"], ec="black", lw=0.8, z=5)
    ax2.text(x0, y0 - 0.4, f"block (x, y) = ({zx}, {zy}), enlarged", va="bottom", fontsize=8)
    ax2.text(x0, y0 + B * s + 0.6,
             f"thread (tx, ty) computes\n  q = {B}*blockIdx.x + tx\n  p = {B}*blockIdx.y + ty\n"
             f"dark: (tx, ty) = ({tx}, {ty}) -> q = {B * zx + tx}, p = {B * zy + ty}\n"
             f"a warp is {WARP // B} row{'s' if WARP // B > 1 else ''} of {B} threads",
             fontsize=8, va="top")
    return fig


def memory_row(ax, y, first, count, reads, label, sector_floats=SECTOR // 4):
    """One input row drawn as floats first .. first+count-1 (columns of x), the
    32-byte sectors marked; reads = {column: lane}. Sectors that a read touches
    are shaded; returns (sectors touched, floats read)."""
    touched = {c // sector_floats for c in reads}
    for sec in range(first // sector_floats, (first + count - 1) // sector_floats + 1):
        x0 = max(sec * sector_floats, first) - first
        x1 = min((sec + 1) * sector_floats, first + count) - first
        if sec in touched:
            box(ax, x0, y - 0.25, x1 - x0, 1.5, COLORS["shared"], ec="none", z=1)
    for c in range(first, first + count):
        lane = reads.get(c)
        box(ax, c - first, y, 1, 1, lane_color(lane) if lane is not None else "#ffffff",
            ec="#bbbbbb", lw=0.4, text=str(lane) if lane is not None else None, fs=5.5)
        if c % sector_floats == 0:
            ax.plot([c - first, c - first], [y - 0.35, y + 1.35], color="#333333", lw=1.2,
                    zorder=4)
            ax.text(c - first + 0.1, y + 1.3, str(c), fontsize=6, va="top", color="#555555")
    ax.text(-1.0, y + 0.5, label, ha="right", va="center", fontsize=8.5)
    return len(touched), len(reads)


@figure("02_warp_addresses", note="02_naive_gpu.md",
        section="Coalescing",
        uses=["CONV2D_NAIVE_2D_BLOCK", "problem lecture"])
def fig_02_warp_addresses(k):
    """The x elements 32 consecutive threads read for one filter tap, in NCHW."""
    pr = k["problem lecture"]
    B = k["CONV2D_NAIVE_2D_BLOCK"]
    Q = out_size(pr["w"], pr["s"], pr["pad_w"])
    W = pr["w"]
    span = 66  # input columns drawn
    fig = new_figure(11.5, 4.3, "Step 02: the x elements one warp reads for one filter tap "
                     "(c, r, s), NCHW (lecture problem, W = %d)" % W)
    ax = canvas(fig, (0.15, 0.2, 0.84, 0.69), (-0.5, span + 0.5), (-0.6, 18.4))
    cases = []
    # grid-stride kernel, warp 0 of block 0: i = 0..31 -> p = 0, q = 0..31
    for tap in (0, 3):
        reads = {q + tap: q for q in range(WARP)}
        cases.append((f"(a) grid-stride, stride 1,\ntap s = {tap}", [reads],
                      f"lane l (q = l) reads column q + s = l + {tap} of row r"))
    # the 16 x 16 block: a warp is two half-rows (ty, ty + 1) of 16 threads
    rows2 = [{tx: ty * B + tx for tx in range(B)} for ty in range(WARP // B)]
    cases.append((f"(b) {B} x {B} block, stride 1,\ntap s = 0", rows2,
                  f"lanes 0..{B - 1} (ty = 0) read row r, lanes {B}..{WARP - 1} (ty = 1) "
                  f"row r + 1, {W} floats further on"))
    # stride 2
    cases.append(("(c) grid-stride, stride 2,\ntap s = 0", [{2 * q: q for q in range(WARP)}],
                  "lane l reads column 2*q + s = 2*l of row 2*p + r = r"))
    y = 0
    for label, rows, text in cases:
        sectors, floats = 0, 0
        for j, reads in enumerate(rows):
            t, f = memory_row(ax, y, 0, span, reads, label if j == 0 else "")
            sectors, floats = sectors + t, floats + f
            y += 2.1
        used = floats * 4 / (sectors * SECTOR)
        ax.text(0, y - 0.1, f"{text}:  {floats * 4} bytes in {sectors} sectors, "
                f"{sectors * SECTOR} bytes moved, {used:.0%} used", fontsize=8, va="top")
        y += 2.1
    note(fig, 0.01, 0.165,
         "Warp 0 of block 0 in both kernels: outputs p = 0, q = 0..31 (the 2D block: p = 0, 1, "
         "q = 0..15). Numbers are lanes; thick lines every 8 floats are 32-byte sector "
         "boundaries,\nshaded: the sectors the warp touches. "
         f"Every lane reads the same weight w[k][c][r][s]: one address, broadcast. A "
         f"grid-stride warp whose outputs\ncross the end of an output row (i = 480..511: "
         f"q = 480..{Q - 1} of row p, then q = 0..{511 - Q} of row p + 1) reads two pieces of "
         f"two rows.", fs=8.5)
    return fig


# ---------------------------------------------------------------------------
# Step 03: tiled 1D convolution


def piecewise_axis(halo, core, edge, cell=1.1, middle=22.0):
    """x position of input-tile index j (0 .. 2*halo + core). The halo cells and
    the first and last `edge` cells of the core are drawn one by one (`cell`
    wide each); the rest of the core is squeezed into `middle`, so that a
    1024-float core and a 3-float halo both stay readable."""
    a, b = halo + edge, halo + core - edge  # the squeezed part: a <= j <= b

    def x_of(j):
        if j <= a:
            return j * cell
        if j <= b:
            return a * cell + (j - a) * middle / (b - a)
        return a * cell + middle + (j - b) * cell
    return x_of


def span_bar(ax, x_of, j0, j1, y, fc, text=None, h=0.8, fs=7, ec="#444444", hatch=None, z=2):
    """A bar over input-tile indices j0 .. j1 - 1."""
    box(ax, x_of(j0), y, x_of(j1) - x_of(j0), h, fc, ec=ec, lw=0.6, text=text, fs=fs,
        hatch=hatch, z=z)


def cells_bar(ax, x_of, j0, j1, y, fc, edge_cells, text=None, fs=7, hatch=None):
    """Indices j0 .. j1 - 1 as cells where the axis is not squeezed, one bar where it is."""
    span_bar(ax, x_of, j0, j1, y, fc, hatch=hatch)
    for j in range(j0, j1):
        if j in edge_cells:
            box(ax, x_of(j), y, x_of(j + 1) - x_of(j), 0.8, "none", ec="#777777", lw=0.4, z=3)
    if text:
        squeezed = [j for j in range(j0, j1 + 1) if j not in edge_cells]
        a, b = (min(squeezed), max(squeezed)) if len(squeezed) > 1 else (j0, j1)
        ax.text((x_of(a) + x_of(b)) / 2, y + 0.4, text, ha="center", va="center", fontsize=fs,
                zorder=5)


def tile_row_labels(ax, rows):
    for label, y in rows:
        ax.text(-0.6, y + 0.4, label, ha="right", va="center", fontsize=7.5)


@figure("03_halo_strategies", note="03_tiled_1d.md",
        section="Output tiles and input tiles (strategies 1 to 3)",
        uses=["CONV1D_THREADS", "CONV1D_TILE", "CONV1D_PER_THREAD", "CONV1D_S2_TILE",
              "problem conv1d"])
def fig_03_halo_strategies(k):
    """The three ways of ECE408 lecture 8 to load a 1D tile and its halo."""
    T, TILE, PER = k["CONV1D_THREADS"], k["CONV1D_TILE"], k["CONV1D_PER_THREAD"]
    T2 = k["CONV1D_S2_TILE"]
    M = k["problem conv1d"]["s"]
    half = (M - 1) // 2
    fig = new_figure(11.5, 7.6, f"Step 03: three ways to load a 1D tile and its halo (mask "
                     f"M = {M}: (M - 1)/2 = {half} halo cells each side)")
    round_fc = [lane_color(r, 8, 0.82) for r in range(8)]
    n_in = TILE + M - 1
    x1 = piecewise_axis(half, TILE, M)
    edge1 = set(range(0, half + M)) | set(range(n_in - half - M, n_in))
    xr = x1(n_in)
    left, width = 0.25, 0.74
    # strategy 1
    fig.text(0.01, 0.935, f"Strategy 1, conv1d_tiled_s1_kernel: the block ({T} threads) "
             f"covers the output tile (CONV1D_TILE = {TILE});\nthe input tile of {TILE} + "
             f"{M - 1} = {n_in} floats is loaded in steps", fontsize=9.5, fontweight="bold",
             va="top")
    ax, bottom = canvas_below(fig, 0.875, left, width, (-0.3, xr + 0.3), (-0.9, 8.4))
    cells_bar(ax, x1, 0, half, 0, COLORS["halo"], edge1)
    cells_bar(ax, x1, half, half + TILE, 0, COLORS["input"], edge1, text=f"core ({TILE})")
    cells_bar(ax, x1, half + TILE, n_in, 0, COLORS["halo"], edge1)
    outline(ax, x1(0), 0, x1(M) - x1(0), 0.8, COLORS["highlight"], lw=1.6)
    ax.text(x1(0), -0.1, f"window of output 0: j = 0..{M - 1}", fontsize=7, va="bottom",
            color=COLORS["highlight"])
    rows = [(f"input tile in shared memory:\ntile_s1[j] = x[out0 - {half} + j]", 0)]
    y = 1.2
    for r in range(PER):
        cells_bar(ax, x1, r * T, (r + 1) * T, y, round_fc[r], edge1,
                  text=f"j = {r * T}..{(r + 1) * T - 1}")
        rows.append((f"step 1, round {r}: threads 0..{T - 1}", y))
        y += 1.0
    cells_bar(ax, x1, PER * T, n_in, y, COLORS["register"], edge1)
    ax.text(x1(PER * T) - 0.3, y + 0.4, f"j = {PER * T}..{n_in - 1}", ha="right", va="center",
            fontsize=7)
    rows.append((f"step 2: threads 0..{M - 2} (M - 1 of them)", y))
    y += 1.4
    cells_bar(ax, x1, half, half + TILE, y, COLORS["output"], edge1,
              text=f"outputs o = 0..{TILE - 1}: thread t computes o = t + {T} r, r < {PER}")
    for r in range(PER):
        xm = x1(half + r * T + 0.5)
        ax.plot([xm], [y - 0.12], marker="v", color=COLORS["highlight"], ms=6, zorder=6)
    rows.append(("compute, after __syncthreads()", y))
    tile_row_labels(ax, rows)
    for j in sorted({0, T, 2 * T, 3 * T, PER * T, n_in}):
        ax.text(x1(j), y + 0.95, str(j), ha="center", va="top", fontsize=6.5, color="#555555")
    ax.text(0, y + 1.6, "red triangles: the outputs of thread 0;  small numbers: tile index j",
            fontsize=7, va="top", color=COLORS["highlight"])
    # strategy 2
    n2 = T2 + M - 1
    x2 = piecewise_axis(half, T2, M)
    edge2 = set(range(0, half + M)) | set(range(n2 - half - M, n2))
    fig.text(0.01, bottom - 0.05, f"Strategy 2, conv1d_tiled_s2_kernel: the block covers the "
             f"input tile, CONV1D_S2_TILE + M - 1 = {T2} + {M - 1} = {n2} threads, one load "
             f"each", fontsize=9.5, fontweight="bold", va="top")
    ax, bottom = canvas_below(fig, bottom - 0.085, left, width, (-0.3, xr + 0.3), (-0.3, 4.9))
    cells_bar(ax, x2, 0, half, 0, COLORS["halo"], edge2)
    cells_bar(ax, x2, half, half + T2, 0, COLORS["input"], edge2, text=f"core ({T2})")
    cells_bar(ax, x2, half + T2, n2, 0, COLORS["halo"], edge2)
    warps = (n2 + WARP - 1) // WARP
    for w in range(warps):
        j0, j1 = w * WARP, min((w + 1) * WARP, n2)
        cells_bar(ax, x2, j0, j1, 1.35, lane_color(w, 12, 0.82), edge2,
                  text=f"warp {w}" if j1 - j0 == WARP else "", fs=6.5)
    cells_bar(ax, x2, 0, T2, 2.7, COLORS["output"], edge2,
              text=f"threads 0..{T2 - 1}: output o = t from tile[t .. t + {M - 1}]")
    cells_bar(ax, x2, T2, n2, 2.7, COLORS["idle"], edge2)
    ax.text(x2(T2) - 0.3, 3.65, f"threads {T2}..{n2 - 1}: idle (grey)", ha="right", va="top",
            fontsize=7)
    tile_row_labels(ax, [(f"input tile in shared memory:\ntile_s2[t] = x[out0 - {half} + t]", 0),
                         (f"load: thread t -> tile[t]; {warps} warps,\nthe last with "
                          f"{n2 - (warps - 1) * WARP} threads", 1.35),
                         ("compute, after __syncthreads()", 2.7)])
    for j in (0, n2):
        ax.text(x2(j), 3.65, str(j), ha="center", va="top", fontsize=6.5, color="#555555")
    # strategy 3
    fig.text(0.01, bottom - 0.015, f"Strategy 3, conv1d_tiled_s3_kernel: the block ({T} "
             f"threads) covers the output tile; only the {TILE}-float core goes to shared "
             f"memory,\ntaps in the halo read x through the caches", fontsize=9.5,
             fontweight="bold", va="top")
    ax, bottom = canvas_below(fig, bottom - 0.08, left, width, (-0.3, xr + 0.3), (-0.9, 4.4))
    cells_bar(ax, x1, 0, half, 0, "white", edge1, hatch="////")
    cells_bar(ax, x1, half, half + TILE, 0, COLORS["input"], edge1, text=f"core ({TILE})")
    cells_bar(ax, x1, half + TILE, n_in, 0, "white", edge1, hatch="////")
    ax.text(x1(0), -0.1, "halo: not loaded", fontsize=7, va="bottom", color="#555555")
    for r in range(PER):
        cells_bar(ax, x1, half + r * T, half + (r + 1) * T, 1.2, round_fc[r], edge1,
                  text=f"round {r}")
    cells_bar(ax, x1, half, half + TILE, 2.4, COLORS["output"], edge1,
              text="taps inside the core: shared memory")
    for o in list(range(half)) + list(range(TILE - half, TILE)):
        box(ax, x1(half + o), 2.4, x1(half + o + 1) - x1(half + o), 0.8, COLORS["register"],
            ec="#777777", lw=0.4, z=4)
    ax.text(0, 3.35, f"red: outputs 0..{half - 1} and {TILE - half}..{TILE - 1} have taps in "
            f"the halo: {half * (half + 1)} global loads per tile, in the first and last warps, "
            f"which diverge on the per-tap test", fontsize=7, va="top",
            color=COLORS["register_dark"])
    tile_row_labels(ax, [("shared memory: tile_s3[t] = x[out0 + t]\n(hatched: the halo)", 0),
                         (f"load: thread t -> t + {T} r, r < {PER}", 1.2),
                         ("compute, after __syncthreads()", 2.4)])
    note(fig, 0.01, bottom - 0.01, f"Each halo cell and the first and last {M} cells of a core "
         f"are drawn one float wide; the middle of the core is squeezed to fit. Every number is "
         f"an index of the real tile.", fs=8)
    return fig


@figure("03_loads_per_output", note="03_tiled_1d.md",
        section="How much reuse is there?",
        uses=["CONV1D_TILE", "CONV1D_PER_THREAD", "CONV1D_S2_TILE", "problem conv1d"])
def fig_03_loads_per_output(k):
    """Reuse inside a tile, and where each kernel's M taps per output come from."""
    TILE, PER, T2 = k["CONV1D_TILE"], k["CONV1D_PER_THREAD"], k["CONV1D_S2_TILE"]
    M = k["problem conv1d"]["s"]
    half = (M - 1) // 2
    fig = new_figure(11.5, 4.6, f"Step 03: reuse inside a tile, and where the M = {M} taps of "
                     f"an output come from in each kernel")
    # (a) the note's small example: T = 4 outputs y[4..7], M = 5
    t_ex, m_ex, o0 = 4, 5, 4
    i0 = o0 - (m_ex - 1) // 2
    n_ex = t_ex + m_ex - 1
    ax = canvas(fig, (0.01, 0.1, 0.3, 0.72), (-2.6, n_ex + 0.3), (-1.6, t_ex + 3.2),
                title=f"(a) the note's example: T = {t_ex} outputs, M = {m_ex}")
    for col in range(n_ex):
        ax.text(col + 0.5, -0.15, f"x[{i0 + col}]", ha="center", va="bottom", fontsize=7)
        uses = 0
        for row in range(t_ex):
            used = row <= col < row + m_ex
            uses += used
            box(ax, col, row, 1, 1, COLORS["input"] if used else "white", ec="#aaaaaa", lw=0.5)
        box(ax, col, t_ex + 0.3, 1, 1, COLORS["shared"], ec="#aaaaaa", lw=0.5, text=str(uses),
            fs=8)
    for row in range(t_ex):
        ax.text(-0.2, row + 0.5, f"y[{o0 + row}]", ha="right", va="center", fontsize=7.5)
    ax.text(-0.2, t_ex + 0.8, "uses", ha="right", va="center", fontsize=7.5)
    ax.text(-2.5, t_ex + 1.7, f"{t_ex * m_ex} uses (T*M loads in the naive kernel) of "
            f"T + M - 1 = {n_ex}\ndistinct inputs, each loaded once by a tiled kernel",
            fontsize=8, va="top")
    # (b) load instructions per output, from the kernels' code
    kernels = [
        ("naive", [M, 0, M]),
        (f"naive x4 ({PER} outputs/thread)", [M, 0, M / PER]),
        ("strategy 1", [(TILE + M - 1) / TILE, M, M / PER]),
        ("strategy 2", [(T2 + M - 1) / T2, M, M]),
        ("strategy 3", [1 + half * (half + 1) / TILE, M - half * (half + 1) / TILE, M / PER]),
    ]
    ax2 = fig.add_axes((0.5, 0.16, 0.48, 0.64))
    kinds = [("x from global memory (L1/L2/DRAM)", COLORS["input_dark"]),
             ("x from shared memory", COLORS["halo"]),
             ("mask from constant memory", COLORS["weight_dark"])]
    for row, (name, values) in enumerate(kernels):
        left = 0.0
        for (kind, color), v in zip(kinds, values):
            ax2.barh(row, v, left=left, color=color, edgecolor="white", height=0.6,
                     label=kind if row == 0 else None)
            if v >= 0.9:
                ax2.text(left + v / 2, row, f"{v:.3g}", ha="center", va="center", fontsize=7.5,
                         color="white" if color != COLORS["halo"] else "black")
            left += v
    ax2.set_yticks(range(len(kernels)))
    ax2.set_yticklabels([n for n, _ in kernels])
    ax2.invert_yaxis()
    ax2.set_xlabel("load instructions per output (per thread, averaged over a tile)")
    ax2.set_title(f"(b) the loads behind one output (M = {M} multiply-adds)", loc="left")
    ax2.grid(axis="x", alpha=0.3)
    ax2.set_xlim(0, 2 * M + 8)
    ax2.legend(loc="center right", fontsize=7.5, frameon=True)
    ax2.spines[["top", "right"]].set_visible(False)
    note(fig, 0.5, 0.055, f"Tiles of {TILE} outputs ({T2} for strategy 2). Strategy 1 and "
         f"3's {PER} outputs per thread share\neach mask value; strategy 3 reads "
         f"{half * (half + 1)} halo taps per tile from global memory. Whether a global load "
         f"reaches\nDRAM is up to the caches: the naive kernel's re-reads mostly hit L1.", fs=8)
    return fig


# ---------------------------------------------------------------------------
# Step 04: tiled 2D convolution


def s1_config(k, pick):
    """One of step 04's strategy 1 configurations (TILE_W, TILE_H, ROWS), read
    from the launch_s1<...> calls: pick = "fastest" (the most outputs per
    thread) or "small" (the fewest rows per thread above one)."""
    configs = [tuple(c) for c in k["launch_s1<>"]]
    if pick == "fastest":
        return max(configs, key=lambda c: (c[2], c[0] * c[1]))
    return min((c for c in configs if c[2] > 1), key=lambda c: c[2])


@figure("04_halo_tile", note="04_tiled_2d.md",
        section="2D halos; The index math, worked through",
        uses=["launch_s1<>", "problem hpc101-image"])
def fig_04_halo_tile(k):
    """Strategy 1's input tile: the output tile plus a halo of R - 1 rows and S - 1 columns."""
    TW, TH, ROWS = s1_config(k, "fastest")
    pr = k["problem hpc101-image"]
    R, S, ph, pw = pr["r"], pr["s"], pr["pad_h"], pr["pad_w"]
    IH, IW = TH + R - 1, TW + S - 1
    BY = TH // ROWS  # threads per block column: the block is TW x BY
    bx, by = 2, 1  # the block of the note's worked example
    p0, q0 = by * TH, bx * TW
    tx, ty = 5, 3
    base = ty * ROWS
    fig = new_figure(10.5, 8.0, f"Step 04: strategy 1's input tile for {TW} x {TH} outputs, "
                     f"a {S} x {R} filter with \"same\" padding (pad = {ph}),\n{TW} x {BY} "
                     f"threads, ROWS = {ROWS} (HPC101 image problem)")
    ax = canvas(fig, (0.01, 0.02, 0.55, 0.85), (-9, IW + 1), (-4, IH + 1))
    for r in range(IH):
        for c in range(IW):
            inside = ph <= r < ph + TH and pw <= c < pw + TW
            box(ax, c, r, 1, 1, COLORS["input"] if inside else COLORS["halo"], ec="none", z=1)
    grid_lines(ax, 0, 0, IW, IH, color="#ffffff", lw=0.35, z=2)
    outline(ax, pw, ph, TW, TH, COLORS["input_dark"], lw=1.5)
    outline(ax, 0, 0, IW, IH, "#333333", lw=1.0)
    # the block-sized load steps: TW columns x BY rows each
    for r in range(0, IH + 1, BY):
        ax.plot([0, IW], [r, r], color="#555555", lw=0.5, ls=(0, (2, 2)), zorder=4)
    for c in range(0, IW + 1, TW):
        ax.plot([c, c], [0, IH], color="#555555", lw=1.0, ls=(0, (4, 2)), zorder=4)
    # what thread (tx, ty) loads: rows ty, ty + BY, ..., columns tx, tx + TW, ...
    for r in range(ty, IH, BY):
        for c in range(tx, IW, TW):
            ax.plot(c + 0.5, r + 0.5, "o", color=COLORS["highlight"], ms=2.8, zorder=7)
    # the window of its ROWS outputs, and the outputs themselves
    box(ax, tx, base, S, ROWS + R - 1, COLORS["weight_dark"] + "40", ec=COLORS["weight_dark"],
        lw=1.6, z=5)
    for v in range(ROWS):
        box(ax, tx + pw, base + v + ph, 1, 1, COLORS["output_dark"], ec="none", z=6)
    # labels along the edges
    for r, text in [(0, f"p0 - {ph}"), (ph, "p0"), (ph + TH - 1, f"p0 + {TH - 1}"),
                    (IH - 1, f"p0 + {TH + R - 2 - ph}")]:
        ax.text(-0.4, r + 0.5, f"{text}  (tile row {r})", ha="right", va="center", fontsize=7)
    for c, text in [(0, f"q0-{pw}"), (pw, "q0"), (pw + TW - 1, f"q0+{TW - 1}")]:
        ax.text(c + 0.5, -0.4, text, ha="center", va="bottom", fontsize=7, rotation=90)
    vbrace(ax, IW + 0.6, 0, ph, f"{ph} = pad_h", left=False, fs=7)
    vbrace(ax, IW + 0.6, ph + TH, IH, f"{R - 1 - ph} = R-1-pad_h", left=False, fs=7)
    x0 = 0.56
    note(fig, x0, 0.86,
         f"Input tile: (TILE_H + R - 1) x (TILE_W + S - 1) = {IH} x {IW} floats "
         f"({IH * IW * 4 / 1024:.1f} KB)\nfor TILE_H x TILE_W = {TH} x {TW} outputs "
         f"(launch_s1<{TW}, {TH}, {ROWS}>).", fs=9)
    legend = [(COLORS["input"], "the inputs at the output tile's own positions"),
              (COLORS["halo"], f"the halo: {R - 1} rows and {S - 1} columns, shared with "
                               f"the\nneighbouring tiles, or zeros outside the image"),
              (COLORS["weight_dark"] + "40",
               f"the {S} x {ROWS + R - 1} inputs that thread (tx, ty) = ({tx}, {ty})\nreads for "
               f"its {ROWS} outputs (tile rows {base}..{base + ROWS + R - 2},\ncolumns "
               f"{tx}..{tx + S - 1})"),
              (COLORS["output_dark"], f"its {ROWS} outputs: column q0 + {tx}, rows p0 + "
                                      f"{base}..p0 + {base + ROWS - 1}")]
    y = 0.76
    for color, text in legend:
        swatch(fig, x0, y, color)
        note(fig, x0 + 0.028, y, text, fs=8.5)
        y -= 0.025 + 0.028 * text.count("\n") + 0.02
    note(fig, x0, y - 0.01,
         f"The multi-step load (dashed: block-sized steps of {TW} x {BY}):\n"
         f"thread (tx, ty) loads tile rows ty, ty + {BY}, ... and columns\n"
         f"tx, tx + {TW}, ...: ceil({IH}/{BY}) x ceil({IW}/{TW}) = "
         f"{-(-IH // BY)} x {-(-IW // TW)} steps (red dots: thread ({tx}, {ty})).\n"
         f"Consecutive tx load consecutive columns: coalesced.\n\n"
         f"Block (blockIdx.x, blockIdx.y) = ({bx}, {by}) of the HPC101 image\n"
         f"problem: p0 = {p0}, q0 = {q0}; its tile holds input rows "
         f"{p0 - ph}..{p0 - ph + IH - 1}\nand columns {q0 - pw}..{q0 - pw + IW - 1}. "
         f"Tiles at the image border store zeros\nfor the rows and columns outside it.", fs=8.5)
    return fig


@figure("04_rows_window", note="04_tiled_2d.md",
        section=("Shared memory bandwidth, and why strategy 1 computes several outputs "
                 "per thread"),
        uses=["launch_s1<>", "problem hpc101-image"])
def fig_04_rows_window(k):
    """Strategy 1's register window: a ring of ROWS registers sliding down a tile column."""
    TW, TH, ROWS = s1_config(k, "small")
    R = k["problem hpc101-image"]["r"]
    n_rows = ROWS + R - 1
    fig = new_figure(10.5, 5.2, f"Step 04: strategy 1's register window, launch_s1<{TW}, "
                     f"{TH}, {ROWS}>: ROWS = {ROWS} outputs per thread,\na {R}-row filter "
                     f"(HPC101 image problem), one filter column s")
    # left: the tile column and the outputs' windows
    ax = canvas(fig, (0.01, 0.04, 0.17, 0.8), (-1.5, 6.5), (-1.5, n_rows + 0.5))
    for i in range(n_rows):
        box(ax, 0, i, 1.6, 1, COLORS["input"], text=f"{i}", fs=7)
    ax.text(0.8, -0.3, "tile rows\nbase + i,\ncolumn tx + s", ha="center", va="bottom",
            fontsize=7.5)
    for v in range(ROWS):
        x = 2.0 + v * 1.0
        ax.plot([x, x], [v + 0.1, v + R - 0.1], color=lane_color(v, ROWS, 0.45), lw=3,
                solid_capstyle="butt")
        ax.text(x, v + R + 0.2, f"y{v}", ha="center", va="top", fontsize=7.5,
                color=lane_color(v, ROWS, 0.35))
    ax.text(-0.3, n_rows / 2, f"output v reads rows v .. v + {R - 1}", rotation=90,
            ha="right", va="center", fontsize=7.5)
    # right: the ring, step by step
    cw, ch = 2.05, 1.5
    steps = R + 1
    ax2 = canvas(fig, (0.19, 0.04, 0.8, 0.8), (-2.4, steps * cw + 0.2), (-1.6, ROWS * ch + 5.6))
    for slot in range(ROWS):
        ax2.text(-0.2, slot * ch + ch / 2, f"buf[{slot}]", ha="right", va="center", fontsize=8)
    # before the r loop: rows 0 .. ROWS - 2 preloaded into buf[0 .. ROWS - 2]
    ax2.text(cw / 2, -0.2, "before\nr = 0", ha="center", va="bottom", fontsize=7.5)
    for slot in range(ROWS):
        held = slot if slot < ROWS - 1 else None
        box(ax2, 0, slot * ch, cw, ch, COLORS["register"] if held is not None else "white",
            text=f"row {held}" if held is not None else "-", fs=7.5)
    for r in range(R):
        x = (r + 1) * cw
        j = r % ROWS
        ax2.text(x + cw / 2, -0.2, f"r = {r}\nj = {j}", ha="center", va="bottom", fontsize=7.5)
        for slot in range(ROWS):
            row = r + (slot - r) % ROWS  # the row this slot holds during step r
            v = row - r
            new = slot == (j + ROWS - 1) % ROWS
            box(ax2, x, slot * ch, cw, ch, COLORS["register"], text=f"row {row}\n-> y{v}",
                fs=7, ec=COLORS["highlight"] if new else "#444444", lw=1.8 if new else 0.6,
                z=3 if new else 2)
    # the chunks of the unrolled loop
    y = ROWS * ch + 0.5
    r0 = 0
    while r0 + ROWS <= R:
        brace(ax2, (r0 + 1) * cw + 0.1, (r0 + ROWS + 1) * cw - 0.1, y,
              f"r0 = {r0}: j = 0..{ROWS - 1}, unrolled", above=False, fs=7)
        r0 += ROWS
    if r0 < R:
        brace(ax2, (r0 + 1) * cw + 0.1, (R + 1) * cw - 0.1, y, f"last {R - r0}", above=False,
              fs=7)
    loads = R + ROWS - 1
    ax2.text(0, y + 1.6,
             f"Step r (r = r0 + j, s1_window_step) loads ONE new tile row, row r + {ROWS - 1}, "
             f"into buf[(j + {ROWS - 1}) % {ROWS}] (red edge),\nthe slot that held row r - 1; "
             f"then output v adds buf[(j + v) % {ROWS}] (= row r + v) times M[r][s]. Tile row\n"
             f"base + i always lives in buf[i % {ROWS}] and j is a compile-time constant: no "
             f"register is copied, the ring turns by itself.\n"
             f"Per filter column: {ROWS - 1} + {R} = {loads} shared loads for {R} x {ROWS} = "
             f"{R * ROWS} multiply-adds, {loads / (R * ROWS):.2f} loads per multiply-add "
             f"(1 with ROWS = 1).", fontsize=8.5, va="top")
    return fig


# ---------------------------------------------------------------------------
# Step 05: direct convolution with float4 loads and prefetching


def round4(v):
    return (v + 3) // 4 * 4


def plan_5a_tile(pr, bw, bh):
    """conv_prefetch.c's plan_5a(): the rows and the row stride (floats) of the
    shared input tile, and the number of blocks along Q and P."""
    P, Q = out_size(pr["h"], pr["r"], pr["pad_h"]), out_size(pr["w"], pr["s"], pr["pad_w"])
    col_blocks, row_blocks = max(1, Q // bw), max(1, P // bh)
    cols = max(Q - (col_blocks - 1) * bw, min(Q, bw))
    rows = max(P - (row_blocks - 1) * bh, min(P, bh))
    return rows + pr["r"] - 1, round4(cols + pr["s"] - 1) + 8, col_blocks, row_blocks


def equal_split(pr, bw, bh, bx, by, nt):
    """prefetch_tile.cuh's loader for block (bx, by) of image 0, channel 0 (a
    16-byte aligned tensor): one dict per float4 piece."""
    W, H = pr["w"], pr["h"]
    ox0, oy0 = bx * bw, by * bh
    gx0, gy0 = ox0 - pr["pad_w"], oy0 - pr["pad_h"]
    rows, cols = bh + pr["r"] - 1, bw + pr["s"] - 1  # a regular block
    _, stride, _, _ = plan_5a_tile(pr, bw, bh)
    ppr = (cols + 6) // 4  # tile_make(): ceil((cols + 3) / 4)
    pieces = []
    for i in range(rows * ppr):
        row, piece = i // ppr, i % ppr
        gy = gy0 + row
        m = (gy * W) % 4  # misalignment of the row start, in floats
        shift = (gx0 + m) % 4
        col = gx0 - shift + 4 * piece  # first image column of the piece
        needed = [c for c in range(col, col + 4) if gx0 <= c < gx0 + cols]
        pieces.append({"i": i, "thread": i % nt, "item": i // nt, "row": row, "gy": gy,
                       "shift": shift, "col": col, "needed": needed,
                       "vector": 0 <= gy < H and col >= 0 and col + 3 < W,
                       "soff": row * stride + 4 - shift + 4 * piece})
    return pieces, {"gx0": gx0, "gy0": gy0, "rows": rows, "cols": cols, "ppr": ppr,
                    "stride": stride}


def piece_box(ax, x, p):
    """One float4 piece of the equal split at x: coloured by its thread, dashed
    when it is the thread's second piece, hatched when no float of it is needed."""
    wasted = not p["needed"]
    box(ax, x + 0.08, p["row"] + 0.12, 3.84, 0.76, lane_color(p["thread"]),
        ec="#888888" if wasted else "#333333", lw=0.8 if p["item"] == 0 else 1.4,
        ls="-" if p["item"] == 0 else "--", hatch="///" if wasted else None, z=3)
    ax.text(x + 2, p["row"] + 0.5, f"t{p['thread']}", ha="center", va="center", fontsize=7,
            zorder=7, bbox=dict(boxstyle="square,pad=0.1", fc=lane_color(p["thread"]),
                                ec="none") if wasted else None)


@figure("05_equal_split", note="05_prefetch_float4.md",
        section="The equal split, on 16-byte boundaries",
        uses=["CONV_PREFETCH_5A_BW", "CONV_PREFETCH_5A_BH", "PREFETCH_5A_ITEMS",
              "problem ece408-l1"])
def fig_05_equal_split(k):
    """5a's loader: tile rows cut into float4 pieces on 16-byte boundaries, dealt to 32 threads."""
    BW, BH, ITEMS = k["CONV_PREFETCH_5A_BW"], k["CONV_PREFETCH_5A_BH"], k["PREFETCH_5A_ITEMS"]
    pr = k["problem ece408-l1"]
    nt = BW * BH
    bx, by = 1, 1
    pieces, g = equal_split(pr, BW, BH, bx, by, nt)
    rows, cols, ppr, stride, gx0 = g["rows"], g["cols"], g["ppr"], g["stride"], g["gx0"]
    fig = new_figure(11, 6.0, f"Step 05: the equal split of 5a's loader, block ({bx}, {by}) "
                     f"of ECE408 layer 1 (W = {pr['w']}, {pr['r']} x {pr['s']} filter):\n"
                     f"a {rows} x {cols} input tile, {len(pieces)} float4 pieces, {nt} threads")
    c_lo, c_hi = gx0 - 4, gx0 + 4 * ppr + 2  # image columns drawn
    xa, xb = (-6.5, c_hi - c_lo + 0.3), (-0.3, stride + 0.3)
    wa = 0.955 * (xa[1] - xa[0]) / (xa[1] - xa[0] + xb[1] - xb[0])
    # (a) global memory
    ax, bottom = canvas_below(fig, 0.86, 0.01, wa, xa, (-2.2, rows + 0.3),
                              title="(a) global memory: image rows, pieces on 16-byte "
                                    "boundaries")
    for c in range(c_lo, c_hi):
        if c % 2 == 0:
            ax.text(c - c_lo + 0.5, -0.15, str(c), ha="center", va="bottom", fontsize=6,
                    color="#555555")
    ax.text(0, -1.1, "image column", fontsize=7, color="#555555", va="bottom")
    for r in range(rows):
        gy = g["gy0"] + r
        for c in range(c_lo, c_hi):
            need = gx0 <= c < gx0 + cols
            box(ax, c - c_lo, r, 1, 1, COLORS["input"] if need else "white", ec="#cccccc",
                lw=0.4, z=1)
        for c in range(c_lo, c_hi + 1):
            if (gy * pr["w"] + c) % 4 == 0:  # a 16-byte boundary of this row
                ax.plot([c - c_lo] * 2, [r, r + 1], color="#222222", lw=1.4, zorder=5)
        shift = next(p["shift"] for p in pieces if p["row"] == r)
        ax.text(-0.3, r + 0.5, f"row {gy}: shift {shift}", ha="right", va="center", fontsize=7)
    for p in pieces:
        x = p["col"] - c_lo
        piece_box(ax, x, p)
    outline(ax, gx0 - c_lo, 0, cols, rows, COLORS["input_dark"], lw=1.5)
    # (b) shared memory
    ax2, _ = canvas_below(fig, 0.86, 0.025 + wa, 0.955 - wa, xb, (-2.2, rows + 0.3),
                          title="(b) shared memory in[buf]: the same pieces, stored whole")
    for j in range(stride):
        if j % 2 == 0:
            ax2.text(j + 0.5, -0.15, str(j), ha="center", va="bottom", fontsize=6,
                     color="#555555")
    ax2.text(0, -1.1, "offset in the row (floats)", fontsize=7, color="#555555", va="bottom")
    for r in range(rows):
        for j in range(stride):
            need = 4 <= j < 4 + cols
            box(ax2, j, r, 1, 1, COLORS["input"] if need else COLORS["idle"], ec="#ffffff",
                lw=0.4, z=1)
    for p in pieces:
        x = p["soff"] - p["row"] * stride
        piece_box(ax2, x, p)
    outline(ax2, 4, 0, cols, rows, COLORS["input_dark"], lw=1.5)
    # the block's threads
    ax3, _ = canvas_below(fig, bottom - 0.04, 0.01, 0.2, (-0.2, BW + 0.2), (-1.2, BH + 0.2))
    ax3.text(0, -0.3, f"the {BW} x {BH} block: tid = ty*{BW} + tx", fontsize=8, va="bottom")
    for ty in range(BH):
        for tx in range(BW):
            t = ty * BW + tx
            box(ax3, tx, ty, 1, 1, lane_color(t), text=f"t{t}", fs=7)
    second = sorted({p["thread"] for p in pieces if p["item"] == 1})
    wasted = [p for p in pieces if not p["needed"]]
    scalar = [p for p in pieces if not p["vector"]]
    vector_text = ("Every piece lies inside the image: one 16-byte load each." if not scalar else
                   f"{len(scalar)} pieces cross the image's edge and are read float by float.")
    note(fig, 0.24, bottom - 0.04,
         f"Thread t loads pieces t, t + {nt}, ... (dashed: its second piece): threads "
         f"{second[0]}..{second[-1]} load 2, the others 1;\nup to PREFETCH_5A_ITEMS = {ITEMS} "
         f"per thread are staged in registers. Each row's pieces start at its own 16-byte "
         f"boundary\n(thick lines): shift = (gx0 + m) mod 4 floats before the tile's first "
         f"column gx0 = {gx0}, m being the misalignment of\nthe row start (row gy starts at "
         f"float gy*{pr['w']}: m alternates between 0 and 2 here). A row takes "
         f"ceil((cols + 3) / 4) = {ppr}\npieces, enough for any shift; with shift 0 or 2 the "
         f"last holds no needed float (hatched: {len(wasted)} of {len(pieces)} pieces).\n"
         f"{vector_text} In shared memory a row has 4 floats of margin\non each side (grey; "
         f"stride {stride} floats) and a piece goes whole to offset 4 - shift + 4*piece: no "
         f"store needs a test.", fs=8.5)
    return fig


def gantt_bar(ax, x0, x1, lane, fc, text=None, hatch=None, ec="#444444", h=0.62, fs=7.5):
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


@figure("05_prefetch_timeline", note="05_prefetch_float4.md",
        section="Prefetching: two buffers, one barrier per channel",
        uses=["CONV_PREFETCH_5A_KC", "PREFETCH_5A_ITEMS", "problem lecture"])
def fig_05_prefetch_timeline(k):
    """5a's channel loop: load channel c + 1 while computing c, two buffers, one barrier."""
    KC, ITEMS = k["CONV_PREFETCH_5A_KC"], k["PREFETCH_5A_ITEMS"]
    pr = k["problem lecture"]
    C, K = pr["c"], pr["k"]
    chunks = (K + KC - 1) // KC
    steps = chunks * C
    fig = new_figure(11, 4.9, f"Step 05: kernel 5a's channel loop on the lecture problem "
                     f"(C = {C}, K = {K}, KC = {KC}: {chunks} chunk{'s' if chunks > 1 else ''} "
                     f"of output channels,\n{steps} steps): channel c + 1 is loaded into the "
                     f"other buffer while channel c is computed")
    lanes = [f"LDG: x tile of c+1 -> registers\n(<= {ITEMS} float4 per thread)",
             "cp.async: weights of c+1\n-> ws[buf ^ 1]",
             "FMAs: channel c from\nin[buf], ws[buf]",
             "STS: registers\n-> in[buf ^ 1]",
             "buffer 0: in[0], ws[0]", "buffer 1: in[1], ws[1]"]
    pro, fma, sts, gap = 1.6, 4.0, 0.55, 0.25
    it = 0.35 + fma + sts + 0.35 + gap  # one iteration
    xmax = pro + steps * it + 0.6
    ax = gantt_axes(fig, (0.17, 0.17, 0.82, 0.68), lanes, xmax, None)
    # the prologue: channel 0 loaded, stored, waited for
    gantt_bar(ax, 0, 0.6, 0, COLORS["input"], "0", fs=7)
    gantt_bar(ax, 0.05, 0.6, 1, COLORS["weight"], "0", fs=7)
    gantt_bar(ax, 0.7, 1.25, 3, COLORS["shared"], "0", fs=7)
    gantt_bar(ax, 0.7, 1.25, 4, COLORS["shared"], "0", fs=7)
    ax.text(pro / 2, -0.55, "prologue", ha="center", va="bottom", fontsize=8)
    barriers = [pro - 0.05]
    x = pro
    for t in range(steps):
        c = t % C
        cur = t % 2
        more = t + 1 < steps
        x0 = x
        if more:
            gantt_bar(ax, x0, x0 + 0.35, 0, COLORS["input"])
            gantt_bar(ax, x0 + 0.35, x0 + 0.35 + fma, 0, "white", "in flight", hatch="....",
                      ec="#aaaaaa")
            gantt_bar(ax, x0 + 0.05, x0 + 0.35, 1, COLORS["weight"])
            gantt_bar(ax, x0 + 0.35, x0 + 0.35 + fma, 1, "white", "in flight", hatch="....",
                      ec="#aaaaaa")
        gantt_bar(ax, x0 + 0.35, x0 + 0.35 + fma, 2, COLORS["output"], f"channel c = {c}")
        if c == C - 1:
            ax.text(x0 + 0.35 + fma, 2.42, "write y", ha="right", va="top", fontsize=7)
        if more:
            gantt_bar(ax, x0 + 0.35 + fma, x0 + 0.35 + fma + sts, 3, COLORS["shared"],
                      f"{c + 1}", fs=7)
            ax.text(x0 + 0.35 + fma + sts + 0.02, 3.35, "wait", fontsize=6.5, va="top")
        x = x0 + it
        barriers.append(x - gap / 2)
        # the buffers during this step
        gantt_bar(ax, x0 + 0.35, x0 + 0.35 + fma, 4 + cur, COLORS["output"], f"read: c = {c}",
                  fs=7)
        if more:
            gantt_bar(ax, x0 + 0.35 + fma, x0 + 0.35 + fma + sts + 0.35, 4 + (1 - cur),
                      COLORS["shared"], "", fs=7)
            ax.text(x0 + 0.35 + fma + (sts + 0.35) / 2, 4 + (1 - cur), f"{c + 1}",
                    fontsize=6.5, ha="center", va="center", zorder=5)
            free = (x0, x0 + 0.35 + fma)
            gantt_bar(ax, free[0] + 0.05, free[1], 4 + (1 - cur), "#f7f7f7",
                      "not read;\nws <- cp.async", fs=6.5, ec="#cccccc")
        ax.text(x0 + it / 2 - gap / 2, -0.55, f"step t = {t}", ha="center", va="bottom",
                fontsize=8)
    for xb in barriers:
        ax.plot([xb, xb], [-0.45, 5.45], color=COLORS["highlight"], lw=1.6, zorder=6)
    ax.set_ylim(6.0, -0.6)
    ax.text(barriers[1], 5.55, "__syncthreads(): one per channel", color=COLORS["highlight"],
            fontsize=8, va="top", ha="center")
    note(fig, 0.01, 0.1,
         "Step t issues the global loads of channel c + 1 into registers and starts cp.async "
         "copies of its weights into the other buffer, then computes channel c from shared "
         "memory;\nonly then does it store the staged registers into in[buf ^ 1] (STS) and wait "
         "for its copies. One barrier per step suffices: the buffer written in step t was last "
         "read in\nstep t - 1, before that step's barrier. The cp.async copies need no "
         "registers; with K > KC the steps run over (chunk, channel) pairs, channel fastest.",
         fs=8.5)
    return fig


# ---------------------------------------------------------------------------
# Step 06: im2col and GEMM


@figure("06_im2col", note="06_im2col_gemm.md",
        section="im2col: lowering windows into rows",
        uses=["problem hpc101-nhwc"])
def fig_06_im2col(k):
    """im2col: every window becomes a row (NHWC) or a column (NCHW) of the column buffer."""
    lab = k["problem hpc101-nhwc"]
    C, H, W, R, S = 2, 4, 4, 2, 2  # a toy problem, small enough to print every entry
    P, Q = H - R + 1, W - S + 1
    names = ["abcdefghijklmnop", "ABCDEFGHIJKLMNOP"]
    m_hl = 1  # the window highlighted: (p, q) = (0, 1)
    ph, qh = m_hl // Q, m_hl % Q
    fig = new_figure(11.5, 6.0, f"Step 06: im2col on a toy image (C = {C}, {H} x {W}, "
                     f"{R} x {S} filter, stride 1, no padding: P x Q = {P} x {Q} windows)")
    # the image
    ax = canvas(fig, (0.01, 0.2, 0.17, 0.68), (-0.3, W + 0.3), (-1.0, C * (H + 1.5) + 1.0))
    for c in range(C):
        y0 = c * (H + 1.5)
        ax.text(0, y0 - 0.15, f"x channel c = {c}", fontsize=8, va="bottom")
        for h in range(H):
            for w in range(W):
                box(ax, w, y0 + h, 1, 1, CHANNEL_COLORS[c], text=names[c][h * W + w], fs=8)
        outline(ax, qh, y0 + ph, S, R, COLORS["highlight"], lw=2)
    ax.text(0, C * (H + 1.5) - 1.2, f"red: the window of\n(p, q) = ({ph}, {qh}), row m = {m_hl}",
            fontsize=7.5, va="top", color=COLORS["highlight"])

    def entry(m, c, r, s):
        p, q = m // Q, m % Q
        return names[c][(p + r) * W + q + s]

    # NHWC: col[m][(r*S + s)*C + c]
    KC = C * R * S
    ax2 = canvas(fig, (0.22, 0.2, 0.35, 0.68), (-2.2, KC + 0.3), (-3.2, P * Q + 0.3),
                 title="NHWC: col[m][(r*S + s)*C + c]")
    for j in range(KC):
        c, rs = j % C, j // C
        r, s_ = rs // S, rs % S
        ax2.text(j + 0.5, -0.15, f"{r},{s_},{c}", ha="center", va="bottom", fontsize=6.5,
                 rotation=90)
        for m in range(P * Q):
            box(ax2, j, m, 1, 1, CHANNEL_COLORS[c], text=entry(m, c, r, s_), fs=7.5)
    ax2.text(KC / 2, -2.0, "j: (r, s, c)", ha="center", va="bottom", fontsize=7.5)
    for m in range(P * Q):
        ax2.text(-0.2, m + 0.5, f"m={m} ({m // Q},{m % Q})", ha="right", va="center",
                 fontsize=6.5)
    outline(ax2, 0, m_hl, KC, 1, COLORS["highlight"], lw=2)
    # NCHW: col[(c*R + r)*S + s][m]
    ax3 = canvas(fig, (0.62, 0.2, 0.37, 0.68), (-2.6, P * Q + 0.3), (-3.2, KC + 0.3),
                 title="NCHW: col[(c*R + r)*S + s][m]")
    for m in range(P * Q):
        ax3.text(m + 0.5, -0.15, f"m={m}", ha="center", va="bottom", fontsize=6.5, rotation=90)
    for j in range(KC):
        c, rs = j // (R * S), j % (R * S)
        r, s_ = rs // S, rs % S
        ax3.text(-0.2, j + 0.5, f"j={j} ({c},{r},{s_})", ha="right", va="center", fontsize=6.5)
        for m in range(P * Q):
            box(ax3, m, j, 1, 1, CHANNEL_COLORS[c], text=entry(m, c, r, s_), fs=7.5)
    ax3.text(P * Q / 2, -2.0, "columns: output pixels m", ha="center", va="bottom", fontsize=7.5)
    ax3.text(-2.5, -2.0, "rows: (c, r, s)", ha="left", va="bottom", fontsize=7.5)
    outline(ax3, m_hl, 0, 1, KC, COLORS["highlight"], lw=2)
    LP, LQ = out_size(lab["h"], lab["r"], lab["pad_h"]), out_size(lab["w"], lab["s"], lab["pad_w"])
    M_lab, K_lab = lab["n"] * LP * LQ, lab["c"] * lab["r"] * lab["s"]
    note(fig, 0.01, 0.15,
         f"Row m = (n*P + p)*Q + q of the NHWC buffer holds the window of output pixel (n, p, q): "
         f"y[N*P*Q][K] = col[N*P*Q][R*S*C] x w[R*S*C][K], the filter is the B matrix as stored "
         f"and\nthe product is y. NCHW (MXNet, Caffe) builds the transpose, with the rows in "
         f"(c, r, s) order: y'[K][N*P*Q] = w[K][C*R*S] x col[C*R*S][N*P*Q]. Each input is copied "
         f"into up to\nR*S windows. The HPC101 lab problem (N = {lab['n']}, C = {lab['c']}, "
         f"{lab['h']} x {lab['w']}, {lab['r']} x {lab['s']} \"same\"): {fmt(M_lab)} rows of "
         f"C*R*S = {fmt(K_lab)} floats, a column buffer of {M_lab * K_lab * 4 / 1e9:.1f} GB "
         f"for an image of {lab['n'] * lab['c'] * lab['h'] * lab['w'] * 4 / 1e6:.0f} MB.",
         fs=8.5)
    return fig


def dbuf_shape(k):
    """6e/6f's tile shape from gemm.cu's constants: BM, BN, BK, TM, threads, GS
    (the row distance of a thread's two 4-row groups), warp layout."""
    BM, TM, BK, WR = k["DBUF_BM"], k["DBUF_TM"], k["DBUF_BK"], k["DBUF_WR"]
    BN, APAD = k["RT_BN"], k["RT_APAD"]
    threads = 16 * (BM // TM)
    return {"BM": BM, "BN": BN, "BK": BK, "TM": TM, "WR": WR, "APAD": APAD,
            "threads": threads, "GS": BM // (TM // 4), "CS": BN // 2,
            "WC": WARP // WR, "warps_per_row": 16 // (WARP // WR)}


def dbuf_thread_of(lane, warp, sh):
    """dbuf_gemm_body(): (ty, tx) of a lane of a warp."""
    ty = (warp // sh["warps_per_row"]) * sh["WR"] + lane // sh["WC"]
    tx = (warp % sh["warps_per_row"]) * sh["WC"] + lane % sh["WC"]
    return ty, tx


@figure("06_gemm_tiles", note="06_im2col_gemm.md",
        section=("6c: register tiles - the tiling hierarchy; 6d: float4 and A transposed in "
                 "shared memory"),
        uses=["DBUF_BM", "DBUF_TM", "DBUF_BK", "DBUF_WR", "DBUF_THREADS", "RT_BN", "RT_APAD",
              "RT_BM", "RT_BK", "RT_TM", "RT_TN"])
def fig_06_gemm_tiles(k):
    """The GEMM's tiles: block tile, BK slice, a thread's 8 x 8 outputs and its fragments."""
    sh = dbuf_shape(k)
    BM, BN, BK, TM, GS, CS = sh["BM"], sh["BN"], sh["BK"], sh["TM"], sh["GS"], sh["CS"]
    assert k["DBUF_THREADS"] == sh["threads"] and k["RT_TN"] == 8
    ty0, tx0 = 1, 2  # the thread shown
    fig = new_figure(11.5, 7.6, f"Step 06: the tiles of 6e/6f's GEMM: a {BM} x {BN} block "
                     f"tile, BK = {BK}, {sh['threads']} threads of {TM} x 8 outputs")
    # (a) the whole product
    ax = canvas(fig, (0.01, 0.5, 0.33, 0.41), (-3.5, 17), (-2.5, 17.5),
                title="(a) C = A x B, one block per tile")
    kx, ky = 6.0, 5.0  # where C starts (A to its left, B above)
    box(ax, 0, ky, kx - 0.5, 11, "#eeeeee", ec="#888888", text=None)
    box(ax, kx, 0, 10, ky - 0.5, "#eeeeee", ec="#888888")
    box(ax, kx, ky, 10, 11, "#f7f7f7", ec="#888888")
    ax.text(kx / 2 - 0.25, ky + 11.3, "A: M x K", ha="center", va="top", fontsize=8)
    ax.text(kx + 10.2, 2.2, "B:\nK x N", ha="left", va="center", fontsize=8)
    ax.text(kx + 5, ky + 11.3, "C: M x N", ha="center", va="top", fontsize=8)
    bm, bn, bk = 2.0, 3.0, 0.8  # the block tile, not to scale
    tr, tc = ky + 4.0, kx + 3.0
    box(ax, tc, tr, bn, bm, COLORS["output"], ec="black", lw=1.0, text=f"{BM} x {BN}", fs=7)
    box(ax, 0, tr, kx - 0.5, bm, COLORS["input"], ec="#555555", lw=0.8)
    box(ax, tc, 0, bn, ky - 0.5, COLORS["weight"], ec="#555555", lw=0.8)
    box(ax, 1.6, tr, bk, bm, COLORS["input_dark"], ec="black", lw=0.8)
    box(ax, tc, 1.6, bn, bk, COLORS["weight_dark"], ec="black", lw=0.8)
    ax.text(2.0, tr - 0.2, f"BK = {BK}", ha="center", va="bottom", fontsize=7)
    ax.text(tc - 0.2, 2.0, "BK", ha="right", va="center", fontsize=7)
    ax.text(-3.3, 17.3, f"Block b computes tile (b / tiles_n, b % tiles_n),\n"
            f"{BM} x {BN} outputs, in slices of BK = {BK} along K\n(dark: A's {BM} x {BK} and "
            f"B's {BK} x {BN}).", fontsize=8, va="top")
    # (b) the block tile, to scale
    ax2 = canvas(fig, (0.37, 0.5, 0.62, 0.41), (-9, BN + 2), (-6, BM + 2),
                 title="(b) the block tile: thread (ty, tx) owns four 4 x 4 sub-tiles")
    warp_rows = {}
    for warp in range(sh["threads"] // WARP):
        for lane in range(WARP):
            ty, tx = dbuf_thread_of(lane, warp, sh)
            warp_rows[(ty, tx)] = warp
    for (ty, tx), warp in warp_rows.items():
        for i in range(TM // 4):
            for j in range(2):
                r0, c0 = GS * i + ty * 4, CS * j + tx * 4
                box(ax2, c0, r0, 4, 4, lane_color(warp, 8, 0.86), ec="#ffffff", lw=0.4, z=1)
    for i in range(TM // 4):
        for j in range(2):
            r0, c0 = GS * i + ty0 * 4, CS * j + tx0 * 4
            box(ax2, c0, r0, 4, 4, COLORS["output_dark"], ec="black", lw=0.8, z=3)
    outline(ax2, 0, 0, BN, BM, "#333333", lw=1.0)
    for i in range(1, TM // 4):
        ax2.plot([0, BN], [GS * i] * 2, color="#333333", lw=0.8, ls="--", zorder=4)
    ax2.plot([CS, CS], [0, BM], color="#333333", lw=0.8, ls="--", zorder=4)
    for warp in range(sh["threads"] // WARP):
        cells = [(ty, tx) for (ty, tx), w in warp_rows.items() if w == warp]
        ty_min = min(c[0] for c in cells)
        tx_min = min(c[1] for c in cells)
        ax2.text(tx_min * 4 + 1, ty_min * 4 + 1.2, f"warp {warp}", fontsize=6.5, va="top",
                 zorder=5, color="#333333")
    for c in (0, CS, BN):
        ax2.text(c, -0.6, str(c), ha="center", va="bottom", fontsize=7)
    for r in range(0, BM + 1, GS):
        ax2.text(-0.8, r, str(r), ha="right", va="center", fontsize=7)
    ax2.text(BN / 2, -3.5, f"{BN} columns (RT_BN): tx = 0..15 own columns tx*4 .. tx*4 + 3 and "
             f"{CS} + tx*4 ..", ha="center", va="bottom", fontsize=7.5)
    ax2.text(-6.5, BM / 2, f"{BM} rows (DBUF_BM): ty = 0..{BM // TM - 1}", rotation=90,
             ha="center", va="center", fontsize=7.5)
    ax2.text(0, BM + 1.0, f"Dark: thread (ty, tx) = ({ty0}, {tx0}): rows {ty0 * 4}..{ty0 * 4 + 3}"
             f" and {GS + ty0 * 4}..{GS + ty0 * 4 + 3} (GS = BM / (TM/4) = {GS} apart), columns "
             f"{tx0 * 4}..{tx0 * 4 + 3} and {CS + tx0 * 4}..{CS + tx0 * 4 + 3}.\nColours: the "
             f"{sh['threads'] // WARP} warps (WR = {sh['WR']}: a warp is {sh['WR']} x "
             f"{sh['WC']} threads, whose outputs form a {sh['WR'] * 4 * TM // 4} x "
             f"{sh['WC'] * 8} piece of the tile in {TM // 4 * 2} parts).", fontsize=7.5,
             va="top")
    # (c) shared memory and the fragments of step kk
    kk = 3
    ap = BM + sh["APAD"]
    bx0 = ap + 6
    ax3, bottom = canvas_below(fig, 0.385, 0.01, 0.77, (-6, bx0 + BN + 1), (-2.5, BK + 4.5),
                               title=f"(c) one k step (kk = {kk}) of a tile: the thread's "
                                     f"fragments, then {TM} x 8 FMAs")
    for r in range(BK):
        for c in range(ap):
            box(ax3, c, r, 1, 1, COLORS["input"] if c < BM else COLORS["idle"], ec="none", z=1)
    grid_lines(ax3, 0, 0, ap, BK, color="#ffffff", lw=0.25, z=2)
    outline(ax3, 0, 0, ap, BK, "#333333", lw=0.8)
    ax3.text(0, -0.6, f"as[k][m]: A^T, {BK} x ({BM} + {sh['APAD']}) floats", fontsize=7.5,
             va="bottom")
    for r in range(BK):
        for c in range(BN):
            box(ax3, bx0 + c, r, 1, 1, COLORS["weight"], ec="none", z=1)
    grid_lines(ax3, bx0, 0, BN, BK, color="#ffffff", lw=0.25, z=2)
    outline(ax3, bx0, 0, BN, BK, "#333333", lw=0.8)
    ax3.text(bx0, -0.6, f"bs[k][n]: B, {BK} x {BN} floats", fontsize=7.5, va="bottom")
    for i in range(TM // 4):
        c0 = (GS * i + ty0 * 4) ^ (kk & 8)
        box(ax3, c0, kk, 4, 1, COLORS["register_dark"], ec="black", lw=0.8, z=4)
    for j in range(2):
        box(ax3, bx0 + CS * j + tx0 * 4, kk, 4, 1, COLORS["register_dark"], ec="black", lw=0.8,
            z=4)
    ax3.text(-0.5, kk + 0.5, f"k = {kk}", ha="right", va="center", fontsize=7)
    ax3.text(0, BK + 0.6, f"fa = as[{kk}][{ty0 * 4}..{ty0 * 4 + 3}], "
             f"as[{kk}][{GS + ty0 * 4}..{GS + ty0 * 4 + 3}]: two LDS.128\n(columns "
             f"m ^ (kk & 8): see the swizzle figure)", fontsize=7.5, va="top")
    ax3.text(bx0, BK + 0.6, f"fb = bs[{kk}][{tx0 * 4}..{tx0 * 4 + 3}], "
             f"bs[{kk}][{CS + tx0 * 4}..{CS + tx0 * 4 + 3}]: two LDS.128", fontsize=7.5,
             va="top")
    # the outer product
    ax4, _ = canvas_below(fig, 0.385, 0.82, 0.15, (-3.6, 8.4), (-3.4, TM + 3.2),
                          title="  acc += fa x fb")
    for i in range(TM):
        box(ax4, -2.6, i, 1, 1, COLORS["register_dark"], text=f"a{i}", fs=6.5, tc="white")
    for j in range(8):
        box(ax4, j, -2.4, 1, 1, COLORS["register_dark"], text=f"b{j}", fs=6.5, tc="white")
    for i in range(TM):
        for j in range(8):
            box(ax4, j, i, 1, 1, COLORS["output"], ec="#ffffff", lw=0.6)
    for i in range(1, TM // 4):
        ax4.plot([0, 8], [4 * i] * 2, color="#333333", lw=1.2)
    ax4.plot([4, 4], [0, TM], color="#333333", lw=1.2)
    ax4.text(4, TM + 0.3, f"{TM} x 8 = {TM * 8} FMAs per k step,\n{TM * 8 * BK} per tile: "
             f"the 4 sub-tiles", ha="center", va="top", fontsize=7.5)
    note(fig, 0.01, bottom - 0.02,
         f"6c and 6d use RT_BM x RT_BN = {k['RT_BM']} x {BN} tiles of 256 threads and "
         f"RT_BK = {k['RT_BK']}, with the row groups {k['RT_BM'] // (k['RT_TM'] // 4)} apart; "
         f"6e and 6f, drawn here, the {BM} x {BN} tile with BK = {BK}.\nPer k step a thread "
         f"reads {TM // 4 + 2} float4 (LDS.128) for {TM * 8} FMAs.", fs=8)
    return fig


def a_store_lanes(sh, swizzle, warp=0, l=0, j=0):
    """dbuf_store_tile(): where each lane of `warp` stores A value (l, j):
    as[kq + j][acol[l]] with acol = (tid / KQ + l * AROWS) ^ (kq & 8). Returns
    {lane: (k, column, bank)}."""
    KQ = sh["BK"] // 4
    arows = sh["threads"] // KQ
    pitch = sh["BM"] + sh["APAD"]
    out = {}
    for lane in range(WARP):
        tid = warp * WARP + lane
        kq = (tid % KQ) * 4
        row = tid // KQ + l * arows
        col = row ^ (kq & 8) if swizzle else row
        kk = kq + j
        out[lane] = (kk, col, (kk * pitch + col) % BANKS)
    return out


@figure("06_swizzle", note="06_im2col_gemm.md",
        section=("6e: double buffering and register prefetch (the stores of the transposed A "
                 "tile)"),
        uses=["DBUF_BM", "DBUF_TM", "DBUF_BK", "DBUF_WR", "RT_BN", "RT_APAD"])
def fig_06_swizzle(k):
    """The stores of A^T into shared memory, without and with the (k & 8) swizzle."""
    sh = dbuf_shape(k)
    BM, BK, GS = sh["BM"], sh["BK"], sh["GS"]
    pitch = BM + sh["APAD"]
    ncols = 24  # columns drawn (warp 0 stores into the first 16)
    fig = new_figure(11.5, 6.4, f"Step 06: warp 0 storing A transposed, as[k][m] (rows of "
                     f"{BM} + {sh['APAD']} = {pitch} floats, BK = {BK}): one STS instruction, "
                     f"32 lanes")
    plain = a_store_lanes(sh, False)
    collide = len({bank for _, _, bank in plain.values()}) < WARP
    panels = [(False, "(a) column m: lanes storing k and k + 8 collide" if collide else
               "(a) column m: no two lanes share a bank"),
              (True, "(b) column m ^ (k & 8), as dbuf_gemm_body() stores it")]
    for idx, (swizzle, title) in enumerate(panels):
        left = 0.01 + idx * 0.5
        lanes = a_store_lanes(sh, swizzle)
        ax, bottom = canvas_below(fig, 0.86, left + 0.06, 0.42, (-0.2, ncols + 0.2),
                                  (-2.0, BK + 0.2), title=title)
        for c in range(0, ncols, 4):
            ax.text(c + 0.1, -0.15, f"m={c}", fontsize=6.5, va="bottom", color="#555555")
        for kk in range(BK):
            ax.text(-0.3, kk + 0.5, f"k={kk}: bank {kk * pitch % BANKS:2d} + m", ha="right",
                    va="center", fontsize=6.5)
            for c in range(ncols):
                box(ax, c, kk, 1, 1, "#f7f7f7", ec="#dddddd", lw=0.3, z=1)
        for lane, (kk, c, bank) in lanes.items():
            box(ax, c, kk, 1, 1, lane_color(lane), ec="#333333", lw=0.5, text=str(lane), fs=6,
                z=3)
        if swizzle:  # a fragment read of the same layout
            kr, ty = (9 if BK > 8 else 1), 1
            for s_ in range(sh["TM"] // 4):
                c0 = (GS * s_ + ty * 4) ^ (kr & 8)
                if c0 < ncols:
                    outline(ax, c0, kr, 4, 1, COLORS["highlight"], lw=1.8)
            ax.text(ncols, kr + 4.3, f"red: at k = {kr} thread ty = {ty} reads its fa "
                    f"from as[{kr}][{(ty * 4) ^ (kr & 8)}..{((ty * 4) ^ (kr & 8)) + 3}]\nand "
                    f"as[{kr}][{(GS + ty * 4) ^ (kr & 8)}..{((GS + ty * 4) ^ (kr & 8)) + 3}] "
                    f"(not drawn), rows {ty * 4}..{ty * 4 + 3} and {GS + ty * 4}..", ha="right",
                    va="top", fontsize=6.5, color=COLORS["highlight"])
        # the banks those 32 stores hit
        axb, bottom2 = canvas_below(fig, bottom - 0.03, left + 0.06, 0.42,
                                    (-0.2, BANKS + 0.2), (-1.0, 3.0))
        per_bank = {}
        for lane, (kk, c, bank) in sorted(lanes.items()):
            per_bank.setdefault(bank, []).append(lane)
        for b in range(BANKS):
            box(axb, b, 0, 1, 0.05, "#999999", ec="none")
            for depth, lane in enumerate(per_bank.get(b, [])):
                box(axb, b, depth + 0.1, 1, 1, lane_color(lane), ec="#333333", lw=0.5,
                    text=str(lane), fs=6, z=3)
            if b % 4 == 0:
                axb.text(b + 0.5, 2.2, str(b), ha="center", va="top", fontsize=6.5)
        ways = max(len(v) for v in per_bank.values())
        axb.text(0, -0.2, f"banks 0..31: {len(per_bank)} banks hit, "
                 f"{ways}-way conflict" if ways > 1 else
                 f"banks 0..31: all {len(per_bank)} hit once, no conflict", fontsize=8,
                 va="bottom", fontweight="bold")
    note(fig, 0.01, bottom2 - 0.02,
         f"Lane t of warp 0 holds A[row t / {BK // 4}][kq .. kq + 3] with kq = 4*(t % "
         f"{BK // 4}) and stores value j into as[kq + j][m] (drawn: j = 0). A row of as is "
         f"{pitch} floats, {pitch % BANKS} banks on,\nso k and k + 8 start "
         f"{8 * pitch} floats apart" + (
             f", a multiple of 32: without the swizzle lanes with kq = 0 and 8 (and 4 and 12) "
             f"hit the same banks. XOR-ing the column with k & 8\nmoves the k >= 8 stores by 8 "
             f"columns; the fragment reads apply the same XOR, which keeps each 4-row group "
             f"whole and 16-byte aligned (GS = {GS}, a multiple of 16)." if collide else
             f"; with BK = {BK} the 32 lanes already hit 32 banks (k & 8 is 0 for every k < 8, "
             f"so the swizzle changes nothing)."), fs=8.5)
    return fig


@figure("06_dbuf_timeline", note="06_im2col_gemm.md",
        section="6e: double buffering and register prefetch (the two-level prefetch)",
        uses=["DBUF_BK", "DBUF_TM", "RT_BK", "RT_TM"])
def fig_06_dbuf_timeline(k):
    """6d's load-wait-compute against 6e's two-level prefetch, one block, tile by tile."""
    BK, TM, BK6d, TM6d = k["DBUF_BK"], k["DBUF_TM"], k["RT_BK"], k["RT_TM"]
    fig = new_figure(11.5, 6.4, "Step 06: 6d waits for every tile; 6e loads tile t + 1 while "
                     "it computes tile t (two shared buffers, one barrier per tile)")
    lat, sts, bar, per_k = 3.0, 0.45, 0.18, 0.27  # schematic durations, not measured
    comp6d, comp = BK6d * per_k * TM6d / 8, BK * per_k * TM / 8  # a thread's FMAs per tile
    lanes = ["6d: global -> registers", "6d: registers -> shared", "6d: FMAs",
             "6e: global -> registers", "6e: FMAs", "6e: registers -> shared",
             "6e: buffer 0", "6e: buffer 1"]
    xmax = 31.5
    ax = gantt_axes(fig, (0.16, 0.36, 0.83, 0.52), lanes, xmax, None)
    # 6d: load, store, barrier, compute, barrier
    x, t = 0.0, 0
    while x + 0.2 + lat + sts + comp6d + 2 * bar < xmax:
        gantt_bar(ax, x, x + 0.2, 0, COLORS["input"])
        gantt_bar(ax, x + 0.2, x + 0.2 + lat, 0, "white", f"tile {t}: waiting", hatch="....",
                  ec="#aaaaaa", fs=7)
        x += 0.2 + lat
        gantt_bar(ax, x, x + sts, 1, COLORS["shared"], str(t), fs=7)
        x += sts
        ax.plot([x + bar / 2] * 2, [-0.4, 2.4], color=COLORS["highlight"], lw=1.4, zorder=6)
        x += bar
        gantt_bar(ax, x, x + comp6d, 2, COLORS["output"], f"tile {t}: {BK6d} k", fs=7)
        x += comp6d
        ax.plot([x + bar / 2] * 2, [-0.4, 2.4], color=COLORS["highlight"], lw=1.4, zorder=6)
        x += bar
        t += 1
    # 6e: prologue, then per tile t: issue loads of t + 1, compute t, store t + 1, barrier
    x = 0.0
    gantt_bar(ax, 0, 0.2, 3, COLORS["input"])
    gantt_bar(ax, 0.2, 0.2 + lat, 3, "white", "tile 0", hatch="....", ec="#aaaaaa", fs=7)
    x = 0.2 + lat
    gantt_bar(ax, x, x + sts, 5, COLORS["shared"], "0", fs=7)
    gantt_bar(ax, x, x + sts, 6, COLORS["shared"], "", fs=7)
    x += sts
    ax.plot([x + bar / 2] * 2, [2.6, 7.4], color=COLORS["highlight"], lw=1.4, zorder=6)
    x += bar
    t = 0
    while x + comp + sts + bar < xmax:
        gantt_bar(ax, x, x + 0.2, 3, COLORS["input"])
        gantt_bar(ax, x + 0.2, x + comp, 3, "white", f"tile {t + 1} in flight", hatch="....",
                  ec="#aaaaaa", fs=7)
        gantt_bar(ax, x, x + comp, 4, COLORS["output"], f"tile {t}: {BK} k steps", fs=7)
        gantt_bar(ax, x, x + comp, 6 + t % 2, COLORS["output"], f"read: tile {t}", fs=7)
        gantt_bar(ax, x + comp, x + comp + sts, 5, COLORS["shared"], str(t + 1), fs=7)
        gantt_bar(ax, x + comp, x + comp + sts, 6 + (t + 1) % 2, COLORS["shared"], "", fs=7)
        x += comp + sts
        ax.plot([x + bar / 2] * 2, [2.6, 7.4], color=COLORS["highlight"], lw=1.4, zorder=6)
        x += bar
        t += 1
    ax.axhline(2.5, color="#999999", lw=0.6)
    ax.text(xmax, -0.75, "red: __syncthreads()", ha="right", va="bottom", fontsize=8,
            color=COLORS["highlight"])
    # the shared -> register level inside one tile
    ax2 = gantt_axes(fig, (0.16, 0.09, 0.5, 0.16), ["LDS.128 fragments", "FFMA"], BK + 0.6,
                     None)
    ax2.set_xlim(-0.2, BK + 0.6)
    ax2.set_title(f"inside one 6e tile: the fragments of k step kk + 1 load while kk's "
                  f"{TM} x 8 = {TM * 8} FFMAs run", loc="left", fontsize=9)
    for kk in range(BK):
        x0 = 0.0 if kk == 0 else kk - 1 + 0.75  # kk's fragments load during kk - 1's FFMAs
        gantt_bar(ax2, x0 + 0.05, x0 + 0.4, 0, COLORS["register"], str(kk), fs=6)
        gantt_bar(ax2, kk + 0.45, kk + 1.4, 1, COLORS["output"], str(kk), fs=6.5)
    note(fig, 0.69, 0.25,
         f"6d (RT_BK = {BK6d}, {TM6d} x 8 outputs per thread): load a\ntile, barrier, "
         f"compute, barrier: the global latency\nis exposed once per tile. 6e (DBUF_BK = {BK}): "
         f"tile t + 1\nis requested at the top of step t and stored\nafter the FMAs, into the "
         f"buffer step t does not\nread; its one barrier per tile separates the\nlast read of "
         f"a buffer from its next write.\nDurations are schematic, not measured.", fs=8.5)
    return fig


@figure("06_implicit_gather", note="06_im2col_gemm.md",
        section="6f: implicit GEMM - convolution without the column buffer",
        uses=["DBUF_BM", "DBUF_TM", "DBUF_BK", "RT_BN", "problem hpc101-nhwc"])
def fig_06_implicit_gather(k):
    """6f's gather: row m = (n, p, q) and k = (r*S + s)*C + c of the virtual A -> an x address."""
    BM, TM, BK, BN = k["DBUF_BM"], k["DBUF_TM"], k["DBUF_BK"], k["RT_BN"]
    pr = k["problem hpc101-nhwc"]
    N, C, H, W, R, S = pr["n"], pr["c"], pr["h"], pr["w"], pr["r"], pr["s"]
    ph, pw = pr["pad_h"], pr["pad_w"]
    P, Q = out_size(H, R, ph), out_size(W, S, pw)
    KG = C * R * S
    threads = 16 * (BM // TM)
    KQ = BK // 4
    n, p, q = 1, 0, 37  # the output pixel (row of A) drawn: on the top edge, so r = 0 is padding
    m = (n * P + p) * Q + q
    kk = 700 if KG > 700 else KG // 2  # the k drawn
    c, rs = kk % C, kk // C
    r, s_ = rs // S, rs % S
    h, w = p - ph + r, q - pw + s_
    addr = ((n * H + h) * W + w) * C + (c - c % 4)
    tile_m, row_in_tile = m // BM, m % BM
    tiles_n = (pr["k"] + BN - 1) // BN  # block b computes tile (b / tiles_n, b % tiles_n)
    arows = threads // KQ
    l = row_in_tile // arows
    tid0 = (row_in_tile - l * arows) * KQ
    tid = tid0 + (kk % BK) // 4
    fig = new_figure(11.5, 6.6, f"Step 06: 6f gathers the rows of A straight from the NHWC "
                     f"image, no column buffer\n(HPC101 lab problem: N = {N}, C = {C}, "
                     f"{H} x {W}, {R} x {S} filter, pad {ph}, so P x Q = {P} x {Q})")
    # (a) the row of A
    seg = 6.0  # drawing width of one (r, s) group of C channels
    ax, bottom = canvas_below(fig, 0.85, 0.01, 0.98, (-0.5, R * S * seg + 0.5), (-1.2, 5.2),
                              title=f"(a) row m = (n*P + p)*Q + q = {fmt(m)} of the virtual "
                                    f"A ({fmt(N * P * Q)} x {fmt(KG)}): output pixel (n, p, q) "
                                    f"= ({n}, {p}, {q})")
    for j in range(R * S):
        rr, ss = j // S, j % S
        hh, ww = p - ph + rr, q - pw + ss
        pad = not (0 <= hh < H and 0 <= ww < W)
        box(ax, j * seg, 0, seg, 2.0, "white" if pad else CHANNEL_COLORS[j % len(CHANNEL_COLORS)],
            hatch="///" if pad else None, ec="#888888" if pad else "#444444")
        ax.text(j * seg + seg / 2, 1.0, f"(r, s) = ({rr}, {ss})\n" +
                ("padding: zeros" if pad else f"x[{n}][{hh}][{ww}][0..{C - 1}]"), ha="center",
                va="center", fontsize=7, zorder=5,
                bbox=dict(boxstyle="square,pad=0.1", fc="white", ec="none") if pad else None)
        ax.text(j * seg, 2.15, fmt(j * C), ha="center", va="top", fontsize=6.5, color="#555555")
    ax.text(R * S * seg, 2.15, fmt(KG), ha="center", va="top", fontsize=6.5, color="#555555")
    ax.text(0, -0.2, f"k = (r*S + s)*C + c: {R * S} groups of C = {C} channels. A tile of "
            f"BK = {BK} columns lies inside one group (C % {BK} == 0); 4 neighbouring k are 4 "
            f"contiguous channels of one pixel: one float4", fontsize=8, va="bottom")
    xk = (rs + (c - c % 4) / C) * seg
    ax.plot([xk + seg * 2 / C], [2.9], marker="^", color=COLORS["highlight"], ms=8)
    ax.text(xk, 3.3, f"k = {kk - kk % 4}..{kk - kk % 4 + 3}: c = k % C = {c - c % 4}.."
            f"{c - c % 4 + 3},  s = (k / C) % S = {s_},  r = k / (C*S) = {r}", ha="center",
            va="top", fontsize=8, color=COLORS["highlight"])
    # (b) the image around (p, q)
    hs, ws = list(range(p - ph, p - ph + R + 1)), list(range(q - pw - 1, q - pw + S + 1))
    ax2, _ = canvas_below(fig, bottom - 0.06, 0.05, 0.34, (-2.5, len(ws) * 3 + 0.5),
                          (-1.5, len(hs) * 3 + 2.2),
                          title=f"(b) image n = {n} of x[N][H][W][C] near (h, w) = ({p}, {q})")
    for i, hh in enumerate(hs):
        ax2.text(-0.2, i * 3 + 1.2, f"h={hh}", ha="right", va="center", fontsize=7)
        for j, ww in enumerate(ws):
            inside = 0 <= hh < H and 0 <= ww < W
            box(ax2, j * 3, i * 3, 2.4, 2.4, "#f2f2f2" if not inside else COLORS["input"],
                ec="#888888", hatch="///" if not inside else None, lw=0.5,
                text=None if not inside else f"{C} floats", fs=6.5)
            if i == 0:
                ax2.text(j * 3 + 1.2, -0.2, f"w={ww}", ha="center", va="bottom", fontsize=7)
    i0, j0 = hs.index(p - ph), ws.index(q - pw)
    outline(ax2, j0 * 3 - 0.25, i0 * 3 - 0.25, S * 3 - 0.1, R * 3 - 0.1, COLORS["output_dark"],
            lw=2)
    ih, jw = hs.index(h), ws.index(w)
    outline(ax2, jw * 3, ih * 3, 2.4, 2.4, COLORS["highlight"], lw=2.2)
    ax2.text(-2.4, len(hs) * 3 + 0.1, f"green: the {R} x {S} window of (p, q) = ({p}, {q}); "
             f"hatched: zero padding\nred: pixel (h, w) = ({h}, {w}), whose channels "
             f"{c - c % 4}..{c - c % 4 + 3} are the float4", ha="left", va="top", fontsize=7.5)
    # (c) the arithmetic
    note(fig, 0.43, bottom - 0.075,
         f"Row m -> (n, p, q), once per thread (a_source_init):\n"
         f"    n = m / (P*Q) = {n},  p = (m % (P*Q)) / Q = {p},  q = m % Q = {q}\n"
         f"    top-left of the window: h0 = p*stride_h - pad_h = {p - ph},  "
         f"w0 = q*stride_w - pad_w = {q - pw}\n\n"
         f"k -> (c, s, r), once, then stepped by BK = {BK} with additions:\n"
         f"    kc += {BK}; while (kc >= C) {{ kc -= C; if (++ks == S) {{ ks = 0; ++kr; }} }}\n\n"
         f"The float4 at k = {kk - kk % 4}..{kk - kk % 4 + 3}:\n"
         f"    h = h0 + r*dil_h = {h},  w = w0 + s*dil_w = {w}\n"
         f"    x + ((n*H + h)*W + w)*C + c = x + (({n}*{H} + {h})*{W} + {w})*{C} + {c - c % 4}"
         f" = x + {fmt(addr)}\n"
         f"    (zeros instead when h or w falls outside the image)\n\n"
         f"Who loads it: row m is row {row_in_tile} of block-tile row {fmt(tile_m)} "
         f"(BM = {BM});\nwith tiles_n = ceil(K / {BN}) = {tiles_n} that is block"
         f"{'s' if tiles_n > 1 else ''} {fmt(tile_m * tiles_n)}"
         f"{'..' + fmt(tile_m * tiles_n + tiles_n - 1) if tiles_n > 1 else ''}. "
         f"{KQ} neighbouring threads\nload a row's {BK} floats of a tile, a float4 each: "
         f"threads {tid0}..{tid0 + KQ - 1},\nthread {tid} this float4 (its load l = {l}).",
         fs=8.5)
    return fig


# ---------------------------------------------------------------------------
# The manifest, the check and the command line


def sha256_file(path):
    with open(path, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


def code_hashes(script_path):
    """For each figure, a hash of its function and of every top-level helper
    and constant that function uses, directly or through other helpers (the
    decorator, which only lists the constants, is not part of it)."""
    with open(script_path) as fh:
        text = fh.read()
    tree = ast.parse(text)
    top = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            top[node.name] = node
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    top[target.id] = node

    def uses(node):
        parts = node.body if isinstance(node, (ast.FunctionDef, ast.ClassDef)) else [node]
        return {n.id for part in parts for n in ast.walk(part)
                if isinstance(n, ast.Name) and n.id in top}

    hashes = {}
    for fig in FIGURES:
        name = fig["function"].__name__
        closure, todo = set(), [name]
        while todo:
            current = todo.pop()
            if current not in closure:
                closure.add(current)
                todo += sorted(uses(top[current]))
        digest = hashlib.sha256()
        for n in sorted(closure):
            node = top[n]
            start = node.lineno - 1
            lines = text.splitlines()[start:node.end_lineno]
            digest.update(("\n".join(lines) + "\n").encode())
        hashes[fig["name"]] = digest.hexdigest()
    return hashes


def png_path(root, name):
    return os.path.join(root, FIG_DIR, name + ".png")


def read_manifest(root):
    path = os.path.join(root, MANIFEST)
    if not os.path.exists(path):
        return None
    with open(path) as fh:
        return json.load(fh)


def readme_text():
    """docs/figures/README.md: generated from the registry, so that its list of
    figures and constants cannot drift from the script."""
    lines = [
        "# Figures of the lecture notes",
        "",
        "Two kinds of figures live here:",
        "",
        "- the concept figures listed below, drawn by `scripts/figures.py` from the constants "
        "of the code itself (tile sizes, threads per block, the problems of the notes), so "
        "that a figure shows what the kernels do today;",
        "- the measured figures of [performance.md](../performance.md) (`<problem>_steps.png`, "
        "`roofline.png`), drawn by `scripts/plot_bench.py` from the benchmark's CSV.",
        "",
        "Each row names the note and the section the figure belongs in, beside or instead of "
        "the ASCII sketch there, and the constants it is drawn from: `NAME` is a "
        "`#define NAME value` found anywhere in the sources, `launch_s1<>` the template "
        "arguments of step 04's `launch_s1<TILE_W, TILE_H, ROWS>` calls, `problem NAME` a "
        "problem of the benchmark's table in `bench/bench_problems.c`.",
        "",
        "| figure | what it shows | note: section | constants |",
        "| --- | --- | --- | --- |",
    ]
    for fig in FIGURES:
        what = fig["function"].__doc__.strip().split("\n")[0]
        consts = ", ".join(f"`{u}`" for u in fig["uses"])
        lines.append(f"| [{fig['name']}.png]({fig['name']}.png) | {what} | "
                     f"[{fig['note']}](../{fig['note']}): {fig['section']} | {consts} |")
    lines += [
        "",
        "## Regenerating",
        "",
        "```sh",
        "scripts/setup.sh --plots                  # matplotlib, where it is missing",
        "python3 scripts/figures.py                # every figure, figures.json and this page",
        "python3 scripts/figures.py 04_halo_tile   # one figure",
        "python3 scripts/figures.py --check        # what is stale; needs no matplotlib",
        "```",
        "",
        "Drawing a figure records in [figures.json](figures.json) the constants it used with "
        "their values, a hash of its drawing code (its function and every helper it calls) "
        "and a hash of the PNG. `--check` reads the constants from the sources again and "
        "prints one line per stale figure, naming what changed: a constant (old and new "
        "value), the drawing code, a PNG that is missing or not the recorded one; it exits "
        "with status 1 if any is stale, and also when this page no longer matches the "
        "script. The test `docs.figures` (`tests/test_figures.py`, labels `cpu` and `docs`) "
        "runs the check and proves it can fail. After changing a constant that a figure "
        "uses, regenerate and look at the figure: the script draws from the new value, but "
        "only a reader can tell whether the picture still makes its point.",
        "",
    ]
    return "\n".join(lines)


def generate(root, names):
    """Draws the figures `names` (all when empty) and updates the manifest."""
    sources = Sources(root)
    hashes = code_hashes(os.path.abspath(__file__))
    manifest = read_manifest(root) or {}
    entries = manifest.get("figures", {})
    os.makedirs(os.path.join(root, FIG_DIR), exist_ok=True)
    for fig in FIGURES:
        if names and fig["name"] not in names:
            continue
        consts = Constants({key: sources.value(key) for key in fig["uses"]})
        path = png_path(root, fig["name"])
        save(fig["function"](consts), path)
        entries[fig["name"]] = {
            "file": os.path.relpath(path, root),
            "function": fig["function"].__name__,
            "constants": dict(consts),
            "code": hashes[fig["name"]],
            "png": sha256_file(path),
        }
        print(f"{os.path.relpath(path, root)}: {os.path.getsize(path) // 1024} KB")
    known = {fig["name"] for fig in FIGURES}
    entries = {n: e for n, e in sorted(entries.items()) if n in known}
    manifest = {
        "about": "Written by scripts/figures.py: for each figure the constants it was drawn "
                 "from, a hash of its drawing code and of its PNG. "
                 "`python3 scripts/figures.py --check` compares them with the sources.",
        "figures": entries,
    }
    with open(os.path.join(root, MANIFEST), "w") as fh:
        json.dump(manifest, fh, indent=1, sort_keys=True)
        fh.write("\n")
    with open(os.path.join(root, README), "w") as fh:
        fh.write(readme_text())


def describe_change(key, old, new):
    if isinstance(old, dict) and isinstance(new, dict):
        diffs = [f"{f} {old.get(f)} -> {new.get(f)}" for f in sorted(set(old) | set(new))
                 if old.get(f) != new.get(f)]
        return f"{key} changed ({', '.join(diffs)})"
    return f"{key} changed ({json.dumps(old)} -> {json.dumps(new)})"


def check(root):
    """One line per stale figure (an empty list when every figure is current)."""
    sources = Sources(root)
    hashes = code_hashes(os.path.abspath(__file__))
    manifest = read_manifest(root)
    entries = manifest.get("figures", {}) if manifest else {}
    stale = []
    for fig in FIGURES:
        name, path = fig["name"], png_path(root, fig["name"])
        entry, reasons = entries.get(name), []
        if not os.path.exists(path):
            reasons.append("the PNG is missing")
        if entry is None:
            reasons.append(f"not in {MANIFEST}" if manifest else f"{MANIFEST} is missing")
        else:
            recorded = entry.get("constants", {})
            for key in fig["uses"]:
                try:
                    value = sources.value(key)
                except LookupError as err:
                    reasons.append(f"constant {key} cannot be read ({err})")
                    continue
                if key not in recorded:
                    reasons.append(f"now uses {key}, which figures.json does not record")
                elif recorded[key] != value:
                    reasons.append(describe_change(key, recorded[key], value))
            for key in sorted(set(recorded) - set(fig["uses"])):
                reasons.append(f"no longer uses {key}")
            if entry.get("code") != hashes[name]:
                reasons.append(f"its drawing code changed ({fig['function'].__name__}() or a "
                               "helper it uses)")
            if os.path.exists(path) and entry.get("png") != sha256_file(path):
                reasons.append("the PNG is not the one figures.json records")
        if reasons:
            stale.append(f"{os.path.relpath(path, root)}: stale: {'; '.join(reasons)}")
    drawn = {fig["name"] for fig in FIGURES}
    for name in sorted(set(entries) - drawn):
        stale.append(f"{entries[name].get('file', name)}: in {MANIFEST} but no longer drawn")
    readme = os.path.join(root, README)
    if not os.path.exists(readme):
        stale.append(f"{README}: missing")
    else:
        with open(readme) as fh:
            if fh.read() != readme_text():
                stale.append(f"{README}: stale: it no longer matches the figures of the script")
    return stale


def inputs(root):
    """The files the check reads, relative to root."""
    sources = Sources(root)
    for fig in FIGURES:
        for key in fig["uses"]:
            try:
                sources.value(key)
            except LookupError:
                pass
    files = {os.path.relpath(os.path.abspath(__file__), root), MANIFEST, README}
    files |= {os.path.join(FIG_DIR, fig["name"] + ".png") for fig in FIGURES}
    return sorted(files | sources.used_files)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("names", nargs="*", help="figures to draw (default: all)")
    parser.add_argument("--check", action="store_true",
                        help="report stale figures (exit 1), draw nothing")
    parser.add_argument("--list-inputs", action="store_true",
                        help="print the files the check reads")
    parser.add_argument("--root", default=ROOT, help="repository root (default: this script's)")
    args = parser.parse_args()
    root = os.path.abspath(args.root)
    unknown = set(args.names) - {fig["name"] for fig in FIGURES}
    if unknown:
        parser.error(f"unknown figure(s): {', '.join(sorted(unknown))}")
    if args.list_inputs:
        print("\n".join(inputs(root)))
        return 0
    if args.check:
        stale = check(root)
        for line in stale:
            print(line)
        if stale:
            pngs = sum(".png: " in line for line in stale)
            print(f"{pngs} of {len(FIGURES)} figures stale"
                  f"{', ' + README + ' stale' if any(README in x for x in stale) else ''}: "
                  f"run python3 scripts/figures.py")
            return 1
        print(f"{len(FIGURES)} figures current")
        return 0
    generate(root, set(args.names))
    return 0


if __name__ == "__main__":
    sys.exit(main())
