"""The child side of grading: runs submission code and reports raw observations.

This file runs in a separate process (compiled by the grading process, see
``grader.child.worker``); it is the only place where a student's code executes.
It imports nothing from the grader, so that nothing the submission does can
reach the grading logic, and it never judges anything: it builds graphs, calls
the student's methods and sends back numbers (values, gradients, the order in
which ``_backward`` ran).
The grading process decides what those numbers mean.

Requests and replies are JSON lines on two private file descriptors passed on
the command line; the submission's own stdout and stderr go elsewhere.

Before any submission code runs, the harness confines itself (see ``confine``
and ``install_guard``): with namespaces it moves into a minimal root where the grader's
files do not exist; on Linux it gives up its privileges and installs a seccomp
filter (``grader.child.inside.confinement``); always, an audit hook refuses what
no solution needs (processes, signals, sockets, ``ctypes``, threads, writes
outside the working directory) and records what counts as
cheating (importing an autograd library or the grader, reading its files).

Expressions arrive as a list of nodes in topological order, the last being the
root: ``["leaf", name]``, ``["const", number]``, ``["add", i, j]``,
``["mul", i, j]``, ``["pow", i, exponent]``, ``["tanh", i]``.
"""

import _json
import _signal
import itertools
import math
import operator
import os
import sys
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
# A number unique to a live object, as ``id`` gives (its address, shifted past the alignment
# bits, as ``object``'s own hash is). ``id`` raises an audit event, so the audit hook would
# run on each of the many the harness takes; this does not, nor does it run a metaclass's
# ``__hash__``.
address = object.__hash__


class SubmissionError(Exception):
    """The submission did something that makes this observation impossible."""


class MissingMethod(Exception):
    """The class has no method for what is being graded."""


class InterfaceError(Exception):
    """The grader cannot make nodes of the student's class (see ``Interface``)."""


def number(x):
    """A plain float for JSON, or a description of what the value really was."""
    if type(x) is float and x - x == 0.0:  # the usual case, first: a finite float (inf - inf is nan)
        return x
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
    frames = [(file, number) for file, number in traceback_lines(exc) if file in SUBMISSION_FILES]
    if frames:
        # Where the student's code raised; for a load out of time, the top-level statement it was in.
        where, line = frames[0] if type(exc).__name__ == "LoadTimeout" else frames[-1]
    message = str(exc)
    if len(message) > 300:
        message = message[:300] + "..."
    kind = {MissingMethod: "NotImplementedError"}.get(type(exc), type(exc).__name__)
    report = {"type": kind, "message": message, "phase": phase, "line": line, "file": where}
    if isinstance(exc, ModuleNotFoundError) and isinstance(exc.name, str):
        report["module"] = exc.name.split(".")[0]
    if isinstance(exc, RecursionError):
        report["depth"] = len(traceback_lines(exc))
    return report


def traceback_lines(exc):
    """The (file, line) of every frame ``exc`` passed through, outermost first: what
    ``traceback.extract_tb`` gives, without reading any source file."""
    found = []
    tb = exc.__traceback__
    while tb is not None:
        found.append((tb.tb_frame.f_code.co_filename, tb.tb_lineno))
        tb = tb.tb_next
    return found


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
        self.leaf = None
        for leaf in (lambda d: V(d), lambda d: V(d, ()), lambda d: V(d, (), "")):
            try:
                a, b = leaf(2.0), leaf(3.0)
            except Exception as exc:  # noqa: BLE001 - try the next way of making a leaf
                failure = exc
                continue
            self.leaf = leaf
            break
        if self.leaf is None:
            raise InterfaceError(f"its constructor {V.__name__}{signature(V)} cannot make a {V.__name__} from "
                                 f"a single number ({V.__name__}(2.0) raised {type(failure).__name__}: {failure})")
        self.equality = comparison(a, self.leaf(2.0))
        self.make = None
        # The operands' attribute is one the class's own backward() reads (a label that
        # happens to be given the tuple of children is not).
        used = names_used(getattr(V, "backward", None)) or set(CHILDREN_NAMES)
        for make in (lambda d, ch, op: V(d, tuple(ch), op), lambda d, ch, op: V(d, _children=tuple(ch), _op=op),
                     lambda d, ch, op: V(d, tuple(ch)), lambda d, ch, op: V(d, children=tuple(ch), op=op)):
            try:
                node = make(5.0, (a, b), "+")
            except Exception:  # noqa: BLE001 - this constructor does not take children that way
                continue
            self.attr = next((n for n, v in stored_items(node) if holds(v, (a, b)) and n in used), None)
            if self.attr is not None:
                self.make = make
                return
        node = self.leaf(5.0)
        empty = {n: v for n, v in stored_items(node)
                 if isinstance(v, (set, frozenset, list, tuple)) and len(v) == 0}
        self.attr = next((n for n in CHILDREN_NAMES if n in empty), None)
        if self.attr is None:
            raise InterfaceError(f"{V.__name__}(x) keeps its operands in none of "
                                 f"{', '.join(CHILDREN_NAMES)} and its constructor takes none")
        kind = type(empty[self.attr])

        def make(d, ch, op):
            node = self.leaf(d)
            setattr(node, self.attr, kind(ch))
            return node

        self.make = make

    def children(self, node):
        try:
            value = stored(node, self.attr)
            return list(value) if isinstance(value, (set, frozenset, list, tuple)) else []
        except AttributeError:
            return []


