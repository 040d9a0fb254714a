#!/usr/bin/env bash
# Written by `micrograde template gradescope`. Gradescope runs this once, as root, when it
# builds the autograder image (Ubuntu 22.04 or 24.04): it installs micrograde (shipped in
# this zip) in a venv, with a Python 3.11 or newer.
set -euo pipefail
cd "$(dirname "$0")"
export DEBIAN_FRONTEND=noninteractive
# A fresh image has no package lists: nothing installs before this.
apt-get update
new_enough() {
    for candidate in python3.13 python3.12 python3.11 python3; do
        if command -v "$candidate" >/dev/null && "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
            echo "$candidate"
            return
        fi
    done
}
python="$(new_enough)"
if [ -z "$python" ]; then
    # Ubuntu 24.04's python3 is 3.12; Ubuntu 22.04's is 3.10, and its universe has python3.11.
    if apt-cache show python3.11 >/dev/null 2>&1; then
        apt-get install -y python3.11 python3.11-venv
    else
        apt-get install -y python3 python3-venv
    fi
    python="$(new_enough)"
fi
if [ -z "$python" ]; then
    echo "micrograde needs Python 3.11 or newer, and none could be installed" >&2
    exit 1
fi
# run_autograder is a python3 script (any Python 3 runs it); a minimal image may have none.
command -v python3 >/dev/null || apt-get install -y python3
root="${MICROGRADE_AUTOGRADER_ROOT:-/autograder}"
if ! "$python" -m venv "$root/venv"; then  # Ubuntu splits venv (ensurepip) into its own package
    rm -rf "$root/venv"
    apt-get install -y "$(basename "$python")-venv"
    "$python" -m venv "$root/venv"
fi
"$root/venv/bin/python" -m pip install --quiet ./micrograde
