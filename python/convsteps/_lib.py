"""libconvsteps through ctypes: finding the library, its problem struct, its calls.

The C side is library/convsteps.h (API version 1). Everything here is plain
Python: ctypes describes each C function's arguments, the problem struct is
mirrored field by field, and a non-zero status becomes an exception that
carries the library's own one-line message.

    status 1 CONVSTEPS_ERR_INVALID      -> ValueError
    status 2 CONVSTEPS_ERR_UNSUPPORTED  -> NotImplementedError
    anything else                       -> RuntimeError
"""
import ctypes
import os
import threading

API_VERSION = 1

OK, ERR_INVALID, ERR_UNSUPPORTED = 0, 1, 2
STATUS_NAMES = {0: "OK", 1: "INVALID", 2: "UNSUPPORTED", 3: "NO_DEVICE", 4: "OUT_OF_MEMORY",
                5: "CUDA", 6: "UNAVAILABLE"}
NCHW, NHWC = 0, 1
FORWARD, DGRAD, WGRAD = 0, 1, 2
PASS_NAMES = {FORWARD: "forward", DGRAD: "dgrad", WGRAD: "wgrad"}
PRECISIONS = {"fp32": 0, "tf32": 1}

MSG_LEN = 512
KEY_LEN = 64

# The repository root: this file is <repo>/python/convsteps/_lib.py.
_REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ENV_VAR = "CONVSTEPS_LIBRARY"


class LibraryNotFound(OSError):
    """libconvsteps.so is not where we looked, or does not load."""


class Problem(ctypes.Structure):
    """convsteps_problem: 14 ints, in the order of the C struct."""
    _fields_ = [(name, ctypes.c_int) for name in (
        "n", "c", "h", "w",
        "k", "r", "s",
        "pad_h", "pad_w", "stride_h", "stride_w", "dil_h", "dil_w",
        "layout")]

    def __repr__(self):
        return "Problem(" + ", ".join(f"{f}={getattr(self, f)}" for f, _ in self._fields_) + ")"


def candidate_paths():
    """Where the library is looked for, in order."""
    env = os.environ.get(ENV_VAR)
    if env:
        return [env]
    return [os.path.join(_REPO, "build", "release", "lib", "libconvsteps.so"),
            os.path.join(_REPO, "build", "lib", "libconvsteps.so")]


_lock = threading.Lock()
_lib = None
_runs = ()            # the run function of each pass, FORWARD, DGRAD, WGRAD
_chosen = {}          # pass name -> key of the kernel that ran last
_last = [None]        # key of the last kernel of any pass
_launches = [0]       # how many calls reached the library's run functions
_buffers = threading.local()   # each thread's message, key and size buffers


def _declare(lib):
    """The C signatures, declared once when the library loads (ctypes then
    converts each call's arguments by them)."""
    size_t, p_void, p_char = ctypes.c_size_t, ctypes.c_void_p, ctypes.c_char_p
    p_problem = ctypes.POINTER(Problem)
    lib.convsteps_api_version.argtypes = []
    lib.convsteps_api_version.restype = ctypes.c_int
    lib.convsteps_workspace_size.argtypes = [p_problem, ctypes.c_int, ctypes.c_int,
                                             ctypes.POINTER(size_t), p_char, size_t]
    lib.convsteps_workspace_size.restype = ctypes.c_int
    for name in ("convsteps_forward", "convsteps_backward_data", "convsteps_backward_filter"):
        fn = getattr(lib, name)
        # problem, precision, in0, in1, out, workspace, bytes, stream, chosen, len, msg, len
        fn.argtypes = [p_problem, ctypes.c_int, p_void, p_void, p_void, p_void, size_t, p_void,
                       p_char, size_t, p_char, size_t]
        fn.restype = ctypes.c_int