def comparison(a, b):
    """How two distinct nodes with the same value compare: ``value`` when they are equal (they
    collapse in a set), ``unhashable`` when the class cannot go in a set, else ``None``."""
    try:
        hash(a)
    except TypeError:
        return "unhashable"
    except Exception:  # noqa: BLE001 - a __hash__ that raises something else: not this question
        return None
    try:
        return "value" if (a == b) is True else None
    except Exception:  # noqa: BLE001
        return None


def signature(V):
    """The constructor's parameters as the student wrote them, for a message."""
    try:
        import inspect

        return str(inspect.signature(V))
    except (TypeError, ValueError):
        return "(...)"


def names_used(function):
    """Every attribute and global name a function's code (and the code nested in it) refers to."""
    code = getattr(function, "__code__", None)
    names, stack = set(), [code] if code is not None else []
    while stack:
        code = stack.pop()
        names.update(code.co_names)
        stack.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
    return names


def stored_items(obj):
    """The attributes an object stores (its instance dictionary and slots), read without running its code."""
    cls = type(obj)
    names = [name for klass in type.__dict__["__mro__"].__get__(cls)
             for name, value in type.__dict__["__dict__"].__get__(klass).items()
             if type(value) is types.MemberDescriptorType]
    names.extend(instance_namespace(obj))
    items = []
    for name in dict.fromkeys(names):
        try:
            items.append((name, stored(obj, name)))
        except AttributeError:
            pass
    return items


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
        positions.setdefault(address(built[-1]), index)
    return built


def propagate(iface, root, nodes):
    """The grader's own backward pass: reverse topological order over the nodes' operands.

    Operands are visited in expression order (nodes the student's op made on its
    own, such as a plain number wrapped in a Value, last and by value), so the
    result does not depend on how a ``set`` happens to iterate.
    """
    position = {address(v): i for i, v in enumerate(nodes) if not isinstance(v, (int, float))}

    def key(v):
        at = position.get(address(v))  # a node of the expression has a place of its own: no tie to break
        return (at, "") if at is not None else (len(nodes), repr(stored_or_none(v, "data")))

    topo, seen, stack = [], set(), [(root, False)]
    while stack:
        v, expanded = stack.pop()
        if expanded:
            topo.append(v)
            continue
        if address(v) in seen:
            continue
        seen.add(address(v))
        stack.append((v, True))
        for child in sorted(iface.children(v), key=key, reverse=True):
            if address(child) not in seen:
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


def operand_positions(iface, node, nodes):
    """Which of ``nodes`` (their positions) the student's ``node`` holds as its operands, by identity."""
    operands = iface.children(node)
    return [j for j, w in enumerate(nodes) if any(c is w for c in operands)]


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
        children = [operand_positions(iface, v, nodes) if spec[0] == "student" else None
                    for v, spec in zip(nodes, request["nodes"])]
        phase = "forward"
        probes = [probe(iface, node, args) for node, args in request["probes"]]
    except BaseException as exc:  # noqa: BLE001 - any failure of student code is data
        return {"error": error_report(exc, phase)}
    return {"data": data, "grads": grads, "probes": probes, "children": children}


