#!/usr/bin/env bash
# Written by `micrograde template gradescope`. Gradescope runs this once, as root, when it
# builds the autograder image: it installs micrograde (shipped in this zip) in a venv.
set -euo pipefail
cd "$(dirname "$0")"
python=""
for candidate in python3.13 python3.12 python3.11 python3; do
    if command -v "$candidate" >/dev/null && "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
        python="$candidate"
        break
    fi
done
if [ -z "$python" ]; then
    apt-get install -y python3.11 python3.11-venv
    python=python3.11
fi
root="${MICROGRADE_AUTOGRADER_ROOT:-/autograder}"
"$python" -m venv "$root/venv" || { apt-get install -y "$(basename "$python")-venv"; "$python" -m venv "$root/venv"; }
"$root/venv/bin/python" -m pip install --quiet ./micrograde
