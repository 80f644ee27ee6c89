"""convsteps.conv2d: a drop-in for torch.nn.functional.conv2d on the course's kernels.

Layouts. A CUDA float32 tensor in PyTorch's default memory format is NCHW;
one in torch.channels_last keeps the shape (N, C, H, W) but stores the data
as NHWC. The library takes both: NCHW with the filter as PyTorch stores it,
(K, C, R, S), and NHWC with the filter as RSCK, w[R][S][C][K], so for a
channels_last input the filter is permuted to (R, S, C, K) and copied. The
output is allocated in the input's memory format.

Streams and memory. Every pass is enqueued on PyTorch's current stream of
the input's device, so it is ordered with the operations before and after it
without a synchronisation; the workspace the kernel asks for is a uint8
tensor from PyTorch's caching allocator, freed (for reuse on that stream)
when the call returns.

Everything is checked here, before the library is called, and the library
checks again before its first launch: a bad argument raises with one line
naming it (TypeError for a wrong type, ValueError for a wrong value,
NotImplementedError for what the kernels do not do) and nothing runs.
"""
import torch
import torch.nn.functional as F

from . import _lib

__all__ = ["conv2d"]

_INT_MAX = 2 ** 31 - 1


def _pair(value, name):
    if isinstance(value, bool):
        raise TypeError(f"{name} must be an int or a pair of ints, got {value!r}")
    if isinstance(value, int):
        return (value, value)
    if isinstance(value, (tuple, list)) and len(value) == 2 and \
            all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return (int(value[0]), int(value[1]))
    raise TypeError(f"{name} must be an int or a pair of ints, got {value!r}")


def _check_tensor(t, name, dims):
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
    if t.dtype != torch.float32:
        raise TypeError(f"{name} must be torch.float32, got {t.dtype}")
    if t.device.type != "cuda":
        raise ValueError(f"{name} must be a CUDA tensor, got one on {t.device}")
    if t.dim() != dims:
        raise ValueError(f"{name} must have {dims} dimensions, got shape {tuple(t.shape)}")


def _layout_of(x):
    """NCHW for a contiguous tensor, NHWC for a channels_last one (a tensor that
    is both, e.g. with one channel or a 1x1 image, is taken as NCHW)."""
    if x.is_contiguous():
        return _lib.NCHW
    if x.is_contiguous(memory_format=torch.channels_last):
        return _lib.NHWC
    raise ValueError("x must be contiguous (NCHW) or torch.channels_last, got strides "
                     f"{tuple(x.stride())} for shape {tuple(x.shape)}: call .contiguous() first")


def _memory_format(layout):
    return torch.channels_last if layout == _lib.NHWC else torch.contiguous_format