def backward_case(api, request):
    """Call the student's ``backward()`` on graphs of fixed nodes.

    Several roots may share leaves (same names): each ``backward()`` runs in
    turn and the gradients after each are reported, with the order in which
    the nodes' ``_backward`` closures ran and the root's gradient when its own
    ran (the seed, wherever the pass set it).
    """
    iface = api["interface"]
    leaves = {}
    runs = []
    trace = []
    seed = []  # the root's gradient when its own _backward first ran: the seed the pass gave it
    root = []
    positions = {}
    restore = None

    def record(index):
        if root and index == root[0][0] and not seed:
            seed.append(number(stored_or_none(root[0][1], "grad")))
        trace.append(index)

    try:
        restore = hashed_by_position(iface.V, positions)
        for nodes in request["exprs"]:
            trace.clear()
            seed.clear()
            root.clear()
            built = build(iface, nodes, record, leaves, positions)
            root.append((len(built) - 1, built[-1]))
            if getattr(type(built[-1]), "backward", None) is None:
                raise MissingMethod(f"{iface.V.__name__} has no method backward")
            built[-1].backward()
            runs.append({"grads": observe(built, "grad"), "trace": list(trace), "seed": seed[0] if seed else None})
    except BaseException as exc:  # noqa: BLE001
        return {"error": error_report(exc, "backward")}
    finally:
        if restore is not None:
            restore()
    return {"runs": runs}


def hashed_by_position(V, positions):
    """While ``backward()`` is checked, nodes of a class that compares by identity hash by
    their position in the case, so a set of nodes iterates in the same order on every run
    and an order-dependent bug fails the same way every time. Equality is untouched; a
    class with its own ``__eq__`` or ``__hash__`` keeps them as written, since that is
    part of what is graded. Returns what puts the class back as it was."""
    if V.__hash__ is not object.__hash__ or V.__eq__ is not object.__eq__:
        return lambda: None
    own = V.__dict__.get("__hash__")
    V.__hash__ = lambda self: positions.get(address(self), address(self))

    def restore():
        if own is None:
            del V.__hash__
        else:
            V.__hash__ = own
    return restore


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


def load_engine(code):
    """The grader's training engine, from its code object, registered in no module table."""
    namespace = {"__name__": "micrograde_training"}
    exec(code, namespace)
    return types.SimpleNamespace(Value=namespace["Value"], MLP=namespace["MLP"])


def run_unit(unit, namespace):
    """Execute one file (or notebook cell) of the submission; report what went wrong."""
    SUBMISSION_FILES.add(unit["filename"])
    try:
        code = compile(unit["source"], unit["filename"], "exec")
        exec(code, namespace)
    except SystemExit as exc:  # sys.exit() ends the file here, as running it would; not an error
        return {**error_report(exc, "load"), "exit": True}
    except BaseException as exc:  # noqa: BLE001
        return error_report(exc, "load")
    return None


class LoadTimeout(BaseException):
    """Loading ran out of time; raised in the student's code so the traceback says where it was."""


def out_of_time(signum, frame):
    raise LoadTimeout("loading took too long")


def load(api, request):
    """Execute the chosen submission files and pick out ``Value`` and ``train_step``.

    Shortly before the grading process would give up on loading, an alarm stops the
    code where it is, so the report can point at the statement that kept it busy.
    """
    _signal.signal(_signal.SIGALRM, out_of_time)
    _signal.setitimer(_signal.ITIMER_REAL, max(0.05, 0.8 * request.get("time_limit", 10.0)))
    try:
        return load_modules(api, request)
    finally:
        _signal.setitimer(_signal.ITIMER_REAL, 0)


def load_modules(api, request):
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
            while failure is not None and stand_in_for(failure):
                failure = run_unit(unit, module.__dict__)
            if failure is not None:
                failure["unit"] = unit.get("label")
                failure["unit_file"] = unit["filename"]
                failures.append(failure)
                if not unit.get("isolated") or failure["type"] == "LoadTimeout":
                    break
        if failures and failures[-1]["type"] == "LoadTimeout":
            break
        for role in spec["provides"]:
            name = request["names"][role]
            if name in module.__dict__:
                api[role] = module.__dict__[name]
    if not isinstance(api.get("Value"), type):
        api.pop("Value", None)
    if not callable(api.get("train_step")):
        api.pop("train_step", None)
    return {"defined": {role: role in api for role in ("Value", "train_step")}, "failures": failures,
            "missing_modules": list(MISSING_MODULES)}


