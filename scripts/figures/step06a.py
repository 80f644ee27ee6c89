"""Step 06's first figures, sub-steps 6a to 6d: im2col and the GEMM's tiles
(docs/06_im2col_gemm.md). The later ones are in step06e.py.

    06_im2col           every window becomes a row (NHWC) or a column (NCHW)
                        of the column buffer
    06_gemm_tiles       block tile, BK slice, a thread's outputs and fragments

dbuf_shape() derives 6e/6f's tile shape from the constants; step06e.py uses it too.
"""
from .draw import (CHANNEL_COLORS, COLORS, WARP, box, canvas, canvas_below, grid_lines,
                   lane_color, new_figure, out_size, outline)
from .manifest import figure, paragraph

NOTE = "06_im2col_gemm.md"  # the lecture note of every figure here (docs/)


def caption_06_im2col(k):
    lab = k["problem hpc101-nhwc"]
    rows = lab["n"] * out_size(lab["h"], lab["r"], lab["pad_h"]) * out_size(lab["w"], lab["s"],
                                                                            lab["pad_w"])
    cols = lab["c"] * lab["r"] * lab["s"]
    return paragraph("""
        A toy image of C = 2 channels of 4 x 4 pixels (named a..p and A..P) and a 2 x 2
        filter, stride 1, no padding, has P x Q = 3 x 3 windows; red marks the window of
        (p, q) = (0, 1), m = 1. Row m = (n*P + p)*Q + q of the NHWC column buffer holds the
        window of output pixel (n, p, q), its columns in (r, s, c) order:
        y[N*P*Q][K] = col[N*P*Q][R*S*C] x w[R*S*C][K], the filter is the B matrix as stored
        and the product is y. NCHW (MXNet, Caffe) builds the transpose, with the rows in
        (c, r, s) order: y'[K][N*P*Q] = w[K][C*R*S] x col[C*R*S][N*P*Q]. Each input is copied
        into up to R*S windows. The HPC101 lab problem (N = {p[n]}, C = {p[c]},
        {p[h]} x {p[w]}, {p[r]} x {p[s]} "same") needs {rows:,} rows of C*R*S = {cols:,}
        floats: a column buffer of {gb:.1f} GB for an image of {mb:.0f} MB.""",
                     p=lab, rows=rows, cols=cols, gb=rows * cols * 4 / 1e9,
                     mb=lab["n"] * lab["c"] * lab["h"] * lab["w"] * 4 / 1e6)


@figure(section="im2col: lowering windows into rows",
        uses=["problem hpc101-nhwc"])
