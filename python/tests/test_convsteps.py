"""convsteps against PyTorch: forward, dgrad and wgrad, both layouts, both precisions.

Every result is compared element by element with PyTorch's convolution (and
its autograd) computed in float64 on the CPU from the same float32 values,
within a bound derived from the arithmetic (note 01, note 08):

  An output is a dot product of depth n (forward C*R*S, dgrad K*R*S, wgrad
  N*P*Q). Summed in float in any order, with or without FMA,
      |ours - exact| <= gamma_n * sum|a*b|,  gamma_n = n*u / (1 - n*u),  u = 2^-24
  (Higham, "Accuracy and Stability of Numerical Algorithms", 3.1).
  sum|a*b| is the same convolution run in float64 on |x| and |w| (for the
  gradients, autograd on |x|, |w| and |dy|, whose gradients are the sums
  of |dy*w| and |x*dy|).

  TF32 (tensor cores): each input is rounded (or truncated) to 10 mantissa
  bits, a relative error of at most u_t = 2^-11 when rounded, 2 u_t when
  truncated; the product of two such inputs is exact in the tensor core, so
  one term a*b becomes a*b*(1+d1)*(1+d2), at most (1+2u_t)(1+u_t) - 1 off;
  the additions are in float but may truncate, so u is allowed twice,
  gamma'_n = n*2u / (1 - n*2u). Together:
      |ours - exact| <= [ (1+2u_t)(1+u_t) - 1 + gamma'_n (1+2u_t)(1+u_t) ] sum|a*b|
  which covers both rounded and truncated inputs (step 08's tc_host.h).

  3xTF32 (8c, the FP32 class): [ 3.01 u_t^2 + gamma'_{3n} (1+u_t)^2 (1+2u_t) ] sum|a*b|.

  Winograd (7a, 7b, and dgrad through 7b, "10d-7b") computes other sums:
  note 07's per-output bound, gamma_m * (|A^T| [sum_c (|G||g||G^T|) .* (|B^T||d||B|)] |A|)
  with m = 4*alpha + C + 9 roundings, evaluated here with float64 convolutions.

Which bound applies is read from the kernel that ran (convsteps.last_kernel()).
Small-integer inputs: sums of products of small integers are exact in float
(and in TF32, whose 11 bits hold them), so every kernel but Winograd must be
bit-exact; Winograd's F(4x4, 3x3) rounds its 1/6 constants and is held to its bound.

The tests skip (with the reason) without PyTorch, a CUDA device or the
library; with CONV_REQUIRE_GPU=1 any of those is a failure instead.
    python3 -m unittest discover -s python/tests     or    python3 -m pytest python/tests
"""
import os
import re
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # python/, so that the tests run without installing

REQUIRE_GPU = os.environ.get("CONV_REQUIRE_GPU") == "1"

try:
    import torch
    import torch.nn.functional as F
except ImportError:  # pragma: no cover - depends on the machine
    torch = None

U = 2.0 ** -24
U_T = 2.0 ** -11


def missing():
    """None when everything the tests need is here, else the one-line reason."""
    if torch is None:
        return "PyTorch is not installed"
    if not torch.cuda.is_available():
        return "no CUDA device (torch.cuda.is_available() is False)"
    import convsteps
    return convsteps.library_error()


def require(case):
    reason = missing()
    if reason is None:
        return
    if REQUIRE_GPU:
        raise AssertionError(f"CONV_REQUIRE_GPU=1 but {reason}")
    raise unittest.SkipTest(reason)


# ---- the bounds -------------------------------------------------------------

def gamma(n, u=U):
    nu = n * u
    return float("inf") if nu >= 1 else nu / (1 - nu)


def dot_bound_factor(n, precision, key):
    """The factor of sum|a*b| for a dot product of depth n (see the docstring)."""
    g = gamma(n)
    if precision == "tf32":
        t = (1 + 2 * U_T) * (1 + U_T)
        return max(g, t - 1 + gamma(n, 2 * U) * t)
    if key is not None and "8c" in key:
        return max(g, 3.01 * U_T ** 2 + gamma(3 * n, 2 * U) * (1 + U_T) ** 2 * (1 + 2 * U_T))
    return g


