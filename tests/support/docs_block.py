"""Print one code block of the docs: ``python tests/support/docs_block.py PAGE HEADING INDEX``.

``.ci/run`` runs the README's set-up commands through it, exactly as written there.
"""

from __future__ import annotations

import sys

from recipes import section, sh_blocks

if __name__ == "__main__":
    page, heading, index = sys.argv[1], sys.argv[2], int(sys.argv[3])
    sys.stdout.write(sh_blocks(section(page, heading))[index])