def stand_in_for(failure):
    """After a load stopped at the import of a module that is not installed (and not forbidden),
    give that module a stand-in so the file or cell can run again; False when there is nothing to do."""
    module = failure.get("module")
    if (failure.get("type") != "ModuleNotFoundError" or not module or module in MISSING_MODULES
            or module in FORBIDDEN_MODULES or module in UNSAFE_MODULES or len(MISSING_MODULES) >= 20):
        return False
    MISSING_MODULES.append(module)
    return True


def with_interface(handler):
    """``handler`` once the grader knows how to make nodes of the student's class."""

    def run(api, request):
        if "interface" not in api:
            computed = computed_attributes(api["Value"])
            if computed:
                # Reading such a grad could run a finite difference: nothing observed would be the student's.
                return {"error": {"type": "ComputedAttribute", "phase": "load", "line": None, "file": None,
                                  "message": f"{api['Value'].__name__} computes {' and '.join(computed)} when "
                                             f"read instead of storing it"}}
            try:
                api["interface"] = Interface(api["Value"])
            except InterfaceError as exc:
                return {"error": {"type": "InterfaceError", "message": str(exc), "phase": "load",
                                  "line": None, "file": None}}
        return {**handler(api, request), "equality": api["interface"].equality}

    return run


HANDLERS = {"load": load, "op": with_interface(op_case), "backward": with_interface(backward_case),
            "train": train_case}


FORBIDDEN_MODULES = {"torch", "jax", "jaxlib", "autograd", "sympy", "micrograd", "tensorflow", "tinygrad",
                     "mxnet", "reference", "grader", "micrograde"}
UNSAFE_MODULES = {"ctypes", "_ctypes", "cffi", "_testcapi", "_testinternalcapi"}
PROCESS_EVENTS = {"os.fork", "os.forkpty", "os.system", "os.exec", "os.spawn", "os.posix_spawn",
                  "subprocess.Popen", "pty.spawn", "os.kill", "os.killpg", "socket.__new__",
                  "ctypes.dlopen", "ctypes.dlsym", "ctypes.cdata"}
PATH_EVENTS = {"os.remove", "os.rename", "os.rmdir", "os.mkdir", "os.chmod", "os.chown", "os.link",
               "os.symlink", "os.truncate", "os.utime", "shutil.rmtree", "os.chflags", "os.lchflags"}
READ_EVENTS = {"open", "os.listdir", "os.scandir", "os.chdir"}
# What no solution needs and what would reach the guard's own objects or rewrite the
# harness's running code: every live object, the referrers of one, a tracer or profiler
# (which may rewrite any frame's locals), the frames of every thread.
INTROSPECTION_EVENTS = {"gc.get_objects", "gc.get_referrers", "gc.get_referents", "sys.settrace",
                        "sys.setprofile", "sys._current_frames", "sys._current_exceptions",
                        "sys.monitoring.register_callback"}
ATTRIBUTE_EVENTS = {"object.__getattr__", "object.__setattr__", "object.__delattr__"}
FUNCTION_INTERNALS = {"__code__", "__defaults__", "__kwdefaults__"}
HANDLED_EVENTS = frozenset({"import"} | PROCESS_EVENTS | PATH_EVENTS | READ_EVENTS | INTROSPECTION_EVENTS
                           | ATTRIBUTE_EVENTS)
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
MAX_VIOLATIONS = 20


def another_process(path):
    """Whether ``path`` is in another process's ``/proc`` entry (the grader's environment, command line...).

    Without a PID namespace the child shares ``/proc`` with the grading process.
    """
    parts = path.split(os.sep)
    return len(parts) > 2 and parts[1] == "proc" and parts[2].isdigit() and parts[2] != str(os.getpid())


