"""What the figures are drawn from, and what records them.

- Sources: the constants, read out of the C/CUDA sources of the tree;
- figure() and FIGURES: the registry, each figure with the constants it uses
  (the step modules register theirs when imported);
- captions(): each figure's caption, the explanation that stays out of the
  image, written from the same constants without drawing anything;
- the manifest docs/figures/figures.json and the page docs/figures/README.md,
  written by generate() when drawing, and check(), which compares them with
  the sources, the drawing code, the captions and the PNGs without importing
  matplotlib;
- inputs(): the files that check() reads.
"""
import ast
import hashlib
import json
import os
import re
import sys

from .draw import save

FIG_DIR = os.path.join("docs", "figures")
MANIFEST = os.path.join(FIG_DIR, "figures.json")
README = os.path.join(FIG_DIR, "README.md")
SOURCE_EXT = (".c", ".h", ".cu", ".cuh")
PACKAGE = os.path.dirname(os.path.abspath(__file__))  # scripts/figures/, these modules
COMMAND = PACKAGE + ".py"  # scripts/figures.py, the command line


# ---------------------------------------------------------------------------
# Reading the constants from the sources


def source_files(root):
    """Every C/CUDA file of the tree (build folders and hidden folders skipped)."""
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith((".", "build", "__")))
        for f in sorted(files):
            if f.endswith(SOURCE_EXT):
                found.append(os.path.relpath(os.path.join(folder, f), root))
    return found


def strip_comments(text):
    """C comments blanked out (line breaks kept, so lines stay lines)."""
    text = re.sub(r"/\*.*?\*/", lambda m: re.sub(r"[^\n]", " ", m.group(0)), text,
                  flags=re.DOTALL)
    return re.sub(r"//[^\n]*", "", text)


class Sources:
    """The tree's C/CUDA text, read once, and lookups in it."""

    def __init__(self, root):
        self.root = root
        self.files = {}
        for rel in source_files(root):
            with open(os.path.join(root, rel), errors="replace") as fh:
                self.files[rel] = strip_comments(fh.read())
        self.defines = {}  # name -> [(expression, file)]
        for rel, text in self.files.items():
            text = re.sub(r"\\[ \t]*\n", " ", text)  # a define continued over lines: one line
            for m in re.finditer(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)[ \t]+([^\n]+)$",
                                 text, flags=re.MULTILINE):
                self.defines.setdefault(m.group(1), []).append((m.group(2).strip(), rel))
        self.used_files = set()

    def define(self, name, seen=()):
        """The integer value of `#define name ...` (expressions of other defines too);
        a list of them for a define of several, `#define NAME 2, 2, 4`."""
        if name in seen:
            raise LookupError(f"{name} is defined in terms of itself")
        entries = self.defines.get(name)
        if not entries:
            raise LookupError(f"{name}: no '#define {name}' in any source file")
        values = {}
        for expr, rel in entries:
            value = tuple(self.eval_int(e, seen + (name,)) for e in expr.split(","))
            values.setdefault(value if len(value) > 1 else value[0], []).append(rel)
        if len(values) > 1:
            where = "; ".join(f"{v} in {', '.join(f)}" for v, f in values.items())
            raise LookupError(f"{name} has different values: {where}")
        value, files = next(iter(values.items()))
        self.used_files.update(files)
        return list(value) if isinstance(value, tuple) else value

    def eval_int(self, expr, seen=()):
        """A C integer expression of literals, defines and + - * / % << >> ( )."""
        expr = re.sub(r"\b(\d+)[uUlL]*\b", r"\1", expr)
        expr = re.sub(r"\(\s*(?:long long|int|unsigned|size_t)\s*\)", "", expr)
        if not re.fullmatch(r"[\w\s()+\-*/%<>]*", expr):
            raise LookupError(f"cannot read '{expr}' as an integer")
        names = set(re.findall(r"\b[A-Za-z_]\w*\b", expr))
        for n in names:
            expr = re.sub(r"\b" + n + r"\b", f"({self.define(n, seen)})", expr)
        tree = ast.parse(expr.replace("/", "//").strip(), mode="eval")
        allowed = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Constant, ast.Add, ast.Sub,
                   ast.Mult, ast.FloorDiv, ast.Mod, ast.LShift, ast.RShift, ast.USub, ast.UAdd)
        if not all(isinstance(node, allowed) for node in ast.walk(tree)):
            raise LookupError(f"cannot read '{expr}' as an integer")
        return int(eval(compile(tree, "<define>", "eval")))

    def template_args(self, function):
        """The template arguments of every call `function<a, b, ...>(` in the tree."""
        pattern = re.compile(re.escape(function) + r"<([\d\s,]+)>\s*\(")
        calls = []
        for rel, text in self.files.items():
            found = [tuple(int(a) for a in m.group(1).split(",")) for m in pattern.finditer(text)]
            if found:
                calls += found
                self.used_files.add(rel)
        if not calls:
            raise LookupError(f"{function}<...>: no call with template arguments in any source")
        return [list(c) for c in calls]

    def problem(self, name):
        """A problem of the course's catalogue, an entry {"name", "description",
        shape(n, c, h, w, k, r, s, pad_h, pad_w), ...} (the shape wrapped in nhwc() for
        the NHWC problems), as a dict of those nine values and the layout."""
        pattern = re.compile(r'\{\s*"' + re.escape(name) + r'"\s*,\s*"[^"]*"\s*,\s*'
                             r"(nhwc\()?\s*shape\(([^)]*)\)")
        for rel, text in self.files.items():
            m = pattern.search(text)
            if m:
                self.used_files.add(rel)
                args = [self.eval_int(a) for a in m.group(2).split(",")]
                keys = ["n", "c", "h", "w", "k", "r", "s", "pad_h", "pad_w"]
                shape = dict(zip(keys, args))
                shape["layout"] = "nhwc" if m.group(1) else "nchw"
                return shape
        raise LookupError(f"problem '{name}': not in the course's catalogue of problems")

    def value(self, key):
        """One constant by its key: NAME (a #define), launch_s1<> (the template
        arguments of its calls) or 'problem NAME' (a problem of the catalogue)."""
        if key.startswith("problem "):
            return self.problem(key[len("problem "):])
        if key.endswith("<>"):
            return self.template_args(key[:-2])
        return self.define(key)


