"""The child's side of grading: answers the grading process's requests, one at a time.

This is where a student's code executes, in a process of its own started by the
fork server (``forkserver``) for ``grader.child.worker``. Requests and replies
are JSON lines on two private file descriptors passed on the command line; the
submission's own stdout and stderr go elsewhere.

Before any submission code runs, the child confines itself (``confinement``:
with namespaces a minimal root where the grader's files do not exist; on Linux
no privileges, Landlock and a seccomp filter) and installs the audit hook last
(``guard``). Then it loads the submission (``loading``) and answers cases
(``cases``); or, for ``--execute``, runs a notebook's cells (``kernel``).
"""

import _json
import math
import os
import sys
import types

from . import confinement, kernel
from .cases import backward_case, call_case, load_engine, op_case, train_case, with_interface
from .expression import expression_case
from .guard import install_guard, local_module_names, no_threads
from .loading import StandInFinder, load
from .loops import graph_case, loop_case, optimizer_case
from .modules import module_case
from .numeric import derivative_case, estimate_case
from .tensors import tensor_answer


class CappedOutput:
    """``sys.stdout``/``sys.stderr`` for the submission: the first bytes are kept, the rest dropped."""

    def __init__(self, fd, cap):
        self.fd = fd
        self.left = cap
        self.truncated = False
        self.encoding = "utf-8"
        self.errors = "replace"

    def write(self, text):
        data = str(text).encode("utf-8", "replace")
        if len(data) > self.left:
            data = data[: max(self.left, 0)]
            self.truncated = True
        if data:
            self.left -= len(data)
            try:
                os.write(self.fd, data)
            except OSError:
                self.left = 0
                self.truncated = True
        return len(text)

    def flush(self):
        pass

    def isatty(self):
        return False

    def fileno(self):
        return self.fd


class JSONDecoding:
    """What the C JSON scanner reads from ``json.JSONDecoder()``'s defaults, without importing
    ``json`` (and ``re`` with it) into every child."""

    strict = True
    object_hook = object_pairs_hook = None
    parse_float, parse_int = float, int
    parse_constant = {"-Infinity": -math.inf, "Infinity": math.inf, "NaN": math.nan}.__getitem__


def confine(plan):
    """Have the process confine itself as the grading process planned (``confinement``); return what
    held, for the report. Runs before any submission code. The confinement's names (``ctypes`` and the
    C library among them) are emptied afterwards: a submission walking its frames finds nothing there."""
    try:
        return confinement.apply(plan)
    except Exception as exc:  # noqa: BLE001 - reported, and the grading process trusts nothing it did not hear
        return {"filesystem": {"held": False, "detail": f"not confined ({type(exc).__name__}: {exc})"}}
    finally:
        vars(confinement).clear()


def start_guards(request, protected):
    """Confine the process and install the audit hook, last; return what tells the hook's
    records, and what held of the confinement. ``protected`` are the namespaces of the
    child's own modules, whose functions the hook keeps the submission's hands off."""
    held = confine(request["confinement"])
    import _thread
    import threading

    _thread.start_new_thread = no_threads
    threading._start_new_thread = no_threads
    sys.meta_path.append(StandInFinder())
    # A leftover breakpoint() does nothing, as with PYTHONBREAKPOINT=0: a debugger needs
    # sys.settrace, which the audit hook refuses.
    sys.breakpointhook = lambda *args, **kwargs: None
    sys.stdout = CappedOutput(1, request["output_cap"])
    sys.stderr = CappedOutput(2, request["output_cap"])
    local_names = local_module_names(os.path.join(request["workdir"], "submission"))
    return install_guard(request["workdir"], request["hidden"], local_names, protected), held


def start_kernel(request, protected, api):
    """The notebook kernel's start (``kernel``): IPython made ready, the process confined as every child is,
    the shell made, the audit hook installed last; what tells the hook's records, and what held of the
    confinement. No stand-ins for missing modules and no refusal of threads: the cells run as submitted,
    as Jupyter would run them, within what the confinement allows."""
    kernel.prepare()
    held = confine(request["confinement"])
    sys.stdout = CappedOutput(1, request["output_cap"])
    sys.stderr = CappedOutput(2, request["output_cap"])
    api["parts"] = {"shell": kernel.shell(request["workdir"])}  # the notebook's namespace is the shell's
    return install_guard(request["workdir"], request["hidden"], frozenset(), protected), held


HANDLERS = {"load": load, "op": with_interface(op_case), "backward": with_interface(backward_case),
            "train": train_case, "call": call_case, "cell": kernel.run_cell, "tensor": tensor_answer,
            "estimate": estimate_case, "derivative": derivative_case, "expression": expression_case,
            "module": with_interface(module_case), "optimizer": optimizer_case, "loop": loop_case,
            "graph": with_interface(graph_case)}


def main(shipped, namespaces):
    """Answer requests until the grading process closes the pipe.

    Everything this loop uses to read requests and write replies is bound here, before
    any submission code runs, and made of C objects (the JSON scanner and encoder,
    ``os.write``), so patching ``json`` or ``os`` changes nothing it sends. The harness
    then leaves ``__main__``: the submission finds an empty module there, not the
    harness's functions.

    ``shipped`` is what the grading process sent (``grader.child.shipping``): these modules, and the
    training engine's code (``None`` but for the child that grades ``train_step``); ``namespaces`` are
    the modules' own, whose functions the audit hook keeps the submission's hands off.
    """
    engine = shipped["training"]
    vars(sys.modules["__main__"]).clear()  # the module that started the child: the submission finds it empty
    sys.modules["__main__"] = types.ModuleType("__main__")
    requests = os.fdopen(int(sys.argv[-2]), "r", encoding="utf-8")
    replies = int(sys.argv[-1])
    write, join = os.write, "".join
    scan = _json.make_scanner(JSONDecoding)
    encode = _json.make_encoder(None, object.__repr__, _json.encode_basestring_ascii, None, ": ", ", ",
                                False, False, True)
    api = {}
    recorded = list
    for line in requests:
        request = scan(line, 0)[0]
        if request["kind"] == "init":
            if engine is not None:
                api["engine"] = load_engine(engine)
            if request.get("kernel"):
                recorded, held = start_kernel(request, namespaces, api)
            else:
                recorded, held = start_guards(request, namespaces)
            reply = {"confinement": held}
        else:
            handler = HANDLERS[request["kind"]]
            if request["kind"] != "load" and request.get("needs", "Value") not in api.get("parts", {}):
                reply = {"error": {"type": "NotImplementedError", "message": "not defined",
                                   "phase": "load", "line": None, "file": None}}
            else:
                reply = handler(api, request)
        reply["violations"] = recorded()
        reply["truncated"] = bool(getattr(sys.stdout, "truncated", False) or getattr(sys.stderr, "truncated", False))
        payload = (join(encode({"id": request["id"], **reply}, 0)) + "\n").encode()
        view = memoryview(payload)
        while view:
            view = view[write(replies, view):]
    # Every reply is written straight to its descriptor, so nothing is left to flush:
    # skip the interpreter's teardown, which would only cost time (and run submission code).
    os._exit(0)
