"""Step 03's figures: tiled 1D convolution (docs/03_tiled_1d.md).

    03_halo_strategies  the three ways of loading a 1D tile and its halo
    03_loads_per_output reuse inside a tile, and where each kernel's taps
                        per output come from
"""
from .draw import COLORS, WARP, box, canvas, canvas_below, lane_color, new_figure, outline
from .manifest import figure, paragraph

NOTE = "03_tiled_1d.md"  # the lecture note of every figure here (docs/)


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


def caption_03_halo_strategies(k):
    T, TILE, PER = k["CONV1D_THREADS"], k["CONV1D_TILE"], k["CONV1D_PER_THREAD"]
    T2, M = k["CONV1D_S2_TILE"], k["problem conv1d"]["s"]
    half, n_in, n2 = (M - 1) // 2, TILE + M - 1, T2 + M - 1
    warps = (n2 + WARP - 1) // WARP
    return paragraph("""
        A mask of M = {M} taps needs (M - 1)/2 = {half} halo cells on each side of a tile.
        Strategy 1: the block of {T} threads covers the output tile (CONV1D_TILE = {TILE});
        the input tile of {TILE} + {M1} = {n_in} floats is loaded in steps: {PER} rounds of
        all {T} threads load j = 0..{loaded}, then M - 1 = {M1} threads load
        j = {rest}..{last}; after __syncthreads() thread t computes the outputs o = t + {T} r,
        r < {PER} (the red triangles are thread 0's). Strategy 2: the block covers the input
        tile, CONV1D_S2_TILE + M - 1 = {T2} + {M1} = {n2} threads in {warps} warps (the last
        with {tail} threads), one load each; threads 0..{T2_1} then compute one output each
        and threads {T2}..{n2_1} stay idle. Strategy 3: the block of {T} threads covers the
        output tile, and only the {TILE}-float core goes to shared memory, in {PER} rounds; a
        tap in the halo reads x through the caches. Outputs 0..{half_1} and {edge}..{TILE_1}
        have such taps: {halo_loads} global loads per tile, in the first and last warps, which
        diverge on the per-tap test. Each halo cell and the first and last {M} cells of a core
        are drawn one float wide, the middle of the core is squeezed to fit; every number is an
        index of the real tile.""",
                     M=M, M1=M - 1, half=half, half_1=half - 1, T=T, TILE=TILE, TILE_1=TILE - 1,
                     PER=PER, n_in=n_in, loaded=PER * T - 1, rest=PER * T, last=n_in - 1, T2=T2,
                     T2_1=T2 - 1, n2=n2, n2_1=n2 - 1, warps=warps, tail=n2 - (warps - 1) * WARP,
                     edge=TILE - half, halo_loads=half * (half + 1))


@figure(section="Output tiles and input tiles (strategies 1 to 3)",
        uses=["CONV1D_THREADS", "CONV1D_TILE", "CONV1D_PER_THREAD", "CONV1D_S2_TILE",
              "problem conv1d"])
def fig_03_halo_strategies(k):
    """The three ways of ECE408 lecture 8 to load a 1D tile and its halo."""
    T, TILE, PER = k["CONV1D_THREADS"], k["CONV1D_TILE"], k["CONV1D_PER_THREAD"]
    T2 = k["CONV1D_S2_TILE"]
    M = k["problem conv1d"]["s"]
    half = (M - 1) // 2
    fig = new_figure(11.5, 6.6, f"Step 03: three ways to load a 1D tile and its halo (mask "
                     f"M = {M}: (M - 1)/2 = {half} halo cells each side)")
    round_fc = [lane_color(r, 8, 0.82) for r in range(8)]
    n_in = TILE + M - 1
    x1 = piecewise_axis(half, TILE, M)
    edge1 = set(range(0, half + M)) | set(range(n_in - half - M, n_in))
    xr = x1(n_in)
    left, width = 0.25, 0.74
    # strategy 1
    fig.text(0.01, 0.93, f"Strategy 1, conv1d_tiled_s1_kernel: {T} threads cover the output "
             f"tile of {TILE}, the input tile of {n_in} floats is loaded in steps",
             fontsize=9.5, fontweight="bold", va="top")
    ax, bottom = canvas_below(fig, 0.885, left, width, (-0.3, xr + 0.3), (-0.9, 8.4))
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
    fig.text(0.01, bottom - 0.035, f"Strategy 2, conv1d_tiled_s2_kernel: {n2} threads cover the "
             f"input tile of {T2} + {M - 1} floats, one load each", fontsize=9.5,
             fontweight="bold", va="top")
    ax, bottom = canvas_below(fig, bottom - 0.075, left, width, (-0.3, xr + 0.3), (-0.3, 4.9))
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
    fig.text(0.01, bottom - 0.015, f"Strategy 3, conv1d_tiled_s3_kernel: {T} threads cover the "
             f"output tile, only its {TILE}-float core goes to shared memory", fontsize=9.5,
             fontweight="bold", va="top")
    ax, bottom = canvas_below(fig, bottom - 0.055, left, width, (-0.3, xr + 0.3), (-0.9, 4.0))
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
    ax.text(0, 3.35, f"red: outputs 0..{half - 1} and {TILE - half}..{TILE - 1} read their "
            f"halo taps from global memory", fontsize=7, va="top", color=COLORS["register_dark"])
    tile_row_labels(ax, [("shared memory: tile_s3[t] = x[out0 + t]\n(hatched: the halo)", 0),
                         (f"load: thread t -> t + {T} r, r < {PER}", 1.2),
                         ("compute, after __syncthreads()", 2.4)])
    return fig


