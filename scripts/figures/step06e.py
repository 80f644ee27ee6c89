"""Step 06's last figures, sub-steps 6e and 6f: the pipelined GEMM and the
implicit GEMM (docs/06_im2col_gemm.md). The earlier ones are in step06a.py.

    06_swizzle          the stores of A^T into shared memory, without and with
                        the (k & 8) swizzle, and the banks they hit
    06_dbuf_timeline    6d's load-wait-compute against 6e's two-level prefetch
    06_implicit_gather  6f's gather: a row m and a column k of the virtual A
                        become an address in x
"""
from .draw import (BANKS, CHANNEL_COLORS, COLORS, WARP, box, canvas_below, fmt, gantt_axes,
                   gantt_bar, lane_color, new_figure, note, out_size, outline)
from .manifest import figure
from .step06a import dbuf_shape


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
