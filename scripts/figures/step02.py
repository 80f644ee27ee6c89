"""Step 02's figures: the naive GPU convolution (docs/02_naive_gpu.md).

    02_thread_mapping   which thread computes which output, in both kernels
    02_warp_addresses   the addresses 32 consecutive threads read for one
                        filter tap, and the sectors they touch
"""
from .draw import (COLORS, SECTOR, WARP, box, canvas, fmt, lane_color, new_figure, note, out_size,
                   outline)
from .manifest import figure


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