def winograd_tile(key):
    """Output tile m of the Winograd kernel named by key (2 for 7a, 4 for 7b
    and 7c, also behind "10d-"), None for any other kernel."""
    m = re.search(r"(?<![0-9])7([abc])", key or "")
    if m is None:
        return None
    return 2 if m.group(1) == "a" else 4


# |B^T|, |G|, |A^T| of F(2x2, 3x3) and F(4x4, 3x3), as 07_winograd/winograd_host.c has them
_BT = {2: [[1, 0, 1, 0], [0, 1, 1, 0], [0, 1, 1, 0], [0, 1, 0, 1]],
       4: [[4, 0, 5, 0, 1, 0], [0, 4, 4, 1, 1, 0], [0, 4, 4, 1, 1, 0],
           [0, 2, 1, 2, 1, 0], [0, 2, 1, 2, 1, 0], [0, 4, 0, 5, 0, 1]]}
_G = {2: [[1, 0, 0], [0.5, 0.5, 0.5], [0.5, 0.5, 0.5], [0, 0, 1]],
      4: [[1 / 4, 0, 0], [1 / 6, 1 / 6, 1 / 6], [1 / 6, 1 / 6, 1 / 6],
          [1 / 24, 1 / 12, 1 / 6], [1 / 24, 1 / 12, 1 / 6], [0, 0, 1]]}
_AT = {2: [[1, 1, 1, 0], [0, 1, 1, 1]],
       4: [[1, 1, 1, 1, 1, 0], [0, 1, 1, 2, 2, 0], [0, 1, 1, 4, 4, 0], [0, 1, 1, 8, 8, 1]]}


