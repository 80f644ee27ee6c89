#!/usr/bin/env python3
"""Training with the course's kernels: a small CNN on scikit-learn's digits.

Two copies of one model, from the same start values, are trained side by side
on the same batches: one with every convolution ours (convsteps.patch), one on
PyTorch's own convolution (cuDNN, TF32 off). Per epoch: the test accuracy of
both and the time of an epoch. The digits (8x8 images, 1797 of them) ship with
scikit-learn: nothing is downloaded.

    scripts/train_demo.py --csv /tmp/pytorch_demo.csv --plot /tmp/pytorch_demo.png
    scripts/train_demo.py --resnet18 --csv /tmp/pytorch_resnet18.csv

--resnet18: torchvision's resnet18(weights=None) at batch 32 on 224x224 inputs,
forward + backward, patched with ours (FP32 class, then TF32 class) beside
PyTorch FP32 (allow_tf32 False) and PyTorch TF32; each the median of the
repeats of the whole step timed with CUDA events after warm-up, and the
convolutions alone (each convolution of the model run by itself, forward and
backward as in the model, on tensors of its shapes; their medians summed); the outputs and
gradients of ours compared with PyTorch FP32's (relative L2 error within a
bound). Needs torchvision; no weights are downloaded.

Without PyTorch, a CUDA device, scikit-learn (torchvision for --resnet18) or
libconvsteps.so it prints one line saying which and exits 0.
"""
import argparse
import copy
import csv
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))


def missing(need_sklearn=True, need_torchvision=False):
    """None, or the one line saying what this machine lacks."""
    try:
        import torch
    except ImportError:
        return "PyTorch is not installed"
    if not torch.cuda.is_available():
        return "no CUDA device (torch.cuda.is_available() is False)"
    if need_sklearn:
        try:
            import sklearn  # noqa: F401
        except ImportError:
            return "scikit-learn is not installed (pip install scikit-learn)"
    if need_torchvision:
        try:
            import torchvision  # noqa: F401
        except ImportError:
            return "torchvision is not installed"
    import convsteps
    return convsteps.library_error()


def header_lines(args):
    import torch
    props = torch.cuda.get_device_properties(0)
    return [f"# gpu: {props.name}, {props.multi_processor_count} SMs",
            f"# torch: {torch.__version__}, cuDNN {torch.backends.cudnn.version()}, "
            f"CUDA {torch.version.cuda}",
            f"# date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
            "# command: scripts/train_demo.py " + " ".join(sys.argv[1:])]


def write_csv(path, args, fields, rows):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", newline="") as f:
        for line in header_lines(args):
            f.write(line + "\n")
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)
    print(f"wrote {path}")


# ---- the digits ----------------------------------------------------------------

def digits(device, start):
    import numpy as np
    import torch
    from sklearn.datasets import load_digits
    data = load_digits()
    x = torch.tensor(data.images / 16.0, dtype=torch.float32).unsqueeze(1)  # (1797, 1, 8, 8)
    y = torch.tensor(data.target, dtype=torch.long)
    order = torch.tensor(np.random.default_rng(start).permutation(len(y)))
    x, y = x[order], y[order]
    cut = int(0.8 * len(y))
    return (x[:cut].to(device), y[:cut].to(device)), (x[cut:].to(device), y[cut:].to(device))


def small_cnn():
    from torch import nn
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(),               # 8x8
        nn.Conv2d(16, 32, 3, padding=1, stride=2), nn.ReLU(),    # 4x4
        nn.Flatten(), nn.Linear(32 * 4 * 4, 10))


def accuracy(model, x, y):
    import torch
    with torch.no_grad():
        return (model(x).argmax(1) == y).float().mean().item()


