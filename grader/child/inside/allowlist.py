"""What Landlock lets a child read, in two layers: one the fork server makes once, one each child adds.

Finding what a child may read (``readable``: the shared libraries, the
interpreter and the ``sys.path`` entries a submission may import, entry by
entry around the grader's packages and forbidden libraries) and adding a rule
for each of those hundreds of paths cost a child about 5 ms of CPU, the same
for every child of a grading process. Landlock's layers intersect: a process
restricted by two rulesets may do only what both allow, and each
``landlock_restrict_self`` makes a domain of the process's own (its signal and
abstract socket scope included), so one ruleset serves every child. Without
namespaces the fork server therefore makes once, per directory that holds the
working directories (``forkserver.shared_layer``), the layer with the long list,
all of ``/proc``, read-write on that whole directory and ``/dev/null`` and its
kind; each child restricts itself with it (the descriptor is closed before any
submission code runs: a rule added to it would reach the next child) and with a
small layer of its own (``elsewhere``): reading anything but
``/proc`` beyond its own entry and but the directory of working directories
beyond its own (what the long list needs there aside), writing only its own
working directory. What both allow is exactly what one layer of the long list,
the child's ``/proc`` entry and its own working directory allowed before. Both
layers handle the same rights (``landlock.ruleset``): a layer that handled fewer
would leave the rest to the other alone, and Landlock refuses moving a file
between directories (``REFER``) in every layer that does not grant it.

With namespaces the child sees a root of its own (``confinement.new_root``):
its working directory and ``/proc`` are file systems made for it, which no
rule made beforehand can name. A Landlock rule is on an inode, though, and the
root binds the same ones the long list names, so the fork server makes the
layer of the long list alone, and each child adds the two rules of its own
file systems to it before restricting itself with it: one layer, exactly the
long list, the child's ``/proc`` entry and its working directory. A ruleset is
not used up by a restriction, so the next children get those two rules too:
rules on inodes no other child can reach (another mount and PID namespace's
file systems, gone with that child), and the fork server makes the layer anew
every few dozen children (``forkserver.LAYER_CHILDREN``). A child whose own
root could not be made makes one layer of its own from the list instead.

Like every module here, this one runs in the fork server and in the child, and
imports only the standard library.
"""

import os
import sys

DEVICES = ("null", "zero", "full", "random", "urandom")
SITE_DIRECTORIES = ("site-packages", "dist-packages")
FOUND = {}  # what ``readable`` found, by what it was asked: found in the fork server, kept by every child


def left_out(name: str, names: frozenset) -> bool:
    """Whether an entry of a directory on ``sys.path`` belongs to one of ``names``: the package or
    module, its ``.dist-info`` or ``.egg-info``, its ``.egg-link`` or ``.pth``, an editable install's
    finder, its ``name.libs``, or a ``name_something`` of its own."""
    stem = name.lower().removeprefix("__editable__.").removeprefix("__editable___")
    stem = stem.replace("-", "_").partition(".")[0]
    return stem in names or stem.partition("_")[0] in names  # (no name in ``names`` has a "_")


def contents(directory: str) -> list[os.DirEntry]:
    """The entries of ``directory`` (none if it cannot be listed)."""
    try:
        with os.scandir(directory) as listing:
            return list(listing)
    except OSError:
        return []


def readable(rules: dict, hidden: list[str]) -> dict[str, bool | None]:
    """What ``find`` finds for ``rules``, ``hidden`` and this ``sys.path``, found once: the fork server
    finds it before it forks a child (``forkserver.shared_layer``), and the child, with namespaces,
    makes its one layer from it instead of looking again (its root shows the same paths, bound from
    the fork server's). Like the fork server's layer, it is what was there when the first child of a
    grading process started."""
    key = repr((rules["libraries"], rules["read"], rules["leave_out"], hidden, sys.path))
    if key not in FOUND:
        FOUND[key] = find(rules, hidden)
    return dict(FOUND[key])