def winograd_bound(xa, wa, pad, m):
    """Note 07's bound of every output of a 3x3, stride-1 convolution of |x|
    (N, C, H, W) with |w| (K, C, 3, 3) in float64, tiles of m x m outputs.
    Separable: output (y0, y1) of a tile weighs |g[r][s]| |d[i][j]| by
    M[y0][r][i] M[y1][s][j], M[y][r][i] = sum_a |A^T[y][a]| |G[a][r]| |B^T[a][i]|,
    d the alpha x alpha input tile; so each of the m*m offsets is one float64
    convolution at stride m with a 6x6 (4x4) filter."""
    alpha = m + 2
    at, g, bt = (torch.tensor(t, dtype=torch.float64) for t in (_AT[m], _G[m], _BT[m]))
    M = torch.einsum("ya,ar,ai->yri", at.abs(), g.abs(), bt.abs())
    N, C, H, W = xa.shape
    K = wa.shape[0]
    P, Q = H + 2 * pad[0] - 2, W + 2 * pad[1] - 2
    tp, tq = -(-P // m), -(-Q // m)
    # the input with its padding, and zeros after it as far as the last tile reads
    xp = F.pad(xa, [pad[1], max(0, tq * m + 2 - W - pad[1]), pad[0],
                    max(0, tp * m + 2 - H - pad[0])])
    out = torch.zeros(N, K, tp * m, tq * m, dtype=torch.float64)
    for y0 in range(m):
        for y1 in range(m):
            e = torch.einsum("kcrs,ri,sj->kcij", wa, M[y0], M[y1])
            out[:, :, y0::m, y1::m] = F.conv2d(xp, e, stride=m)[:, :, :tp, :tq]
    return gamma(4 * alpha + C + 9) * out[:, :, :P, :Q]


# ---- the reference ------------------------------------------------------------

def reference(x, w, dy, stride, padding, dilation):
    """float64 CPU: y, dx, dw, and their sum|a*b|, from PyTorch and autograd."""
    def run(a, b, g):
        a = a.detach().cpu().double().requires_grad_(True)
        b = b.detach().cpu().double().requires_grad_(True)
        y = F.conv2d(a, b, None, stride, padding, dilation)
        y.backward(g.detach().cpu().double())
        return y.detach(), a.grad, b.grad
    exact = run(x, w, dy)
    absolute = run(x.abs(), w.abs(), dy.abs())
    return exact, absolute


def check_close(case, name, got, want, tol, key):
    got = got.detach().cpu().double()
    case.assertEqual(tuple(got.shape), tuple(want.shape), f"{name}: shape")
    err = (got - want).abs()
    bad = ~(err <= tol)          # NaN counts as bad
    if bad.any():
        i = int(bad.flatten().nonzero()[0])
        case.fail(f"{name} (kernel {key}): {int(bad.sum())} of {err.numel()} outside the bound; "
                  f"first at flat index {i}: got {got.flatten()[i].item():.9g}, want "
                  f"{want.flatten()[i].item():.9g}, bound {tol.flatten()[i].item():.3g}")


def pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


# (N, C, H, W, K, R, S, stride, padding, dilation): 1x1 images, primes, widths
# no multiple of 4, even and odd filters, filter = image, batch > 1, strides 2
# and 3, dilation 2, padding, pairs; and channels enough for the larger tiles.
SHAPES = [
    (1, 3, 1, 1, 2, 1, 1, 1, 0, 1),        # a 1x1 image, a 1x1 filter
    (2, 3, 1, 1, 5, 3, 3, 1, 1, 1),        # a 1x1 image, 3x3 filter, padding 1
    (3, 5, 7, 11, 13, 3, 3, 1, 1, 1),      # primes, 3x3 stride 1 (Winograd's shape)
    (2, 4, 9, 13, 6, 3, 3, 1, 0, 1),       # width 13, no padding
    (2, 3, 8, 10, 4, 2, 2, 1, 0, 1),       # an even filter
    (1, 2, 9, 7, 3, 4, 2, 1, 1, 1),        # even, not square
    (1, 3, 12, 17, 7, 5, 5, 1, 2, 1),      # 5x5, width 17
    (2, 3, 5, 5, 4, 5, 5, 1, 0, 1),        # filter = image: one output
    (2, 6, 15, 14, 8, 3, 3, 2, 1, 1),      # stride 2
    (1, 3, 16, 19, 5, 3, 3, 3, 0, 1),      # stride 3
    (2, 4, 13, 11, 6, 3, 3, 1, 2, 2),      # dilation 2
    (2, 5, 10, 9, 7, 1, 3, (2, 1), (1, 0), (1, 2)),   # pairs
    (3, 7, 6, 6, 1, 3, 3, 1, 1, 1),        # one filter
    (2, 32, 14, 14, 48, 3, 3, 1, 1, 1),    # channels for the GEMM tiles
    (4, 16, 17, 15, 24, 1, 1, 1, 0, 1),    # 1x1 filter, many positions
    (8, 8, 32, 32, 8, 3, 3, 2, 1, 1),      # wgrad's long sum, N*P*Q = 2048
]

FORMATS = ("nchw", "channels_last")


def make(shape, fmt, gen, integers=False):
    n, c, h, w, k, r, s, stride, pad, dil = shape
    stride, pad, dil = pair(stride), pair(pad), pair(dil)
    p = (h + 2 * pad[0] - dil[0] * (r - 1) - 1) // stride[0] + 1
    q = (w + 2 * pad[1] - dil[1] * (s - 1) - 1) // stride[1] + 1
    if integers:
        def fill(size, lim):
            return torch.randint(-lim, lim + 1, size, generator=gen).float()
        x, wt, dy = fill((n, c, h, w), 4), fill((k, c, r, s), 3), fill((n, k, p, q), 2)
    else:
        def fill(size, lim):
            return torch.rand(size, generator=gen) * 2 - 1
        x, wt, dy = fill((n, c, h, w), 1), fill((k, c, r, s), 1), fill((n, k, p, q), 1)
    mf = torch.channels_last if fmt == "channels_last" else torch.contiguous_format
    dev = torch.device("cuda")
    x, wt, dy = (t.to(dev).contiguous(memory_format=mf) for t in (x, wt, dy))
    return x, wt, dy, stride, pad, dil


def run_ours(x, w, dy, stride, pad, dil, precision):
    """Ours through autograd: y, dx, dw, and the key of each pass's kernel."""
    import convsteps
    xg = x.clone().requires_grad_(True)
    wg = w.clone().requires_grad_(True)
    y = convsteps.conv2d(xg, wg, None, stride, pad, dil, precision=precision)
    keys = {"forward": convsteps.last_kernel("forward")}
    y.backward(dy)
    torch.cuda.synchronize()
    keys["dgrad"] = convsteps.last_kernel("dgrad")
    keys["wgrad"] = convsteps.last_kernel("wgrad")
    return y, xg.grad, wg.grad, keys


def bounds(x, w, dy, stride, pad, dil, refs_abs, precision, keys):
    """The tolerance of every element of y, dx and dw for the kernels that ran."""
    (ya, dxa, dwa) = refs_abs
    n, c = x.shape[:2]
    k, _, r, s = w.shape
    p, q = dy.shape[2:]
    out = []
    # forward: depth C*R*S
    m = winograd_tile(keys["forward"])
    if m is not None:
        out.append(winograd_bound(x.abs().cpu().double(), w.abs().cpu().double(), pad, m))
    else:
        out.append(dot_bound_factor(c * r * s, precision, keys["forward"]) * ya)
    # dgrad: depth K*R*S; through Winograd, the forward problem of dy with the
    # flipped filter (channels swapped), padded by R-1-pad
    m = winograd_tile(keys["dgrad"])
    if m is not None:
        wf = w.abs().cpu().double().flip(2, 3).transpose(0, 1)
        out.append(winograd_bound(dy.abs().cpu().double(), wf,
                                  (r - 1 - pad[0], s - 1 - pad[1]), m))
    else:
        out.append(dot_bound_factor(k * r * s, precision, keys["dgrad"]) * dxa)
    # wgrad: depth N*P*Q
    out.append(dot_bound_factor(n * p * q, precision, keys["wgrad"]) * dwa)
    return out


class GpuCase(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        require(cls)
        import convsteps
        cls.convsteps = convsteps

    def generator(self, start=12345):
        g = torch.Generator()
        g.manual_seed(start)
        return g


class TestAgainstPyTorch(GpuCase):
    def compare(self, shape, fmt, precision, integers):
        x, w, dy, stride, pad, dil = make(shape, fmt, self.generator(), integers)
        y, dx, dw, keys = run_ours(x, w, dy, stride, pad, dil, precision)
        exact, absolute = reference(x, w, dy, stride, pad, dil)
        tols = bounds(x, w, dy, stride, pad, dil, absolute, precision, keys)
        for name, key, got, want, tol in zip(("y", "dx", "dw"), keys.values(), (y, dx, dw),
                                             exact, tols):
            if integers and winograd_tile(key) is None:
                tol = torch.zeros_like(want)          # small integers: exact
            check_close(self, f"{name} {shape} {fmt} {precision}", got, want, tol, key)
        mf = torch.channels_last if fmt == "channels_last" else torch.contiguous_format
        if x.shape[1] > 1 and x.shape[2] * x.shape[3] > 1:
            self.assertTrue(y.is_contiguous(memory_format=mf), "y keeps x's memory format")
            self.assertTrue(dx.is_contiguous(memory_format=mf), "dx keeps x's memory format")

    def compare_everywhere(self, integers):
        """compare() in both precisions, both memory formats, on every shape."""
        for precision in ("fp32", "tf32"):
            for fmt in FORMATS:
                for shape in SHAPES:
                    with self.subTest(shape=shape, fmt=fmt, precision=precision):
                        self.compare(shape, fmt, precision, integers)

    def test_random_floats_stay_within_the_derived_bound(self):
        self.compare_everywhere(integers=False)

    def test_small_integers_are_exact(self):
        self.compare_everywhere(integers=True)

    def test_bias_and_its_gradient(self):
        gen = self.generator(7)
        for fmt in FORMATS:
            x, w, dy, stride, pad, dil = make((2, 3, 9, 7, 5, 3, 3, 1, 1, 1), fmt, gen, True)
            b = torch.randint(-3, 4, (5,), generator=gen).float().cuda().requires_grad_(True)
            y = self.convsteps.conv2d(x, w, b, stride, pad, dil)
            y.backward(dy)
            want = F.conv2d(x.cpu().double(), w.cpu().double(), b.detach().cpu().double(),
                            stride, pad, dil)
            key = self.convsteps.last_kernel("forward")
            tol = (torch.zeros_like(want) if winograd_tile(key) is None else
                   winograd_bound(x.abs().cpu().double(), w.abs().cpu().double(), pad,
                                  winograd_tile(key)) + U * want.abs())
            check_close(self, f"y with bias {fmt}", y, want, tol, key)
            check_close(self, f"dbias {fmt}", b.grad, dy.cpu().double().sum((0, 2, 3)),
                        torch.zeros(5, dtype=torch.float64), "torch sum")

    def test_padding_same_and_valid_match_pytorch(self):
        gen = self.generator(11)
        for shape in ((2, 3, 9, 8, 4, 4, 4, 1, 0, 1), (1, 2, 7, 10, 3, 3, 2, 1, 0, 2),
                      (1, 3, 6, 6, 2, 3, 3, 1, 0, 1)):
            for fmt in FORMATS:
                for padding in ("same", "valid"):
                    with self.subTest(shape=shape, fmt=fmt, padding=padding):
                        x, w, dy, _, _, dil = make(shape, fmt, gen, True)
                        xg = x.clone().requires_grad_(True)
                        y = self.convsteps.conv2d(xg, w, None, 1, padding, dil)
                        want = F.conv2d(x.cpu().double(), w.cpu().double(), None, 1, padding,
                                        dil)
                        key = self.convsteps.last_kernel("forward")
                        self.assertEqual(tuple(y.shape), tuple(want.shape))
                        if winograd_tile(key) is None:
                            check_close(self, "y", y, want, torch.zeros_like(want), key)
                        y.sum().backward()
                        self.assertEqual(xg.grad.shape, x.shape)

    def test_autograd_gradients_match_float64_autograd(self):
        """gradcheck cannot run float64 through float32 kernels; instead the
        gradients of a loss through convsteps.Conv2d (weight, bias, input) are
        compared with float64 autograd's within the bounds."""
        gen = self.generator(5)
        torch.manual_seed(5)
        for fmt in FORMATS:
            mf = torch.channels_last if fmt == "channels_last" else torch.contiguous_format
            ref = torch.nn.Conv2d(6, 10, (3, 2), stride=(2, 1), padding=(1, 1), dilation=(1, 2))
            ours = self.convsteps.Conv2d(6, 10, (3, 2), stride=(2, 1), padding=(1, 1),
                                         dilation=(1, 2))
            ours.load_state_dict(ref.state_dict())
            ours = ours.cuda().to(memory_format=mf)
            x = (torch.rand(3, 6, 11, 9, generator=gen) * 2 - 1).cuda().contiguous(
                memory_format=mf).requires_grad_(True)
            g = torch.rand(3, 10, 6, 9, generator=gen) * 2 - 1
            (ours(x) * g.cuda()).sum().backward()
            keys = self.convsteps.last_kernels()
            xr = x.detach().cpu().double().requires_grad_(True)
            ref = ref.double()
            (ref(xr) * g.double()).sum().backward()
            _, absolute = reference(x.detach(), ours.weight.detach(), g, (2, 1), (1, 1), (1, 2))
            tols = bounds(x.detach(), ours.weight.detach(), g, (2, 1), (1, 1), (1, 2), absolute,
                          "fp32", keys)
            check_close(self, f"x.grad {fmt}", x.grad, xr.grad, tols[1], keys["dgrad"])
            check_close(self, f"weight.grad {fmt}", ours.weight.grad, ref.weight.grad, tols[2],
                        keys["wgrad"])
            n_terms = g.shape[0] * g.shape[2] * g.shape[3]
            check_close(self, f"bias.grad {fmt}", ours.bias.grad, ref.bias.grad,
                        gamma(n_terms) * g.abs().double().sum((0, 2, 3)), "torch sum")
            self.assertEqual(ours.weight.grad.shape, ours.weight.shape)


class TestModule(GpuCase):
    def test_state_dict_is_that_of_nn_conv2d(self):
        ref = torch.nn.Conv2d(3, 4, 3, padding=1)
        ours = self.convsteps.Conv2d(3, 4, 3, padding=1)
        self.assertEqual(list(ref.state_dict().keys()), list(ours.state_dict().keys()))
        ours.load_state_dict(ref.state_dict())
        ref.load_state_dict(ours.state_dict())

    def test_unsupported_modules_raise_at_construction(self):
        with self.assertRaisesRegex(NotImplementedError, "groups=2"):
            self.convsteps.Conv2d(4, 4, 3, groups=2)
        with self.assertRaisesRegex(NotImplementedError, "padding_mode='reflect'"):
            self.convsteps.Conv2d(4, 4, 3, padding=1, padding_mode="reflect")

    def test_patch_replaces_supported_convolutions_and_shares_their_parameters(self):
        shared = torch.nn.Conv2d(4, 4, 3, padding=1)
        model = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3, padding=1), torch.nn.ReLU(),
                                    shared, shared,
                                    torch.nn.Conv2d(4, 4, 3, padding=1, groups=2),
                                    torch.nn.Conv2d(4, 4, 3, padding=1, padding_mode="reflect"))
        weights = [m.weight for m in model if isinstance(m, torch.nn.Conv2d)]
        report = self.convsteps.patch(model)
        self.assertEqual(report.replaced, ["0", "2"])
        self.assertEqual([name for name, _ in report.left_alone], ["4", "5"])
        self.assertIn("groups=2", report.left_alone[0][1])
        self.assertIn("padding_mode", report.left_alone[1][1])
        self.assertIsInstance(model[0], self.convsteps.Conv2d)
        self.assertIs(model[2], model[3])
        self.assertIs(model[0].weight, weights[0])
        self.assertIs(model[2].weight, weights[1])
        model = model.cuda()
        x = torch.randint(-2, 3, (2, 3, 6, 5)).float().cuda()
        model(x).sum().backward()
        self.assertIsNotNone(model[0].weight.grad)


