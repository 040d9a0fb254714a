"""``python -m grader.staff.openings [--check]``: write the default course's openings, or check them.

The default course's openings ship with micrograde (``grader.search.shipped``):
a release writes them with the Hypothesis it is tested with. ``--check`` writes
nothing and exits 1 if the shipped file is not what the installed Hypothesis
generates now (run it in a fresh process: Hypothesis draws constants from the
modules a process has imported).
"""

from __future__ import annotations

import argparse
import json
import sys

from grader.search.engine import generate, strategy
from grader.search.replay import encode
from grader.search.shipped import FILE, default_searches, name


def generated() -> dict:
    """The file's contents as the installed Hypothesis generates them now."""
    import hypothesis

    return {"hypothesis": hypothesis.__version__,
            "openings": {name(space, n): [encode(case) for case in generate(lambda s=space: strategy(s), n)]
                         for space, n in default_searches()}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m grader.staff.openings", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the file differs from what is generated now")
    args = parser.parse_args(argv)
    fresh = generated()
    if args.check:
        same = FILE.is_file() and json.loads(FILE.read_bytes())["openings"] == fresh["openings"]
        print(f"{FILE.name}: {'as' if same else 'not what'} Hypothesis {fresh['hypothesis']} generates now")
        return 0 if same else 1
    FILE.write_text(json.dumps(fresh, separators=(",", ":")) + "\n")
    print(f"wrote {FILE} ({sum(map(len, fresh['openings'].values()))} cases)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
