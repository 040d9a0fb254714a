"""The child side of grading: runs submission code and reports raw observations.

This file runs as a script in a separate process (see ``grader.child.process``); it is
the only place where a student's code executes. It imports nothing from the
grader, so that nothing the submission does can reach the grading logic, and
it never judges anything: it builds graphs, calls the student's methods and
sends back numbers (values, gradients, the order in which ``_backward`` ran).
The grading process decides what those numbers mean.

Requests and replies are JSON lines on two private file descriptors passed on
the command line; the submission's own stdout and stderr go elsewhere.

Before any submission code runs, the harness confines itself (see ``confine``
and ``Guard``): with namespaces it hides the grader's files and makes the
filesystem read-only but for the working directory; always, an audit hook
refuses what no solution needs (processes, signals, sockets, ``ctypes``,
threads, writes outside the working directory) and records what counts as
cheating (importing an autograd library or the grader, reading its files).

Expressions arrive as a list of nodes in topological order, the last being the
root: ``["leaf", name]``, ``["const", number]``, ``["add", i, j]``,
``["mul", i, j]``, ``["pow", i, exponent]``, ``["tanh", i]``.
"""

import contextlib
import json
import math
import operator
import os
import sys
import traceback
import types

# The child knows no op and no derivative rule. Nodes the student did not write
# arrive as "fixed" nodes: their value and local derivatives are numbers the
# grading process computed for this very case. The student's ops are applied
# the way Python code applies them: an operator (so reflected methods are
# reached as Python reaches them) or a method call.
OPERATORS = {"add": operator.add, "mul": operator.mul, "pow": operator.pow, "neg": operator.neg,
             "sub": operator.sub, "truediv": operator.truediv}
SUBMISSION_FILES: set = set()
CHILDREN_NAMES = ("_prev", "_children", "prev", "children", "parents", "_parents", "inputs", "_inputs")


class SubmissionError(Exception):
    """The submission did something that makes this observation impossible."""


class MissingMethod(Exception):
    """The class has no method for what is being graded."""


class InterfaceError(Exception):
    """The grader cannot make nodes of the student's class (see ``Interface``)."""


def number(x):
    """A plain float for JSON, or a description of what the value really was."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return {"invalid": type(x).__name__}
    try:
        f = float(x)
    except (OverflowError, TypeError, ValueError):
        return {"invalid": "int too large for a float"}
    if math.isnan(f) or math.isinf(f):
        return {"invalid": repr(f)}
    return f


def error_report(exc, phase):
    """Describe an exception raised by submission code, with the student's line if any."""
    line = None
    where = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename in SUBMISSION_FILES:
            line, where = frame.lineno, frame.filename
    message = str(exc)
    if len(message) > 300:
        message = message[:300] + "..."
    kind = {MissingMethod: "NotImplementedError"}.get(type(exc), type(exc).__name__)
    report = {"type": kind, "message": message, "phase": phase, "line": line, "file": where}
    if isinstance(exc, RecursionError):
        report["depth"] = len(traceback.extract_tb(exc.__traceback__))
    return report


def holds(container, items):
    """True when ``container`` holds exactly the objects ``items`` (by identity, not by ``==``)."""
    try:
        found = list(container)
    except TypeError:
        return False
    return len(found) == len(items) and all(any(f is i for f in found) for i in items)