class TestBadInput(GpuCase):
    """Each bad argument raises with one line naming it, before the library is called."""

    def expect(self, exc, pattern, *args, **kwargs):
        before = self.convsteps.launch_count()
        with self.assertRaisesRegex(exc, pattern):
            self.convsteps.conv2d(*args, **kwargs)
        self.assertEqual(self.convsteps.launch_count(), before, "nothing was launched")

    def setUp(self):
        self.x = torch.zeros(2, 3, 8, 8, device="cuda")
        self.w = torch.zeros(4, 3, 3, 3, device="cuda")

    def test_wrong_dtype(self):
        self.expect(TypeError, r"x must be torch\.float32, got torch\.float64",
                    self.x.double(), self.w)
        self.expect(TypeError, r"w must be torch\.float32", self.x, self.w.half())

    def test_cpu_tensor(self):
        self.expect(ValueError, "x must be a CUDA tensor", self.x.cpu(), self.w)
        self.expect(ValueError, "w must be a CUDA tensor", self.x, self.w.cpu())

    def test_groups_other_than_one(self):
        self.expect(NotImplementedError, "groups=2", self.x, self.w[:, :1].contiguous(),
                    groups=2)

    def test_non_contiguous_input(self):
        self.expect(ValueError, "x must be contiguous", self.x[:, :, :, ::2], self.w)
        self.expect(ValueError, "x must be contiguous", self.x.transpose(2, 3), self.w)

    def test_mismatched_channels(self):
        self.expect(ValueError, "x has 3 channels, w expects 2", self.x,
                    torch.zeros(4, 2, 3, 3, device="cuda"))

    def test_other_arguments(self):
        self.expect(ValueError, "bias has 3 elements", self.x, self.w,
                    torch.zeros(3, device="cuda"))
        self.expect(ValueError, "stride must be at least 1", self.x, self.w, stride=0)
        self.expect(ValueError, "padding must not be negative", self.x, self.w, padding=-1)
        self.expect(ValueError, "padding='same' needs stride 1", self.x, self.w, stride=2,
                    padding="same")
        self.expect(ValueError, "precision must be one of", self.x, self.w, precision="fp16")
        self.expect(ValueError, "the output has no height", self.x,
                    torch.zeros(4, 3, 9, 3, device="cuda"))
        self.expect(ValueError, "4 dimensions", self.x[0], self.w)
        self.expect(TypeError, "stride must be an int or a pair", self.x, self.w, stride=(1,))


