"""The exercise markers in the sources, and what the tools do with them.

A region of an exercise, in a C or CUDA source of the solution tree:

    /* exercise <id> begin: <title> */
    ...the solution lines (compiled)...
    /* exercise <id> stub
    ...the stub: what the student starts from, `//` comments and placeholder code...
       exercise <id> end */

The student tree gets the stub (out of its comment, at the begin marker's
indentation) instead of the solution; the notes' code excerpts get the
solution without the markers. An exercise may have several regions, in one
file or in several.
"""
import re

SOURCE_EXT = (".c", ".h", ".cu", ".cuh")
BEGIN = re.compile(r"^(?P<indent>[ \t]*)/\* exercise (?P<id>[\w-]+) begin(?:: (?P<title>.*?))? \*/\s*$")
STUB = re.compile(r"^\s*/\* exercise (?P<id>[\w-]+) stub\s*$")
END = re.compile(r"^\s*exercise (?P<id>[\w-]+) end \*/\s*$")
# Any piece of a marker, for the check that a student tree has none left.
ANY = re.compile(r"/\* exercise [\w-]+ (?:begin|stub)\b|\bexercise [\w-]+ end \*/")
# Solution lines shorter than this, comments and preprocessor lines are not
# secrets: they are too common to tell a solution from anything else.
MIN_SECRET = 12


class MarkerError(Exception):
    pass


class Region:
    """One marked region: 0-based line numbers of its three marker lines."""

    def __init__(self, path, ex_id, title, indent, begin):
        self.path, self.id, self.title, self.indent = path, ex_id, title, indent
        self.begin, self.stub, self.end = begin, None, None
        self.solution, self.stub_lines = [], []

    def stub_code(self):
        """The stub's lines moved to the begin marker's indentation."""
        lines = [l.rstrip() for l in self.stub_lines]
        depth = min((len(l) - len(l.lstrip()) for l in lines if l.strip()), default=0)
        return [self.indent + l[depth:] if l.strip() else "" for l in lines]


def parse(path, lines):
    """The regions of one file (a list of lines without newlines), in order.
    Raises MarkerError naming the file and line of a malformed region."""
    regions, open_region = [], None
    for i, line in enumerate(lines):
        where = f"{path}:{i + 1}"
        m_begin, m_stub, m_end = BEGIN.match(line), STUB.match(line), END.match(line)
        if m_begin:
            if open_region:
                raise MarkerError(f"{where}: exercise {m_begin['id']} begins inside "
                                  f"exercise {open_region.id}")
            open_region = Region(path, m_begin["id"], m_begin["title"] or "",
                                 m_begin["indent"], i)
        elif m_stub or m_end:
            m = m_stub or m_end
            if not open_region or open_region.id != m["id"]:
                raise MarkerError(f"{where}: marker of exercise {m['id']} outside its region")
            if m_stub:
                if open_region.stub is not None:
                    raise MarkerError(f"{where}: second stub marker of exercise {m['id']}")
                open_region.stub = i
            else:
                if open_region.stub is None:
                    raise MarkerError(f"{where}: exercise {m['id']} ends without a stub")
                open_region.end = i
                open_region.solution = lines[open_region.begin + 1:open_region.stub]
                open_region.stub_lines = lines[open_region.stub + 1:i]
                regions.append(open_region)
                open_region = None
        elif open_region and open_region.stub is not None and "*/" in line:
            raise MarkerError(f"{where}: a stub line of exercise {open_region.id} closes the "
                              "comment ('*/'); write stub comments with //")
        elif ANY.search(line):
            raise MarkerError(f"{where}: malformed exercise marker: {line.strip()}")
    if open_region:
        raise MarkerError(f"{path}:{open_region.begin + 1}: exercise {open_region.id} never ends")
    return regions


def render(lines, regions, stub_ids, keep_others):
    """The file's lines with the regions of the exercises in stub_ids replaced
    by their stubs; the other regions kept as they are (keep_others, the
    instructor's scratch copy) or reduced to their solution lines."""
    out, at = [], 0
    for r in regions:
        out += lines[at:r.begin]
        if r.id in stub_ids:
            out += r.stub_code()
        elif keep_others:
            out += lines[r.begin:r.end + 1]
        else:
            out += r.solution
        at = r.end + 1
    return out + lines[at:]


def is_trivial(line):
    s = line.strip()
    return (len(s) < MIN_SECRET or s.startswith(("//", "/*", "*", "#"))
            or not re.search(r"[A-Za-z0-9]", s))


def secrets(regions):
    """The solution lines of these regions that would give a solution away."""
    return {l.strip() for r in regions for l in r.solution if not is_trivial(l)}