def local_module_names(root):
    """Top-level names the submission's own files provide (a ``micrograd/`` package, an
    ``engine.py``): importing one of them imports the student's code, not a library."""
    names = set()
    for _, directories, files in os.walk(root):
        names.update(directories)
        names.update(name[:-3] for name in files if name.endswith(".py"))
    return frozenset(n for n in names if n.isidentifier())


def identities(paths):
    """``(device, inode)`` of each existing path: what a path names, however it is spelled."""
    found = set()
    for path in paths:
        try:
            status = os.stat(path)
        except (OSError, ValueError):
            continue
        found.add((status.st_dev, status.st_ino))
    return frozenset(found)


def off_limits(hidden):
    """The directories a submission may not read: the grader's, and every forbidden package on
    ``sys.path`` (the student's own ``micrograd/`` aside: it is not on ``sys.path`` yet)."""
    packages = [os.path.join(entry or ".", name + suffix) for entry in sys.path
                for name in FORBIDDEN_MODULES for suffix in ("", ".py")]
    return identities([*hidden, *packages])


def install_guard(workdir, hidden, local_names):
    """Install the audit hook (PEP 578); return the function that lists what it recorded.

    It refuses what no solution needs and records what counts as cheating, the same
    way in every sandbox mode: an import of a forbidden module is recorded when it is
    attempted, before any finder looks for it (through an import statement,
    ``__import__``, ``exec`` or ``importlib``), so whether the module exists does not
    matter. Audit hooks cannot be removed, and this one cannot be switched off from
    Python either: it has no class to patch and no closure or global. Its state
    lives in the keyword defaults of its functions, whose internals it refuses to
    hand out (``__code__``, ``__defaults__``, ``__kwdefaults__``), and it refuses the
    events that find objects without a reference (``gc``) or rewrite running frames
    (tracers and profilers). Only ``note`` and ``recorded`` hold the record in a
    frame while they run; a counter that no code can lower backs it, so a record
    emptied by a submission that caught one of them running (a signal handler is
    given the running frame) still shows. Everything it
    decides with was bound before the submission ran and only C code runs on
    submission-supplied values (no method of a ``str`` subclass, no patched builtin),
    so nothing the submission does later changes a decision. It refuses by returning
    the exception from a function that never raises, so a refusal's traceback shows no
    frame holding its state.
    """
    import _frozen_importlib

    violations = []
    # Counts what ``note`` recorded; it only ever goes up, so a record emptied by a
    # submission that caught ``note`` running (a signal handler gets the running frame)
    # still shows.
    noted = itertools.count()
    function_type = types.FunctionType
    function_globals = types.FunctionType.__globals__.__get__
    harness_globals = globals()
    blocked = off_limits(hidden)
    writable = (os.path.realpath(workdir), "/dev/null")
    importlib_namespace = vars(_frozen_importlib)

    def note(what, *, _violations=violations, _noted=noted, _next=next, _append=list.append, _len=len,
             _max=MAX_VIOLATIONS):
        if what not in _violations and _len(_violations) < _max:
            _next(_noted)
            _append(_violations, what)

    def is_guarded(obj, *, _ids=frozenset(), _id=id):  # ``_ids`` is set below, once all exist
        return _id(obj) in _ids

    def as_text(value, *, _str=str, _bytes=bytes, _type=type, _isinstance=isinstance, _copy=str.__getitem__,
                _decode=bytes.decode, _all=slice(None)):
        """``value`` as an exact ``str`` (made in C, whatever subclass it was), or ``None``."""
        if _type(value) is _str:
            return value
        if _isinstance(value, _str):
            return _copy(value, _all)
        if _isinstance(value, _bytes):
            return _decode(value, "utf-8", "surrogateescape")
        return None

    def check_import(name, *, _text=as_text, _note=note, _partition=str.partition, _local=local_names,
                     _forbidden=frozenset(FORBIDDEN_MODULES), _unsafe=frozenset(UNSAFE_MODULES),
                     _ImportError=ImportError):
        name = _text(name)
        if name is None:
            return None
        top = _partition(name, ".")[0]
        if top in _unsafe:
            return _ImportError(f"{name} is not available while grading")
        if top in _forbidden and top not in _local:
            _note(f"import {name}")
            return _ImportError(f"{name} may not be used by a submission")
        return None

    named = tuple(os.path.realpath(h) for h in hidden)

    def reaches(path, *, _off_limits=blocked, _stat=os.stat, _getcwd=os.getcwd, _rpartition=str.rpartition,
                _startswith=str.startswith, _item=tuple.__getitem__, _OSError=OSError, _ValueError=ValueError,
                _named=named, _normpath=os.path.normpath):
        """Whether ``path`` or a directory on the way to it is off limits (each prefix is
        asked of the kernel, so links, ``..`` and ``/proc/self/root`` change nothing; a
        relative path is taken from the current directory, wherever that is). A path is
        also off limits by name, so that where the grader's files are not there at all
        (the minimal root) trying to reach them counts the same as where they are."""
        if not _startswith(path, "/"):
            try:
                path = _getcwd() + "/" + path
            except _OSError:
                pass
        normal = _normpath(path)
        for root in _named:
            if normal == root or _startswith(normal, root + "/"):
                return True
        while path:
            try:
                status = _stat(path)
            except (_OSError, _ValueError):
                pass
            else:
                if (_item(status, 2), _item(status, 1)) in _off_limits:
                    return True
            head = _rpartition(path, "/")[0]
            if head == path:
                return False
            path = head
        return False

    def check_path(path, writes, *, _text=as_text, _reaches=reaches, _note=note, _realpath=os.path.realpath,
                   _roots=writable, _sep=os.sep, _startswith=str.startswith, _other=another_process,
                   _PermissionError=PermissionError):
        path = _text(path)
        if path is None:
            return None
        if _reaches(path):
            _note(f"read {path}")
            return _PermissionError(f"{path}: the grader's files are off limits")
        if _other(_text(_realpath(path)) or ""):
            return _PermissionError(f"{path}: other processes are off limits")
        if writes:
            real = _text(_realpath(path))
            for root in _roots:
                if real == root or _startswith(real, root + _sep):
                    return None
            return _PermissionError(f"{path}: a submission may only write in its working directory")
        return None

    def decide(event, args, *, _import=check_import, _path=check_path, _guarded=is_guarded, _type=type,
               _isinstance=isinstance, _str=str, _int=int, _process=frozenset(PROCESS_EVENTS),
               _paths=frozenset(PATH_EVENTS), _reads=frozenset(READ_EVENTS),
               _introspection=frozenset(INTROSPECTION_EVENTS), _internals=frozenset(FUNCTION_INTERNALS),
               _function=function_type, _globals_of=function_globals, _harness=harness_globals,
               _write_flags=WRITE_FLAGS, _PermissionError=PermissionError, _RuntimeError=RuntimeError,
               _AttributeError=AttributeError):
        """The refusal (an exception to raise) for one audit event, or ``None``."""
        if event == "import":
            return _import(args[0])
        if event in _process:
            return _PermissionError(f"{event} is not allowed while grading")
        if event in _introspection:
            return _RuntimeError(f"{event} is not available while grading")
        if event in _reads:
            writes = False
            if event == "open":
                mode, flags = args[1], args[2]
                if _type(mode) is _str:
                    for letter in "wax+":
                        if letter in mode:
                            writes = True
                if _type(flags) is _int and flags & _write_flags:
                    writes = True
            return _path(args[0], writes)
        if event in _paths:
            for arg in args[:2]:
                refusal = _path(arg, True)
                if refusal is not None:
                    return refusal
            return None
        # object.__getattr__ / __setattr__ / __delattr__: (obj, name[, value])
        obj, name = args[0], args[1]
        if _type(name) is not _str or name not in _internals:
            return None
        if _guarded(obj) or (event != "object.__getattr__" and _type(obj) is _function
                             and (name == "__code__" or _globals_of(obj) is _harness)):
            return _AttributeError(f"{name} of the grader's functions is off limits")
        return None

    def hook(event, args, *, _decide=decide, _handled=HANDLED_EVENTS):
        if event not in _handled:
            return
        refusal = _decide(event, args)
        if refusal is not None:
            del _decide
            raise refusal

    def find_spec(name, path=None, target=None, *, _check=check_import, _find=_frozen_importlib._find_spec):
        """``importlib``'s own ``_find_spec``, after the same check the import event gets:
        ``importlib.import_module`` and ``importlib.util.find_spec`` raise no import event."""
        refusal = _check(name)
        del _check
        if refusal is not None:
            raise refusal
        return _find(name, path, target)

    def recorded(*, _violations=violations, _noted=noted, _note=note, _list=list, _get=dict.get, _repr=repr,
                 _int=int, _len=len, _namespace=importlib_namespace, _find_spec=find_spec):
        """What the submission tried so far (the import machinery put back, or a record
        emptied behind the hook's back, count too)."""
        if _get(_namespace, "_find_spec") is not _find_spec:
            _note("replace the grader's import check")
        found = _list(_violations)
        if _int(_repr(_noted)[6:-1]) > _len(found):  # repr is "count(N)"
            found.append("empty the grader's record of what it refused")
        return found

    functions = (note, is_guarded, as_text, check_import, reaches, check_path, decide, hook, find_spec, recorded)
    is_guarded.__kwdefaults__ = {**is_guarded.__kwdefaults__, "_ids": frozenset(map(id, functions))}
    _frozen_importlib._find_spec = find_spec
    util = sys.modules.get("importlib.util")
    if util is not None:
        util._find_spec = find_spec
    sys.addaudithook(hook)
    return recorded