def train_digits(args):
    import torch
    import convsteps
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    device = torch.device("cuda")
    (xtr, ytr), (xte, yte) = digits(device, args.start)
    torch.manual_seed(args.start)
    theirs = small_cnn().to(device)
    ours = copy.deepcopy(theirs)                        # the same start values
    report = convsteps.patch(ours, precision=args.precision)
    print(report)
    models = {"convsteps": ours, "pytorch": theirs}
    opts = {k: torch.optim.SGD(m.parameters(), lr=args.lr, momentum=0.9) for k, m in
            models.items()}
    loss_fn = torch.nn.CrossEntropyLoss()
    order_gen = torch.Generator(device="cpu")
    order_gen.manual_seed(args.start)
    rows = []
    print(f"{'epoch':>5} {'acc ours':>9} {'acc torch':>9} {'ms ours':>9} {'ms torch':>9}")
    for epoch in range(1, args.epochs + 1):
        order = torch.randperm(len(ytr), generator=order_gen).to(device)
        row = {"epoch": epoch}
        for name, model in models.items():
            model.train()
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for i in range(0, len(order), args.batch):
                idx = order[i:i + args.batch]
                opts[name].zero_grad(set_to_none=True)
                loss_fn(model(xtr[idx]), ytr[idx]).backward()
                opts[name].step()
            torch.cuda.synchronize()
            row[f"{name}_epoch_ms"] = round(1e3 * (time.perf_counter() - t0), 3)
            model.eval()
            row[f"{name}_test_accuracy"] = round(accuracy(model, xte, yte), 4)
        rows.append(row)
        print(f"{epoch:5d} {row['convsteps_test_accuracy']:9.4f} "
              f"{row['pytorch_test_accuracy']:9.4f} {row['convsteps_epoch_ms']:9.2f} "
              f"{row['pytorch_epoch_ms']:9.2f}")
    print(f"final test accuracy: convsteps {rows[-1]['convsteps_test_accuracy']:.4f}, "
          f"PyTorch {rows[-1]['pytorch_test_accuracy']:.4f}; kernels that ran last: "
          f"{convsteps.last_kernels()}")
    fields = ["epoch", "convsteps_test_accuracy", "pytorch_test_accuracy", "convsteps_epoch_ms",
              "pytorch_epoch_ms"]
    if args.csv:
        write_csv(args.csv, args, fields, rows)
    if args.plot:
        plot_digits(args.plot, rows)
    return 0


def plot_digits(path, rows):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot")
        return
    epochs = [r["epoch"] for r in rows]
    fig, (a, b) = plt.subplots(1, 2, figsize=(9, 3.5))
    for name, label in (("convsteps", "ours (convsteps.patch)"), ("pytorch", "PyTorch FP32")):
        a.plot(epochs, [r[f"{name}_test_accuracy"] for r in rows], marker="o", label=label)
        b.plot(epochs, [r[f"{name}_epoch_ms"] for r in rows], marker="o", label=label)
    a.set_xlabel("epoch")
    a.set_ylabel("test accuracy")
    b.set_xlabel("epoch")
    b.set_ylabel("ms per epoch")
    a.legend()
    fig.suptitle("A small CNN on scikit-learn's digits, from the same start values")
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.savefig(path, dpi=120)
    print(f"wrote {path}")


# ---- ResNet-18 -----------------------------------------------------------------

def time_step(model, x, repeats, warmup):
    """Median ms of forward + backward of model on x (CUDA events)."""
    import torch
    for _ in range(warmup):
        model.zero_grad(set_to_none=True)
        model(x).sum().backward()
    times = []
    for _ in range(repeats):
        model.zero_grad(set_to_none=True)
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        model(x).sum().backward()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times), min(times), max(times)


def conv_shapes(model, x):
    """Each Conv2d of model with the shape of its input and whether the
    backward pass needs the gradient of that input (not for a layer that reads
    the model's input, such as a stem), in the order a forward pass meets them
    (a layer met twice is listed twice)."""
    import torch
    seen = []
    hooks = [m.register_forward_hook(
        lambda m, inp, out: seen.append((m, tuple(inp[0].shape), inp[0].requires_grad)))
        for m in model.modules() if isinstance(m, torch.nn.Conv2d)]
    model(x)
    for h in hooks:
        h.remove()
    model.zero_grad(set_to_none=True)
    return seen


def time_convs(model, x, fmt, precision, repeats, warmup):
    """The convolutions alone: each Conv2d of model run by itself, forward and
    backward (the gradient of its filter, and of its input where the model's
    backward pass needs it), on random tensors of its shapes; the median ms of
    each (CUDA events), summed over the layers.
    precision None: PyTorch's F.conv2d (TF32 as torch.backends allows), else
    convsteps.conv2d in that class."""
    import torch
    import torch.nn.functional as F
    import convsteps
    total = 0.0
    for m, shape, needs_dx in conv_shapes(model, x):
        xi = torch.randn(shape, device=x.device).contiguous(memory_format=fmt)
        xi.requires_grad_(needs_dx)
        w = m.weight.detach().clone().requires_grad_(True)
        opts = dict(stride=m.stride, padding=m.padding, dilation=m.dilation)
        if precision is None:
            def conv():
                return F.conv2d(xi, w, m.bias, **opts)
        else:
            def conv():
                return convsteps.conv2d(xi, w, m.bias, precision=precision, **opts)
        dy = torch.randn_like(conv())

        def step():
            xi.grad = w.grad = None
            conv().backward(dy)
        for _ in range(warmup):
            step()
        times = []
        for _ in range(repeats):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            step()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
        total += statistics.median(times)
    return total


def rel_l2(a, b):
    a, b = a.double(), b.double()
    return ((a - b).norm() / b.norm().clamp_min(1e-300)).item()


