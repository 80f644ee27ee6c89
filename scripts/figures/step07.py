"""Step 07's figures: Winograd convolution (docs/07_winograd.md).

    07_f23_dataflow     F(2, 3) in 1D, four products for two outputs, and its
                        nesting to 2D for F(2x2, 3x3) and F(4x4, 3x3)
    07_tiles            the output tiles of a small image, the (m + 2) x (m + 2)
                        input tile each one reads (halo, padding, zeros past the
                        image) and the outputs cut at the edges
    07_pipeline         the non-fused pipeline: four launches and the tensors U,
                        V and M they move, sized for CUTLASS's problem

The tile sizes: F(2x2, 3x3) and the largest tile of the host code,
WINO_MAX_ALPHA = m + 2 (F(4x4, 3x3)).
"""
from .draw import (COLORS, arrow, box, canvas_below, fmt, grid_lines,
                   new_figure, note, out_size, outline, swatch)
from .manifest import figure, paragraph

NOTE = "07_winograd.md"  # the lecture note of every figure here (docs/)


def tile_sides(k):
    """The m of each tile size the step computes: F(2x2, 3x3) and the largest,
    whose input tile side is WINO_MAX_ALPHA."""
    return [2, k["WINO_MAX_ALPHA"] - 2]


def cutlass_tiling(k):
    """CUTLASS's problem cut into the output tiles of each tile size: the
    tiles, the tensors U, V, M (floats), the multiplications, and one tile t
    of the batch followed from its index to the input rows and columns it reads."""
    pr = k["problem cutlass"]
    N, C, K, R, S = pr["n"], pr["c"], pr["k"], pr["r"], pr["s"]
    P, Q = out_size(pr["h"], R, pr["pad_h"]), out_size(pr["w"], S, pr["pad_w"])
    out = []
    for m in tile_sides(k):
        a = m + 2
        th, tw = -(-P // m), -(-Q // m)
        T = N * th * tw
        out.append({"m": m, "alpha": a, "a2": a * a, "tiles_h": th, "tiles_w": tw,
                    "tiles_img": th * tw, "T": T, "U": a * a * K * C, "V": a * a * C * T,
                    "M": a * a * K * T, "mults": a * a * K * C * T})
    big = out[-1]
    t = big["tiles_img"] + big["tiles_w"] + 8  # image 1, tile row 1, tile column 8
    n, tile = t // big["tiles_img"], t % big["tiles_img"]
    tr, tc = tile // big["tiles_w"], tile % big["tiles_w"]
    m = big["m"]
    worked = {"t": t, "n": n, "tile": tile, "tr": tr, "tc": tc, "p0": tr * m, "q0": tc * m,
              "h0": tr * m - pr["pad_h"], "w0": tc * m - pr["pad_w"]}
    return {"N": N, "C": C, "K": K, "H": pr["h"], "W": pr["w"], "R": R, "S": S,
            "ph": pr["pad_h"], "pw": pr["pad_w"], "P": P, "Q": Q,
            "direct": R * S * K * C * N * P * Q,
            "x": N * C * pr["h"] * pr["w"], "w": K * C * R * S, "y": N * K * P * Q,
            "tiles": out, "worked": worked}


def mb(floats):
    """Floats as MB (10^6 bytes), one decimal."""
    return f"{floats * 4 / 1e6:,.1f} MB"


# ---------------------------------------------------------------------------
# 07_f23_dataflow

F23_U = ["g0", "(g0 + g1 + g2) / 2", "(g0 - g1 + g2) / 2", "g2"]  # u = G g
F23_V = ["d0 - d2", "d1 + d2", "d2 - d1", "d1 - d3"]  # v = B^T d
F23_Y = [("y0 =", ["+", "+", "+", ""]), ("y1 =", ["", "+", "-", "-"])]  # A^T m, by column


def tile(ax, x, y, side, color, label):
    """A side x side tile at (x, y), its cells outlined in white, its name in the middle."""
    box(ax, x, y, side, side, color, ec="none", z=1)
    grid_lines(ax, x, y, side, side, color="#ffffff", lw=0.5)
    ax.text(x + side / 2, y + side / 2, label, ha="center", va="center", fontsize=9, zorder=5)


def transform(ax, x_from, x_to, y, formula):
    """The arrow at height y from a tile ending at x_from to one starting at x_to, and its formula."""
    arrow(ax, (x_from + 0.3, y), (x_to - 0.3, y))
    ax.text(x_from + 2.4, y - 0.2, formula, ha="center", va="bottom", fontsize=7.5)


def caption_07_f23_dataflow(k):
    m4 = tile_sides(k)[-1]
    a4 = m4 + 2
    return paragraph("""
        (a) Winograd's minimal filtering F(2, 3) computes two outputs of a 3-tap correlation,
        y0 = d0 g0 + d1 g1 + d2 g2 and y1 = d1 g0 + d2 g1 + d3 g2 (six multiplications), from
        four inputs d0..d3 with four multiplications. The filter is transformed once, u = G g
        (its constants 1 and 1/2); the input tile by additions only, v = B^T d; then
        m1..m4 = u0 v0 .. u3 v3 are the only products, and y = A^T m adds them back up. The
        matrices come from evaluating the product of the polynomials d(x) and g(x) at the
        points 0, 1, -1 and infinity. (b) Nested, rows then columns, the same matrices give
        the 2D tile: Y = A^T [ (G g G^T) .* (B^T d B) ] A. F(2x2, 3x3) reads a 4 x 4 input tile
        and multiplies 16 times for 2 x 2 outputs (direct: 9 x 4 = 36); F({m}x{m}, 3x3), with
        the points 0, 1, -1, 2, -2 and infinity, reads {a} x {a} and multiplies {a2} times for
        {m} x {m} outputs (direct: 9 x {mm} = {direct}): {r2:.2f} and {r4:.2f} times fewer
        multiplications.""",
                     m=m4, a=a4, a2=a4 * a4, mm=m4 * m4, direct=9 * m4 * m4, r2=36 / 16,
                     r4=9 * m4 * m4 / (a4 * a4))


@figure(section="F(2, 3) by hand; From 1D to 2D, and F(4x4, 3x3)",
        uses=["WINO_MAX_ALPHA"])
def fig_07_f23_dataflow(k):
    """F(2, 3) in 1D: four products for two outputs; the same nested to 2D tiles."""
    fig = new_figure(11.5, 7.4, "Step 07: Winograd's minimal filtering, F(2, 3) by hand, "
                     "then nested to 2D tiles")
    # (a) the 1D flow: the four transform-domain positions are columns; u above
    # the products, v below them, the outputs as rows of A^T under them
    X = [9.5 + 4.6 * i for i in range(4)]
    cw, ch = 4.2, 1.1
    ax, bottom = canvas_below(fig, 0.925, 0.01, 0.98, (-0.5, 29.5), (-1.2, 10.6),
                              title="(a) F(2, 3): 2 outputs of a 3-tap filter from 4 inputs, "
                                    "4 multiplications")
    rows = {"u": 0.0, "m": 2.2, "v": 4.4, "y0": 6.8, "y1": 8.1}
    for j in range(3):
        box(ax, j * 1.4, rows["u"], 1.2, ch, COLORS["weight"], text=f"g{j}", fs=8)
    ax.text(0, rows["u"] - 0.15, "filter g", fontsize=8, va="bottom")
    for j in range(4):
        box(ax, j * 1.4, rows["v"], 1.2, ch, COLORS["input"], text=f"d{j}", fs=8)
    ax.text(0, rows["v"] - 0.15, "input tile d", fontsize=8, va="bottom")
    arrow(ax, (4.4, rows["u"] + ch / 2), (X[0] - 0.3, rows["u"] + ch / 2))
    ax.text(6.9, rows["u"] + ch / 2 - 0.12, "u = G g", ha="center", va="bottom", fontsize=8)
    arrow(ax, (5.8, rows["v"] + ch / 2), (X[0] - 0.3, rows["v"] + ch / 2))
    ax.text(7.6, rows["v"] + ch / 2 - 0.12, "v = B^T d", ha="center", va="bottom", fontsize=8)
    for i in range(4):
        box(ax, X[i], rows["u"], cw, ch, COLORS["weight"], text=f"u{i} = {F23_U[i]}", fs=7.5)
        box(ax, X[i], rows["v"], cw, ch, COLORS["input"], text=f"v{i} = {F23_V[i]}", fs=7.5)
        box(ax, X[i], rows["m"], cw, ch, COLORS["register"], text=f"m{i + 1} = u{i} x v{i}",
            fs=8, weight="bold")
        arrow(ax, (X[i] + cw / 2, rows["u"] + ch + 0.05), (X[i] + cw / 2, rows["m"] - 0.05),
              lw=0.9, ms=7)
        arrow(ax, (X[i] + cw / 2, rows["v"] - 0.05), (X[i] + cw / 2, rows["m"] + ch + 0.05),
              lw=0.9, ms=7)
    ax.text(0, rows["m"] + ch / 2, "the only multiplications:\nm = u .* v (element-wise)",
            fontsize=8, va="center", color=COLORS["register_dark"])
    for name, (text, signs) in zip(("y0", "y1"), F23_Y):
        used = [i for i, sg in enumerate(signs) if sg]
        c0, c1 = used[0], used[-1]
        box(ax, X[c0] - 0.15, rows[name], X[c1] + cw - X[c0] + 0.3, ch, COLORS["output"], z=1)
        for i in used:
            ax.text(X[i] + cw / 2, rows[name] + ch / 2, f"{signs[i]} m{i + 1}", ha="center",
                    va="center", fontsize=8.5, zorder=5)
        ax.text(X[c0] - 0.4, rows[name] + ch / 2, text, ha="right", va="center", fontsize=8.5)
    ax.text(0, rows["y0"] + ch + 0.05, "y = A^T m:\nadditions only", fontsize=8, va="center")
    ax.text(0, 10.0, "direct: y0 = d0 g0 + d1 g1 + d2 g2,  y1 = d1 g0 + d2 g1 + d3 g2: "
            "6 multiplications", fontsize=8, va="center", color="#555555")
    # (b) nested: 2D tiles of both sizes side by side
    panels = []
    for m in tile_sides(k):
        panels.append((m, m + 2))
    widths = [3 * a + m + 14 for m, a in panels]
    gap = 2.0
    height = max(2 * a + 2.5 for _, a in panels) + 0.3
    ax2, _ = canvas_below(fig, bottom - 0.02, 0.01, 0.98, (-0.5, sum(widths) + gap),
                          (-2.0, height), title="(b) nested, rows then columns: "
                          "Y = A^T [ (G g G^T) .* (B^T d B) ] A")
    x0 = 0.0
    for (m, a), width in zip(panels, widths):
        yd, yg = 0.0, a + 2.0
        ax2.text(x0, -0.6, f"F({m}x{m}, 3x3): {a} x {a} input tile, {a * a} products for "
                 f"{m * m} outputs (direct: {9 * m * m})", fontsize=8, va="bottom",
                 fontweight="bold")
        # input tile d and V
        tile(ax2, x0, yd, a, COLORS["input"], "d")
        xv = x0 + a + 4.5
        transform(ax2, x0 + a, xv, yd + a / 2, "B^T d B")
        tile(ax2, xv, yd, a, COLORS["input"], "V")
        # filter g and U
        tile(ax2, x0 + (a - 3), yg + (a - 3) / 2, 3, COLORS["weight"], "g")
        transform(ax2, x0 + a, xv, yg + a / 2, "G g G^T")
        tile(ax2, xv, yg, a, COLORS["weight"], "U")
        # M = U .* V, then Y
        xm, ym = xv + a + 3.5, (yd + yg) / 2
        arrow(ax2, (xv + a + 0.3, yd + a / 2), (xm - 0.3, ym + a / 2 - 0.6), lw=0.9)
        arrow(ax2, (xv + a + 0.3, yg + a / 2), (xm - 0.3, ym + a / 2 + 0.6), lw=0.9)
        box(ax2, xm, ym, a, a, COLORS["register"], ec="none", z=1)
        grid_lines(ax2, xm, ym, a, a, color="#ffffff", lw=0.5)
        ax2.text(xm + a / 2, ym + a / 2, "M = U .* V", ha="center", va="center", fontsize=7,
                 zorder=5)
        ax2.text(xm + a / 2, ym - 0.2, f"{a * a} products", ha="center", va="bottom",
                 fontsize=7.5, color=COLORS["register_dark"])
        xy = xm + a + 4.5
        arrow(ax2, (xm + a + 0.3, ym + a / 2), (xy - 0.3, ym + a / 2))
        ax2.text(xm + a + 2.4, ym + a / 2 - 0.2, "A^T M A", ha="center", va="bottom",
                 fontsize=7.5)
        box(ax2, xy, ym + (a - m) / 2, m, m, COLORS["output"], ec="none", z=1)
        grid_lines(ax2, xy, ym + (a - m) / 2, m, m, color="#ffffff", lw=0.5)
        ax2.text(xy + m / 2, ym + (a - m) / 2 + m + 0.3, f"Y: {m} x {m}", ha="center",
                 va="top", fontsize=7.5)
        x0 += width + gap
    return fig


# ---------------------------------------------------------------------------
# 07_tiles

TOY = {"H": 7, "W": 7, "pad": 1}  # a small image whose output is no multiple of the tile
TILE_COLORS = [COLORS["weight_dark"], "#e08a00", COLORS["output_dark"], "#1f78b4"]


def tile_color(i, last):
    """The outline of tile i: red for the last one (the tile the caption follows)."""
    return COLORS["highlight"] if i == last else TILE_COLORS[i % len(TILE_COLORS)]


def caption_07_tiles(k):
    c = cutlass_tiling(k)
    m = tile_sides(k)[-1]
    a = m + 2
    P = out_size(TOY["H"], 3, TOY["pad"])
    nt = -(-P // m)
    big, small = c["tiles"][-1], c["tiles"][0]
    wk = c["worked"]
    return paragraph("""
        (a) A {H} x {W} image, padding {pad}, a 3 x 3 filter: a {P} x {P} output, cut into
        {nt} x {nt} tiles of {m} x {m} (F({m}x{m}, 3x3)). Output tile (tile row i, tile column
        j) starts at output (p0, q0) = ({m}i, {m}j) and reads the {a} x {a} inputs from
        (h0, w0) = (p0 - pad_h, q0 - pad_w): its own {m} x {m} positions shifted by the
        padding and a halo of {halo} rows and columns, which it shares with the next tile
        (the coloured outlines overlap by {halo}). Every input outside the image is read as
        zero, whether it is padding (grey) or lies past it (hatched): padding is only the
        shift of (h0, w0), so any padding works. The red tile (1, 1) reads rows and columns
        {r0}..{r1}; rows and columns {H} and {H1} are zeros. (b) Each tile computes {m} x {m}
        outputs; those past the {P} x {P} output (hatched) are computed with the rest of the
        tile and not written. CUTLASS's problem ({N} images of {H2} x {W2}, padding {ph})
        has {P2} x {Q} outputs: {st[tiles_h]} x {st[tiles_w]} tiles of 2 x 2 per image,
        T = {T2} in the batch, or {bt[tiles_h]} x {bt[tiles_w]} tiles of {m} x {m}, T = {T4};
        {cut}.
        Tile t = {wk[t]:,} of the batch is image n = t / {bt[tiles_img]:,} = {wk[n]}, tile
        t % {bt[tiles_img]:,} = {wk[tile]}, tile row {wk[tile]} / {bt[tiles_w]} = {wk[tr]} and
        column {wk[tile]} % {bt[tiles_w]} = {wk[tc]}: outputs from (p0, q0) = ({wk[p0]},
        {wk[q0]}), inputs rows {wk[h0]}..{h1} and columns {wk[w0]}..{w1}.""",
                     H=TOY["H"], W=TOY["W"], pad=TOY["pad"], P=P, nt=nt, m=m, a=a, halo=a - m,
                     r0=m - TOY["pad"], r1=m - TOY["pad"] + a - 1, H1=TOY["H"] + 1,
                     N=c["N"], H2=c["H"], W2=c["W"], ph=c["ph"], Q=c["Q"], st=small, bt=big,
                     P2=c["P"], T2=fmt(small["T"]), T4=fmt(big["T"]), wk=wk, h1=wk["h0"] + a - 1,
                     cut=("no tile is cut" if c["P"] % m == 0 and c["Q"] % m == 0 else
                          "the last tile row or column is cut"),
                     w1=wk["w0"] + a - 1)


@figure(section="From one tile to a convolution: Tiles, halos and edges",
        uses=["WINO_MAX_ALPHA", "problem cutlass"])
def fig_07_tiles(k):
    """The output tiles of a small image and the input tile each reads: halo, padding, edges."""
    m = tile_sides(k)[-1]
    a = m + 2
    H, W, pad = TOY["H"], TOY["W"], TOY["pad"]
    P, Q = out_size(H, 3, pad), out_size(W, 3, pad)
    nt_h, nt_w = -(-P // m), -(-Q // m)
    lo, hi = -pad, (nt_h - 1) * m - pad + a  # the rows any input tile reads: lo .. hi - 1
    fig = new_figure(11.5, 5.6, f"Step 07: F({m}x{m}, 3x3) tiles of a {H} x {W} image with "
                     f"padding {pad}: {a} x {a} input tiles, {m} x {m} output tiles")
    span = hi - lo
    ax, bottom = canvas_below(fig, 0.9, 0.05, 0.46, (lo - 2.2, hi + 0.6), (lo - 2.2, hi + 0.4),
                              title=f"(a) the input: each tile reads {a} x {a}")
    for h in range(lo, hi):
        for w in range(lo, hi):
            inside = 0 <= h < H and 0 <= w < W
            padding = -pad <= h < H + pad and -pad <= w < W + pad
            if inside:
                box(ax, w, h, 1, 1, COLORS["input"], ec="#ffffff", lw=0.5, z=1)
            elif padding:
                box(ax, w, h, 1, 1, COLORS["idle"], ec="#ffffff", lw=0.5, text="0", fs=6, z=1)
            else:
                box(ax, w, h, 1, 1, "white", ec="#bbbbbb", lw=0.5, hatch="///", text="0", fs=6,
                    z=1)
    for i in range(lo, hi):
        ax.text(lo - 0.3, i + 0.5, str(i), ha="right", va="center", fontsize=7)
        ax.text(i + 0.5, lo - 0.3, str(i), ha="center", va="bottom", fontsize=7)
    ax.text(lo - 1.8, lo - 1.0, "h \\ w", fontsize=7, va="bottom")
    outline(ax, 0, 0, W, H, "#333333", lw=1.2, z=5)
    for ti in range(nt_h):
        for tj in range(nt_w):
            h0, w0 = ti * m - pad, tj * m - pad
            inset = 0.08 + 0.1 * (ti * nt_w + tj)
            red = (ti, tj) == (nt_h - 1, nt_w - 1)
            outline(ax, w0 + inset, h0 + inset, a - 2 * inset, a - 2 * inset,
                    tile_color(ti * nt_w + tj, nt_h * nt_w - 1), lw=2.4 if red else 1.5,
                    z=6 + red)
    # (b) the output
    ax2, _ = canvas_below(fig, 0.9, 0.55, 0.42 * (nt_w * m + 2.8) / (span + 2.8),
                          (-2.2, nt_w * m + 0.6), (-2.2, nt_h * m + 0.4),
                          title=f"(b) the output: {nt_h} x {nt_w} tiles of {m} x {m}")
    for p in range(nt_h * m):
        for q in range(nt_w * m):
            if p < P and q < Q:
                box(ax2, q, p, 1, 1, COLORS["output"], ec="#ffffff", lw=0.5, z=1)
            else:
                box(ax2, q, p, 1, 1, "white", ec="#bbbbbb", lw=0.5, hatch="\\\\\\", z=1)
    for i in range(nt_h * m):
        ax2.text(-0.3, i + 0.5, str(i), ha="right", va="center", fontsize=7)
    for i in range(nt_w * m):
        ax2.text(i + 0.5, -0.3, str(i), ha="center", va="bottom", fontsize=7)
    ax2.text(-1.8, -1.0, "p \\ q", fontsize=7, va="bottom")
    for ti in range(nt_h):
        for tj in range(nt_w):
            red = (ti, tj) == (nt_h - 1, nt_w - 1)
            outline(ax2, tj * m + 0.08, ti * m + 0.08, m - 0.16, m - 0.16,
                    tile_color(ti * nt_w + tj, nt_h * nt_w - 1), lw=2.4 if red else 1.5, z=6)
            ax2.text(tj * m + m / 2, ti * m + m / 2, f"tile\n({ti}, {tj})", ha="center",
                     va="center", fontsize=7.5, zorder=7)
    legend = [(COLORS["input"], f"the image, {H} x {W}"),
              (COLORS["idle"], f"padding ({pad}): read as 0"),
              ("white", "past the padding: read as 0 too"),
              (COLORS["output"], f"the output, {P} x {Q}")]
    y = bottom - 0.03
    for color, text in legend:
        swatch(fig, 0.06, y + 0.004, color)
        note(fig, 0.09, y, text, fs=8)
        y -= 0.045
    note(fig, 0.55, bottom - 0.03, "hatched outputs: computed with the tile, then cut "
         "(not written)", fs=8)
    note(fig, 0.55, bottom - 0.075, f"red: tile (1, 1) reads rows and columns "
         f"{m - pad}..{m - pad + a - 1}, writes outputs {m}..{P - 1}", fs=8,
         color=COLORS["highlight"])
    return fig


# ---------------------------------------------------------------------------
# 07_pipeline


def stack(ax, x, y, w, h, color, layers=4, step=0.35):
    """alpha^2 matrices drawn as a stack of `layers` offset rectangles."""
    for i in reversed(range(layers)):
        box(ax, x + i * step, y - i * step, w, h, color, ec="#444444", lw=0.6, z=2 + layers - i)


def gemm_blocks(c, t, bm, bn):
    """Blocks of the one GEMM launch: bm x bn tiles of each K x T matrix M[e], alpha^2 of them."""
    return t["a2"] * -(-c["K"] // bm) * -(-t["T"] // bn)


def caption_07_pipeline(k):
    c = cutlass_tiling(k)
    f2, f4 = c["tiles"][0], c["tiles"][-1]
    bm, bn = k["DBUF_BM"], k["DBUF_BN"]

    def moved(t):
        return c["w"] + t["U"] + c["x"] + t["V"] + t["U"] + t["V"] + t["M"] + t["M"] + c["y"]
    return paragraph("""
        The four launches of 7a and 7b, and what each reads and writes, on CUTLASS's problem
        (N = {N}, C = K = {C}, {H} x {W}, 3 x 3, padding {ph}; floats of 4 bytes). e runs over
        the alpha^2 positions of a transformed tile, t over the T tiles of the batch. 1: the
        filter transform, one thread per (k, c), writes U[e] = K x C. 2: the input transform,
        one thread per (c, t), gathers an alpha x alpha tile (zeros outside the image) and
        writes V[e] = C x T. 3: alpha^2 independent GEMMs M[e] = U[e] V[e], K x T each, in one
        launch of step 06's 6e kernel body: blockIdx.x picks a {bm} x {bn} tile of M[e] and
        blockIdx.y = e. 4: the output transform, one thread per (k, t), reads the alpha^2
        values M[.][k][t] and writes the m x m outputs that lie inside the image. Transform
        kernels run {thr} threads per block. F({m4}x{m4}, 3x3): T = {T4}, U {U4}, V and M
        {V4} each (x and y are {x}), {b4} blocks of GEMM in the one launch; F(2x2, 3x3):
        T = {T2}, U {U2}, V and M {V2} each, {b2} blocks. Counting every tensor once per
        stage that touches it, the pipeline moves {tot4} (F({m4}x{m4})) and {tot2} (F(2x2))
        between the kernels and DRAM, against {xy} for x, w, y and U alone: what a fused
        kernel, which keeps V and M on chip, would move.""",
                     N=c["N"], C=c["C"], H=c["H"], W=c["W"], ph=c["ph"], bm=bm, bn=bn,
                     thr=k["WINO_THREADS"], m4=f4["m"], T4=fmt(f4["T"]), U4=mb(f4["U"]),
                     V4=mb(f4["V"]), x=mb(c["x"]), b4=fmt(gemm_blocks(c, f4, bm, bn)),
                     T2=fmt(f2["T"]), U2=mb(f2["U"]), V2=mb(f2["V"]),
                     b2=fmt(gemm_blocks(c, f2, bm, bn)), tot4=mb(moved(f4)), tot2=mb(moved(f2)),
                     xy=mb(c["x"] + c["w"] + c["y"] + f4["U"]))


@figure(section="The non-fused pipeline on the GPU (7a, 7b)",
        uses=["WINO_MAX_ALPHA", "WINO_THREADS", "DBUF_BM", "DBUF_BN", "problem cutlass"])
def fig_07_pipeline(k):
    """The non-fused pipeline: four launches, and the tensors U, V and M they write and read."""
    c = cutlass_tiling(k)
    f2, f4 = c["tiles"][0], c["tiles"][-1]
    bm, bn = k["DBUF_BM"], k["DBUF_BN"]
    fig = new_figure(11.5, 5.0, f"Step 07: the non-fused pipeline (7a, 7b), four launches; "
                     f"sizes for CUTLASS's problem (N = {c['N']}, C = K = {c['C']}, "
                     f"{c['H']} x {c['W']})")
    ax, bottom = canvas_below(fig, 0.9, 0.01, 0.98, (-0.5, 57.5), (-1.0, 16.2))
    kern = "#f0f0f0"
    tw, th = 7.4, 3.0  # a tensor's box
    kw, kh = 8.2, 3.0  # a kernel's box

    def sizes(key):
        return (f"F({f4['m']}x{f4['m']}): {mb(f4[key])}\nF(2x2): {mb(f2[key])}")
    # inputs
    box(ax, 0, 0, tw, th, COLORS["weight"], text=f"w: K x C x 3 x 3\n{mb(c['w'])}", fs=7.5)
    box(ax, 0, 9, tw, th, COLORS["input"], text=f"x: N x C x H x W\n{mb(c['x'])}", fs=7.5)
    # stage 1 and 2
    box(ax, 9.2, 0, kw, kh, kern, text=f"1. filter transform\nG g G^T, K*C = "
        f"{fmt(c['K'] * c['C'])}\nthreads", fs=7.5)
    box(ax, 9.2, 9, kw, kh, kern, text="2. input transform\nB^T d B, C*T threads\n(zeros "
        "outside the image)", fs=7.5)
    arrow(ax, (tw + 0.1, th / 2), (9.1, th / 2))
    arrow(ax, (tw + 0.1, 9 + th / 2), (9.1, 9 + th / 2))
    stack(ax, 19.6, 0.6, tw, th, COLORS["weight"])
    ax.text(19.6 + tw / 2, 0.6 + th / 2, f"U[e]: K x C\n{sizes('U')}", ha="center", va="center",
            fontsize=7, zorder=10)
    stack(ax, 19.6, 9.6, tw, th, COLORS["input"])
    ax.text(19.6 + tw / 2, 9.6 + th / 2, f"V[e]: C x T\n{sizes('V')}", ha="center",
            va="center", fontsize=7, zorder=10)
    arrow(ax, (9.2 + kw + 0.1, th / 2), (19.5, th / 2 + 0.6))
    arrow(ax, (9.2 + kw + 0.1, 9 + th / 2), (19.5, 9 + th / 2 + 0.6))
    # stage 3: the GEMMs
    gx, gy = 30.2, 4.0
    box(ax, gx, gy, 10.2, 4.4, kern, text=f"3. alpha^2 GEMMs, ONE launch\nM[e] = U[e] x V[e]"
        f"\nstep 06's 6e body; grid:\nx = {bm} x {bn} tiles of M[e],\ny = e (alpha^2)", fs=7.5)
    arrow(ax, (19.6 + tw + 1.3, 0.6 + th / 2), (gx - 0.1, gy + 1.2))
    arrow(ax, (19.6 + tw + 1.3, 9.6 + th / 2), (gx - 0.1, gy + 3.2))
    stack(ax, 42.0, gy + 0.9, tw, th, COLORS["register"])
    ax.text(42.0 + tw / 2, gy + 0.9 + th / 2, f"M[e]: K x T\n{sizes('M')}", ha="center",
            va="center", fontsize=7, zorder=10)
    arrow(ax, (gx + 10.3, gy + 2.2), (41.9, gy + 2.4))
    # stage 4
    box(ax, 42.0, 10.6, kw, kh, kern, text="4. output transform\nA^T M A, K*T threads\n"
        "(cut at the edges)", fs=7.5)
    arrow(ax, (42.0 + tw / 2, gy + 0.9 + th + 0.1), (42.0 + tw / 2, 10.5))
    box(ax, 51.6, 10.6, 5.6, th, COLORS["output"], text=f"y: N x K x P x Q\n{mb(c['y'])}",
        fs=7.5)
    arrow(ax, (42.0 + kw + 0.1, 10.6 + th / 2), (51.5, 10.6 + th / 2))
    ax.text(0, 14.3, "grey: a kernel launch;  stacks: alpha^2 matrices (16 for F(2x2), 36 for "
            f"F({f4['m']}x{f4['m']})), each written to and read back from global memory",
            fontsize=8, va="center")
    stages = [("1", c["w"], f4["U"]), ("2", c["x"], f4["V"]), ("3", f4["U"] + f4["V"], f4["M"]),
              ("4", f4["M"], c["y"])]
    ax.text(0, 15.4, f"F({f4['m']}x{f4['m']}), each tensor counted once per stage, read + "
            "written:  " + ";  ".join(f"{n}: {mb(r)} + {mb(w)}" for n, r, w in stages),
            fontsize=8, va="center")
    ax.text(gx + 5.1, gy - 0.25, f"F({f4['m']}x{f4['m']}): {fmt(gemm_blocks(c, f4, bm, bn))} "
            f"blocks;  F(2x2): {fmt(gemm_blocks(c, f2, bm, bn))}", ha="center", va="bottom",
            fontsize=7.5)
    return fig