def loads_per_output(k):
    """The load instructions behind one output in each kernel of step 03, per
    thread and averaged over a tile: (kernel, [x from global memory, x from
    shared memory, mask from constant memory])."""
    TILE, PER, T2 = k["CONV1D_TILE"], k["CONV1D_PER_THREAD"], k["CONV1D_S2_TILE"]
    M = k["problem conv1d"]["s"]
    half = (M - 1) // 2
    return [
        ("naive", [M, 0, M]),
        (f"naive x4 ({PER} outputs/thread)", [M, 0, M / PER]),
        ("strategy 1", [(TILE + M - 1) / TILE, M, M / PER]),
        ("strategy 2", [(T2 + M - 1) / T2, M, M]),
        ("strategy 3", [1 + half * (half + 1) / TILE, M - half * (half + 1) / TILE, M / PER]),
    ]


def caption_03_loads_per_output(k):
    M = k["problem conv1d"]["s"]
    half = (M - 1) // 2
    loads = ", ".join(f"{name} {g:.3g} + {sh:.3g} + {c:.3g}"
                      for name, (g, sh, c) in loads_per_output(k))
    return paragraph("""
        (a) The note's small example, T = 4 outputs y[4..7] of a mask of M = 5: each row marks
        the inputs one output's window reads, and the bottom row counts the uses of each input.
        That is 20 uses (T*M loads in the naive kernel) of T + M - 1 = 8 distinct inputs, each
        loaded once by a tiled kernel. (b) The load instructions behind one output of the
        conv1d problem (M = {M} multiply-adds), per thread and averaged over a tile of {TILE}
        outputs ({T2} for strategy 2), as x from global memory (L1/L2/DRAM) + x from shared
        memory + the mask from constant memory: {loads}. Strategy 1 and 3's {PER} outputs per
        thread share each mask value; strategy 3 reads {halo} halo taps per tile from global
        memory. Whether a global load reaches DRAM is up to the caches: the naive kernel's
        re-reads mostly hit L1.""",
                     M=M, TILE=k["CONV1D_TILE"], T2=k["CONV1D_S2_TILE"], loads=loads,
                     PER=k["CONV1D_PER_THREAD"], halo=half * (half + 1))


@figure(section="How much reuse is there?",
        uses=["CONV1D_TILE", "CONV1D_PER_THREAD", "CONV1D_S2_TILE", "problem conv1d"])
def fig_03_loads_per_output(k):
    """Reuse inside a tile, and where each kernel's M taps per output come from."""
    M = k["problem conv1d"]["s"]
    fig = new_figure(11.5, 4.0, f"Step 03: reuse inside a tile, and where the M = {M} taps of "
                     f"an output come from in each kernel")
    # (a) the note's small example: T = 4 outputs y[4..7], M = 5
    t_ex, m_ex, o0 = 4, 5, 4
    i0 = o0 - (m_ex - 1) // 2
    n_ex = t_ex + m_ex - 1
    ax = canvas(fig, (0.01, 0.02, 0.3, 0.8), (-2.6, n_ex + 0.3), (-1.6, t_ex + 2.4),
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
    ax.text(-2.5, t_ex + 1.7, f"{t_ex * m_ex} uses of T + M - 1 = {n_ex} distinct inputs",
            fontsize=8, va="top")
    # (b) load instructions per output, from the kernels' code
    kernels = loads_per_output(k)
    ax2 = fig.add_axes((0.5, 0.12, 0.48, 0.7))
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
    return fig
