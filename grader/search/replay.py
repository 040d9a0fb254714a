"""What a derandomized search asks for, kept on disk so that grading rarely needs Hypothesis.

A derandomized Hypothesis search is a fixed function of what the test tells
it: which example comes next depends only on which of the earlier ones
failed. So the searches already run can be kept as a tree (``SearchTree``):
each node an example, with the node that follows if it passes and the one
that follows if it fails. The all-passing path is generated once, at first
use, by Hypothesis itself and without any submission; the failing paths are
added as Hypothesis walks them for real submissions (the same few bugs come
back again and again). Walking the tree against a submission shows it exactly
the examples Hypothesis would, in the same order; where the tree does not
know what comes next, Hypothesis runs (see ``grader.search.engine``).

The cache holds examples to try, never verdicts: every verdict comes from
running the submission. It is trusted only when it is certainly ours: a file
is read only if it is a regular file owned by this user and writable by no
one else, in a directory that is the same, and only if it names the exact
key it was made for (the Hypothesis and micrograde versions, a fingerprint
of the grader's strategy and case code, the caller's key and
``max_examples``) and its checksum holds. Anything else is ignored and
replaced. Files are written atomically, and only under a user cache
directory or beside the installed package: never in the working directory,
so never next to a submission.

``MICROGRADE_CACHE_DIR`` chooses the directory; ``MICROGRADE_REPLAY=0`` turns
replay off, so every search runs Hypothesis.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import math
import os
import stat
import tempfile
from pathlib import Path

import grader
from grader.spec.cases import Case

FORMAT = 2
MAX_BYTES = 16 * 1024 * 1024  # a tree that grows past this stops growing; a bigger file is not ours
SOURCES = Path(grader.__file__).parent  # the code the examples depend on: spec/ and search/
KINDS = {"leaf": ("name",), "const": ("number",), "add": ("index", "index"), "mul": ("index", "index"),
         "pow": ("index", "number"), "tanh": ("index",)}
UNKNOWN, END = -1, -2  # what follows a node: not known yet, or the search ended there


def enabled() -> bool:
    return os.environ.get("MICROGRADE_REPLAY", "1") != "0"


def cache_directories() -> list[Path]:
    """Where the cache may live, first choice first; relative paths are never used."""
    chosen = os.environ.get("MICROGRADE_CACHE_DIR")
    if chosen:
        return [Path(chosen)] if Path(chosen).is_absolute() else []
    candidates = []
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    home = os.environ.get("HOME", "")
    if xdg and Path(xdg).is_absolute():
        candidates.append(Path(xdg) / "micrograde")
    elif home and Path(home).is_absolute():
        candidates.append(Path(home) / ".cache" / "micrograde")
    candidates.append(SOURCES / "search" / "__replay__")
    return candidates


def private_directory(path: Path) -> bool:
    """True when ``path`` is a real directory of ours that no one else can write to."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.geteuid() and not info.st_mode & 0o022


def usable_directory() -> Path | None:
    """The first cache directory that is ours (made on first use), or ``None``."""
    for directory in cache_directories():
        try:
            directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError:
            continue
        if private_directory(directory) and os.access(directory, os.W_OK | os.X_OK):
            return directory
    return None


@functools.cache
def fingerprint() -> str:
    """What the examples depend on: the Hypothesis release and the grader's own code (read once a process)."""
    digest = hashlib.sha256(grader.__version__.encode())
    spec = importlib.util.find_spec("hypothesis")
    for location in (spec.submodule_search_locations or []) if spec else []:
        version = Path(location) / "version.py"
        if version.is_file():
            digest.update(version.read_bytes())
    for path in sorted([*(SOURCES / "spec").glob("*.py"), *(SOURCES / "search").glob("*.py")]):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def encode(case: Case) -> dict:
    return {"exprs": [[list(node) for node in expr] for expr in case.exprs],
            "inputs": [[name, value] for name, value in case.inputs]}