# ---------------------------------------------------------------------------
# The registry: every figure, the constants it uses

FIGURES = []


def figure(section, uses):
    """Registers fig_<name>(): it draws docs/figures/<name>.png from the
    constants `uses` (keys for Sources.value) and returns the matplotlib figure.
    The figure belongs in docs/<NOTE> (NOTE: its module's), in that section;
    the first line of the function's docstring says what it shows. Its caption
    is caption_<name>() beside it, a function of the same constants that
    returns one paragraph of plain text: what the image shows only as labels,
    said in words. All of them go into docs/figures/README.md, the caption
    into figures.json too."""
    def register(function):
        name = function.__name__[len("fig_"):]
        module = sys.modules[function.__module__]
        FIGURES.append({"name": name, "function": function, "uses": list(uses),
                        "note": module.NOTE, "section": section,
                        "caption": getattr(module, "caption_" + name)})
        return function
    return register


def paragraph(template, **values):
    """A caption from its template: the lines of the template joined into one
    paragraph, so that the source can wrap it, then its {fields} filled from
    values as str.format() does ({n:,} writes 1,234; {{ and }} are braces)."""
    return " ".join(template.split()).format(**values)


class Constants(dict):
    """The constants a figure declared; asking for another one is an error, so
    the manifest always lists everything a figure was drawn from."""

    def __missing__(self, key):
        raise KeyError(f"constant {key!r} is not in this figure's `uses` list")


def captions(sources):
    """name -> the caption of every figure whose constants can all be read."""
    found = {}
    for fig in FIGURES:
        try:
            consts = Constants({key: sources.value(key) for key in fig["uses"]})
        except LookupError:
            continue
        text = fig["caption"](consts)
        if not text or "\n" in text:
            raise ValueError(f"{fig['name']}: a caption is one paragraph, without line breaks")
        found[fig["name"]] = text
    return found


# ---------------------------------------------------------------------------
# The manifest and the check