def _same_padding(kernel, dilation, stride):
    """PyTorch's padding='same': total padding dil*(k-1) per axis, half before
    and the rest after. Returns the symmetric part and the extra after."""
    if stride != (1, 1):
        raise ValueError(f"padding='same' needs stride 1, got stride {stride}")
    sym, extra = [], []
    for k, d in zip(kernel, dilation):
        total = d * (k - 1)
        sym.append(total // 2)
        extra.append(total - 2 * (total // 2))
    return tuple(sym), tuple(extra)


def _out_size(size, pad, dil, k, stride):
    return (size + 2 * pad - dil * (k - 1) - 1) // stride + 1


def _run(problem, pass_, precision, in0, in1, out, device):
    """One pass on PyTorch's current stream, with a workspace from its allocator."""
    with torch.cuda.device(device):
        stream = torch.cuda.current_stream(device).cuda_stream
        nbytes = _lib.workspace_size(problem, pass_, precision)
        work = torch.empty(nbytes, dtype=torch.uint8, device=device) if nbytes else None
        return _lib.run(problem, pass_, precision, in0.data_ptr(), in1.data_ptr(),
                        out.data_ptr(), work.data_ptr() if work is not None else None,
                        nbytes, stream)


def _filter_for(w, layout):
    """The filter as the library reads it: (K, C, R, S) contiguous for NCHW,
    RSCK (w.permute(2, 3, 1, 0)) contiguous for NHWC."""
    if layout == _lib.NHWC:
        return w.detach().permute(2, 3, 1, 0).contiguous()
    return w.detach().contiguous()


class _Conv2dFunction(torch.autograd.Function):
    """y = conv(x, w) + bias on the library; backward: dgrad and wgrad on the
    library, the bias gradient as a sum of dy over N, P and Q."""

    @staticmethod
    def forward(ctx, x, w, bias, problem, precision):
        layout = problem.layout
        w_lib = _filter_for(w, layout)
        P = _out_size(problem.h, problem.pad_h, problem.dil_h, problem.r, problem.stride_h)
        Q = _out_size(problem.w, problem.pad_w, problem.dil_w, problem.s, problem.stride_w)
        y = torch.empty((problem.n, problem.k, P, Q), dtype=torch.float32, device=x.device,
                        memory_format=_memory_format(layout))
        _run(problem, _lib.FORWARD, precision, x, w_lib, y, x.device)
        if bias is not None:
            y.add_(bias.view(1, -1, 1, 1))
        ctx.problem, ctx.precision = problem, precision
        ctx.w_channels_last = (w.is_contiguous(memory_format=torch.channels_last)
                               and not w.is_contiguous())
        ctx.w_shape = tuple(w.shape)
        ctx.has_bias = bias is not None
        ctx.save_for_backward(x, w_lib)
        return y

    @staticmethod
    def backward(ctx, dy):
        x, w_lib = ctx.saved_tensors
        p, precision = ctx.problem, ctx.precision
        fmt = _memory_format(p.layout)
        dy = dy.to(torch.float32).contiguous(memory_format=fmt)
        dx = dw = db = None
        if ctx.needs_input_grad[0]:
            dx = torch.empty(x.shape, dtype=torch.float32, device=x.device, memory_format=fmt)
            _run(p, _lib.DGRAD, precision, dy, w_lib, dx, x.device)
        if ctx.needs_input_grad[1]:
            K, C, R, S = ctx.w_shape
            if p.layout == _lib.NHWC:
                dw_lib = torch.empty((R, S, C, K), dtype=torch.float32, device=x.device)
                _run(p, _lib.WGRAD, precision, x, dy, dw_lib, x.device)
                dw = dw_lib.permute(3, 2, 0, 1)       # (K, C, R, S), RSCK in memory
            else:
                dw = torch.empty((K, C, R, S), dtype=torch.float32, device=x.device)
                _run(p, _lib.WGRAD, precision, x, dy, dw, x.device)
            # the gradient in the weight's own memory format
            dw = dw.contiguous(memory_format=torch.channels_last if ctx.w_channels_last
                               else torch.contiguous_format)
        if ctx.has_bias and ctx.needs_input_grad[2]:
            db = dy.sum(dim=(0, 2, 3))
        return dx, dw, db, None, None


def conv2d(x, w, bias=None, stride=1, padding=0, dilation=1, groups=1, precision="fp32"):
    """torch.nn.functional.conv2d on the course's kernels (libconvsteps).

    x: (N, C, H, W) CUDA float32, contiguous or torch.channels_last;
    w: (K, C, R, S) CUDA float32; bias: None or (K,) CUDA float32;
    stride, dilation: an int or a pair; padding: an int, a pair, "valid" or
    "same" (as PyTorch: stride 1, an odd total padded one more after);
    groups: 1 only; precision: "fp32" (float's accuracy) or "tf32" (tensor
    cores on float data where the GPU has them).
    Differentiable in x, w and bias. `convsteps.last_kernel()` says which
    kernel ran."""
    _check_tensor(x, "x", 4)
    _check_tensor(w, "w", 4)
    if bias is not None:
        _check_tensor(bias, "bias", 1)
        if bias.shape[0] != w.shape[0]:
            raise ValueError(f"bias has {bias.shape[0]} elements, w has {w.shape[0]} filters")
    for name, t in (("w", w), ("bias", bias)):
        if t is not None and t.device != x.device:
            raise ValueError(f"{name} is on {t.device}, x on {x.device}")
    if isinstance(groups, bool) or not isinstance(groups, int):
        raise TypeError(f"groups must be an int, got {groups!r}")
    if groups != 1:
        raise NotImplementedError(f"groups={groups}: the course's kernels take groups=1 only")
    if precision not in _lib.PRECISIONS:
        raise ValueError(f"precision must be one of {sorted(_lib.PRECISIONS)}, got {precision!r}")
    if w.shape[1] != x.shape[1]:
        raise ValueError(f"x has {x.shape[1]} channels, w expects {w.shape[1]} "
                         f"(w of shape {tuple(w.shape)})")
    stride = _pair(stride, "stride")
    dilation = _pair(dilation, "dilation")
    if min(stride) < 1:
        raise ValueError(f"stride must be at least 1, got {stride}")
    if min(dilation) < 1:
        raise ValueError(f"dilation must be at least 1, got {dilation}")
    layout = _layout_of(x)
    extra = (0, 0)
    if isinstance(padding, str):
        if padding == "valid":
            padding = (0, 0)
        elif padding == "same":
            padding, extra = _same_padding(tuple(w.shape[2:]), dilation, stride)
        else:
            raise ValueError(f"padding must be an int, a pair, 'valid' or 'same', "
                             f"got {padding!r}")
    else:
        padding = _pair(padding, "padding")
    if min(padding) < 0:
        raise ValueError(f"padding must not be negative, got {padding}")
    for name, pair in (("stride", stride), ("padding", padding), ("dilation", dilation)):
        if max(pair) > _INT_MAX:
            raise ValueError(f"{name} {pair} does not fit in a C int")
    if extra != (0, 0):
        # the odd part of 'same' padding, after the image, as PyTorch pads it
        x = F.pad(x, [0, extra[1], 0, extra[0]]).contiguous(memory_format=_memory_format(layout))
    n, c, h, wd = x.shape
    k, _, r, s = w.shape
    for name, v in (("N", n), ("C", c), ("H", h), ("W", wd), ("K", k), ("R", r), ("S", s)):
        if v < 1:
            raise ValueError(f"{name} must be at least 1, got {v} (x {tuple(x.shape)}, "
                             f"w {tuple(w.shape)})")
        if v > _INT_MAX:
            raise ValueError(f"{name} = {v} does not fit in a C int")
    for axis, size, pad, dil, kk, st in (("height", h, padding[0], dilation[0], r, stride[0]),
                                         ("width", wd, padding[1], dilation[1], s, stride[1])):
        if _out_size(size, pad, dil, kk, st) < 1:
            raise ValueError(f"the output has no {axis}: {axis} {size} + 2*padding {pad} is "
                             f"smaller than the dilated filter {dil * (kk - 1) + 1}")
    problem = _lib.Problem(n, c, h, wd, k, r, s, padding[0], padding[1], stride[0], stride[1],
                           dilation[0], dilation[1], layout)
    return _Conv2dFunction.apply(x, w, bias, problem, precision)