class TestBounds(unittest.TestCase):
    """The bound helpers themselves, on the CPU (PyTorch needed, no GPU)."""

    @classmethod
    def setUpClass(cls):
        if torch is None:
            if REQUIRE_GPU:
                raise AssertionError("CONV_REQUIRE_GPU=1 but PyTorch is not installed")
            raise unittest.SkipTest("PyTorch is not installed")

    def test_winograd_tile_is_read_from_the_kernel_key(self):
        self.assertEqual(winograd_tile("7b"), 4)
        self.assertEqual(winograd_tile("10d-7b"), 4)
        self.assertEqual(winograd_tile("7a"), 2)
        for key in ("6f", "8b", "10d-8b", "10c", "17b", None):
            self.assertIsNone(winograd_tile(key))

    def test_winograd_bound_holds_a_float32_winograd_and_fails_a_wrong_one(self):
        """F(2x2, 3x3) computed in float32 by hand stays within the bound; a
        filter tap off by a thousandth does not."""
        gen = torch.Generator()
        gen.manual_seed(3)
        x = torch.rand(1, 2, 6, 6, generator=gen) * 2 - 1
        w = torch.rand(1, 2, 3, 3, generator=gen) * 2 - 1
        bt = torch.tensor([[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]],
                          dtype=torch.float32)
        g = torch.tensor([[1, 0, 0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0, 0, 1]])
        at = torch.tensor([[1, 1, 1, 0], [0, 1, -1, -1]], dtype=torch.float32)

        def wino(wt):
            y = torch.zeros(1, 1, 4, 4)
            for t0 in range(2):
                for t1 in range(2):
                    acc = torch.zeros(4, 4)
                    for c in range(2):
                        d = x[0, c, 2 * t0:2 * t0 + 4, 2 * t1:2 * t1 + 4]
                        acc += (g @ wt[0, c] @ g.T) * (bt @ d @ bt.T)
                    y[0, 0, 2 * t0:2 * t0 + 2, 2 * t1:2 * t1 + 2] = at @ acc @ at.T
            return y
        want = F.conv2d(x.double(), w.double())
        tol = winograd_bound(x.abs().double(), w.abs().double(), (0, 0), 2)
        self.assertTrue(((wino(w).double() - want).abs() <= tol).all())
        w_off = w.clone()
        w_off[0, 0, 1, 1] += 1e-3
        self.assertFalse(((wino(w_off).double() - want).abs() <= tol).all())

    def test_tf32_bound_is_looser_than_float(self):
        self.assertGreater(dot_bound_factor(27, "tf32", "8b"), gamma(27))
        self.assertEqual(dot_bound_factor(27, "fp32", "6f"), gamma(27))
        self.assertGreater(dot_bound_factor(27, "fp32", "8c"), gamma(27))


if __name__ == "__main__":
    unittest.main()
