#!/usr/bin/env bash
# Gradescope's build and run of `micrograde template gradescope`, in a fresh Ubuntu root.
#
# Too slow for CI (minutes: an Ubuntu root, then Python and micrograde's dependencies from
# the network); a maintainer runs it, as root, on a Debian or Ubuntu machine with debootstrap:
#
#     tests/platform/gradescope_ubuntu.sh [SUITE] [ROOT] [SUBMISSION] [EXPECTED_SCORE]
#
# SUITE is jammy (Ubuntu 22.04, the default) or noble (24.04), Gradescope's base images;
# ROOT is where the Ubuntu root is made (kept, and reused if it is there: make a new one
# for a really fresh image). As Gradescope does, the zip is unpacked into
# /autograder/source, run_autograder copied to /autograder/, setup.sh run once as root,
# the submission put in /autograder/submission and /autograder/run_autograder run from
# /autograder. results.json is then checked against Gradescope's documented format, and
# its score against EXPECTED_SCORE (the bundled solution's 100 by default).
set -euo pipefail
here="$(cd "$(dirname "$0")/../.." && pwd)"
suite="${1:-jammy}"
root="${2:-/var/tmp/micrograde-gradescope-$suite}"
submission="${3:-$here/tests/corpus/solution.py}"
expected="${4:-100}"
mirror="http://archive.ubuntu.com/ubuntu"

if [ ! -x "$root/bin/bash" ]; then
    # debootstrap before 1.0.134 has no script for noble: gutsy's serves every Ubuntu since.
    # Ubuntu's archive key is not in Debian's keyring, hence --no-check-gpg (apt inside checks nothing more).
    debootstrap --variant=minbase --no-check-gpg "$suite" "$root" "$mirror" /usr/share/debootstrap/scripts/gutsy
fi
# The sources of Docker's ubuntu images (and so of Gradescope's): main, restricted, universe, multiverse.
for pocket in "" -updates -security; do
    echo "deb $mirror $suite$pocket main restricted universe multiverse"
done > "$root/etc/apt/sources.list"
cp /etc/resolv.conf "$root/etc/resolv.conf"
# This machine's own way to the package index (a pip.conf and the CA bundle it trusts), as for DNS.
# (Its own file: installing ca-certificates in the root rewrites the root's bundle.)
if [ -f /etc/pip.conf ] && grep -q '^cert *=' /etc/pip.conf; then
    cp "$(sed -n 's/^cert *= *//p' /etc/pip.conf | head -n 1)" "$root/etc/host-ca-bundle.crt"
    printf '[global]\ncert = /etc/host-ca-bundle.crt\n' > "$root/etc/pip.conf"
fi

bundle="$(mktemp -d)"
python3 -m grader template gradescope "$bundle" >/dev/null 2>&1 || micrograde template gradescope "$bundle" >/dev/null
rm -rf "$root/autograder"
mkdir -p "$root/autograder/source" "$root/autograder/submission" "$root/autograder/results"
(cd "$root/autograder/source" && python3 -m zipfile -e "$bundle/autograder.zip" .)
chmod +x "$root/autograder/source/setup.sh" "$root/autograder/source/run_autograder"
cp "$root/autograder/source/run_autograder" "$root/autograder/run_autograder"
cp -r "$submission" "$root/autograder/submission/"

mount -t proc proc "$root/proc"
trap 'umount "$root/proc"' EXIT
echo "== setup.sh in a fresh $suite root"
chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root bash -c \
    "cd /autograder/source && bash ./setup.sh"
echo "== run_autograder"
chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root bash -c \
    "cd /autograder && ./run_autograder"
echo "== results.json"
python3 - "$root/autograder/results/results.json" "$expected" <<'PY'
import json, sys
results = json.load(open(sys.argv[1]))
# Gradescope's documented fields (autograder specifications, "Output format").
top = {"score", "execution_time", "output", "output_format", "test_output_format", "test_name_format",
       "visibility", "stdout_visibility", "extra_data", "tests", "leaderboard"}
test = {"score", "max_score", "status", "name", "name_format", "number", "output", "output_format", "tags",
        "visibility", "extra_data"}
assert set(results) <= top, set(results) - top
assert results["tests"], "no tests"
for t in results["tests"]:
    assert set(t) <= test, set(t) - test
    assert t["visibility"] in ("hidden", "after_due_date", "after_published", "visible")
    assert t["status"] in ("passed", "failed")
assert results["score"] == sum(t["score"] for t in results["tests"]), results["score"]
assert results["score"] == float(sys.argv[2]), (results["score"], sys.argv[2])
print(f"results.json: {len(results['tests'])} tests, score {results['score']}, Gradescope's format")
PY