def computed_attributes(cls):
    """Which of ``data`` and ``grad`` instances of ``cls`` compute when read instead of storing.

    A property, any other descriptor, or a ``__getattribute__``/``__getattr__`` of the
    student's can run a finite difference each time the grader reads ``grad``; a slot
    is a stored value. Found from the classes' own dictionaries, running none of the
    student's code.
    """
    computed = []
    hooked = (type(class_attribute(cls, "__getattribute__")) is not types.WrapperDescriptorType
              or class_attribute(cls, "__getattr__") is not None)
    for name in ("data", "grad"):
        attribute = class_attribute(cls, name)
        descriptor = (attribute is not None and type(attribute) is not types.MemberDescriptorType
                      and class_attribute(type(attribute), "__get__") is not None)
        if hooked or descriptor:
            computed.append(name)
    return computed


def class_attribute(cls, name):
    """``name`` as the first class of ``cls``'s MRO defines it, or ``None``: read from the
    classes' own dictionaries, so no metaclass or descriptor of the student's runs."""
    for klass in type.__dict__["__mro__"].__get__(cls):
        namespace = type.__dict__["__dict__"].__get__(klass)
        if name in namespace:
            return namespace[name]
    return None


# How ``stored`` reads ``name`` from instances of a class, found once per class: keyed by the
# class's address (a dictionary lookup by the class itself would run its metaclass's ``__hash__``),
# and holding the class, so that an id is never taken for another's.
READERS = {}