def find(rules: dict, hidden: list[str]) -> dict[str, bool | None]:
    """Everything Landlock lets the child read, each path with whether it is a directory (``None``: not
    known): as few rules as leave out what it may not read.

    What it may not read: the ``hidden`` directories (the grader's packages),
    the entries of each directory on this process's ``sys.path`` (and of a site
    directory's byte-code cache) that belong to the grader, the reference engine
    or a forbidden library (``rules["leave_out"]``), and a site-packages directory
    off ``sys.path`` (the base interpreter's, beneath its standard library) that
    holds any. What it may: the shared libraries (``rules["libraries"]``), every
    directory and file on ``sys.path`` and ``rules["read"]``, each granted whole
    where nothing left out lies beneath it, else entry by entry down to what is
    left out. A directory granted entry by entry cannot be listed: the import
    system's listings of them are made before Landlock, and kept
    (``confinement.restrict_files``). The child's own ``/proc`` entry is not in
    it: the child adds it to its own layer.
    """
    names = frozenset(rules["leave_out"])
    on_path = dict.fromkeys(os.path.realpath(entry) for entry in sys.path if os.path.exists(entry))
    excluded = {os.path.realpath(h) for h in hidden}
    for directory in on_path:
        site = os.path.basename(directory) in SITE_DIRECTORIES
        for entry in contents(directory):
            if left_out(entry.name, names):
                excluded.add(entry.path)
            elif site and entry.name == "__pycache__":
                excluded.update(e.path for e in contents(entry.path) if left_out(e.name, names))
            elif entry.name in SITE_DIRECTORIES and entry.path not in on_path:
                if any(left_out(e.name, names) for e in contents(entry.path)):
                    excluded.add(entry.path)

    holding = {x[:i] for x in excluded for i in range(1, len(x)) if x[i] == "/"}  # what lies above each

    found = dict.fromkeys(rules["read"])

    def grant(path, link, directory):
        real = os.path.realpath(path) if link else path
        if real in excluded:
            return
        if real not in holding:
            found[path] = directory
            return
        for entry in contents(real):
            grant(entry.path, entry.is_symlink(), entry.is_dir())

    for tree in trees(rules):
        grant(tree, False, None)
    return found


def trees(rules: dict) -> dict[str, None]:
    """The directories and files (resolved) everything ``readable`` finds lies in: the shared libraries and
    every entry of ``sys.path`` (``rules["read"]`` aside, which are granted as they are)."""
    return dict.fromkeys([*(os.path.realpath(t) for t in rules["libraries"] if os.path.exists(t)),
                          *(os.path.realpath(entry) for entry in sys.path if os.path.exists(entry))])


def elsewhere(holder: str, rules: dict) -> dict[str, None]:
    """The reads of a child's own layer beside the fork server's (see this module's docstring), its own
    ``/proc`` entry and working directory aside: every entry of ``/`` but ``proc`` and the one on the way
    to ``holder`` (the resolved directory of working directories); on that way, only what holds the
    trees ``readable`` grants from (``trees``). Nothing of ``holder`` but those trees, so nothing of
    another child's working directory there."""
    way = holder.strip("/").split("/")

    def beside(depth):
        """The entries of the way's directory at ``depth`` but ``/proc`` and the next step on the way, under
        any name (a link to it, or to what holds it)."""
        step = "/" + "/".join(way[:depth + 1])
        for entry in contents("/" + "/".join(way[:depth])):
            real = os.path.realpath(entry.path) if entry.is_symlink() else entry.path
            if entry.path != "/proc" and not (real == step or real.startswith(step + "/")
                                              or step.startswith(real.rstrip("/") + "/")):
                yield entry.path

    found = dict.fromkeys(beside(0))
    for tree in [*trees(rules), *(os.path.realpath(path) for path in rules["read"])]:
        parts = tree.strip("/").split("/") if tree != "/" else []
        common = 0
        while common < min(len(parts), len(way)) and parts[common] == way[common]:
            common += 1
        if common == len(parts):  # "/" or a directory on the way: all of it but the way
            for depth in range(common, len(way)):
                found.update(dict.fromkeys(beside(depth)))
        elif common:
            found["/" + "/".join(parts[:common + 1])] = None
    return found