def _valid(value: object, kind: str, position: int) -> bool:
    if kind == "name":
        return isinstance(value, str) and 0 < len(value) <= 8
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    if kind == "index":
        return isinstance(value, int) and 0 <= value < position
    return math.isfinite(value)


def decode(data: object) -> Case | None:
    """The case ``data`` describes, or ``None`` unless it is exactly a well-formed case."""
    if not isinstance(data, dict) or set(data) != {"exprs", "inputs"}:
        return None
    exprs, inputs = data["exprs"], data["inputs"]
    if not isinstance(exprs, list) or not isinstance(inputs, list) or not exprs:
        return None
    decoded = []
    for expr in exprs:
        if not isinstance(expr, list) or not expr:
            return None
        nodes = []
        for position, node in enumerate(expr):
            if not isinstance(node, list) or not node or node[0] not in KINDS:
                return None
            fields = KINDS[node[0]]
            if len(node) != len(fields) + 1 or not all(_valid(v, k, position) for v, k in zip(node[1:], fields)):
                return None
            nodes.append(tuple(node))
        decoded.append(tuple(nodes))
    pairs = []
    for pair in inputs:
        if not (isinstance(pair, list) and len(pair) == 2 and _valid(pair[0], "name", 0)
                and _valid(pair[1], "number", 0)):
            return None
        pairs.append((pair[0], pair[1]))
    return Case(tuple(decoded), tuple(pairs))


def storable(case: object) -> bool:
    """True when ``case`` survives the trip through the file exactly."""
    return isinstance(case, Case) and decode(json.loads(json.dumps(encode(case)))) == case


class SearchTree:
    """The searches seen so far: ``nodes[i] = [case, next if it passes, next if it fails]``.

    ``root`` is the first node (or ``UNKNOWN``/``END``); cases are kept encoded
    and decoded only when a walk reaches them.
    """

    def __init__(self, cases: list | None = None, nodes: list | None = None, root: int = UNKNOWN):
        self.cases = cases or []
        self.nodes = nodes or []
        self.root = root
        self._index: dict[str, int] | None = None  # encoded case -> its index, made when a search is added
        self._decoded: dict[int, Case | None] = {}  # cases decoded so far, by index

    @classmethod
    def from_json(cls, data: object) -> SearchTree | None:
        """The tree ``data`` describes, or ``None`` unless every link and index is in range."""
        if not isinstance(data, dict) or not isinstance(data.get("cases"), list):
            return None
        cases, nodes, root = data["cases"], data.get("nodes"), data.get("root")
        if not isinstance(nodes, list):
            return None

        def link(x: object) -> bool:
            return isinstance(x, int) and not isinstance(x, bool) and END <= x < len(nodes)

        for node in nodes:
            if not (isinstance(node, list) and len(node) == 3 and all(link(x) for x in node)
                    and 0 <= node[0] < len(cases)):
                return None
        return cls(cases, nodes, root) if link(root) else None

    def to_json(self) -> dict:
        return {"root": self.root, "nodes": self.nodes, "cases": self.cases}

    def case(self, node: int) -> Case | None:
        index = self.nodes[node][0]
        if index not in self._decoded:
            self._decoded[index] = decode(self.cases[index])
        return self._decoded[index]

    def opening(self) -> list[Case] | None:
        """The cases of the all-passing path, from the root to where the search ends: what every
        search shows first. ``None`` unless the tree knows all of it."""
        cases, node = [], self.root
        while node >= 0 and len(cases) < len(self.nodes):
            case = self.case(node)
            if case is None:
                return None
            cases.append(case)
            node = self.nodes[node][1]
        return cases if node == END else None

    def following(self, node: int | None, failed: bool) -> int:
        """The node after ``node`` (the root after ``None``) given how ``node`` went."""
        return self.root if node is None else self.nodes[node][2 if failed else 1]

    def add(self, path: list[tuple[object, bool]], ended: bool) -> bool:
        """Add one search, its examples in order with whether each failed; False if it contradicts the tree."""
        if not all(storable(case) for case, _ in path):
            return False
        if self._index is None:
            self._index = {json.dumps(c, sort_keys=True): i for i, c in enumerate(self.cases)}
        node, failed = None, False
        for case, outcome in path:
            encoded = encode(case)
            nxt = self.following(node, failed)
            if nxt < 0:
                key = json.dumps(encoded, sort_keys=True)
                if key not in self._index:
                    self._index[key] = len(self.cases)
                    self.cases.append(encoded)
                self.nodes.append([self._index[key], UNKNOWN, UNKNOWN])
                nxt = len(self.nodes) - 1
                self._link(node, failed, nxt)
            elif self.cases[self.nodes[nxt][0]] != encoded:
                return False
            node, failed = nxt, outcome
        if ended and self.following(node, failed) == UNKNOWN:
            self._link(node, failed, END)
        return True

    def _link(self, node: int | None, failed: bool, to: int) -> None:
        if node is None:
            self.root = to
        else:
            self.nodes[node][2 if failed else 1] = to


