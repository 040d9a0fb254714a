"""The examples a derandomized search tries, kept on disk so a passing grade needs no Hypothesis.

A derandomized Hypothesis search of a submission that passes every example
tries a fixed list of examples, whatever the submission is. That list is
generated once (at first use, by Hypothesis itself, without any submission),
stored here and replayed: only when a replayed example fails does Hypothesis
run, to search and shrink exactly as it would have without the cache.

The cache holds examples to try, never verdicts, so what it can get wrong is
limited to which examples a passing submission is shown. It is trusted only
when it is complete and certainly ours: a file is read only if it is a
regular file owned by this user and writable by no one else, in a directory
that is the same, and only if it names the exact key it was made for (the
Hypothesis and micrograde versions, a fingerprint of the grader's strategy
and case code, the caller's key and ``max_examples``) and its checksum holds.
Anything else is ignored and replaced. Files are written atomically, and only
under a user cache directory or beside the installed package: never in the
working directory, so never next to a submission.

``MICROGRADE_CACHE_DIR`` chooses the directory; ``MICROGRADE_REPLAY=0`` turns
replay off, so every search runs Hypothesis.
"""

from __future__ import annotations

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

FORMAT = 1
MAX_BYTES = 16 * 1024 * 1024  # far above any real list of examples; a bigger file is not ours
SOURCES = Path(grader.__file__).parent  # the code a list of examples depends on: spec/ and search/
KINDS = {"leaf": ("name",), "const": ("number",), "add": ("index", "index"), "mul": ("index", "index"),
         "pow": ("index", "number"), "tanh": ("index",)}


def enabled() -> bool:
    return os.environ.get("MICROGRADE_REPLAY", "1") != "0"


def cache_directories() -> list[Path]:
    """Where the cache may live, first choice first; relative paths are never used."""
    chosen = os.environ.get("MICROGRADE_CACHE_DIR")
    if chosen:
        return [Path(chosen)] if Path(chosen).is_absolute() else []
    candidates = []
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    if xdg and Path(xdg).is_absolute():
        candidates.append(Path(xdg) / "micrograde")
    else:
        home = os.environ.get("HOME", "")
        if home and Path(home).is_absolute():
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


def fingerprint() -> str:
    """What the generated examples depend on: the Hypothesis release and the grader's own code."""
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


def checksum(cases: list) -> str:
    return hashlib.sha256(json.dumps(cases, separators=(",", ":")).encode()).hexdigest()


class ReplayCache:
    """The stored examples of one search: one file, named by the hash of its key."""

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

    def load(self) -> list[Case] | None:
        """The stored examples, or ``None`` when there are none we can trust."""
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:
            return None
        with os.fdopen(fd, "rb") as fh:
            info = os.fstat(fh.fileno())
            if (not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o022
                    or info.st_size > MAX_BYTES):
                return None
            try:
                data = json.loads(fh.read(MAX_BYTES + 1))
            except (ValueError, OSError):
                return None
        if not isinstance(data, dict) or data.get("key") != self.key or not isinstance(data.get("cases"), list):
            return None
        if data.get("checksum") != checksum(data["cases"]):
            return None
        cases = [decode(item) for item in data["cases"]]
        return None if any(case is None for case in cases) else cases

    def store(self, cases: list) -> None:
        """Write the examples atomically; examples this format cannot hold exactly are not stored."""
        if not all(isinstance(case, Case) and decode(json.loads(json.dumps(encode(case)))) == case
                   for case in cases):
            return
        encoded = [encode(case) for case in cases]
        text = json.dumps({"key": self.key, "checksum": checksum(encoded), "cases": encoded})
        try:
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".replay-", suffix=".tmp")
        except OSError:
            return
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
            os.replace(tmp, self.path)
        except OSError:
            try:
                os.unlink(tmp)
            except OSError:
                pass
