"""A class graded in shards on an engine a course already has, then merged: ``batch --shard K/N``, ``batch-merge``.

A MOOC's class does not fit one machine's day. ``micrograde batch SUBMISSIONS --shard K/N`` grades the
students of shard K of N, and only them: a student's shard is a hash of their id (the submission's name),
so it depends on nothing but the name and N, never on the order the files are listed in, the machine, or
the other shards. It writes its students' reports, as any batch does, and a manifest,
``shard-K-of-N.json``: the class it took them from (how many students, and a hash of their ids in the
batch's order), the settings they were graded with, and each student's place in the class and the hash
of their report. ``micrograde batch-merge SHARD_FOLDER... --out OUT`` reads the manifests of all N shards
(from one folder the shards shared, or a folder each, as a job array's artefacts come back), checks that
they are one class graded alike, each shard once, every student once and every report as the shard wrote
it, and writes the class's reports, gradebooks, summary and its charts: byte for byte what one ``batch`` of
the whole class writes (``grader.staff.batch.write_class``).

Each shard keeps what ``batch`` keeps: a shard run again skips its students already graded. The merge
trusts the shard folders it is given, as the course's own jobs' output (each report's HMAC is under the
key of the machine that wrote it, ``grader.staff.batch``); it checks that they are whole.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from grader.errors import UsageError
from grader.version import __version__

MANIFEST = "shard-{k}-of-{n}.json"
MAX_SHARDS = 10_000


def shard_spec(text: str) -> tuple[int, int]:
    """``K/N`` as the command line gives it (1 <= K <= N), for argparse."""
    import argparse

    k, slash, n = text.partition("/")
    if not (slash and k.isdigit() and n.isdigit() and 1 <= int(k) <= int(n) <= MAX_SHARDS):
        raise argparse.ArgumentTypeError(f"{text!r}: expected K/N, shard K of N with 1 <= K <= N <= {MAX_SHARDS}")
    return int(k), int(n)


def shard_of(student: str, n: int) -> int:
    """The shard (1 to ``n``) a student belongs to: a hash of their id alone."""
    digest = hashlib.sha256(os.fsencode(student)).digest()
    return int.from_bytes(digest[:8], "big") % n + 1


def class_digest(ids: list[str]) -> str:
    """A hash of the class: its students' ids, in the batch's order."""
    return hashlib.sha256(b"\0".join(os.fsencode(i) for i in ids)).hexdigest()


def report_digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def manifest(shard: tuple[int, int], ids: list[str], settings: dict, written: dict[str, str]) -> dict:
    """Shard ``shard``'s manifest: the class (``ids``, in the batch's order), the settings, and each of its
    students' place in the class and report's hash (``written``: id -> the report's text)."""
    k, n = shard
    return {"micrograde_version": __version__, "shard": k, "of": n, "class_count": len(ids),
            "class_sha256": class_digest(ids), "batch_settings": settings,
            "students": [[index, student, report_digest(written[student])] for index, student in enumerate(ids)
                         if student in written]}


def manifests(folders: list[Path]) -> list[tuple[Path, dict]]:
    """Every shard manifest in ``folders``, with the folder it is in (``UsageError`` for one unreadable)."""
    found = []
    for folder in folders:
        if not folder.is_dir():
            raise UsageError(f"{folder}: not a directory")
        for path in sorted(folder.glob("shard-*-of-*.json")):
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                raise UsageError(f"{path}: not a shard manifest micrograde wrote ({exc})") from None
            if not isinstance(data, dict) or not {"shard", "of", "students", "class_sha256"} <= set(data):
                raise UsageError(f"{path}: not a shard manifest micrograde wrote")
            found.append((folder, data))
    if not found:
        raise UsageError(f"{', '.join(map(str, folders))}: no shard manifest (shard-K-of-N.json) in "
                         f"{'it' if len(folders) == 1 else 'them'}: grade with micrograde batch --shard K/N first")
    return found


def one_class(found: list[tuple[Path, dict]]) -> tuple[int, int]:
    """The number of shards and students of the class the manifests are of; ``UsageError`` unless they are
    all its shards, each once, from one class graded alike by one micrograde."""
    first = found[0][1]
    for key, what in (("of", "numbers of shards"), ("class_sha256", "classes"), ("class_count", "classes"),
                      ("batch_settings", "settings"), ("micrograde_version", "micrograde versions")):
        values = {json.dumps(data.get(key), sort_keys=True) for _, data in found}
        if len(values) > 1:
            raise UsageError(f"the shards were graded with different {what} ({key}: {', '.join(sorted(values))}): "
                             "merge the shards of one batch")
    n = first["of"]
    shards = sorted(data["shard"] for _, data in found)
    twice = sorted({k for k in shards if shards.count(k) > 1})
    if twice:
        raise UsageError(f"shard {twice[0]}/{n} is there twice: merge each shard once")
    missing = [k for k in range(1, n + 1) if k not in shards]
    if missing:
        raise UsageError(f"shard {missing[0]}/{n} is missing ({len(missing)} of {n} are): grade it with "
                         f"micrograde batch --shard {missing[0]}/{n}, then merge again")
    return n, first["class_count"]


def merged_rows(folders: list[Path]) -> list[tuple[str, dict, str]]:
    """Every student of the class, in the batch's order: id, report, and the report as its shard wrote it."""
    found = manifests(folders)
    _, count = one_class(found)
    rows: dict[int, tuple[str, dict, str]] = {}
    for folder, data in found:
        for index, student, digest in data["students"]:
            path = folder / "reports" / f"{student}.json"
            try:
                text = path.read_text(encoding="utf-8", errors="surrogateescape")
            except OSError as exc:
                raise UsageError(f"{path}: cannot read the report of shard {data['shard']}/{data['of']} "
                                 f"({exc.strerror})") from None
            if report_digest(text) != digest or index in rows:
                raise UsageError(f"{path}: not the report shard {data['shard']}/{data['of']} wrote "
                                 "(changed or copied in part since): grade that shard again")
            rows[index] = (student, json.loads(text), text)
    if sorted(rows) != list(range(count)):
        raise UsageError(f"the shards hold {len(rows)} of the class's {count} students: grade them again")
    return [rows[i] for i in range(count)]