def fig_06_im2col(k):
    """im2col: every window becomes a row (NHWC) or a column (NCHW) of the column buffer."""
    C, H, W, R, S = 2, 4, 4, 2, 2  # a toy problem, small enough to print every entry
    P, Q = H - R + 1, W - S + 1
    names = ["abcdefghijklmnop", "ABCDEFGHIJKLMNOP"]
    m_hl = 1  # the window highlighted: (p, q) = (0, 1)
    ph, qh = m_hl // Q, m_hl % Q
    fig = new_figure(11.5, 4.75, f"Step 06: im2col on a toy image (C = {C}, {H} x {W}, "
                     f"{R} x {S} filter, stride 1, no padding: P x Q = {P} x {Q} windows)")
    # the image
    ax = canvas(fig, (0.01, 0.02, 0.17, 0.86), (-0.3, W + 0.3), (-1.0, C * (H + 1.5) + 1.0))
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
    ax2 = canvas(fig, (0.22, 0.02, 0.35, 0.86), (-2.2, KC + 0.3), (-3.2, P * Q + 0.3),
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
    ax3 = canvas(fig, (0.62, 0.02, 0.37, 0.86), (-2.6, P * Q + 0.3), (-3.2, KC + 0.3),
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


SHOWN_THREAD = (1, 2)  # (ty, tx) of the thread that 06_gemm_tiles follows
SHOWN_KK = 3  # and the k step it draws


def caption_06_gemm_tiles(k):
    sh = dbuf_shape(k)
    GS, CS, TM = sh["GS"], sh["CS"], sh["TM"]
    (ty, tx), kk = SHOWN_THREAD, SHOWN_KK
    return paragraph("""
        6e and 6f, drawn here, compute C = A x B in block tiles of {s[BM]} x {s[BN]} outputs,
        {s[threads]} threads of {s[TM]} x 8 outputs each. (a) Block b computes tile
        (b / tiles_n, b % tiles_n) in slices of BK = {s[BK]} along K: A's {s[BM]} x {s[BK]}
        and B's {s[BK]} x {s[BN]} (dark). (b) Thread (ty, tx) owns four 4 x 4 sub-tiles: rows
        ty*4.. and GS + ty*4.. (GS = BM / (TM/4) = {s[GS]}), columns tx*4.. and
        {s[CS]} + tx*4..; the dark squares are thread ({ty}, {tx})'s, rows {r0}..{r1} and
        {r2}..{r3}, columns {c0}..{c1} and {c2}..{c3}. The colours are the {warps} warps
        (WR = {s[WR]}: a warp is {s[WR]} x {s[WC]} threads, whose outputs form a {wr} x {wc}
        piece of the tile in {parts} parts). (c) At k step kk = {kk} the thread reads its
        fragments fa = as[{kk}][{r0}..{r1}], as[{kk}][{r2}..{r3}] of A^T (stored with the
        column m ^ (kk & 8), see the swizzle figure) and fb = bs[{kk}][{c0}..{c1}],
        bs[{kk}][{c2}..{c3}] of B, {lds} float4 loads (LDS.128) in all, then adds their outer
        product, {s[TM]} x 8 = {fmas} FMAs, {per_tile} per tile. 6c and 6d use RT_BM x RT_BN =
        {rt_bm} x {s[BN]} tiles of 256 threads and RT_BK = {rt_bk}, with the row groups
        {rt_gs} apart.""",
                     s=sh, ty=ty, tx=tx, kk=kk, r0=ty * 4, r1=ty * 4 + 3, r2=GS + ty * 4,
                     r3=GS + ty * 4 + 3, c0=tx * 4, c1=tx * 4 + 3, c2=CS + tx * 4,
                     c3=CS + tx * 4 + 3, warps=sh["threads"] // WARP, wr=sh["WR"] * TM,
                     wc=sh["WC"] * 8, parts=TM // 4 * 2, lds=TM // 4 + 2, fmas=TM * 8,
                     per_tile=TM * 8 * sh["BK"], rt_bm=k["RT_BM"], rt_bk=k["RT_BK"],
                     rt_gs=k["RT_BM"] // (k["RT_TM"] // 4))


@figure(section="6c: register tiles - the tiling hierarchy; "
                "6d: float4 and A transposed in shared memory",
        uses=["DBUF_BM", "DBUF_TM", "DBUF_BK", "DBUF_WR", "DBUF_THREADS", "RT_BN", "RT_APAD",
              "RT_BM", "RT_BK", "RT_TM", "RT_TN"])
def fig_06_gemm_tiles(k):
    """The GEMM's tiles: block tile, BK slice, a thread's 8 x 8 outputs and its fragments."""
    sh = dbuf_shape(k)
    BM, BN, BK, TM, GS, CS = sh["BM"], sh["BN"], sh["BK"], sh["TM"], sh["GS"], sh["CS"]
    assert k["DBUF_THREADS"] == sh["threads"] and k["RT_TN"] == 8
    ty0, tx0 = SHOWN_THREAD
    fig = new_figure(11.5, 6.6, f"Step 06: the tiles of 6e/6f's GEMM: a {BM} x {BN} block "
                     f"tile, BK = {BK}, {sh['threads']} threads of {TM} x 8 outputs")
    # (a) the whole product
    ax = canvas(fig, (0.01, 0.46, 0.33, 0.44), (-3.5, 17), (-2.5, 16.4),
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
    # (b) the block tile, to scale
    ax2 = canvas(fig, (0.37, 0.46, 0.62, 0.44), (-9, BN + 2), (-6, BM + 3.2),
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
    ax2.text(0, BM + 1.0, f"dark: thread (ty, tx) = ({ty0}, {tx0});  colours: the "
             f"{sh['threads'] // WARP} warps", fontsize=7.5, va="top")
    # (c) shared memory and the fragments of step kk
    kk = SHOWN_KK
    ap = BM + sh["APAD"]
    bx0 = ap + 6
    ax3, bottom = canvas_below(fig, 0.4, 0.01, 0.77, (-6, bx0 + BN + 1), (-2.5, BK + 2.6),
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
             f"as[{kk}][{GS + ty0 * 4}..{GS + ty0 * 4 + 3}]: two LDS.128", fontsize=7.5, va="top")
    ax3.text(bx0, BK + 0.6, f"fb = bs[{kk}][{tx0 * 4}..{tx0 * 4 + 3}], "
             f"bs[{kk}][{CS + tx0 * 4}..{CS + tx0 * 4 + 3}]: two LDS.128", fontsize=7.5,
             va="top")
    # the outer product
    ax4, _ = canvas_below(fig, 0.4, 0.86, 0.1, (-2.2, 8.2), (-2.3, TM + 1.4),
                          title="acc += fa x fb")
    for i in range(TM):
        box(ax4, -1.8, i, 1, 1, COLORS["register_dark"], ec="#ffffff", lw=0.6)
    for j in range(8):
        box(ax4, j, -1.8, 1, 1, COLORS["register_dark"], ec="#ffffff", lw=0.6)
    ax4.text(-2.0, -1.3, "fb", ha="right", va="center", fontsize=7.5)
    ax4.text(-2.0, TM / 2, "fa", ha="right", va="center", fontsize=7.5)
    for i in range(TM):
        for j in range(8):
            box(ax4, j, i, 1, 1, COLORS["output"], ec="#ffffff", lw=0.6)
    for i in range(1, TM // 4):
        ax4.plot([0, 8], [4 * i] * 2, color="#333333", lw=1.2)
    ax4.plot([4, 4], [0, TM], color="#333333", lw=1.2)
    ax4.text(4, TM + 0.3, f"{TM} x 8 = {TM * 8} FMAs", ha="center", va="top", fontsize=7.5)
    return fig