def load():
    """The loaded library (loaded once). Raises LibraryNotFound with one line
    naming every path tried, or a RuntimeError for another API version."""
    global _lib, _runs
    lib = _lib
    if lib is not None:   # every call after the first: no lock
        return lib
    with _lock:
        if _lib is not None:
            return _lib
        tried, errors = candidate_paths(), []
        for path in tried:
            if not os.path.exists(path):
                continue
            try:
                lib = ctypes.CDLL(path)
            except OSError as e:
                errors.append(f"{path}: {e}")
                continue
            _declare(lib)
            version = lib.convsteps_api_version()
            if version != API_VERSION:
                raise RuntimeError(f"{path} has C API version {version}; this package "
                                   f"speaks version {API_VERSION}: rebuild one of them")
            _runs = (lib.convsteps_forward, lib.convsteps_backward_data,
                     lib.convsteps_backward_filter)
            _lib = lib
            return lib
        if errors:
            raise LibraryNotFound("libconvsteps.so does not load: " + "; ".join(errors))
        raise LibraryNotFound("libconvsteps.so not found (tried " + ", ".join(tried) +
                              "): build it (cmake --preset release && cmake --build "
                              f"build/release) or set {ENV_VAR}")


def available():
    """None when the library loads, else the one-line reason why not."""
    try:
        load()
        return None
    except (OSError, RuntimeError) as e:
        return str(e)


def _raise(status, msg, what):
    text = msg.value.decode(errors="replace").strip() or f"status {STATUS_NAMES.get(status)}"
    text = f"convsteps {what}: {text}"
    if status == ERR_INVALID:
        raise ValueError(text)
    if status == ERR_UNSUPPORTED:
        raise NotImplementedError(text)
    raise RuntimeError(f"{text} ({STATUS_NAMES.get(status, status)})")


def _thread_buffers():
    """This thread's buffers for the library's message, kernel key and size,
    made on its first call and used by every later one (the library writes
    the message on failure only, and the key and the size on success)."""
    b = getattr(_buffers, "b", None)
    if b is None:
        size = ctypes.c_size_t(0)
        b = _buffers.b = {"msg": ctypes.create_string_buffer(MSG_LEN),
                          "key": ctypes.create_string_buffer(KEY_LEN),
                          "size": size, "size_ref": ctypes.byref(size)}
    return b


def workspace_size(problem, pass_, precision):
    """Bytes of workspace the kernel that would run needs."""
    lib = load()
    b = _thread_buffers()
    msg = b["msg"]
    st = lib.convsteps_workspace_size(ctypes.byref(problem), pass_, PRECISIONS[precision],
                                      b["size_ref"], msg, MSG_LEN)
    if st != OK:
        _raise(st, msg, PASS_NAMES[pass_])
    return b["size"].value


def run(problem, pass_, precision, in0, in1, out, workspace, workspace_bytes, stream):
    """One pass on device pointers (ints): forward (x, w -> y), dgrad (dy, w -> dx)
    or wgrad (x, dy -> dw), enqueued on stream (a cudaStream_t as an int, 0 for
    the default stream). Returns the key of the kernel that ran."""
    load()
    b = _thread_buffers()
    chosen, msg = b["key"], b["msg"]
    with _lock:
        _launches[0] += 1
    st = _runs[pass_](ctypes.byref(problem), PRECISIONS[precision], in0, in1, out,
                      workspace or None, workspace_bytes, stream or None, chosen, KEY_LEN, msg,
                      MSG_LEN)
    if st != OK:
        _raise(st, msg, PASS_NAMES[pass_])
    key = chosen.value.decode(errors="replace")
    with _lock:
        _chosen[PASS_NAMES[pass_]] = key
        _last[0] = key
    return key


def last_kernel(pass_name=None):
    """The key of the kernel that ran last ("6f", "7b", "10d-7b", ...): of any
    pass, or of one pass ("forward", "dgrad", "wgrad"); None before any ran.
    Autograd runs the backward passes on its own thread, so this is shared
    by all threads, not kept per thread."""
    with _lock:
        if pass_name is None:
            return _last[0]
        if pass_name not in PASS_NAMES.values():
            raise ValueError(f"pass_name must be one of {sorted(PASS_NAMES.values())}, "
                             f"got {pass_name!r}")
        return _chosen.get(pass_name)


def last_kernels():
    """{pass name: key of the kernel that ran last} for every pass that ran."""
    with _lock:
        return dict(_chosen)


def launch_count():
    """How many calls reached the library's run functions (a call refused by
    the Python checks never does)."""
    with _lock:
        return _launches[0]
