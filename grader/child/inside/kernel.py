"""The notebook kernel of ``micrograde grade --execute``: the notebook's code cells run in turn, in IPython.

Jupyter's Python kernel runs every cell in IPython's shell (``InteractiveShell``:
magics, ``display``, top-level ``await``); here the same shell runs them, one
``cell`` request each, in a child started and confined as every child is (see
``protocol.start_kernel``): its own uid where the grader is root, namespaces
where there are, Landlock, the system-call filter, the resource limits, and the
audit hook last. There is no kernel process talking over sockets: the child may
open none, and with namespaces has no network to open them on. What a cell
cannot do there (start a program, a shell escape, read a file outside the
Python a submission may import) fails that cell, as it fails a grade.

Unlike every other module here it needs a library beyond the standard one:
IPython, imported only in this child (never in the fork server), from the
site-packages a submission may import.
"""

import os

from .failures import error_report


def prepare():
    """What must be made before the confinement: IPython imported, and the event loop a cell with top-level
    ``await`` runs on (the system-call filter refuses the socket pair an event loop wakes itself with)."""
    from IPython.core import async_helpers

    async_helpers.get_asyncio_loop()


def shell(home):
    """IPython's shell for the cells: its profile in ``home`` (the working directory), no history kept (its
    database would be written by a thread of its own), no colours in what it prints."""
    startup = os.path.join(home, ".ipython", "profile_default", "startup")
    os.makedirs(startup, exist_ok=True)
    # IPython copies its own README there, permissions included, which the filter refuses (chmod).
    open(os.path.join(startup, "README"), "w").close()
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    config = Config()
    config.HistoryManager.enabled = False
    config.InteractiveShell.colors = "nocolor"
    return InteractiveShell.instance(config=config)


def run_cell(api, request):
    """Run one cell's source as Jupyter's kernel would; what it raised, if anything."""
    result = api["parts"]["shell"].run_cell(request["source"], store_history=True)
    error = result.error_before_exec or result.error_in_exec
    return {} if error is None else {"error": error_report(error, "execute")}
