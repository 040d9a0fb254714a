"""Loading the submission's files and cells, with stand-ins for modules that are not installed."""

import _signal
import sys
import types

from .failures import SUBMISSION_FILES, error_report
from .policy import FORBIDDEN_MODULES, UNSAFE_MODULES

# Packages notebooks use only to draw or display things. When one is not
# installed, an inert stand-in is imported instead, so a plotting cell never
# decides a grade.
VISUAL_MODULES = {"graphviz", "matplotlib", "seaborn", "plotly", "IPython", "ipywidgets"}
MISSING_MODULES = []  # top-level names imported but not installed, in the order first imported


def run_unit(unit, namespace, names=None):
    """Execute one file (or notebook cell) of the submission; report what went wrong. ``names``, if given, is
    the mapping its top-level names are read from and bound in (``namespace`` stays its globals)."""
    SUBMISSION_FILES.add(unit["filename"])
    try:
        code = compile(unit["source"], unit["filename"], "exec")
        exec(code, namespace, names)
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
    """Execute the chosen submission files and pick out the parts that are graded (``Value``, ``train_step``).

    Shortly before the grading process would give up on loading (``stop_after`` seconds, as the
    request says), an alarm stops the code where it is, so the report can point at the statement
    that kept it busy.
    """
    _signal.signal(_signal.SIGALRM, out_of_time)
    _signal.setitimer(_signal.ITIMER_REAL, request["stop_after"])
    try:
        return load_modules(api, request)
    finally:
        _signal.setitimer(_signal.ITIMER_REAL, 0)


def load_modules(api, request):
    api["children_names"] = request["children_names"]
    api["isolation"] = request.get("isolation", {})
    api["described"] = request.get("engine")  # the course's description of its engine (forms), if any
    namespaces = api.setdefault("namespaces", [])  # where a form's names are found: the modules, as loaded
    parts = api.setdefault("parts", {})  # the graded parts, by role: apart from the child's own keys
    failures = []
    own = OwnPackages(request, lambda spec, module: run_module(spec, module, request, failures, namespaces))
    sys.meta_path.insert(0, own)
    for spec in request["modules"]:
        qualified = own.qualified(spec)
        if qualified is not None and qualified not in sys.modules:
            # Imported as the package's code imports it: its package first (its __init__ drives the order in
            # which its files import each other), this file served by ``OwnPackages``.
            sys.path.insert(0, spec["package"]["root"])
            try:
                import importlib

                importlib.import_module(qualified)
            except BaseException as exc:  # noqa: BLE001 - the package's own __init__ failed: said as the file's
                failures.append({**error_report(exc, "load"), "unit": None, "unit_file": spec["units"][0]["filename"]})
        module = sys.modules.get(qualified or "")
        if module is None or own.served.get(qualified) is not spec:
            module = types.ModuleType(spec["name"])
            if qualified is not None:
                module.__package__ = spec["package"]["name"]
                sys.modules[qualified] = module  # the package's files that import it get this one
            run_module(spec, module, request, failures, namespaces)
        if failures and failures[-1]["type"] == "LoadTimeout":
            break
        for role in spec["provides"]:
            api.setdefault("sources", {})[role] = spec  # what is run again to see a value follow a function
            name = request["roles"][role]["name"]
            if name in module.__dict__:
                parts[role] = module.__dict__[name]
    for role, part in request["roles"].items():  # a class must be a class, a function something to call
        what = part["what"]
        if role in parts and not (isinstance(parts[role], type) if what == "class" else
                                  callable(parts[role]) if what == "function" else True):
            del parts[role]
    return {"defined": {role: role in parts for role in request["roles"]}, "failures": failures,
            "missing_modules": list(MISSING_MODULES)}