def resnet18(args):
    import torch
    import torchvision
    import convsteps
    device = torch.device("cuda")
    torch.manual_seed(args.start)
    base = torchvision.models.resnet18(weights=None).to(device).eval()   # eval: fixed batch norm
    fmt = torch.channels_last if args.layout == "nhwc" else torch.contiguous_format
    base = base.to(memory_format=fmt)
    gen = torch.Generator(device="cpu")
    gen.manual_seed(args.start)
    x = torch.randn(args.batch, 3, 224, 224, generator=gen).to(device).contiguous(
        memory_format=fmt)

    def outputs(model):
        model.zero_grad(set_to_none=True)
        y = model(x)
        y.sum().backward()
        torch.cuda.synchronize()
        return y.detach(), {n: p.grad.detach().clone() for n, p in model.named_parameters()}

    rows = []
    torch.backends.cudnn.benchmark = True
    configs = [("PyTorch FP32", None, False), ("PyTorch TF32", None, True),
               ("convsteps FP32", "fp32", False), ("convsteps TF32", "tf32", False)]
    ref_y = ref_g = None
    for name, precision, allow_tf32 in configs:
        torch.backends.cudnn.allow_tf32 = allow_tf32
        torch.backends.cuda.matmul.allow_tf32 = allow_tf32
        model = copy.deepcopy(base)
        if precision is not None:
            report = convsteps.patch(model, precision=precision)
            print(f"{name}: {len(report.replaced)} convolutions ours, "
                  f"{len(report.left_alone)} left alone")
        y, grads = outputs(model)
        if ref_y is None:
            ref_y, ref_g = y, grads
        err_y = rel_l2(y, ref_y)
        err_g = max(rel_l2(g, ref_g[n]) for n, g in grads.items())
        # The bound: float's gamma_n over the longest sum (wgrad of conv1,
        # N*P*Q = batch*112*112 terms) for FP32, TF32's 2^-11 per input for TF32,
        # as a relative L2 error (a loose but derived bar, the per-element bounds
        # are in python/tests/test_convsteps.py).
        n_terms = args.batch * 112 * 112
        bound = (n_terms * 2.0 ** -24 if not (allow_tf32 or precision == "tf32")
                 else 3 * 2.0 ** -11 + n_terms * 2.0 ** -23)
        med, lo, hi = time_step(model, x, args.repeats, args.warmup)
        conv_ms = time_convs(base, x, fmt, precision, args.repeats, args.warmup)
        verdict = "OK" if max(err_y, err_g) <= bound else "OUTSIDE THE BOUND"
        rows.append({"version": name, "median_ms": round(med, 4), "min_ms": round(lo, 4),
                     "max_ms": round(hi, 4), "conv_total_ms": round(conv_ms, 4),
                     "rel_l2_output": f"{err_y:.3g}",
                     "rel_l2_grad_max": f"{err_g:.3g}", "bound": f"{bound:.3g}",
                     "verdict": verdict})
        print(f"{name:16s} {med:9.3f} ms  (min {lo:.3f}, max {hi:.3f}, convolutions alone "
              f"{conv_ms:.3f})  rel L2 output "
              f"{err_y:.2e}, gradients {err_g:.2e} (bound {bound:.1e}) {verdict}")
        del model
        torch.cuda.empty_cache()
    torch.backends.cudnn.allow_tf32 = True
    fields = ["version", "median_ms", "min_ms", "max_ms", "conv_total_ms", "rel_l2_output",
              "rel_l2_grad_max", "bound", "verdict"]
    if args.csv:
        write_csv(args.csv, args, fields, rows)
    return 0 if all(r["verdict"] == "OK" for r in rows) else 1


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--resnet18", action="store_true", help="time ResNet-18 instead of training")
    ap.add_argument("--epochs", type=int, default=15)
    ap.add_argument("--batch", type=int, default=None,
                    help="batch size (64 for the digits, 32 for --resnet18)")
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--precision", choices=("fp32", "tf32"), default="fp32",
                    help="precision class of our kernels in the digits run")
    ap.add_argument("--layout", choices=("nchw", "nhwc"), default="nhwc",
                    help="memory format of --resnet18 (nhwc: torch.channels_last)")
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--start", type=int, default=0, help="start value of the random streams")
    ap.add_argument("--csv", help="write the results as CSV")
    ap.add_argument("--plot", help="write a plot (PNG, needs matplotlib; digits only)")
    args = ap.parse_args(argv)
    if args.batch is None:
        args.batch = 32 if args.resnet18 else 64
    why = missing(need_sklearn=not args.resnet18, need_torchvision=args.resnet18)
    if why is not None:
        print(f"train_demo: nothing to run: {why}")
        return 0
    return resnet18(args) if args.resnet18 else train_digits(args)


if __name__ == "__main__":
    sys.exit(main())
