"""Step 06's last figures, sub-steps 6e and 6f: the pipelined GEMM and the
implicit GEMM (docs/06_im2col_gemm.md). The earlier ones are in step06a.py.

    06_swizzle          the stores of A^T into shared memory, without and with
                        the (k & 8) swizzle, and the banks they hit
    06_dbuf_timeline    6d's load-wait-compute against 6e's two-level prefetch
    06_implicit_gather  6f's gather: a row m and a column k of the virtual A
                        become an address in x
"""
from .draw import (BANKS, CHANNEL_COLORS, COLORS, WARP, box, canvas_below, fmt, gantt_axes,
                   gantt_bar, lane_color, new_figure, out_size, outline)
from .manifest import figure, paragraph
from .step06a import dbuf_shape

NOTE = "06_im2col_gemm.md"  # the lecture note of every figure here (docs/)


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


def fragment_read(sh):
    """The fa fragment that 06_swizzle outlines: (k, ty, the first column of
    each of its 4-float pieces in the swizzled as), k = 9 where BK > 8."""
    kr, ty = (9 if sh["BK"] > 8 else 1), 1
    return kr, ty, [(sh["GS"] * i + ty * 4) ^ (kr & 8) for i in range(sh["TM"] // 4)]


def caption_06_swizzle(k):
    sh = dbuf_shape(k)
    pitch = sh["BM"] + sh["APAD"]
    plain = [bank for _, _, bank in a_store_lanes(sh, False).values()]
    kr, ty, columns = fragment_read(sh)
    if len(set(plain)) < WARP:
        why = paragraph("""
            a multiple of 32: without the swizzle the lanes with kq = 0 and 8 (and 4 and 12)
            hit the same banks, {banks} banks for {lanes} stores, a {ways}-way conflict.
            XOR-ing the column with k & 8 moves the k >= 8 stores by 8 columns, and the 32
            stores hit {swizzled} banks. The fragment reads apply the same XOR, which keeps
            each 4-row group whole and 16-byte aligned (GS = {GS}, a multiple of 16).""",
                        banks=len(set(plain)), lanes=WARP, GS=sh["GS"],
                        ways=max(plain.count(b) for b in plain),
                        swizzled=len({b for _, _, b in a_store_lanes(sh, True).values()}))
    else:
        why = (f"so with BK = {sh['BK']} the 32 lanes already hit 32 banks (k & 8 is 0 for "
               f"every k < 8, and the swizzle changes nothing).")
    return paragraph("""
        One STS instruction of warp 0 in dbuf_gemm_body(), which stores the A tile transposed
        into as[k][m], rows of {s[BM]} + {s[APAD]} = {pitch} floats. Lane t holds
        A[row t / {kq}][kq .. kq + 3] with kq = 4*(t % {kq}) and stores value j into
        as[kq + j][m] (drawn: j = 0); below each layout, the banks its 32 stores hit. A row of
        as is {pitch} floats, {shift} banks on, so k and k + 8 start {apart} floats apart,
        {why} The red outline in (b) is a read of that layout: thread ty = {ty} reads its fa
        at k = {kr} from {reads}, its rows {r0}..{r1} and {r2}..{r3}.""",
                     s=sh, pitch=pitch, kq=sh["BK"] // 4, shift=pitch % BANKS, apart=8 * pitch,
                     why=why, ty=ty, kr=kr,
                     reads=" and ".join(f"as[{kr}][{c}..{c + 3}]" for c in columns),
                     r0=ty * 4, r1=ty * 4 + 3, r2=sh["GS"] + ty * 4, r3=sh["GS"] + ty * 4 + 3)


@figure(section="6e: double buffering and register prefetch (the stores of the transposed A tile)",
        uses=["DBUF_BM", "DBUF_TM", "DBUF_BK", "DBUF_WR", "RT_BN", "RT_APAD"])
def fig_06_swizzle(k):
    """The stores of A^T into shared memory, without and with the (k & 8) swizzle."""
    sh = dbuf_shape(k)
    BM, BK = sh["BM"], sh["BK"]
    pitch = BM + sh["APAD"]
    ncols = 24  # columns drawn (warp 0 stores into the first 16)
    fig = new_figure(11.5, 5.6, f"Step 06: warp 0 storing A transposed, as[k][m] (rows of "
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
        ax, bottom = canvas_below(fig, 0.895, left + 0.06, 0.42, (-0.2, ncols + 0.2),
                                  (-1.1, BK + 0.2), title=title)
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
            kr, _, columns = fragment_read(sh)
            for c0 in columns:
                if c0 < ncols:
                    outline(ax, c0, kr, 4, 1, COLORS["highlight"], lw=1.8)
            ax.text(ncols, kr + 4.3, f"red: a fragment read, as[{kr}][{columns[0]}.."
                    f"{columns[0] + 3}]", ha="right", va="top", fontsize=7,
                    color=COLORS["highlight"])
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
    return fig


def caption_06_dbuf_timeline(k):
    return paragraph("""
        One block, tile by tile along K. 6d (RT_BK = {bk6d}, {tm6d} x 8 outputs per thread)
        loads a tile from global memory into registers, stores it to shared memory, waits at a
        barrier, computes and waits at a second barrier: the global latency is exposed once
        per tile. 6e (DBUF_BK = {bk}, {tm} x 8 outputs per thread) requests tile t + 1 at the
        top of step t and stores it after the FMAs of tile t, into the shared buffer that step
        t does not read; its one barrier per tile (__syncthreads(), the red lines) separates
        the last read of a buffer from its next write. Inside one 6e tile a second level of
        prefetch runs: the fragments of k step kk + 1 load from shared memory (LDS.128) while
        the {tm} x 8 = {ffmas} FFMAs of kk run. The durations are schematic, not measured.""",
                     bk6d=k["RT_BK"], tm6d=k["RT_TM"], bk=k["DBUF_BK"], tm=k["DBUF_TM"],
                     ffmas=k["DBUF_TM"] * 8)


@figure(section="6e: double buffering and register prefetch (the two-level prefetch)",
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
    ax.text(xmax, -0.75, "red: __syncthreads();  durations are schematic", ha="right",
            va="bottom", fontsize=8, color=COLORS["highlight"])
    # the shared -> register level inside one tile
    ax2 = gantt_axes(fig, (0.16, 0.09, 0.83, 0.16), ["LDS.128 fragments", "FFMA"], BK + 0.6,
                     None)
    ax2.set_xlim(-0.2, BK + 0.6)
    ax2.set_title(f"inside one 6e tile: the fragments of k step kk + 1 load while kk's "
                  f"{TM} x 8 = {TM * 8} FFMAs run", loc="left", fontsize=9)
    for kk in range(BK):
        x0 = 0.0 if kk == 0 else kk - 1 + 0.75  # kk's fragments load during kk - 1's FFMAs
        gantt_bar(ax2, x0 + 0.05, x0 + 0.4, 0, COLORS["register"], str(kk), fs=6)
        gantt_bar(ax2, kk + 0.45, kk + 1.4, 1, COLORS["output"], str(kk), fs=6.5)
    return fig


def gather_example(k):
    """The row m and the float4 of k that 06_implicit_gather follows through
    6f's gather, with every value the figure and its caption show."""
    BM, TM, BK, BN = k["DBUF_BM"], k["DBUF_TM"], k["DBUF_BK"], k["RT_BN"]
    pr = k["problem hpc101-nhwc"]
    N, C, H, W, R, S = pr["n"], pr["c"], pr["h"], pr["w"], pr["r"], pr["s"]
    ph, pw = pr["pad_h"], pr["pad_w"]
    P, Q = out_size(H, R, ph), out_size(W, S, pw)
    n, p, q = 1, 0, 37  # the output pixel (row of A) drawn: on the top edge, so r = 0 is padding
    m = (n * P + p) * Q + q
    kk = 700 if C * R * S > 700 else C * R * S // 2  # the k drawn
    c, rs = kk % C, kk // C
    r, s_ = rs // S, rs % S
    h, w = p - ph + r, q - pw + s_
    KQ = BK // 4
    arows = 16 * (BM // TM) // KQ  # rows of A that the block's threads load at once
    row_in_tile = m % BM
    l = row_in_tile // arows
    tid0 = (row_in_tile - l * arows) * KQ
    return {"N": N, "C": C, "H": H, "W": W, "R": R, "S": S, "ph": ph, "pw": pw, "P": P, "Q": Q,
            "KG": C * R * S, "BM": BM, "BK": BK, "BN": BN, "KQ": KQ, "n": n, "p": p, "q": q,
            "m": m, "k0": kk - kk % 4, "c0": c - c % 4, "r": r, "s": s_, "h": h, "w": w,
            "addr": ((n * H + h) * W + w) * C + (c - c % 4), "tile_m": m // BM,
            "row_in_tile": row_in_tile, "tiles_n": (pr["k"] + BN - 1) // BN, "l": l,
            "tid0": tid0, "tid": tid0 + (kk % BK) // 4}


def caption_06_implicit_gather(k):
    g = gather_example(k)
    first = g["tile_m"] * g["tiles_n"]
    return paragraph("""
        6f builds no column buffer: the GEMM's A is virtual, N*P*Q x C*R*S = {rows:,} x
        {g[KG]:,} on the HPC101 lab problem, and its loader reads each row straight from the
        NHWC image x. (a) Row m = (n*P + p)*Q + q = {g[m]:,} is output pixel (n, p, q) =
        ({g[n]}, {g[p]}, {g[q]}). Its k = (r*S + s)*C + c runs over R*S = {groups} groups of
        C = {g[C]} channels, drawn as R rows of S groups like the window itself; a group whose
        pixel falls outside the image (hatched) is zero padding. A tile of BK = {g[BK]} columns
        lies inside one group (C % {g[BK]} == 0), and 4 neighbouring k are 4 contiguous
        channels of one pixel: one float4. Each thread turns its row m into (n, p, q) once
        (a_source_init): n = m / (P*Q) = {g[n]}, p = (m % (P*Q)) / Q = {g[p]}, q = m % Q =
        {g[q]}, and the window's top-left corner is h0 = p*stride_h - pad_h = {h0},
        w0 = q*stride_w - pad_w = {w0}. It turns k into (c, s, r) once too, then steps it by
        BK = {g[BK]} with additions: kc += {g[BK]}; while (kc >= C) {{ kc -= C;
        if (++ks == S) {{ ks = 0; ++kr; }} }}. The float4 at k = {g[k0]}..{k3} has
        c = k % C = {g[c0]}..{c3}, s = (k / C) % S = {g[s]} and r = k / (C*S) = {g[r]}, so
        h = h0 + r*dil_h = {g[h]}, w = w0 + s*dil_w = {g[w]}, and its address is
        x + ((n*H + h)*W + w)*C + c = x + (({g[n]}*{g[H]} + {g[h]})*{g[W]} + {g[w]})*{g[C]} +
        {g[c0]} = x + {g[addr]:,} (zeros instead when h or w falls outside the image). (b) The
        image around (h, w) = ({g[p]}, {g[q]}): green, the {g[R]} x {g[S]} window of (p, q);
        red, pixel ({g[h]}, {g[w]}), whose channels {g[c0]}..{c3} are that float4. Who loads
        it: row m is row {g[row_in_tile]} of block-tile row {g[tile_m]:,} (BM = {g[BM]}); with
        tiles_n = ceil(K / {g[BN]}) = {g[tiles_n]} that is {blocks}. {g[KQ]} neighbouring
        threads load a row's {g[BK]} floats of a tile, a float4 each: threads
        {g[tid0]}..{tid3}, thread {g[tid]} this float4 (its load l = {g[l]}).""",
                     g=g, rows=g["N"] * g["P"] * g["Q"], groups=g["R"] * g["S"],
                     h0=g["p"] - g["ph"], w0=g["q"] - g["pw"], k3=g["k0"] + 3, c3=g["c0"] + 3,
                     tid3=g["tid0"] + g["KQ"] - 1,
                     blocks=(f"blocks {fmt(first)}..{fmt(first + g['tiles_n'] - 1)}"
                             if g["tiles_n"] > 1 else f"block {fmt(first)}"))


@figure(section="6f: implicit GEMM - convolution without the column buffer",
        uses=["DBUF_BM", "DBUF_TM", "DBUF_BK", "RT_BN", "problem hpc101-nhwc"])
def fig_06_implicit_gather(k):
    """6f's gather: row m = (n, p, q) and k = (r*S + s)*C + c of the virtual A -> an x address."""
    g = gather_example(k)
    N, C, H, W, R, S, P, Q = (g[x] for x in ("N", "C", "H", "W", "R", "S", "P", "Q"))
    n, p, q, h, w, c0, k0 = (g[x] for x in ("n", "p", "q", "h", "w", "c0", "k0"))
    ph, pw = g["ph"], g["pw"]
    fig = new_figure(10.5, 4.3, f"Step 06: 6f gathers the rows of A straight from the NHWC "
                     f"image, no column buffer\n(HPC101 lab problem: N = {N}, C = {C}, "
                     f"{H} x {W}, {R} x {S} filter, pad {ph}, so P x Q = {P} x {Q})")
    # (a) the row of A, drawn as R rows of S groups of C channels, like the window
    seg, rowh, bh = 10.0, 3.5, 2.6  # a group's width, a row's pitch, a group's height
    ax, _ = canvas_below(fig, 0.765, 0.01, 0.58, (-0.5, S * seg + 0.5), (-1.3, R * rowh + 1.2),
                         title=f"(a) row m = {fmt(g['m'])} of the virtual A ({fmt(N * P * Q)} x "
                               f"{fmt(g['KG'])}):\noutput pixel (n, p, q) = ({n}, {p}, {q})")
    ax.text(0, -0.3, f"k = (r*S + s)*C + c: {R * S} groups of C = {C} channels", fontsize=8,
            va="bottom")
    for j in range(R * S):
        rr, ss = j // S, j % S
        hh, ww = p - ph + rr, q - pw + ss
        pad = not (0 <= hh < H and 0 <= ww < W)
        box(ax, ss * seg, rr * rowh, seg, bh,
            "white" if pad else CHANNEL_COLORS[j % len(CHANNEL_COLORS)],
            hatch="///" if pad else None, ec="#888888" if pad else "#444444")
        ax.text(ss * seg + seg / 2, rr * rowh + bh / 2,
                f"(r, s) = ({rr}, {ss}),  k = {fmt(j * C)}..{fmt(j * C + C - 1)}\n" +
                ("padding: zeros" if pad else f"x[{n}][{hh}][{ww}][0..{C - 1}]"), ha="center",
                va="center", fontsize=7, zorder=5,
                bbox=dict(boxstyle="square,pad=0.1", fc="white", ec="none") if pad else None)
    xk = (g["s"] + c0 / C) * seg
    ax.plot([xk + seg * 2 / C], [g["r"] * rowh + bh + 0.4], marker="^",
            color=COLORS["highlight"], ms=7, zorder=6)
    ax.text(0, R * rowh - 0.4, f"red: the float4 of k = {k0}..{k0 + 3}: c = {c0}..{c0 + 3}, "
            f"s = {g['s']}, r = {g['r']}", fontsize=8, va="top", color=COLORS["highlight"])
    # (b) the image around (p, q)
    hs, ws = list(range(p - ph, p - ph + R + 1)), list(range(q - pw - 1, q - pw + S + 1))
    ax2, _ = canvas_below(fig, 0.765, 0.68, 0.27, (-2.5, len(ws) * 3 + 0.2),
                          (-1.5, len(hs) * 3 + 2.2),
                          title=f"(b) image n = {n} of x[N][H][W][C]\nnear (h, w) = ({p}, {q})")
    for i, hh in enumerate(hs):
        ax2.text(-0.2, i * 3 + 1.2, f"h={hh}", ha="right", va="center", fontsize=7)
        for j, ww in enumerate(ws):
            inside = 0 <= hh < H and 0 <= ww < W
            box(ax2, j * 3, i * 3, 2.4, 2.4, "#f2f2f2" if not inside else COLORS["input"],
                ec="#888888", hatch="///" if not inside else None, lw=0.5,
                text=None if not inside else f"{C}\nfloats", fs=6.5)
            if i == 0:
                ax2.text(j * 3 + 1.2, -0.2, f"w={ww}", ha="center", va="bottom", fontsize=7)
    i0, j0 = hs.index(p - ph), ws.index(q - pw)
    outline(ax2, j0 * 3 - 0.25, i0 * 3 - 0.25, S * 3 - 0.1, R * 3 - 0.1, COLORS["output_dark"],
            lw=2)
    ih, jw = hs.index(h), ws.index(w)
    outline(ax2, jw * 3, ih * 3, 2.4, 2.4, COLORS["highlight"], lw=2.2)
    ax2.text(-2.4, len(hs) * 3 + 0.1, f"green: the window of (p, q);  hatched: padding\n"
             f"red: pixel ({h}, {w}), channels {c0}..{c0 + 3}", ha="left", va="top",
             fontsize=7.5)
    return fig