def run_module(spec, module, request, failures, namespaces):
    """Run one file's units (a notebook's cells) in ``module``, as the submission's own module: importable under its
    name, its package's folder on the path; each failure recorded in ``failures``."""
    module.__file__ = spec["units"][0]["filename"]
    module.display = lambda *args, **kwargs: None
    namespaces.insert(0, module.__dict__)  # the last loaded first: a name it redefines is its own
    # Importable under its own name (train.py may import engine), unless that name
    # is taken: a student's math.py must not replace the real math module.
    if spec["name"] not in sys.modules and spec["name"] not in sys.stdlib_module_names:
        sys.modules[spec["name"]] = module
    package = spec.get("package")
    if package:
        # A file of a package runs as the package's module: its absolute imports of the package
        # find the package's folder (before an installed package of the same name, as the
        # student's own installed package would), its relative imports their package.
        sys.path.insert(0, package["root"])
    if spec.get("directory"):
        sys.path.insert(0, spec["directory"])
    values = [request["roles"][role]["name"] for role in spec["provides"]
              if request["roles"][role]["what"] == "value"]
    for index, unit in enumerate(spec["units"]):
        before = held(module.__dict__, values)
        failure = run_unit(unit, module.__dict__)
        while failure is not None and stand_in_for(failure):
            failure = run_unit(unit, module.__dict__)
        for name, was, now in zip(values, before, held(module.__dict__, values)):
            if was[0] is not now[0] or was[1] != now[1]:
                spec.setdefault("made", {})[name] = index  # the last unit that computes it: where a rerun ends
        if failure is not None:
            failure["unit"] = unit.get("label")
            failure["unit_file"] = unit["filename"]
            failures.append(failure)
            if not unit.get("isolated") or failure["type"] == "LoadTimeout":
                break


class OwnPackages:
    """Import hook, first on ``sys.meta_path``: a file of the submission's package that another of its files
    imports (``from .scalar import Scalar``) before the load reaches it is run then, from what the grading
    process sent (``run``), and is the one module of that name: the package's code and the graded parts are
    of one class, never of a second copy imported from the folder."""

    def __init__(self, request, run):
        self.specs = {self.qualified(spec): spec for spec in request["modules"] if spec.get("package")}
        self.run = run
        self.served = {}  # qualified name -> the spec run for it

    @staticmethod
    def qualified(spec):
        package = spec.get("package")
        if not package:
            return None
        return package["name"] if spec["name"] == "__init__" else f"{package['name']}.{spec['name']}"

    def find_spec(self, name, path=None, target=None):
        spec = self.specs.get(name)
        if spec is None or name in self.served:
            return None
        import importlib.machinery

        found = importlib.machinery.ModuleSpec(name, self, origin=spec["units"][0]["filename"],
                                               is_package=spec["name"] == "__init__")
        if spec["name"] == "__init__":
            found.submodule_search_locations = [spec["directory"]] if spec.get("directory") else []
        return found

    def create_module(self, found):
        return None

    def exec_module(self, module):
        spec = self.specs[module.__name__]
        self.served[module.__name__] = spec
        self.run(spec, module)


def held(namespace, names):
    """What ``namespace`` holds for each of ``names``: the object, and a list of plain numbers' numbers (to see a
    unit fill a list it did not make)."""
    found = []
    for name in names:
        value = namespace.get(name)
        plain = type(value) is list and len(value) <= 64 and all(type(x) in (int, float) for x in value)
        found.append((value, tuple(value) if plain else None))
    return found


def stand_in_for(failure):
    """After a load stopped at the import of a module that is not installed (and not forbidden),
    give that module a stand-in so the file or cell can run again; False when there is nothing to do."""
    module = failure.get("module")
    if (failure.get("type") != "ModuleNotFoundError" or not module or module in MISSING_MODULES
            or module in FORBIDDEN_MODULES or module in UNSAFE_MODULES or len(MISSING_MODULES) >= 20):
        return False
    MISSING_MODULES.append(module)
    return True


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


class MissingName(type):
    """What a missing module was asked for (``np.floating``, ``np.array``): a class of its own, so that code
    may test against it (``isinstance(x, (float, np.floating))``: nothing is an instance of a type that is
    not installed), annotate with it (``float | np.ndarray``) and derive from it, as it would with the
    module there; calling it, reading from it or computing with it says which module is missing. A stand-in
    micrograde gives never decides a grade by being unlike the module it stands for."""

    def _missing(cls):
        return ModuleNotFoundError(f"No module named {cls._module!r} (it is not installed where "
                                   f"micrograde runs, and {cls._name} needs it)", name=cls._module)

    def __getattr__(cls, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        raise cls._missing()

    def __call__(cls, *args, **kwargs):
        raise cls._missing()

    def _refuse(cls, *args):
        raise cls._missing()

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = _refuse
    __pow__ = __rpow__ = __matmul__ = __rmatmul__ = __neg__ = __float__ = __int__ = __getitem__ = _refuse
    __lt__ = __le__ = __gt__ = __ge__ = __iter__ = __len__ = _refuse


def missing_name(module, name):
    """A stand-in for ``name`` of the missing ``module``: see ``MissingName``."""
    return MissingName(name, (), {"_module": module, "_name": name})


class MissingModule(types.ModuleType):
    __path__ = []

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return missing_name(self.__name__.split(".")[0], f"{self.__name__}.{name}")


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
