"""Step 10's figures: the backward pass (docs/10_backward.md).

    10_dgrad_gather     one row of a strided convolution read forwards (each
                        output's taps) and backwards (the taps that reach
                        each input)
    10_three_gemms      the forward pass, dgrad and wgrad of one problem as
                        three matrix products, and where each one's long
                        dimension lies
    10_igemm_phases     10b: dgrad's stride phases, each a dense GEMM over its
                        own taps, and wgrad's split-K with its fixed-order sum
"""
from .draw import COLORS, arrow, box, canvas, new_figure, out_size
from .manifest import figure, paragraph

NOTE = "10_backward.md"  # the lecture note of every figure here (docs/)

# The row the first figure draws: small enough to show every cell, with a
# stride that skips taps.
ROW_H, ROW_R, ROW_PAD, ROW_STRIDE = 9, 3, 1, 2
TAP_COLORS = ["#6a51a3", "#e6550d", "#636363"]  # one per filter tap r


def taps_of(ih, H=ROW_H, R=ROW_R, pad=ROW_PAD, stride=ROW_STRIDE):
    """[(r, oh)]: the filter taps that carry input ih to an output (output_of()
    of 10_backward/conv_backward_cpu.c)."""
    P = out_size(H, R, pad, stride)
    found = []
    for r in range(R):
        num = ih + pad - r
        if num >= 0 and num % stride == 0 and num // stride < P:
            found.append((r, num // stride))
    return found


def caption_10_dgrad_gather(k):
    P = out_size(ROW_H, ROW_R, ROW_PAD, ROW_STRIDE)
    counts = [len(taps_of(i)) for i in range(ROW_H)]
    return paragraph("""
        One row of a convolution with H = {H}, a filter of R = {R} taps, padding {pad} and
        stride {stride}, so P = (H + 2*pad - R) / stride + 1 = {P} outputs. Top: the forward
        pass, output oh reads the inputs oh*stride - pad + r for r = 0..{R1}, each tap in its
        colour (cells in the padding are read as zeros). Bottom: dgrad walks the same lines
        from the input side: input ih receives dy[oh] * w[r] for every tap r with
        (ih + pad - r) divisible by the stride and the quotient oh in [0, P). With stride
        {stride} the inputs receive {counts} taps in turn: a stride leaves taps that reach no
        output, and dgrad must skip them, not multiply them by zero.""",
                     H=ROW_H, R=ROW_R, pad=ROW_PAD, stride=ROW_STRIDE, P=P, R1=ROW_R - 1,
                     counts=", ".join(str(c) for c in counts))


@figure(section="dgrad: the forward sum read from the input",
        uses=[])
def fig_10_dgrad_gather(k):
    """A strided row read forwards (outputs gather taps) and backwards (inputs gather taps)."""
    H, R, pad, stride = ROW_H, ROW_R, ROW_PAD, ROW_STRIDE
    P = out_size(H, R, pad, stride)
    fig = new_figure(10, 5.4, f"Step 10: one row, H = {H}, R = {R}, padding {pad}, stride "
                     f"{stride}: forwards and backwards")
    ax = canvas(fig, (0.02, 0.02, 0.96, 0.86), (-4.5, H + 6), (-0.5, 15.5))
    cell = 1.0
    x_in = lambda i: (i + pad) * cell  # noqa: E731  input i, padding on the left at 0
    x_out = lambda o: x_in(o * stride - pad) + (R - 1) / 2.0  # noqa: E731  above its window

    def input_row(y, label, padded=True):
        for i in range(-pad if padded else 0, H + pad if padded else H):
            inside = 0 <= i < H
            box(ax, x_in(i), y, cell, cell, COLORS["input"] if inside else "white",
                hatch=None if inside else "///", text=str(i) if inside else "0", fs=7)
        ax.text(-0.6, y + 0.5, label, ha="right", va="center", fontsize=8)

    def output_row(y, label, name):
        for o in range(P):
            box(ax, x_out(o), y, cell, cell, COLORS["output"], text=f"{o}", fs=7)
        ax.text(-0.6, y + 0.5, label, ha="right", va="center", fontsize=8)
        ax.text(x_out(P - 1) + 1.6, y + 0.5, name, ha="left", va="center", fontsize=8)

    # top: the forward pass, every output's taps
    output_row(0.5, "output oh", "y = conv(x, w)")
    input_row(4.0, "input ih")
    for o in range(P):
        for r in range(R):
            i = o * stride - pad + r
            arrow(ax, (x_in(i) + 0.5, 4.0), (x_out(o) + 0.5, 1.5), color=TAP_COLORS[r],
                  lw=1.3, style="-", z=4)
    ax.text(x_in(H + pad) + 0.2, 3.0, "forward: output oh\nreads inputs\noh*stride - pad + r",
            ha="left", va="center", fontsize=7.5)
    # bottom: dgrad, every input's taps
    output_row(9.0, "dy[oh]", "dy, the gradient of y")
    input_row(13.0, "dx[ih]", padded=False)
    for i in range(H):
        for r, o in taps_of(i):
            arrow(ax, (x_out(o) + 0.5, 10.0), (x_in(i) + 0.5, 13.0), color=TAP_COLORS[r],
                  lw=1.3, z=4, ms=7)
        ax.text(x_in(i) + 0.5, 14.6, f"{len(taps_of(i))}", ha="center", va="center", fontsize=7.5,
                color=COLORS["highlight"])
    ax.text(-0.6, 14.6, "taps", ha="right", va="center", fontsize=8, color=COLORS["highlight"])
    ax.text(x_in(H + pad) + 0.2, 11.5, "dgrad: input ih\nreceives dy[oh] * w[r]\nwhere "
            "ih + pad - r\n= oh * stride", ha="left", va="center", fontsize=7.5)
    for r in range(R):
        box(ax, -4.3 + 1.3 * r, 6.6, 1.0, 1.0, TAP_COLORS[r], text=f"r={r}", fs=6.5, tc="white")
    ax.text(-4.3, 6.3, "filter taps", ha="left", va="bottom", fontsize=7.5)
    return fig


def gemm_dims(pr):
    """(name, M, N, K, what M, N and K count) of the forward pass, dgrad and
    wgrad of problem pr as matrix products (stride 1)."""
    P = out_size(pr["h"], pr["r"], pr["pad_h"])
    Q = out_size(pr["w"], pr["s"], pr["pad_w"])
    npq, crs, krs = pr["n"] * P * Q, pr["c"] * pr["r"] * pr["s"], pr["k"] * pr["r"] * pr["s"]
    return [("forward: y = conv(x, w)", npq, pr["k"], crs, "N*P*Q", "K", "C*R*S"),
            ("dgrad: dx from dy and w", pr["n"] * pr["h"] * pr["w"], pr["c"], krs,
             "N*H*W", "C", "K*R*S"),
            ("wgrad: dw from x and dy", pr["k"], crs, npq, "K", "C*R*S", "N*P*Q")]


def caption_10_three_gemms(k):
    pr = k["problem hpc101-nhwc"]
    (f, M0, N0, K0, *_), (d, M1, N1, K1, *_), (w, M2, N2, K2, *_) = gemm_dims(pr)
    return paragraph("""
        The three passes of one layer as matrix products C (M x N) = A (M x K) times B (K x N),
        on the HPC101 lab's problem in NHWC (N = {n}, H = W = {h}, C = K = {c}, 3 x 3, same
        padding). Forward: M = N*P*Q = {M0:,} rows, N = K = {N0}, depth C*R*S = {K0:,}.
        dgrad: M = N*H*W = {M1:,}, N = C = {N1}, depth K*R*S = {K1:,}: the forward product's
        shape, with the filter's K and C exchanged. wgrad: M = K = {M2}, N = C*R*S = {N2:,},
        depth N*P*Q = {K2:,}: a small result at the end of a very long sum, which is where
        its bound and its parallelism (split-K) come from. Each side is drawn on a logarithmic
        scale.""", n=pr["n"], h=pr["h"], c=pr["c"], M0=M0, N0=N0, K0=K0, M1=M1, N1=N1, K1=K1,
                     M2=M2, N2=N2, K2=K2)


@figure(section="wgrad: a long sum over the batch and the image",
        uses=["problem hpc101-nhwc"])
def fig_10_three_gemms(k):
    """The forward pass, dgrad and wgrad of one problem as three matrix products."""
    import math
    pr = k["problem hpc101-nhwc"]
    side = lambda v: 1.0 + 1.5 * math.log10(v)  # noqa: E731
    passes = gemm_dims(pr)
    y_c = 2.0 + max(side(K) for _, _, _, K, *_ in passes) + 0.8  # the top of every C
    bottom = y_c + max(side(M) for _, M, *_ in passes) + 4.5
    fig = new_figure(11, 0.2 + 0.19 * bottom, "Step 10: one layer's three passes as matrix "
                     "products (HPC101 lab problem, NHWC; sides on a log scale)")
    ax = canvas(fig, (0.01, 0.02, 0.98, 0.86), (0, 66), (-0.5, bottom))
    x0 = 1.0
    for name, M, N, K, m_name, n_name, k_name in passes:
        h_m, w_n, w_k = side(M), side(N), side(K)
        ax.text(x0, 0.3, name, ha="left", va="center", fontsize=9, weight="bold")
        box(ax, x0, y_c, w_k, h_m, COLORS["input"])  # A: M x K, left of C
        ax.text(x0 + w_k / 2, y_c + h_m / 2, f"A\n{m_name}\nx {k_name}", ha="center",
                va="center", fontsize=7.5)
        bx = x0 + w_k + 1.2
        box(ax, bx, y_c - w_k - 0.4, w_n, w_k, COLORS["weight"])  # B: K x N, above C
        ax.text(bx + w_n / 2, y_c - w_k / 2 - 0.4, f"B\n{k_name}\nx {n_name}",
                ha="center", va="center", fontsize=7)
        box(ax, bx, y_c, w_n, h_m, COLORS["output"])  # C: M x N
        ax.text(bx + w_n / 2, y_c + h_m / 2, f"C\n{m_name}\nx {n_name}", ha="center",
                va="center", fontsize=7)
        ax.text(x0, y_c + h_m + 0.8, f"M = {M:,}\nN = {N:,}\nK = {K:,}", ha="left",
                va="top", fontsize=7.5)
        x0 = bx + w_n + 4.0
    return fig


# The image the third figure cuts into phases, and wgrad's slices.
PH_H, PH_R, PH_PAD, PH_STRIDE, PH_SPLITS = 8, 3, 1, 2, 4
PHASE_COLORS = ["#9ecae1", "#fdae6b", "#a1d99b", "#cbc9e2"]


def phase_taps(ph, R=PH_R, stride=PH_STRIDE, dil=1):
    """The taps of phase ph along one axis: t*dil % stride == ph (phase_axis_of()
    of 10_backward/conv_backward_10b_data.cu)."""
    return [t for t in range(R) if t * dil % stride == ph]


def caption_10_igemm_phases(k):
    H, R, st = PH_H, PH_R, PH_STRIDE
    counts = [len(phase_taps(a)) * len(phase_taps(b)) for a in range(st) for b in range(st)]
    return paragraph("""
        Left: dx of an {H} x {H} image with a {R} x {R} filter, padding {pad} and stride
        {st}, each input coloured by its phase ((ih + pad) mod {st}, (iw + pad) mod {st}).
        Middle: the filter taps each phase uses, those with r mod {st} and s mod {st} equal
        to the phase: {counts} taps for the four phases. Each phase is its own dense implicit
        GEMM (rows: the phase's inputs, columns: C, depth: its taps times K), so no product
        with an inserted zero is computed. Right: wgrad's depth N*P*Q cut into {sp} slices;
        each block sums one slice of one output tile into a partial tile in the workspace,
        and a second kernel adds the partial tiles in slice order 0, 1, 2, 3, which gives the
        same bits on every run.""", H=H, R=R, pad=PH_PAD, st=st, sp=PH_SPLITS,
                     counts=", ".join(str(c) for c in counts))


@figure(section="dgrad and wgrad as implicit GEMMs",
        uses=[])
def fig_10_igemm_phases(k):
    """dgrad's stride phases, each over its own taps, and wgrad's split-K in slice order."""
    H, R, pad, st = PH_H, PH_R, PH_PAD, PH_STRIDE
    fig = new_figure(11, 4.6, f"Step 10, 10b: dgrad by phases (stride {st}) and wgrad by "
                     f"slices (split-K)")
    ax = canvas(fig, (0.01, 0.02, 0.98, 0.86), (-0.5, 36), (-1.5, 13))
    phase = lambda i: (i + pad) % st  # noqa: E731
    for ih in range(H):  # left: dx by phase
        for iw in range(H):
            c = phase(ih) * st + phase(iw)
            box(ax, iw, ih + 1, 1, 1, PHASE_COLORS[c], text=f"{phase(ih)},{phase(iw)}", fs=6)
    ax.text(0, 0.3, "dx, by phase (ih+pad, iw+pad) mod 2", ha="left", va="center", fontsize=8)
    for a in range(st):  # middle: each phase's taps
        for b in range(st):
            x0, y0 = 10.5 + 4.2 * b, 1 + 5 * a
            taps = [(r, s) for r in phase_taps(a) for s in phase_taps(b)]
            for r in range(R):
                for s in range(R):
                    used = (r, s) in taps
                    box(ax, x0 + s, y0 + r, 1, 1, PHASE_COLORS[a * st + b] if used else "white",
                        hatch=None if used else "///", text=f"{r}{s}" if used else "", fs=6)
            ax.text(x0, y0 + R + 0.6, f"phase {a},{b}: {len(taps)} tap" + ("" if len(taps) == 1 else "s"), ha="left",
                    va="center", fontsize=7)
    ax.text(10.5, 0.3, "w's taps each phase reads", ha="left", va="center", fontsize=8)
    sp, x0 = PH_SPLITS, 21.5  # right: split-K
    ax.text(x0, 0.3, "wgrad: depth N*P*Q in slices", ha="left", va="center", fontsize=8)
    for z in range(sp):
        box(ax, x0 + 3.2 * z, 1.2, 3.0, 1.0, PHASE_COLORS[z], text=f"slice {z}", fs=7)
        box(ax, x0 + 3.2 * z + 0.5, 4.5, 2.0, 2.0, PHASE_COLORS[z], text=f"partial\n{z}", fs=6.5)
        arrow(ax, (x0 + 3.2 * z + 1.5, 2.2), (x0 + 3.2 * z + 1.5, 4.5), lw=1.0, ms=7)
        arrow(ax, (x0 + 3.2 * z + 1.5, 6.5), (x0 + 6.3, 9.0), lw=1.0, ms=7)
    box(ax, x0 + 5.3, 9.0, 2.0, 2.0, COLORS["output"], text="dw", fs=8)
    ax.text(x0 + 6.3, 12.0, "dw = ((p0 + p1) + p2) + p3, always in this order", ha="center",
            va="center", fontsize=7.5)
    ax.text(x0, 3.4, "one block per (tile, slice)", ha="left", va="center", fontsize=7)
    return fig


# The row of the fourth figure: stride 1, no padding, so pad' = R - 1.
FL_H, FL_R, FL_PAD = 6, 3, 0


def caption_10_dgrad_flip(k):
    H, R, pad = FL_H, FL_R, FL_PAD
    P = out_size(H, R, pad)
    pad2 = R - 1 - pad
    return paragraph("""
        One row at stride 1 with H = {H}, a filter of R = {R} taps w[0], w[1], w[2] and
        padding {pad}, so P = H + 2*pad - (R - 1) = {P} outputs. Top: dy, padded by
        pad' = (R - 1) - pad = {pad2} zeros on each side. Bottom: dx, each element the forward
        convolution of the padded dy with the flipped filter w'[r'] = w[R-1-r'], taps r' =
        0..{R1} from left to right, stride 1: dx[ih] = sum over r' of dy[ih - pad' + r'] *
        w'[r']. The tap colours are those of w: the leftmost dy a window reads is multiplied
        by w[{R1}], the rightmost by w[0], which is what the flip does. The padded row has
        P + 2*pad' = {L} cells and the windows give P + 2*pad' - (R - 1) = {H} outputs, exactly
        the image's width. The filter's channels are swapped as well (w'[c][k] = w[k][c]): the
        forward pass of dy sums over its K channels and writes C of them.""",
                     H=H, R=R, pad=pad, P=P, pad2=pad2, R1=R - 1, L=P + 2 * pad2)


@figure(section="dgrad as a forward convolution (10d)",
        uses=[])
def fig_10_dgrad_flip(k):
    """10d: a stride-1 row of dgrad as the forward convolution of padded dy with w flipped."""
    H, R, pad = FL_H, FL_R, FL_PAD
    P = out_size(H, R, pad)
    pad2 = R - 1 - pad
    fig = new_figure(9, 4.4, f"Step 10, 10d: dgrad at stride 1 = forward convolution of dy "
                     f"(padding {pad2}) with the flipped filter")
    ax = canvas(fig, (0.02, 0.02, 0.96, 0.86), (-4.5, P + 2 * pad2 + 6), (-0.5, 10.5))
    x_dy = lambda o: (o + pad2) * 1.0  # noqa: E731  dy[o], its padding on the left at 0
    x_dx = lambda i: x_dy(i - pad2) + (R - 1) / 2.0  # noqa: E731  below its window
    for o in range(-pad2, P + pad2):
        inside = 0 <= o < P
        box(ax, x_dy(o), 1.0, 1.0, 1.0, COLORS["output"] if inside else "white",
            hatch=None if inside else "///", text=str(o) if inside else "0", fs=7)
    ax.text(-0.6, 1.5, "dy[oh]", ha="right", va="center", fontsize=8)
    ax.text(x_dy(P + pad2) + 0.3, 1.5, f"dy padded by pad' = {pad2}", ha="left", va="center",
            fontsize=7.5)
    for i in range(H):
        box(ax, x_dx(i), 6.0, 1.0, 1.0, COLORS["input"], text=str(i), fs=7)
        for rf in range(R):  # the flipped tap rf multiplies w[R-1-rf]
            o = i - pad2 + rf
            arrow(ax, (x_dy(o) + 0.5, 2.0), (x_dx(i) + 0.5, 6.0), color=TAP_COLORS[R - 1 - rf],
                  lw=1.2, z=4, ms=7)
    ax.text(-0.6, 6.5, "dx[ih]", ha="right", va="center", fontsize=8)
    ax.text(x_dx(H - 1) + 1.6, 6.5, "dx = conv(dy, w')", ha="left", va="center", fontsize=7.5)
    for r in range(R):  # the filter and, below it, its flip
        box(ax, -4.3 + 1.3 * r, 3.6, 1.0, 1.0, TAP_COLORS[r], text=f"w[{r}]", fs=6, tc="white")
        box(ax, -4.3 + 1.3 * r, 8.6, 1.0, 1.0, TAP_COLORS[R - 1 - r], text=f"w'[{r}]", fs=6,
            tc="white")
    ax.text(-4.3, 3.3, "the filter w", ha="left", va="bottom", fontsize=7.5)
    ax.text(-4.3, 8.3, "flipped: w'[r'] = w[R-1-r']", ha="left", va="bottom", fontsize=7.5)
    return fig
