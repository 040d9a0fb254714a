"""A search's opening, kept on disk so that grading rarely needs Hypothesis.

Every search first shows a submission its *opening*: the examples a
derandomized Hypothesis search generates for a test that passes them all.
They depend on nothing but the strategy, so they are generated once, at first
use and without any submission, and kept; a failure among them is shrunk by
micrograde itself (``grader.search.shrink``), so no grade with a kept opening
imports Hypothesis, whether the submission passes or fails.

The cache holds examples to try, never verdicts, and it can neither weaken nor
break a grade: a file is used only if all of these hold, and is otherwise
ignored (silently: it is the machine's business, not a student's) and replaced.

- It is authenticated: its header carries an HMAC-SHA256, over the key it was
  made for (the Hypothesis and micrograde versions, a fingerprint of the
  grader's strategy and case code, the search and ``max_examples``) and the
  cases, under a secret of 32 random bytes (``secrets.token_bytes``) kept in
  the cache directory as ``replay.key``, mode 0600. The secret never goes to a
  child, and no child can read it: as root the child runs as ``nobody``, who
  may not read a 0600 file of root's; with namespaces the child's file system
  is a minimal root in which no cache or home directory exists; without
  either, the Landlock layer denies the child the home and cache directories.
  A process of the same user with none of those layers could read it, and
  such a grade is already reported as not tamper-proof (``grader.child.sandbox``).
  A checksum would not do: anyone who can write the file can compute one.
- Every case in it is one the search's strategy could have generated
  (``grader.search.generable``): the same leaf names and values, plain numbers,
  exponents, ops and shapes, all where the ops are safe. So even a file
  written under a leaked secret cannot show a case outside the search, and a
  case the grader cannot judge (``pow(-8, 0.5)``) never reaches a submission.
- The file, the secret and their directory are regular files and directories
  owned by this user and writable by no one else (the secret readable by no
  one else either), opened without following links.

Files are written atomically, and only under a user cache directory or beside
the installed package: never in the working directory, so never next to a
submission.

``MICROGRADE_CACHE_DIR`` chooses the directory; ``MICROGRADE_REPLAY=0`` turns
replay off, so every search has Hypothesis generate its opening again.
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

import grader.keyfile as keyfile
from grader.exercise.cases import Case
from grader.exercise.ops import OPS
from grader.search.generable import Space, generable
from grader.version import __version__

FORMAT = 4
SECRET_NAME = "replay.key"
MAX_BYTES = 1024 * 1024  # an opening is a few kilobytes; a bigger file is not ours
SOURCES = Path(__file__).parents[1]  # the code the examples depend on: exercise/ and search/
# What follows the kind in each kind of node.
KINDS = {"leaf": ("name",), "const": ("number",),
         **{op.name: ("index",) * op.arity + ("number",) * op.exponent for op in OPS.values()}}


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
    digest = hashlib.sha256(__version__.encode())
    spec = importlib.util.find_spec("hypothesis")
    for location in (spec.submodule_search_locations or []) if spec else []:
        version = Path(location) / "version.py"
        if version.is_file():
            digest.update(version.read_bytes())
    for path in sorted([*(SOURCES / "exercise").glob("*.py"), *(SOURCES / "search").glob("*.py")]):
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


def signed(key: str, payload: bytes) -> bytes:
    """What a file's HMAC covers: the key it was made for and the cases, so a file holds for one search only."""
    return key.encode() + b"\0" + payload


_READ: dict[Path, tuple[tuple, list[Case]]] = {}  # openings already read by this process, by file identity


class ReplayCache:
    """The opening of one search, in one file named by the hash of its key.

    The file is a header line (the key and the HMAC of the rest) and the cases
    as one line of JSON.
    """

    def __init__(self, directory: Path, space: Space, key: str, secret: bytes):
        self.space, self.key, self.secret = space, key, secret
        self.path = directory / f"{hashlib.sha256(key.encode()).hexdigest()[:32]}.json"

    @classmethod
    def for_search(cls, space: Space, max_examples: int) -> ReplayCache | None:
        """The cache of one search, or ``None`` when replay is off or there is nowhere safe to keep it."""
        if not enabled():
            return None
        directory = usable_directory()
        found = keyfile.secret(directory, SECRET_NAME) if directory is not None else None
        if found is None:
            return None
        key = f"format {FORMAT}; {fingerprint()}; {space.key}; max_examples {max_examples}"
        return cls(directory, space, key, found)

    def load(self) -> list[Case] | None:
        """The stored opening, or ``None`` when there is none we can trust.

        A process that grades many submissions (a batch worker) reads and checks
        the file again only when it has changed."""
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:
            return None
        with os.fdopen(fd, "rb") as fh:
            info = os.fstat(fh.fileno())
            if (not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o022
                    or info.st_size > MAX_BYTES):
                return None
            identity = (info.st_dev, info.st_ino, info.st_mtime_ns, info.st_ctime_ns, info.st_size, self.key,
                        self.secret)
            if _READ.get(self.path, (None,))[0] == identity:
                return list(_READ[self.path][1])
            opening = self._parse(fh)
            if opening is not None:
                _READ[self.path] = (identity, opening)
            return opening

    def _parse(self, fh) -> list[Case] | None:
        """The cases in the open file ``fh``, if its key and HMAC hold and every case is one the search
        could have generated."""
        try:
            header, _, payload = fh.read(MAX_BYTES + 1).partition(b"\n")
            header = json.loads(header)
            if (not isinstance(header, dict) or header.get("key") != self.key
                    or not keyfile.holds(self.secret, signed(self.key, payload), header.get("mac"))):
                return None
            data = json.loads(payload)
        except (ValueError, OSError):
            return None
        if not isinstance(data, dict) or set(data) != {"cases"} or not isinstance(data["cases"], list):
            return None
        cases = [decode(case) for case in data["cases"]]
        return cases if cases and all(generable(case, self.space) for case in cases) else None

    def store(self, cases: list) -> None:
        """Keep ``cases`` as the opening (nothing is kept unless every case survives the trip exactly)."""
        if not cases or not all(storable(case) for case in cases):
            return
        payload = json.dumps({"cases": [encode(case) for case in cases]}, separators=(",", ":")).encode()
        if len(payload) > MAX_BYTES // 2:
            return
        header = json.dumps({"key": self.key, "mac": keyfile.mac(self.secret, signed(self.key, payload))}).encode()
        try:
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".replay-", suffix=".tmp")
        except OSError:
            return
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(header + b"\n" + payload)
            os.replace(tmp, self.path)
        except OSError:
            try:
                os.unlink(tmp)
            except OSError:
                pass