def stored(obj, name):
    """The value ``obj`` stores for ``name`` (instance dictionary or slot), read without
    running any of the student's code; ``AttributeError`` when it stores none."""
    cls = type(obj)
    found = READERS.get((address(cls), name))
    if found is None or found[0] is not cls:
        found = READERS[(address(cls), name)] = (cls, reading(cls, name))
    return found[1](obj)


def reading(cls, name):
    """What reads ``name`` from an instance of ``cls`` for ``stored``: the slot's own descriptor if
    ``name`` is a slot, else a lookup in the dictionary the interpreter's descriptor gives. A class
    attribute set later changes nothing that matters: a slot's descriptor still reads that slot,
    and the dictionary found through the interpreter's descriptor is still the one."""
    slot = class_attribute(cls, name)
    if type(slot) is types.MemberDescriptorType:
        return slot.__get__  # raises AttributeError itself for an empty slot
    descriptor = instance_dict_descriptor(cls)

    def read(obj):
        namespace = dictionary_of(obj, cls, descriptor)
        if name in namespace:
            return namespace[name]
        raise AttributeError(f"{cls.__name__} stores no {name!r}")
    return read


def instance_dict_descriptor(cls):
    """The interpreter's own descriptor of ``cls``'s instance dictionary, or ``None``."""
    descriptor = class_attribute(cls, "__dict__")
    return descriptor if type(descriptor) is types.GetSetDescriptorType else None


def instance_namespace(obj):
    """The instance dictionary of ``obj`` (empty if it has none), read through the interpreter's own
    descriptor, never through a ``__dict__`` the student's class may define."""
    cls = type(obj)
    return dictionary_of(obj, cls, instance_dict_descriptor(cls))