class Interface:
    """How to make nodes of the student's class: its constructor, and where it keeps operands.

    Real engines write ``Value(data, _children=(), _op='')``, ``Value(data, children, op)``,
    keyword-only arguments, or no children argument at all, and keep the operands in
    ``_prev``, ``_children``, ``prev`` or ``parents``, as a set, list or tuple. The
    constructor is probed once, with two distinct leaves, and nothing about the class
    is changed.
    """

    def __init__(self, V):
        self.V = V
        try:
            a, b = V(2.0), V(3.0)
        except Exception as exc:  # noqa: BLE001
            raise InterfaceError(f"{V.__name__}(2.0) raised {type(exc).__name__}: {exc}") from None
        self.make = None
        for make in (lambda d, ch, op: V(d, tuple(ch), op), lambda d, ch, op: V(d, _children=tuple(ch), _op=op),
                     lambda d, ch, op: V(d, tuple(ch)), lambda d, ch, op: V(d, children=tuple(ch), op=op)):
            try:
                node = make(5.0, (a, b), "+")
            except Exception:  # noqa: BLE001 - this constructor does not take children that way
                continue
            self.attr = next((n for n, v in stored_items(node) if holds(v, (a, b))), None)
            if self.attr is not None:
                self.make = make
                return
        node = V(5.0)
        empty = {n: v for n, v in stored_items(node)
                 if isinstance(v, (set, frozenset, list, tuple)) and len(v) == 0}
        self.attr = next((n for n in CHILDREN_NAMES if n in empty), None)
        if self.attr is None:
            raise InterfaceError(f"{V.__name__}(x) keeps its operands in none of "
                                 f"{', '.join(CHILDREN_NAMES)} and its constructor takes none")
        kind = type(empty[self.attr])

        def make(d, ch, op):
            node = V(d)
            setattr(node, self.attr, kind(ch))
            return node

        self.make = make

    def leaf(self, data):
        return self.V(data)

    def children(self, node):
        try:
            value = stored(node, self.attr)
            return list(value) if isinstance(value, (set, frozenset, list, tuple)) else []
        except AttributeError:
            return []


def stored_items(obj):
    """The attributes an object stores (its ``__dict__`` and slots), read without running its code."""
    items = []
    try:
        items.extend(object.__getattribute__(obj, "__dict__").items())
    except (AttributeError, TypeError):
        pass
    for klass in type(obj).__mro__:
        for name in klass.__dict__.get("__slots__", ()) if isinstance(klass.__dict__.get("__slots__", ()), (
                tuple, list)) else (klass.__dict__["__slots__"],):
            try:
                items.append((name, object.__getattribute__(obj, name)))
            except AttributeError:
                pass
    return items


def stored(obj, name):
    """One stored attribute, read without running the student's code."""
    for key, value in stored_items(obj):
        if key == name:
            return value
    raise AttributeError(name)


def fixed_node(iface, data, operands, derivs, label, on_backward=None):
    """A node of the student's class whose value and local derivatives the grader gives as numbers."""
    children = [o for o in operands if not isinstance(o, (int, float))]
    out = iface.make(data, children, label)
    V = iface.V

    def _backward():
        if on_backward is not None:
            on_backward()
        for operand, d in zip(operands, derivs):
            if isinstance(operand, V):
                operand.grad += d * out.grad

    out._backward = _backward
    return out


def student_op(V, call, method, args, exponent, value_position):
    """Apply the student's own op; a missing method is not-implemented, a non-Value result an error."""
    how, _, name = call.partition(".")
    owner = type(args[value_position])
    if getattr(owner, method, None) is None:
        raise MissingMethod(f"{V.__name__} has no method {method}")
    if exponent is not None:
        args = [*args, exponent]
    if how == "operator" and name in OPERATORS:
        out = OPERATORS[name](*args)
    elif how == "method" and name.isidentifier():
        out = getattr(args[0], name)(*args[1:])
    else:
        raise SubmissionError(f"unknown call {call}")
    if not isinstance(out, V):
        raise SubmissionError(f"returned {type(out).__name__}, not a {V.__name__}")
    return out


def recorder(record, index):
    """A leaf's ``_backward`` that reports the leaf's index and, like any ``_backward``,
    takes no argument (so a backward pass that passes one fails as it would on its own)."""
    return lambda: record(index)


