"""The audit hook's path logic alone: what a path resolves to, and whether it reaches the grader's files.

``resolve`` and ``reaches`` (``grader/child/inside/paths.py``, for the audit hook) decide every path a submission opens,
renames or lists; they run on functions bound before any submission code. Here they are called
directly, on trees of links made for each test: ``resolve`` agrees with ``os.path.realpath`` on every
path of a tree full of links (relative, absolute, chained, through ``..``, looping), and ``reaches``
finds the grader's files by identity however they are spelled, and by name where they are not there.
"""

from __future__ import annotations

import errno
import itertools
import os
from pathlib import Path

from grader.child.inside.paths import identities, reaches, resolve


def tree(root: Path) -> list[str]:
    """A tree with every kind of link, and the paths to ask about in it (relative ones too)."""
    (root / "real" / "deep" / "er").mkdir(parents=True)
    (root / "real" / "deep" / "file.py").write_text("x")
    (root / "grader" / "report").mkdir(parents=True)
    (root / "grader" / "report" / "text.py").write_text("y")
    links = {"up": "..", "abs": str(root / "real"), "rel": "real/deep", "chain": "rel", "loop": "loop2",
             "loop2": "loop", "to-file": "real/deep/file.py", "dangling": "nowhere/at/all",
             "to-grader": "real/../grader", "self": "."}
    for name, target in links.items():
        os.symlink(target, root / name)
    os.symlink("../../grader", root / "real" / "deep" / "back")
    parts = ["", ".", "..", *links, "real", "deep", "er", "file.py", "back", "report", "text.py", "missing"]
    return [str(root / a / b / c) for a, b, c in itertools.product(parts, repeat=3)]


def loops(path: str) -> bool:
    """Whether the kernel meets a loop of links on the way to ``path``."""
    try:
        os.stat(path)
    except OSError as exc:
        return exc.errno == errno.ELOOP
    return False


def test_resolve_is_realpath_made_of_functions_bound_in_advance(tmp_path):
    paths = [path for path in tree(tmp_path) if not loops(path)]
    assert len(paths) > 5000
    for path in paths:
        assert resolve(path) == os.path.realpath(path), path


def test_resolve_takes_a_relative_path_from_the_current_directory(tmp_path, monkeypatch):
    tree(tmp_path)
    monkeypatch.chdir(tmp_path / "real" / "deep")
    for path in ("file.py", "back/report/text.py", "../../chain/er", "../../../" + tmp_path.name + "/self/abs"):
        assert resolve(path) == os.path.realpath(path), path


def test_resolve_stops_at_a_loop_of_links_where_the_kernel_would(tmp_path):
    """``os.path.realpath`` carries on past a loop; the kernel opens nothing there, and ``resolve`` names
    the link where the loop is, beneath the folder it is in (so a write there is judged by that folder)."""
    paths = [path for path in tree(tmp_path) if loops(path)]
    assert paths
    for path in paths:
        stopped = resolve(path)
        assert os.path.basename(stopped) in ("loop", "loop2") and not os.path.exists(stopped), path
        assert os.path.dirname(stopped) == os.path.realpath(os.path.dirname(stopped)), path


def test_reaches_finds_the_graders_files_however_they_are_spelled(tmp_path):
    paths = tree(tmp_path)
    grader = tmp_path / "grader"
    off_limits, named = identities([str(grader)]), (str(grader),)
    for path in paths:
        real = os.path.realpath(path)
        inside = os.path.exists(path) and (real == str(grader) or real.startswith(str(grader) + "/"))
        # Inside by identity, or on the way: a prefix of the path that is the grader's folder.
        prefixes = [path[:i] for i in range(1, len(path) + 1) if i == len(path) or path[i] == "/"]
        on_the_way = any(os.path.exists(p) and os.path.samefile(p, grader) for p in prefixes)
        assert reaches(path, off_limits, named) is (inside or on_the_way
                                                    or os.path.normpath(path).startswith(str(grader))), path
    for spelled in (grader / "report" / "text.py", tmp_path / "to-grader" / "report", tmp_path / "real" / "deep" /
                    "back" / "report" / "text.py", f"/proc/self/root{grader}/report/text.py"):
        assert reaches(str(spelled), off_limits, named), spelled
    os.link(grader / "report" / "text.py", tmp_path / "hard-link.py")
    assert reaches(str(tmp_path / "hard-link.py"), identities([str(grader / "report" / "text.py")]), ())
    assert not reaches(str(tmp_path / "real" / "deep" / "file.py"), off_limits, named)


def test_reaches_by_name_where_the_graders_files_are_not_there(tmp_path):
    """In the minimal root the grader's folder does not exist: trying to reach it counts all the same."""
    gone = str(tmp_path / "site-packages" / "grader")
    for path in (gone, gone + "/report/text.py", gone + "/../grader/cli.py"):
        assert reaches(path, frozenset(), (gone,)), path
    assert not reaches(gone + "-lookalike/x.py", frozenset(), (gone,))
    assert not reaches(str(tmp_path / "site-packages"), frozenset(), (gone,))


def test_reaches_takes_a_relative_path_from_the_current_directory(tmp_path, monkeypatch):
    tree(tmp_path)
    monkeypatch.chdir(tmp_path / "real")
    off_limits = identities([str(tmp_path / "grader")])
    assert reaches("../grader/report/text.py", off_limits, ())
    assert reaches("deep/back/report", off_limits, ())
    assert not reaches("deep/file.py", off_limits, ())