def dictionary_of(obj, cls, descriptor):
    """What the interpreter's instance-dictionary ``descriptor`` gives for ``obj``, if a real dict."""
    if descriptor is not None:
        try:
            namespace = descriptor.__get__(obj, cls)
        except TypeError:
            return {}
        if type(namespace) is dict:
            return namespace
    return {}


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


class MissingName:
    """Something a missing module was asked for: using it says which module is missing."""

    def __init__(self, module, name):
        self._module, self._name = module, name

    def _missing(self):
        return ModuleNotFoundError(f"No module named {self._module!r} (it is not installed where "
                                   f"micrograde runs, and {self._name} needs it)", name=self._module)

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        raise self._missing()

    def __call__(self, *args, **kwargs):
        raise self._missing()


class MissingModule(types.ModuleType):
    __path__ = []

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return MissingName(self.__name__.split(".")[0], f"{self.__name__}.{name}")


MISSING_MODULES = []  # top-level names imported but not installed, in the order first imported


class StandInFinder:
    """Import hook, last on ``sys.meta_path``: only reached when the real module is missing.

    A plotting package gets an inert stand-in, so a drawing never decides a grade.
    A module whose missing import stopped a file or cell from loading (numpy on a
    plain install) gets a stand-in when that file or cell runs again (see
    ``load``): it fails only when graded code uses it, saying which module is
    missing, so an import that graded code never uses costs nothing, while code
    that handles ImportError itself still sees it.
    """

    def find_spec(self, name, path=None, target=None):
        top = name.split(".")[0]
        if top not in VISUAL_MODULES and top not in MISSING_MODULES:
            return None
        import importlib.machinery

        return importlib.machinery.ModuleSpec(name, self, is_package=True)

    def create_module(self, spec):
        if spec.name.split(".")[0] in VISUAL_MODULES:
            return InertModule(spec.name)
        return MissingModule(spec.name)

    def exec_module(self, module):
        pass


class JSONDecoding:
    """What the C JSON scanner reads from ``json.JSONDecoder()``'s defaults, without importing
    ``json`` (and ``re`` with it) into every child."""

    strict = True
    object_hook = object_pairs_hook = None
    parse_float, parse_int = float, int
    parse_constant = {"-Infinity": -math.inf, "Infinity": math.inf, "NaN": math.nan}.__getitem__


def no_threads(*args, **kwargs):
    raise RuntimeError("starting threads is not allowed while grading")


def confine(code, plan):
    """Have the process confine itself as the grading process planned (``grader.child.inside.confinement``).

    That module arrives compiled with the harness, like the training engine, so that
    the child needs nothing importable from the grader. Runs before any submission
    code; returns what held, for the report.
    """
    module = types.ModuleType("confinement")
    try:
        exec(code, module.__dict__)
        return module.apply(plan)
    except Exception as exc:  # noqa: BLE001 - reported, and the grading process trusts nothing it did not hear
        return {"filesystem": f"not confined ({type(exc).__name__}: {exc})"}


def start_guards(request, confinement):
    """Confine the process and install the audit hook, last; return what tells the hook's
    records, and what held of the confinement."""
    held = confine(confinement, request["confinement"])
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
    return install_guard(request["workdir"], request["hidden"], local_names), held


def main():
    """Answer requests until the grading process closes the pipe.

    Everything this loop uses to read requests and write replies is bound here, before
    any submission code runs, and made of C objects (the JSON scanner and encoder,
    ``os.write``), so patching ``json`` or ``os`` changes nothing it sends. The harness
    then leaves ``__main__``: the submission finds an empty module there, not the
    harness's functions.

    The grading process ships the code of the confinement and of the training
    engine (``None`` but for the child that grades ``train_step``) with the
    harness's own, as ``SHIPPED``; the module that started the harness is emptied.
    """
    confinement, engine = globals().pop("SHIPPED")
    vars(sys.modules["__main__"]).clear()
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
            recorded, held = start_guards(request, confinement)
            reply = {"confinement": held}
        else:
            handler = HANDLERS[request["kind"]]
            if request["kind"] != "load" and request.get("needs", "Value") not in api:
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


if __name__ == "__main__":
    main()