def build(iface, nodes, record=None, leaves=None, positions=None):
    """Build the requested nodes: leaves, plain numbers, the student's op, fixed nodes.

    With ``record``, every fixed node's ``_backward`` first reports the node's
    index; ``leaves`` shares leaf objects between several expressions by name;
    ``positions`` gets each node's index as soon as it exists (before any node
    that uses it puts it in a set).
    """
    built = []
    positions = {} if positions is None else positions
    for index, node in enumerate(nodes):
        kind = node[0]
        if kind == "const":
            built.append(node[1])
        elif kind == "leaf":
            if leaves is not None and node[2] in leaves:
                built.append(leaves[node[2]])
                continue
            v = iface.leaf(node[1])
            if record is not None:
                v._backward = recorder(record, index)
            if leaves is not None:
                leaves[node[2]] = v
            built.append(v)
        elif kind == "student":
            _, call, operand_ids, exponent, method, value_position = node
            built.append(student_op(iface.V, call, method, [built[j] for j in operand_ids], exponent,
                                    value_position))
        else:
            _, data, operand_ids, derivs, label = node
            hook = None if record is None else (lambda i=index: record(i))
            built.append(fixed_node(iface, data, [built[j] for j in operand_ids], derivs, label, hook))
        positions.setdefault(id(built[-1]), index)
    return built


def propagate(iface, root, nodes):
    """The grader's own backward pass: reverse topological order over the nodes' operands.

    Operands are visited in expression order (nodes the student's op made on its
    own, such as a plain number wrapped in a Value, last and by value), so the
    result does not depend on how a ``set`` happens to iterate.
    """
    position = {id(v): i for i, v in enumerate(nodes) if not isinstance(v, (int, float))}

    def key(v):
        return (position.get(id(v), len(nodes)), repr(stored_or_none(v, "data")))

    topo, seen, stack = [], set(), [(root, False)]
    while stack:
        v, expanded = stack.pop()
        if expanded:
            topo.append(v)
            continue
        if id(v) in seen:
            continue
        seen.add(id(v))
        stack.append((v, True))
        for child in sorted(iface.children(v), key=key, reverse=True):
            if id(child) not in seen:
                stack.append((child, False))
    root.grad = 1.0
    for v in reversed(topo):
        v._backward()


def stored_or_none(obj, name):
    try:
        return stored(obj, name)
    except AttributeError:
        return None


def observe(nodes, attr):
    """Every node's stored ``attr``, as the report shows it; ``None`` for plain numbers."""
    return [None if isinstance(v, (int, float)) else number(stored_or_none(v, attr)) for v in nodes]


def probe(iface, node, args):
    """The student's op on fresh leaves holding ``args``: one forward value for finite differences."""
    _, call, _, exponent, method, value_position = node
    operands = [iface.leaf(x) if kind == "value" else x for kind, x in args]
    return number(stored_or_none(student_op(iface.V, call, method, operands, exponent, value_position), "data"))


def op_case(api, request):
    """Forward values, gradients (by the grader's own traversal) and probes of one op case."""
    iface = api["interface"]
    phase = "forward"
    try:
        nodes = build(iface, request["nodes"])
        data = observe(nodes, "data")
        phase = "backward"
        for v in nodes:
            if not isinstance(v, (int, float)):
                v.grad = 0.0
        propagate(iface, nodes[-1], nodes)
        grads = observe(nodes, "grad")
        # For each student node, which of the request's nodes its children hold (by identity).
        children = [[j for j, w in enumerate(nodes) if any(c is w for c in iface.children(v))]
                    if spec[0] == "student" else None for v, spec in zip(nodes, request["nodes"])]
        phase = "forward"
        probes = [probe(iface, node, args) for node, args in request["probes"]]
    except BaseException as exc:  # noqa: BLE001 - any failure of student code is data
        return {"error": error_report(exc, phase)}
    return {"data": data, "grads": grads, "probes": probes, "children": children}


def backward_case(api, request):
    """Call the student's ``backward()`` on graphs of fixed nodes.

    Several roots may share leaves (same names): each ``backward()`` runs in
    turn and the gradients after each are reported, with the order in which
    the nodes' ``_backward`` closures ran.
    """
    iface = api["interface"]
    leaves = {}
    runs = []
    trace = []
    positions = {}
    try:
        with hashed_by_position(iface.V, positions):
            for nodes in request["exprs"]:
                trace.clear()
                built = build(iface, nodes, trace.append, leaves, positions)
                if getattr(type(built[-1]), "backward", None) is None:
                    raise MissingMethod(f"{iface.V.__name__} has no method backward")
                built[-1].backward()
                runs.append({"grads": observe(built, "grad"), "trace": list(trace)})
    except BaseException as exc:  # noqa: BLE001
        return {"error": error_report(exc, "backward")}
    return {"runs": runs}


