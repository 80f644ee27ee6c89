"""Step 01's figures: the convolution on the CPU (docs/01_cpu_serial.md).

    01_sliding_window   one output as a sum over the C channels of an R x S
                        window times one filter
    01_layouts          the loop nest of conv2d_cpu_serial(), and where x's
                        elements live in NCHW and in NHWC
"""
from .draw import (CHANNEL_COLORS, COLORS, arrow, box, canvas, grid_lines, new_figure, out_size,
                   outline)
from .manifest import figure, paragraph

NOTE = "01_cpu_serial.md"  # the lecture note of every figure here (docs/)


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


def window_start(pr):
    """Where the window of output (p, q) starts, in words."""
    ph, pw = pr["pad_h"], pr["pad_w"]
    if ph == 0 and pw == 0:
        return "no padding: the window of (p, q) starts at input (p, q)"
    return f"padding {ph} x {pw}: the window of (p, q) starts at input (p - {ph}, q - {pw})"


def caption_01_sliding_window(k):
    pr = k["problem lecture"]
    return paragraph("""
        The output y[n][k][p][q] is the sum over c < C, r < R, s < S of
        x[n][c][p*stride_h - pad_h + r*dil_h][q*stride_w - pad_w + s*dil_w] * w[k][c][r][s].
        The lecture problem has stride 1 and no dilation, {window}, and each output costs
        C*R*S = {crs} multiply-adds. The window moves by one column for q + 1 and by one row
        for p + 1: neighbouring outputs share most of their inputs, and every input is read by
        up to K*R*S = {krs} outputs (R*S windows of each of the K = {K} filters).""",
                     window=window_start(pr), crs=pr["c"] * pr["r"] * pr["s"],
                     krs=pr["k"] * pr["r"] * pr["s"], K=pr["k"])


@figure(section="What is computed",
        uses=["problem lecture"])
def fig_01_sliding_window(k):
    """One output is the sum, over the C channels, of an R x S window times one filter."""
    pr = k["problem lecture"]
    C, R, S, K = pr["c"], pr["r"], pr["s"], pr["k"]
    P, Q = out_size(pr["h"], R, pr["pad_h"]), out_size(pr["w"], S, pr["pad_w"])
    rows, cols = R + 4, S + 6  # the corner of the image that is drawn
    p, q = 2, 3  # the output drawn
    fig = new_figure(11, 3.9, f"Step 01: one output y[n][k][p][q] is a sum over C = {C} "
                     f"channels of an R x S = {R} x {S} window (the lecture problem)")
    dx, dy = 0.9, 0.75
    ax = canvas(fig, (0.01, 0.02, 0.98, 0.87), (-0.5, 57), (0.5, 19.3))
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
    return fig


def caption_01_layouts(k):
    return paragraph("""
        The toy image has the lecture problem's C = {C} channels and 2 x 3 pixels; each cell
        shows h,w and its colour is the channel c. Red marks the taps kw = 0 and 1 of filter
        row kh = 0 for output (0, 0), blue the same tap one input channel later. NCHW (steps
        01 to 05) keeps a channel's plane contiguous, so the innermost loop (kw) walks along a
        row, one float per step, and the next input channel is H*W floats on. NHWC (step 06,
        the HPC101 lab's layout) keeps the C channels of a pixel contiguous: kw steps by C
        floats, and the order (r, s, c) is the order in which step 06's GEMM reads a
        window.""", C=k["problem lecture"]["c"])


@figure(section="Layouts: where an element lives; The five loops, and why this order",
        uses=["problem lecture"])
def fig_01_layouts(k):
    """The loop nest of conv2d_cpu_serial(), and where x's elements live in NCHW and NHWC."""
    pr = k["problem lecture"]
    C = pr["c"]
    H, W = 2, 3  # a toy image with the lecture's channel count
    fig = new_figure(11.5, 4.6, "Step 01: the loop nest, and one image in NCHW and NHWC "
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
    fig.text(0.015, 0.89, loops, family="DejaVu Sans Mono", fontsize=8, va="top", ha="left",
             bbox=dict(boxstyle="round,pad=0.5", fc="#f7f7f7", ec="#bbbbbb"))
    # the toy image, one plane per channel
    ax = canvas(fig, (0.55, 0.52, 0.44, 0.37), (-0.5, C * (W + 1)), (-1.6, H + 0.2))
    ax.text(-0.4, -1.5, f"x[0][c][h][w]: C = {C} channels, a toy {H} x {W} image",
            fontsize=8.5, va="top")
    for c in range(C):
        for h in range(H):
            for w in range(W):
                box(ax, c * (W + 1) + w, h, 1, 1, CHANNEL_COLORS[c % len(CHANNEL_COLORS)],
                    text=f"{h},{w}", fs=7.5)
        ax.text(c * (W + 1) + W / 2, -0.15, f"c = {c}", ha="center", va="bottom", fontsize=8)
    # the two memory orders
    n = C * H * W
    ax2 = canvas(fig, (0.015, 0.01, 0.97, 0.5), (-4.5, n + 14.5), (-1.6, 10.2))
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
    ax2.text(-4.3, 9.4, "red: taps kw = 0 and 1 of filter row kh = 0 for output (0, 0);  "
             "blue: the same tap one input channel later", fontsize=8.5, va="center")
    return fig