def sha256_file(path):
    with open(path, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


def module_definitions(path):
    """One module of this package: its lines, its top-level functions, classes
    and assignments (name -> node) and the names it imports from the package's
    other modules (name -> (module, name))."""
    with open(path) as fh:
        text = fh.read()
    defs, imported = {}, {}
    for node in ast.parse(text).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            defs[node.name] = node
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    defs[target.id] = node
        elif isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
            for alias in node.names:
                imported[alias.asname or alias.name] = (node.module, alias.name)
    return text.splitlines(), defs, imported


def code_hashes():
    """For each figure, a hash of its function and of every top-level helper
    and constant that function uses, directly or through other helpers, in its
    own module or imported from another module of this package (the decorator,
    which only lists the constants, is not part of it)."""
    modules = {f[:-3]: module_definitions(os.path.join(PACKAGE, f))
               for f in sorted(os.listdir(PACKAGE)) if f.endswith(".py")}

    def resolve(module, name):
        """(module, name) of the definition that `name` means in `module`, or
        None when it is no top-level name of the package (a local, a builtin)."""
        for _ in range(len(modules)):
            _, defs, imported = modules[module]
            if name in defs:
                return module, name
            if name not in imported or imported[name][0] not in modules:
                return None
            module, name = imported[name]
        return None

    def uses(module, node):
        parts = node.body if isinstance(node, (ast.FunctionDef, ast.ClassDef)) else [node]
        found = {resolve(module, n.id) for part in parts for n in ast.walk(part)
                 if isinstance(n, ast.Name)}
        return found - {None}

    hashes = {}
    for fig in FIGURES:
        function = fig["function"]
        closure, todo = set(), [(function.__module__.rsplit(".", 1)[-1], function.__name__)]
        while todo:
            current = todo.pop()
            if current not in closure:
                closure.add(current)
                module, name = current
                todo += sorted(uses(module, modules[module][1][name]))
        digest = hashlib.sha256()
        for module, name in sorted(closure):
            lines, defs, _ = modules[module]
            node = defs[name]
            digest.update(("\n".join(lines[node.lineno - 1:node.end_lineno]) + "\n").encode())
        hashes[fig["name"]] = digest.hexdigest()
    return hashes


def png_path(root, name):
    return os.path.join(root, FIG_DIR, name + ".png")


def read_manifest(root):
    path = os.path.join(root, MANIFEST)
    if not os.path.exists(path):
        return None
    with open(path) as fh:
        return json.load(fh)


def markdown_escape(text):
    """Plain text as Markdown shows it: a backslash before each \\, ` and *, before
    a _ that is not inside a word, a < that could open a tag and a ] that could
    close a link; x[n][c] and stride_h stay as they are."""
    return re.sub(r"[\\`*]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])|<(?=[A-Za-z/!?])|\](?=\()",
                  lambda m: "\\" + m.group(0), text)


def readme_text(texts):
    """docs/figures/README.md: generated from the registry and the captions
    `texts` (name -> caption), so that its list of figures, constants and
    captions cannot drift from the script."""
    lines = [
        "# Figures of the lecture notes",
        "",
        "Two kinds of figures live here:",
        "",
        "- the concept figures listed below, drawn by `scripts/figures.py` from the constants "
        "of the code itself (tile sizes, threads per block, the problems of the notes), so "
        "that a figure shows what the kernels do today;",
        "- the measured figures of [performance.md](../performance.md) (`<problem>_steps.png`, "
        "`roofline.png`), drawn by `scripts/plot_bench.py` from the benchmark's CSV, and "
        "the training demo's curves in [12_pytorch.md](../12_pytorch.md) (`pytorch_demo.png`), "
        "drawn by `scripts/train_demo.py --plot`.",
        "",
        "`scripts/figures.py` is the command line. Each concept figure is a function "
        "`fig_<name>()` in the module of its step in [scripts/figures/](../../scripts/figures) "
        "(`step01.py` to `step05.py`, then `step06a.py`, `step06e.py`, `step07.py`, "
        "`step08.py`, `step09.py` and `step10.py`), drawn "
        "with the helpers and colours of `scripts/figures/draw.py`, and its caption a function "
        "`caption_<name>()` beside it; `scripts/figures/manifest.py` reads the constants, "
        "writes the manifest and this page, and runs the check.",
        "",
        "Each figure's row below says what it shows, names the note and the section it belongs "
        "in, beside or instead of the ASCII sketch there, and the constants it is drawn from: "
        "`NAME` is a `#define NAME value` found anywhere in the sources, `launch_s1<>` the "
        "template arguments of step 04's `launch_s1<TILE_W, TILE_H, ROWS>` calls, `problem "
        "NAME` a problem of the course's catalogue in `common/conv_problems.c`. Under the row, "
        "quoted, is the figure's caption: the image holds only labels and a title, and the "
        "caption says the rest in words, with the values of the same constants, for the note "
        "to quote or paraphrase. [figures.json](figures.json) holds each caption as plain "
        "text, without the escapes that Markdown needs here.",
        "",
        "## The concept figures",
    ]
    for fig in FIGURES:
        what = fig["function"].__doc__.strip().split("\n")[0]
        consts = (", ".join(f"`{u}`" for u in fig["uses"])
                  or "none (what it shows is fixed by the hardware)")
        lines += ["", f"### [{fig['name']}.png]({fig['name']}.png)", "",
                  f"{markdown_escape(what)} In [{fig['note']}](../{fig['note']}): "
                  f"{markdown_escape(fig['section'])}. "
                  f"Constants: {consts}.", ""]
        text = texts.get(fig["name"])
        lines.append(f"> {markdown_escape(text)}" if text else
                     "> (no caption: a constant it uses cannot be read)")
    lines += [
        "",
        "## Regenerating",
        "",
        "```sh",
        "scripts/setup.sh --plots                  # matplotlib, where it is missing",
        "python3 scripts/figures.py                # every figure, figures.json and this page",
        "python3 scripts/figures.py 04_halo_tile   # one figure (and every caption)",
        "python3 scripts/figures.py --check        # what is stale; needs no matplotlib",
        "```",
        "",
        "Drawing a figure records in [figures.json](figures.json) the constants it used with "
        "their values, a hash of its drawing code (its function and every helper it calls, "
        "in any module of the package), a hash of the PNG and its caption. `--check` reads "
        "the constants from the sources again and prints one line per stale figure, naming "
        "what changed: a constant (old and new value), the drawing code, a PNG that is missing "
        "or not the recorded one. It writes the captions again too, and names the figures "
        "whose caption is no longer the one that figures.json and this page hold; it exits "
        "with status 1 if any figure is stale, if a caption changed, and when this page no "
        "longer matches the script. The test `docs.figures` (`tests/test_figures.py`, labels "
        "`cpu` and `docs`) runs the check and proves it can fail. After changing a constant "
        "that a figure uses, regenerate and look at the figure and read its caption: the "
        "script draws and writes from the new value, but only a reader can tell whether they "
        "still make their point.",
        "",
    ]
    return "\n".join(lines)


def generate(root, names):
    """Draws the figures `names` (all when empty), updates the manifest and
    writes every caption into it and into the page."""
    sources = Sources(root)
    hashes = code_hashes()
    texts = captions(sources)
    manifest = read_manifest(root) or {}
    entries = manifest.get("figures", {})
    os.makedirs(os.path.join(root, FIG_DIR), exist_ok=True)
    for fig in FIGURES:
        if names and fig["name"] not in names:
            continue
        consts = Constants({key: sources.value(key) for key in fig["uses"]})
        path = png_path(root, fig["name"])
        save(fig["function"](consts), path)
        entries[fig["name"]] = {
            "file": os.path.relpath(path, root),
            "function": fig["function"].__name__,
            "constants": dict(consts),
            "code": hashes[fig["name"]],
            "png": sha256_file(path),
        }
        print(f"{os.path.relpath(path, root)}: {os.path.getsize(path) // 1024} KB")
    known = {fig["name"] for fig in FIGURES}
    entries = {n: e for n, e in sorted(entries.items()) if n in known}
    for name, entry in entries.items():
        if name in texts:
            entry["caption"] = texts[name]
    manifest = {
        "about": "Written by scripts/figures.py: for each figure the constants it was drawn "
                 "from, a hash of its drawing code and of its PNG, and its caption. "
                 "`python3 scripts/figures.py --check` compares them with the sources.",
        "figures": entries,
    }
    with open(os.path.join(root, MANIFEST), "w") as fh:
        json.dump(manifest, fh, indent=1, sort_keys=True)
        fh.write("\n")
    with open(os.path.join(root, README), "w") as fh:
        fh.write(readme_text(texts))


def describe_change(key, old, new):
    if isinstance(old, dict) and isinstance(new, dict):
        diffs = [f"{f} {old.get(f)} -> {new.get(f)}" for f in sorted(set(old) | set(new))
                 if old.get(f) != new.get(f)]
        return f"{key} changed ({', '.join(diffs)})"
    return f"{key} changed ({json.dumps(old)} -> {json.dumps(new)})"


def check(root):
    """One line per stale figure (an empty list when every figure is current)."""
    sources = Sources(root)
    hashes = code_hashes()
    manifest = read_manifest(root)
    entries = manifest.get("figures", {}) if manifest else {}
    stale = []
    for fig in FIGURES:
        name, path = fig["name"], png_path(root, fig["name"])
        entry, reasons = entries.get(name), []
        if not os.path.exists(path):
            reasons.append("the PNG is missing")
        if entry is None:
            reasons.append(f"not in {MANIFEST}" if manifest else f"{MANIFEST} is missing")
        else:
            recorded = entry.get("constants", {})
            for key in fig["uses"]:
                try:
                    value = sources.value(key)
                except LookupError as err:
                    reasons.append(f"constant {key} cannot be read ({err})")
                    continue
                if key not in recorded:
                    reasons.append(f"now uses {key}, which figures.json does not record")
                elif recorded[key] != value:
                    reasons.append(describe_change(key, recorded[key], value))
            for key in sorted(set(recorded) - set(fig["uses"])):
                reasons.append(f"no longer uses {key}")
            if entry.get("code") != hashes[name]:
                reasons.append(f"its drawing code changed ({fig['function'].__name__}() or a "
                               "helper it uses)")
            if os.path.exists(path) and entry.get("png") != sha256_file(path):
                reasons.append("the PNG is not the one figures.json records")
        if reasons:
            stale.append(f"{os.path.relpath(path, root)}: stale: {'; '.join(reasons)}")
    drawn = {fig["name"] for fig in FIGURES}
    for name in sorted(set(entries) - drawn):
        stale.append(f"{entries[name].get('file', name)}: in {MANIFEST} but no longer drawn")
    # the captions: written again from the sources (the recorded one where a
    # constant cannot be read: that figure is reported above)
    texts = captions(sources)
    changed = [fig["name"] for fig in FIGURES if fig["name"] in texts and
               entries.get(fig["name"], {}).get("caption") != texts[fig["name"]]]
    for name, entry in entries.items():
        if name not in texts and entry.get("caption"):
            texts[name] = entry["caption"]
    readme = os.path.join(root, README)
    if not os.path.exists(readme):
        stale.append(f"{README}: missing")
    elif changed:
        stale.append(f"{README}: stale: the caption{'s' if len(changed) > 1 else ''} of "
                     f"{', '.join(changed)} changed (it and {MANIFEST} hold the old text)")
    else:
        with open(readme) as fh:
            if fh.read() != readme_text(texts):
                stale.append(f"{README}: stale: it no longer matches the figures of the script")
    return stale


def inputs(root):
    """The files the check reads, relative to root."""
    sources = Sources(root)
    for fig in FIGURES:
        for key in fig["uses"]:
            try:
                sources.value(key)
            except LookupError:
                pass
    files = {os.path.relpath(COMMAND, root), MANIFEST, README}
    files |= {os.path.relpath(os.path.join(PACKAGE, f), root)
              for f in os.listdir(PACKAGE) if f.endswith(".py")}
    files |= {os.path.join(FIG_DIR, fig["name"] + ".png") for fig in FIGURES}
    return sorted(files | sources.used_files)