@contextlib.contextmanager
def hashed_by_position(V, positions):
    """While ``backward()`` is checked, nodes of a class that compares by identity hash by
    their position in the case, so a set of nodes iterates in the same order on every run
    and an order-dependent bug fails the same way every time. Equality is untouched; a
    class with its own ``__eq__`` or ``__hash__`` keeps them as written, since that is
    part of what is graded."""
    if V.__hash__ is not object.__hash__ or V.__eq__ is not object.__eq__:
        yield
        return
    own = V.__dict__.get("__hash__")
    V.__hash__ = lambda self: positions.get(id(self), id(self) >> 4)
    try:
        yield
    finally:
        if own is None:
            del V.__hash__
        else:
            V.__hash__ = own


def on_training_engine(function, engine):
    """``function`` as written, but with the name ``Value`` meaning the training engine's.

    ``train_step`` is graded on the grader's training engine, so a loss it starts
    as ``Value(0.0)`` must be one of that engine's Values, not one of the student's.
    """
    if not isinstance(function, types.FunctionType) or "Value" not in function.__code__.co_names:
        return function
    return types.FunctionType(function.__code__, {**function.__globals__, "Value": engine.Value},
                              function.__name__, function.__defaults__, function.__closure__)


def train_case(api, request):
    """Run the student's ``train_step`` on the training engine's MLP with the given weights."""
    engine = api["engine"]
    model = engine.MLP(request["nin"], request["nouts"])
    for p, w in zip(model.parameters(), request["weights"]):
        p.data = w
    losses, params = [], []
    train_step = on_training_engine(api["train_step"], engine)
    try:
        for _ in range(request["steps"]):
            loss = train_step(model, request["xs"], request["ys"], request["lr"])
            if isinstance(loss, engine.Value):
                loss = loss.data
            losses.append(number(loss))
            params.append([number(p.data) for p in model.parameters()])
    except BaseException as exc:  # noqa: BLE001
        return {"error": error_report(exc, "train_step")}
    return {"losses": losses, "params": params}


def load_engine(source):
    """The grader's training engine, made from source text, registered in no module table."""
    namespace = {"__name__": "micrograde_training"}
    exec(compile(source, "<training engine>", "exec"), namespace)
    return types.SimpleNamespace(Value=namespace["Value"], MLP=namespace["MLP"])


def run_unit(unit, namespace):
    """Execute one file (or notebook cell) of the submission; report what went wrong."""
    SUBMISSION_FILES.add(unit["filename"])
    try:
        code = compile(unit["source"], unit["filename"], "exec")
        exec(code, namespace)
    except BaseException as exc:  # noqa: BLE001
        return error_report(exc, "load")
    return None


def load(api, request):
    """Execute the chosen submission files and pick out ``Value`` and ``train_step``."""
    failures = []
    for spec in request["modules"]:
        module = types.ModuleType(spec["name"])
        module.__file__ = spec["units"][0]["filename"]
        module.display = lambda *args, **kwargs: None
        # Importable under its own name (train.py may import engine), unless that name
        # is taken: a student's math.py must not replace the real math module.
        if spec["name"] not in sys.modules and spec["name"] not in sys.stdlib_module_names:
            sys.modules[spec["name"]] = module
        if spec.get("directory"):
            sys.path.insert(0, spec["directory"])
        for unit in spec["units"]:
            failure = run_unit(unit, module.__dict__)
            if failure is not None:
                failure["unit"] = unit.get("label")
                failure["unit_file"] = unit["filename"]
                failures.append(failure)
                if not unit.get("isolated"):
                    break
        for role in spec["provides"]:
            name = request["names"][role]
            if name in module.__dict__:
                api[role] = module.__dict__[name]
    if not isinstance(api.get("Value"), type):
        api.pop("Value", None)
    if not callable(api.get("train_step")):
        api.pop("train_step", None)
    return {"defined": {role: role in api for role in ("Value", "train_step")}, "failures": failures}


