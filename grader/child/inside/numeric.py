"""Answering a numerical estimate's case: the learner's code run with the grader's function in it.

The grader's function is built here from the course's formula (arithmetic and a few
functions of ``math``, checked by the grading process when it read the course's
configuration) and records every point it is evaluated at. A value (Karpathy's
``numerical_grad``) is computed again: the submission's cells, up to the last one
that computed it as it loaded, run again in a fresh module, with the course's function's name bound
to the grader's, whatever the cells bind to it. A function (``numerical_derivative``)
is called with it. The child sends back numbers: what the code computed and where
it evaluated the function; the grading process judges them.
"""

import math
import sys
import types

from .failures import error_report
from .loading import run_unit
from .reading import number

MAX_CALLS = 512  # points recorded: a gradient of a few inputs takes a few each; the rest are counted
MAX_RESULTS = 64  # numbers a value may hold: a gradient of a few inputs, never a stream
FUNCTIONS = ("sin", "cos", "tan", "exp", "log", "sqrt", "tanh")


def course_function(inputs, formula, calls):
    """The function of ``inputs`` that ``formula`` writes, recording in ``calls`` each point it is evaluated at
    (the first ``MAX_CALLS``; ``calls[0]`` counts them all)."""
    namespace = {"__builtins__": {}, "math": math, "np": math, "numpy": math,
                 **{name: getattr(math, name) for name in FUNCTIONS}}
    compute = eval(compile(f"lambda {', '.join(inputs)}: ({formula})", "<the course's function>", "eval"),
                   namespace)
    arity = len(inputs)

    def function(*args, **kwargs):
        values = list(args) + [kwargs.pop(name) for name in inputs[len(args):] if name in kwargs]
        if len(values) != arity or kwargs:
            raise TypeError(f"the course's function takes {arity} argument{'s' if arity > 1 else ''} "
                            f"({', '.join(inputs)}), got {len(args) + len(kwargs)}")
        calls[0] += 1
        if len(calls) <= MAX_CALLS:
            calls.append([number(x) for x in values])
        return compute(*values)

    function.__name__ = function.__qualname__ = "f"
    return function


class Pinned:
    """A module's names while its code runs again: read from and bound in the module's namespace, except
    ``name``, which stays ``value`` whatever the code binds to it (a ``def f`` of the course's own cell); what it
    bound there last is kept as ``bound``, to tell whether the learner's function is still the course's."""

    def __init__(self, namespace, name, value):
        self.namespace, self.name, self.value = namespace, name, value
        self.bound = None

    def __getitem__(self, key):
        return self.value if key == self.name else self.namespace[key]

    def __setitem__(self, key, value):
        if key != self.name:
            self.namespace[key] = value
        else:
            self.bound = value

    def __delitem__(self, key):
        if key != self.name:
            del self.namespace[key]


class Quiet:
    """Where the code's output goes while it runs again: it was shown once, as it loaded."""

    encoding, errors = "utf-8", "replace"

    def write(self, text):
        return len(text)

    def flush(self):
        pass

    def isatty(self):
        return False


def mentions(source, name):
    """Whether ``source`` holds the identifier ``name`` (not as part of a longer one)."""
    start = source.find(name)
    while start >= 0:
        before = source[start - 1] if start else " "
        after = source[start + len(name)] if start + len(name) < len(source) else " "
        if not (before.isalnum() or before == "_") and not (after.isalnum() or after == "_"):
            return True
        start = source.find(name, start + 1)
    return False


def rerun(spec, pinned, function, value):
    """Run the module ``spec`` (the load request's) again, up to the last unit that computed ``value`` as it
    loaded (else the last that names it), with ``pinned`` bound to ``function``; its namespace, and the last
    failure of a unit (or ``None``)."""
    module = types.ModuleType(spec["name"])
    module.__file__ = spec["units"][0]["filename"]
    module.display = lambda *args, **kwargs: None
    if spec.get("package"):
        module.__package__ = spec["package"]["name"]
    namespace = module.__dict__
    namespace[pinned] = function  # for functions the code defines, which read their module's globals
    names = Pinned(namespace, pinned, function)
    units = spec["units"]
    last = spec.get("made", {}).get(value)  # the last unit that computed it as the submission loaded
    if last is None:
        last = max((i for i, unit in enumerate(units) if mentions(unit["source"], value)), default=-1)
    failure = None
    shown = sys.stdout, sys.stderr
    sys.stdout = sys.stderr = Quiet()
    try:
        for unit in units[:last + 1]:
            found = run_unit(unit, namespace, names)
            failure = found or failure
            if found is not None and (found.get("exit") or not unit.get("isolated")):
                break
    finally:
        sys.stdout, sys.stderr = shown
    return namespace, failure, names.bound