def checksum(payload: bytes) -> str:
    return hashlib.sha256(payload).hexdigest()


_READ: dict[Path, tuple[tuple, SearchTree]] = {}  # trees already read by this process, by file identity


class ReplayCache:
    """The search tree of one search, in one file named by the hash of its key.

    The file is a header line (the key and the checksum of the rest) and the
    tree as one line of JSON.
    """

    def __init__(self, directory: Path, key: str):
        self.key = key
        self.path = directory / f"{hashlib.sha256(key.encode()).hexdigest()[:32]}.json"

    @classmethod
    def for_search(cls, key: str, max_examples: int) -> ReplayCache | None:
        """The cache of one search, or ``None`` when replay is off or there is nowhere safe to keep it."""
        if not enabled():
            return None
        directory = usable_directory()
        if directory is None:
            return None
        return cls(directory, f"format {FORMAT}; {fingerprint()}; {key}; max_examples {max_examples}")

    def load(self) -> SearchTree | None:
        """The stored tree, or ``None`` when there is none we can trust.

        A process that grades many submissions (a batch worker) reads and checks
        the file again only when it has changed; callers never change the tree."""
        return self._read(remembered=True)

    def _read(self, remembered: bool) -> SearchTree | None:
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:
            return None
        with os.fdopen(fd, "rb") as fh:
            info = os.fstat(fh.fileno())
            if (not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o022
                    or info.st_size > MAX_BYTES):
                return None
            identity = (info.st_dev, info.st_ino, info.st_mtime_ns, info.st_ctime_ns, info.st_size, self.key)
            if remembered and _READ.get(self.path, (None,))[0] == identity:
                return _READ[self.path][1]
            tree = self._parse(fh)
            if remembered and tree is not None:
                _READ[self.path] = (identity, tree)
            return tree

    def _parse(self, fh) -> SearchTree | None:
        """The tree in the open file ``fh``, if its key and checksum hold."""
        try:
            header, _, payload = fh.read(MAX_BYTES + 1).partition(b"\n")
            header = json.loads(header)
            if (not isinstance(header, dict) or header.get("key") != self.key
                    or header.get("checksum") != checksum(payload)):
                return None
            return SearchTree.from_json(json.loads(payload))
        except (ValueError, OSError):
            return None

    def record(self, path: list[tuple[object, bool]], ended: bool) -> SearchTree | None:
        """Add one search to the stored tree (made anew if there is none we trust); the tree, if kept."""
        tree = self._read(remembered=False) or SearchTree()
        if not tree.add(path, ended):
            tree = SearchTree()
            if not tree.add(path, ended):
                return None
        payload = json.dumps(tree.to_json(), separators=(",", ":")).encode()
        if len(payload) > MAX_BYTES // 2:
            return tree
        header = json.dumps({"key": self.key, "checksum": checksum(payload)}).encode()
        try:
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".replay-", suffix=".tmp")
        except OSError:
            return tree
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(header + b"\n" + payload)
            os.replace(tmp, self.path)
        except OSError:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        return tree