def with_interface(handler):
    """``handler`` once the grader knows how to make nodes of the student's class."""

    def run(api, request):
        if "interface" not in api:
            try:
                api["interface"] = Interface(api["Value"])
            except InterfaceError as exc:
                return {"error": {"type": "InterfaceError", "message": str(exc), "phase": "load",
                                  "line": None, "file": None}}
        return handler(api, request)

    return run


HANDLERS = {"load": load, "op": with_interface(op_case), "backward": with_interface(backward_case),
            "train": train_case}


FORBIDDEN_MODULES = {"torch", "jax", "jaxlib", "autograd", "sympy", "micrograd", "tensorflow", "tinygrad",
                     "mxnet", "reference", "grader", "micrograde"}
UNSAFE_MODULES = {"ctypes", "_ctypes", "cffi"}
PROCESS_EVENTS = {"os.fork", "os.forkpty", "os.system", "os.exec", "os.spawn", "os.posix_spawn",
                  "subprocess.Popen", "pty.spawn", "os.kill", "os.killpg", "socket.__new__",
                  "ctypes.dlopen", "ctypes.dlsym", "ctypes.cdata"}
PATH_EVENTS = {"os.remove", "os.rename", "os.rmdir", "os.mkdir", "os.chmod", "os.chown", "os.link",
               "os.symlink", "os.truncate", "os.utime", "shutil.rmtree", "os.chflags", "os.lchflags"}
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


class Guard:
    """The audit hook: refuses what no solution needs, records what counts as cheating."""

    def __init__(self, workdir, hidden):
        self.workdir = os.path.realpath(workdir)
        self.hidden = [os.path.realpath(h) for h in hidden]
        self.violations = []
        self.active = False

    def note(self, what):
        if what not in self.violations:
            self.violations.append(what)

    def inside(self, path, roots):
        return any(path == r or path.startswith(r + os.sep) for r in roots)

    def resolve(self, path):
        try:
            return os.path.realpath(os.fsdecode(path))
        except (TypeError, ValueError):
            return None

    def __call__(self, event, args):
        if not self.active:
            return
        if event == "import":
            top = str(args[0]).split(".")[0]
            if top in FORBIDDEN_MODULES:
                self.note(f"import {args[0]}")
                raise ImportError(f"{args[0]} may not be used by a submission")
            if top in UNSAFE_MODULES:
                raise ImportError(f"{args[0]} is not available while grading")
        elif event in PROCESS_EVENTS:
            raise PermissionError(f"{event} is not allowed while grading")
        elif event == "open":
            path = None if isinstance(args[0], int) else self.resolve(args[0])
            if path is None:
                return
            if self.inside(path, self.hidden):
                self.note(f"read {path}")
                raise PermissionError(f"{path}: the grader's files are off limits")
            mode, flags = args[1], args[2]
            writes = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
                isinstance(flags, int) and flags & WRITE_FLAGS)
            if writes and not self.inside(path, [self.workdir, "/dev/null"]):
                raise PermissionError(f"{path}: a submission may only write in its working directory")
        elif event in PATH_EVENTS:
            for arg in args[:2]:
                if isinstance(arg, (str, bytes, os.PathLike)):
                    path = self.resolve(arg)
                    if path is not None and not self.inside(path, [self.workdir]):
                        raise PermissionError(f"{event} outside the working directory is not allowed")


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


# Packages notebooks use only to draw or display things. When one is not
# installed, an inert stand-in is imported instead, so a plotting cell never
# decides a grade.
VISUAL_MODULES = {"graphviz", "matplotlib", "seaborn", "plotly", "IPython", "ipywidgets"}