def own_values(bound, points):
    """What the function the learner's code bound to the course's function's name gives at ``points`` (``None``
    where it fails or gives no number): the grading process compares it with the course's function."""
    found = []
    if not callable(bound):
        return found
    shown = sys.stdout, sys.stderr
    sys.stdout = sys.stderr = Quiet()
    try:
        for point in points[:4]:
            try:
                found.append(number(bound(*point)))
            except Exception:  # noqa: BLE001 - any failure of student code is data
                found.append(None)
    finally:
        sys.stdout, sys.stderr = shown
    return [x if type(x) is float else None for x in found]


def numbers_of(value, inputs):
    """The numbers a value holds, in the order of ``inputs``: a list, tuple or array in its order; a dict by the
    inputs' names (or positions), else in its order; a single number for a function of one input."""
    if issubclass(type(value), (int, float)):  # by its type: ``isinstance`` would ask a ``__class__`` of its own
        return [number(value)]
    if type(value) is dict:
        keys = list(value)
        if all(name in value for name in inputs):
            keys = list(inputs)
        elif all(i in value for i in range(len(inputs))):
            keys = list(range(len(inputs)))
        items = [value[key] for key in keys]
    else:
        items = value
    found = []
    for x in items:  # a list, a tuple, an array: anything that gives the numbers in order
        if len(found) == MAX_RESULTS:
            break
        found.append(number(x))
    return found


def recorded(calls, arity):
    """What the course's function recorded, as the reply carries it: points of ``arity`` plain numbers, and how
    many calls there were (the submission can reach the record, so nothing else of it is sent)."""
    count = calls[0] if type(calls[0]) is int else 0
    points = [point for point in calls[1:MAX_CALLS + 1]
              if type(point) is list and len(point) == arity and all(type(x) is float for x in point)]
    return {"calls": points, "count": count}


def estimate_case(api, request):
    """Compute the value ``request["value"]`` again with the course's function replaced by the request's."""
    calls = [0]
    try:
        function = course_function(request["inputs"], request["formula"], calls)
        namespace, failure, bound = rerun(api["sources"][request["needs"]], request["calls"], function,
                                          request["value"])
        if request["value"] not in namespace:
            return {"error": failure or {"type": "NameError", "message": f"{request['value']} is not computed when "
                                         "the code runs again", "phase": "call", "line": None, "file": None}}
        result = numbers_of(namespace[request["value"]], request["inputs"])
    except BaseException as exc:  # noqa: BLE001 - any failure of student code is data
        return {"error": error_report(exc, "call")}
    own = own_values(bound, request.get("own", []))
    return {"result": result, **recorded(calls, len(request["inputs"])), **({"own": own} if own else {})}


def derivative_case(api, request):
    """Call the learner's function with the course's function (``f``), a point (``x``) and a step (``h``), in the
    order the course gives."""
    calls = [0]
    try:
        function = course_function(request["inputs"], request["formula"], calls)
        learner = api["parts"][request["needs"]]
        if "call" in request:  # a function of several inputs, called as the course calls it
            point = list(request["point"])
            given = {"f": function, "vals": point, "x": point[request["i"]], "i": request["i"], "h": request["h"]}
            args = []
            for kind, value in request["call"]["args"]:
                if kind == "unpack":
                    args.extend(given[value])
                else:
                    args.append(given[value] if kind == "name" else value)
            result = learner(*args, **{k: given[v] if kind == "name" else v
                                       for k, (kind, v) in request["call"]["keywords"]})
        else:
            given = {"f": function, "x": request["x"], "h": request["h"]}
            result = learner(*(given[name] for name in request["arguments"]))
        found = [number(result)]
    except BaseException as exc:  # noqa: BLE001 - any failure of student code is data
        return {"error": error_report(exc, "call")}
    return {"result": found, **recorded(calls, len(request["inputs"]))}
