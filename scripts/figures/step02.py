"""Step 02's figures: the naive GPU convolution (docs/02_naive_gpu.md).

    02_thread_mapping   which thread computes which output, in both kernels
    02_warp_addresses   the addresses 32 consecutive threads read for one
                        filter tap, and the sectors they touch
"""
from .draw import (COLORS, SECTOR, WARP, box, canvas, fmt, lane_color, new_figure, out_size,
                   outline)
from .manifest import figure, paragraph

NOTE = "02_naive_gpu.md"  # the lecture note of every figure here (docs/)


def decompose_nchw(i, K, P, Q):
    """conv2d_naive_kernel's NCHW decomposition of the flat output index i."""
    q, t = i % Q, i // Q
    p, t = t % P, t // P
    return t // K, t % K, p, q


GRID_BLOCKS = 3  # the small grid that 02_thread_mapping draws, as the tests launch


def naive_launch(k):
    """Step 02's launch on the lecture problem: the output sizes, the grid-stride
    kernel's blocks (capped) and the 2D kernel's grid over one output plane."""
    pr = k["problem lecture"]
    T, cap, B = k["CONV2D_NAIVE_THREADS"], k["CONV2D_NAIVE_MAX_BLOCKS"], k["CONV2D_NAIVE_2D_BLOCK"]
    P, Q = out_size(pr["h"], pr["r"], pr["pad_h"]), out_size(pr["w"], pr["s"], pr["pad_w"])
    total = pr["n"] * pr["k"] * P * Q
    return {"N": pr["n"], "K": pr["k"], "P": P, "Q": Q, "T": T, "cap": cap, "B": B,
            "total": total, "wanted": (total + T - 1) // T,
            "blocks": min((total + T - 1) // T, cap), "gx": (Q + B - 1) // B,
            "gy": (P + B - 1) // B}


def caption_02_thread_mapping(k):
    g = naive_launch(k)
    i = 1000000 % g["total"]
    n, kk, p, q = decompose_nchw(i, g["K"], g["P"], g["Q"])
    return paragraph("""
        (a) The grid-stride kernel launches ceil({g[total]:,} / {g[T]}) = {g[wanted]:,} blocks
        of {g[T]} threads, capped at CONV2D_NAIVE_MAX_BLOCKS = {g[cap]:,}: here
        {g[blocks]:,} blocks, so every thread computes {outputs}. The figure draws a grid of
        {grid} blocks instead, as the tests launch (they use 1 and 3), so that every thread
        loops until i >= N*K*P*Q. Each thread turns i back into (n, k, p, q) with divisions:
        q = i % Q, t = i / Q, p = t % P, t = t / P, k = t % K, n = t / K; for i = {i:,}:
        q = {q}, t = {t:,}, p = {p}, t = {t2}, k = {kk}, n = {n}. Consecutive threads own
        consecutive i: the same (n, k) and consecutive q, except where a row of Q outputs
        ends, so a warp's stores are contiguous. (b) The 2D kernel's blockIdx = (x, y, z) has
        x < {g[gx]}, y < {g[gy]} and z = n*K + k < {nk}. The pale blocks lie on the edge: the
        last column of blocks has {cols} of its {g[B]} columns inside Q, the last row {rows}
        of its {g[B]} rows inside P; threads past the edge exit (q >= Q) or skip the p loop.
        A warp is {warp_rows} of {g[B]} threads.""",
                     g=g, i=i, n=n, kk=kk, p=p, q=q, t=i // g["Q"], t2=i // g["Q"] // g["P"],
                     grid=GRID_BLOCKS, nk=g["N"] * g["K"],
                     outputs="one output" if g["blocks"] * g["T"] >= g["total"] else
                     "several outputs",
                     cols=g["Q"] - (g["gx"] - 1) * g["B"], rows=g["P"] - (g["gy"] - 1) * g["B"],
                     warp_rows=f"{WARP // g['B']} row{'s' if WARP // g['B'] > 1 else ''}")


@figure(section="The thread-to-output mapping",
        uses=["CONV2D_NAIVE_THREADS", "CONV2D_NAIVE_MAX_BLOCKS", "CONV2D_NAIVE_2D_BLOCK",
              "problem lecture"])
def fig_02_thread_mapping(k):
    """Which thread computes which output, in both kernels of step 02."""
    g = naive_launch(k)
    K, P, Q, T, B, gx, gy = g["K"], g["P"], g["Q"], g["T"], g["B"], g["gx"], g["gy"]
    fig = new_figure(11.5, 3.7, "Step 02: which thread computes which output (the lecture "
                     f"problem, N*K*P*Q = {fmt(g['total'])} outputs)")
    # (a) the grid-stride loop
    ax = canvas(fig, (0.01, 0.02, 0.54, 0.84), (-0.5, 24.5), (-0.8, 9.3),
                title="(a) conv2d_naive_kernel: one flat index i, a grid-stride loop")
    ax.text(0, 0.2, "all outputs in memory order, i = ((n*K + k)*P + p)*Q + q, "
            "0 <= i < N*K*P*Q:", fontsize=8.5, va="top")
    for kk in range(K):
        x0 = 24.0 * kk / K
        box(ax, x0, 1.3, 24.0 / K, 1.1, COLORS["output"], text=f"(n, k) = (0, {kk})", fs=7.5)
    ax.text(12, 2.6, f"K = {K} planes of P*Q = {P} x {Q} = {fmt(P * Q)} outputs", ha="center",
            va="top", fontsize=8)
    # a small grid, as in the tests: every thread loops
    g_blocks, passes = GRID_BLOCKS, 4
    G = g_blocks * T
    seg = 24.0 / (g_blocks * passes)
    y = 5.6
    ax.text(0, y - 1.7, f"a grid of {g_blocks} blocks, G = {g_blocks} x {T} = {G} threads: "
            f"thread g computes i = g, g + G, g + 2G, ...", fontsize=8.5, va="top")
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
    # (b) the 2D block over the output plane
    s = min(1.45, (gy - 3) / B)  # size of a thread cell in the enlarged block
    x0, y0 = gx + 3, 3
    ax2 = canvas(fig, (0.575, 0.02, 0.42, 0.84), (-0.5, x0 + B * s + 0.5), (-3.2, gy + 4.2),
                 title=f"(b) conv2d_naive_2d_kernel: {B} x {B} threads per block")
    ax2.text(0, -0.4, f"plane (n, k): {P} x {Q} outputs, {gx} x {gy} blocks", fontsize=8,
             va="bottom")
    for by in range(gy):
        for bx in range(gx):
            full_x, full_y = bx < gx - 1 or Q % B == 0, by < gy - 1 or P % B == 0
            fc = COLORS["output"] if full_x and full_y else "#d9f0d3"
            box(ax2, bx, by, 1, 1, fc, ec="#ffffff", lw=0.3, z=2)
    outline(ax2, 0, 0, gx, gy, "#555555", lw=0.8, z=3)
    zx, zy = 2, 1  # the block shown enlarged
    outline(ax2, zx, zy, 1, 1, COLORS["highlight"], lw=1.5)
    ax2.text(0, gy + 0.6, "pale: blocks that cross the edge of the plane", fontsize=8,
             va="top")
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
             f"q = {B}*blockIdx.x + tx\np = {B}*blockIdx.y + ty\n"
             f"dark: (tx, ty) = ({tx}, {ty}):\nq = {B * zx + tx}, p = {B * zy + ty}",
             fontsize=8, va="top")
    return fig


def memory_row(ax, y, first, count, reads, label, sector_floats=SECTOR // 4):
    """One input row drawn as floats first .. first+count-1 (columns of x), the
    32-byte sectors marked; reads = {column: lane}. Sectors that a read touches
    are shaded."""
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


def warp_reads(k):
    """The reads of warp 0 of block 0 for one filter tap: a list of (label, rows,
    what), rows a list of {column: lane} (one per input row the warp reads),
    with the bytes it reads, the sectors it touches and the share of the moved
    bytes it uses."""
    B, W = k["CONV2D_NAIVE_2D_BLOCK"], k["problem lecture"]["w"]
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
    found = []
    for label, rows, what in cases:
        sectors = sum(len({c * 4 // SECTOR for c in reads}) for reads in rows)
        floats = sum(len(reads) for reads in rows)
        found.append({"label": label, "rows": rows, "what": what, "bytes": floats * 4,
                      "sectors": sectors, "used": floats * 4 / (sectors * SECTOR)})
    return found


def caption_02_warp_addresses(k):
    B, pr = k["CONV2D_NAIVE_2D_BLOCK"], k["problem lecture"]
    Q = out_size(pr["w"], pr["s"], pr["pad_w"])
    uses = "; ".join(f"{c['label'].replace(chr(10), ' ')}: {c['sectors']} sectors, "
                     f"{c['used']:.0%} used" for c in warp_reads(k))
    i0 = Q // WARP * WARP
    cross = (f"A grid-stride warp whose outputs cross the end of an output row (i = {i0}.."
             f"{i0 + WARP - 1}: q = {i0}..{Q - 1} of row p, then q = 0..{i0 + WARP - 1 - Q} of "
             f"row p + 1) reads two pieces of two rows." if Q % WARP else
             f"Q = {Q} is a multiple of {WARP}: no warp's outputs cross the end of an output row.")
    return paragraph("""
        Warp 0 of block 0 in both kernels: outputs p = 0, q = 0..{last} (in the {B} x {B}
        block: p = 0..{rows}, q = 0..{B1}). Each row is a stretch of one input row of x; the
        numbers are lanes, the thick lines every {sector} floats are 32-byte sector boundaries
        and the shading marks the sectors the warp touches. Each warp reads {bytes} bytes; the
        sectors it touches, and the share of the bytes moved that it uses, are {uses}. Every
        lane reads the same weight w[k][c][r][s]: one address, broadcast. {cross}""",
                     last=WARP - 1, B=B, rows=WARP // B - 1, B1=B - 1, sector=SECTOR // 4,
                     bytes=WARP * 4, uses=uses, cross=cross)


@figure(section="Coalescing",
        uses=["CONV2D_NAIVE_2D_BLOCK", "problem lecture"])
def fig_02_warp_addresses(k):
    """The x elements 32 consecutive threads read for one filter tap, in NCHW."""
    W = k["problem lecture"]["w"]
    span = 66  # input columns drawn
    fig = new_figure(11.5, 3.5, "Step 02: the x elements one warp reads for one filter tap "
                     "(c, r, s), NCHW (lecture problem, W = %d)" % W)
    ax = canvas(fig, (0.15, 0.02, 0.84, 0.85), (-0.5, span + 0.5), (-0.6, 19.4))
    y = 0
    for case in warp_reads(k):
        for j, reads in enumerate(case["rows"]):
            memory_row(ax, y, 0, span, reads, case["label"] if j == 0 else "")
            y += 2.1
        ax.text(0, y - 0.1, f"{case['what']}:  {case['bytes']} bytes in {case['sectors']} "
                f"sectors, {case['sectors'] * SECTOR} bytes moved, {case['used']:.0%} used",
                fontsize=8, va="top")
        y += 2.1
    ax.text(-0.5, y - 0.5, f"numbers: lanes;  thick lines: 32-byte sector boundaries (every "
            f"{SECTOR // 4} floats);  shaded: the sectors the warp touches", fontsize=8.5,
            va="top")
    return fig