class Inert:
    """Anything at all: every attribute, call, item or iteration gives back nothing useful."""

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return Inert()

    def __call__(self, *args, **kwargs):
        return Inert()

    def __getitem__(self, key):
        return Inert()

    def __iter__(self):
        return iter(())

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class InertModule(types.ModuleType):
    __path__ = []

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return Inert()


class InertFinder:
    """Import hook, last on ``sys.meta_path``: only reached when the real package is missing."""

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] not in VISUAL_MODULES:
            return None
        import importlib.machinery

        return importlib.machinery.ModuleSpec(name, self, is_package=True)

    def create_module(self, spec):
        return InertModule(spec.name)

    def exec_module(self, module):
        pass


def no_threads(*args, **kwargs):
    raise RuntimeError("starting threads is not allowed while grading")


def confine(workdir, hidden):
    """Inside fresh mount namespace: hide the grader's files, make everything else read-only.

    Returns how far it got, for the report. Runs before any submission code,
    so it may use ``ctypes``.
    """
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    MS_RDONLY, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 1, 32, 4096, 16384, 1 << 18

    def mount(source, target, fstype, flags, data):
        return libc.mount(source.encode() if source else None, target.encode(),
                          fstype.encode() if fstype else None, flags, data.encode() if data else None) == 0

    mount(None, "/", None, MS_REC | MS_PRIVATE, None)
    hidden_ok = all(mount("micrograde", h, "tmpfs", MS_RDONLY, "size=16k,mode=755") for h in hidden)
    if os.path.isdir("/dev/shm"):
        mount("micrograde", "/dev/shm", "tmpfs", 0, "size=16m")
    mount(workdir, workdir, None, MS_BIND, None)
    readonly = True
    with open("/proc/self/mountinfo", encoding="utf-8") as info:
        points = [line.split()[4] for line in info]
    for point in points:
        point = point.replace("\\040", " ")
        if point == workdir or point.startswith(("/proc", "/sys", "/dev")) or point in hidden:
            continue
        if not mount(None, point, None, MS_REMOUNT | MS_BIND | MS_RDONLY, None) and point == "/":
            readonly = False
    if hidden_ok and readonly:
        return "grader files hidden; read-only outside the working directory"
    if hidden_ok:
        return "grader files hidden; the filesystem stays writable"
    return "not confined (mounts refused)"


def start_guards(request):
    """Confine the process and install the audit hook; return the guard and a summary."""
    summary = "blocked in Python only"
    if request.get("confine"):
        try:
            summary = confine(request["workdir"], request["hidden"])
        except OSError as exc:
            summary = f"not confined ({exc})"
    guard = Guard(request["workdir"], request["hidden"])
    sys.addaudithook(guard)
    import _thread
    import threading

    _thread.start_new_thread = no_threads
    threading._start_new_thread = no_threads
    sys.meta_path.append(InertFinder())
    sys.stdout = CappedOutput(1, request["output_cap"])
    sys.stderr = CappedOutput(2, request["output_cap"])
    guard.active = True
    return guard, summary


def main():
    requests = os.fdopen(int(sys.argv[-2]), "r", encoding="utf-8")
    replies = int(sys.argv[-1])
    decode = json.JSONDecoder().decode
    encode = json.JSONEncoder().encode
    api = {}
    guard = None
    for line in requests:
        request = decode(line)
        if request["kind"] == "init":
            if request.get("engine"):
                api["engine"] = load_engine(request["engine"])
            guard, summary = start_guards(request)
            reply = {"filesystem": summary}
        else:
            handler = HANDLERS[request["kind"]]
            if request["kind"] != "load" and request.get("needs", "Value") not in api:
                reply = {"error": {"type": "NotImplementedError", "message": "not defined",
                                   "phase": "load", "line": None, "file": None}}
            else:
                reply = handler(api, request)
        reply["violations"] = list(guard.violations) if guard else []
        reply["truncated"] = bool(getattr(sys.stdout, "truncated", False) or getattr(sys.stderr, "truncated", False))
        payload = (encode({"id": request["id"], **reply}) + "\n").encode()
        view = memoryview(payload)
        while view:
            view = view[os.write(replies, view):]


if __name__ == "__main__":
    main()
