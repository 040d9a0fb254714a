"""The audit hook (PEP 578): what a submission may not do, refused, and what counts as cheating, recorded.

Installed last, just before the submission's code first runs (``install_guard``);
the same in every sandbox mode, and the only layer on a platform without the
Linux ones.
"""

import itertools
import os
import sys
import types

from .paths import another_process, as_text, identities, reaches, resolve
from .policy import FORBIDDEN_MODULES, UNSAFE_MODULES

PROCESS_EVENTS = {"os.fork", "os.forkpty", "os.system", "os.exec", "os.spawn", "os.posix_spawn",
                  "subprocess.Popen", "pty.spawn", "os.kill", "os.killpg", "socket.__new__",
                  "ctypes.dlopen", "ctypes.dlsym", "ctypes.cdata"}


PATH_EVENTS = {"os.remove", "os.rename", "os.rmdir", "os.mkdir", "os.chmod", "os.chown", "os.link",
               "os.symlink", "os.truncate", "os.utime", "shutil.rmtree", "os.chflags", "os.lchflags"}


READ_EVENTS = {"open", "os.listdir", "os.scandir", "os.chdir"}


# Where each event carries a directory descriptor that the paths before it are relative to (-1, or
# None, when there is none). Relative to a descriptor of a directory the submission opened (``/``,
# ``/proc``, site-packages), a path means something the guard cannot see from the path alone: such
# calls are refused, as are ``os.open`` with ``dir_fd`` (whose ``open`` event does not carry it:
# ``os.open`` is replaced, see ``install_guard``) and these events given a descriptor instead of a
# path (``os.listdir(fd)``, ``os.chdir(fd)``, ``os.chmod(fd)``...). No solution needs any of them.
# Each as (the descriptor's position, the position of the path relative to it).
DIR_FD_ARGUMENTS = {"os.remove": ((1, 0),), "os.rmdir": ((1, 0),), "os.mkdir": ((2, 0),), "os.chmod": ((2, 0),),
                    "os.chown": ((3, 0),), "os.rename": ((2, 0), (3, 1)), "os.link": ((2, 0), (3, 1)),
                    "os.symlink": ((2, 1),), "os.utime": ((3, 0),), "shutil.rmtree": ((1, 0),)}
# Events whose path may be a descriptor the submission holds: ``open(fd)`` wraps one it opened
# (a check was made then), ``os.truncate(fd)`` shortens a file it opened for writing.
DESCRIPTOR_EVENTS = {"open", "os.truncate"}


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


def local_module_names(root):
    """Top-level names the submission's own files provide (a ``micrograd/`` package, an
    ``engine.py``): importing one of them imports the student's code, not a library."""
    names = set()
    for _, directories, files in os.walk(root):
        names.update(directories)
        names.update(name[:-3] for name in files if name.endswith(".py"))
    return frozenset(n for n in names if n.isidentifier())


def off_limits(hidden):
    """The directories a submission may not read: the grader's, and every forbidden package on
    ``sys.path`` (the student's own ``micrograd/`` aside: it is not on ``sys.path`` yet)."""
    packages = [os.path.join(entry or ".", name + suffix) for entry in sys.path
                for name in FORBIDDEN_MODULES for suffix in ("", ".py")]
    return identities([*hidden, *packages])


def install_guard(workdir, hidden, local_names, protected):
    """Install the audit hook (PEP 578); return the function that lists what it recorded.

    ``protected`` are the namespaces of the child's own modules: the code and defaults of
    their functions are off limits.

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
    import _imp
    import posix

    violations = []
    # Counts what ``note`` recorded; it only ever goes up, so a record emptied by a
    # submission that caught ``note`` running (a signal handler gets the running frame)
    # still shows.
    noted = itertools.count()

    def note(what, *, _violations=violations, _noted=noted, _next=next, _append=list.append, _len=len,
             _max=MAX_VIOLATIONS):
        if what not in _violations and _len(_violations) < _max:
            _next(_noted)
            _append(_violations, what)

    def is_guarded(obj, *, _ids=frozenset(), _id=id):  # ``_ids`` is set below, once all exist
        return _id(obj) in _ids

    check_import, check_path, relative = path_checks(note, workdir, hidden, local_names)
    attribute, decide, hook = deciders(check_import, check_path, relative, is_guarded, protected)
    find_spec, open_file, create_builtin, exec_builtin = replacements(check_import, relative)
    importlib_namespace = vars(_frozen_importlib)

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

    # The module's path logic too (``another_process``, ``as_text``, ``reaches``, ``resolve``): a refusal's
    # traceback shows the hook's frame, whose globals name them.
    functions = (note, is_guarded, as_text, another_process, check_import, reaches, resolve, check_path, attribute,
                 relative, decide, hook, find_spec, recorded, open_file, create_builtin, exec_builtin)
    is_guarded.__kwdefaults__ = {**is_guarded.__kwdefaults__, "_ids": frozenset(map(id, functions))}
    _frozen_importlib._find_spec = find_spec
    util = sys.modules.get("importlib.util")
    if util is not None:
        util._find_spec = find_spec
    # The original ``open`` is named in ``os.supports_dir_fd`` too; without it there, the standard
    # library (``shutil.rmtree``) takes its paths' way instead of descriptors'.
    os.supports_dir_fd.discard(posix.open)
    if "shutil" in sys.modules:
        sys.modules["shutil"]._use_fd_functions = False
    os.open = posix.open = open_file
    _imp.create_builtin, _imp.exec_builtin = create_builtin, exec_builtin
    sys.addaudithook(hook)
    return recorded


def path_checks(note, workdir, hidden, local_names):
    """The guard's checks of an import, a path and a path relative to a directory descriptor: each returns the
    refusal (an exception) or ``None``, its state in its keyword defaults (``install_guard``)."""
    blocked = off_limits(hidden)
    writable = (os.path.realpath(workdir), "/dev/null")
    # The folder of the grading process's working directories: another child's, beside this one, is off limits.
    siblings = os.path.dirname(os.path.realpath(workdir)) + os.sep
    own_pid = str(os.getpid())
    named = tuple(os.path.realpath(h) for h in hidden)

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

    def check_path(path, writes, *, _text=as_text, _reaches=reaches, _note=note, _realpath=resolve,
                   _roots=writable, _sep=os.sep, _startswith=str.startswith, _other=another_process,
                   _own=own_pid, _blocked=blocked, _named=named, _siblings=siblings, _PermissionError=PermissionError):
        path = _text(path)
        if path is None:
            return None
        if _reaches(path, _blocked, _named):
            _note(f"read {path}")
            return _PermissionError(f"{path}: the grader's files are off limits")
        real = _text(_realpath(path)) or ""
        if _other(real, _own):
            return _PermissionError(f"{path}: other processes are off limits")
        if _startswith(real, _siblings) and not (real == _roots[0] or _startswith(real, _roots[0] + _sep)):
            return _PermissionError(f"{path}: other children's working directories are off limits")
        if writes:
            for root in _roots:
                if real == root or _startswith(real, root + _sep):
                    return None
            return _PermissionError(f"{path}: a submission may only write in its working directory")
        return None

    def relative(what, path, directory, writes, *, _path=check_path, _text=as_text, _type=type, _int=int,
                 _readlink=os.readlink, _OSError=OSError, _PermissionError=PermissionError):
        """The refusal of ``path`` relative to the directory descriptor ``directory``. Where that is a
        way to the grader's files (what the descriptor names, on Linux), the attempt is recorded as if
        the path had been given whole."""
        path = _text(path)
        if path is not None and _type(directory) is _int:
            try:
                _path(_readlink(f"/proc/self/fd/{directory}") + "/" + path, writes)
            except _OSError:
                pass
        return _PermissionError(f"{what} relative to a directory descriptor is not allowed while grading")

    return check_import, check_path, relative


def deciders(check_import, check_path, relative, is_guarded, protected):
    """The audit hook and what it decides with: the refusal of an attribute of the guard's functions, and of one
    audit event (``install_guard``)."""
    function_type = types.FunctionType
    function_globals = types.FunctionType.__globals__.__get__
    own_namespaces = frozenset(map(id, protected))

    def attribute(event, args, *, _guarded=is_guarded, _type=type, _str=str, _function=function_type,
                  _globals_of=function_globals, _own=own_namespaces, _id=id, _internals=frozenset(FUNCTION_INTERNALS),
                  _AttributeError=AttributeError):
        """The refusal for ``object.__getattr__`` / ``__setattr__`` / ``__delattr__``: ``(obj, name[, value])``."""
        obj, name = args[0], args[1]
        if _type(name) is not _str or name not in _internals:
            return None
        if _guarded(obj) or (event != "object.__getattr__" and _type(obj) is _function
                             and (name == "__code__" or _id(_globals_of(obj)) in _own)):
            return _AttributeError(f"{name} of the grader's functions is off limits")
        return None

    def decide(event, args, *, _import=check_import, _path=check_path, _attribute=attribute, _relative=relative,
               _type=type, _str=str, _int=int, _get=dict.get, _process=frozenset(PROCESS_EVENTS),
               _reads=frozenset(READ_EVENTS), _introspection=frozenset(INTROSPECTION_EVENTS),
               _attributes=frozenset(ATTRIBUTE_EVENTS), _dir_fd_arguments=DIR_FD_ARGUMENTS,
               _descriptors=frozenset(DESCRIPTOR_EVENTS), _write_flags=WRITE_FLAGS,
               _PermissionError=PermissionError, _RuntimeError=RuntimeError):
        """The refusal (an exception to raise) for one audit event, or ``None``."""
        if event == "import":
            return _import(args[0])
        if event in _process:
            return _PermissionError(f"{event} is not allowed while grading")
        if event in _introspection:
            return _RuntimeError(f"{event} is not available while grading")
        if event in _attributes:
            return _attribute(event, args)
        if _type(args[0]) is _int and event not in _descriptors:
            return _PermissionError(f"{event} on a file descriptor is not allowed while grading")
        for position, path in _get(_dir_fd_arguments, event, ()):
            if args[position] is not None and args[position] != -1:
                return _relative(event, args[path], args[position], True)
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
        for arg in args[:2]:  # one of the path events
            refusal = _path(arg, True)
            if refusal is not None:
                return refusal
        return None

    def hook(event, args, *, _decide=decide, _handled=HANDLED_EVENTS):
        if event not in _handled:
            return
        refusal = _decide(event, args)
        if refusal is not None:
            del _decide
            raise refusal

    return attribute, decide, hook


def replacements(check_import, relative):
    """What the guard puts in place of the import machinery's ``_find_spec``, ``os.open`` and ``_imp``'s
    builders of built-in modules, each making the check the audit events cannot (``install_guard``)."""
    import _frozen_importlib
    import _imp
    import posix

    def find_spec(name, path=None, target=None, *, _check=check_import, _find=_frozen_importlib._find_spec):
        """``importlib``'s own ``_find_spec``, after the same check the import event gets:
        ``importlib.import_module`` and ``importlib.util.find_spec`` raise no import event."""
        refusal = _check(name)
        del _check
        if refusal is not None:
            raise refusal
        return _find(name, path, target)

    def open_file(path, flags, mode=0o777, *, dir_fd=None, _open=posix.open, _relative=relative,
                  _write_flags=WRITE_FLAGS):
        """``os.open``, which refuses ``dir_fd`` (its ``open`` event does not carry it)."""
        if dir_fd is not None:
            refusal = _relative("os.open", path, dir_fd, flags & _write_flags)
            del _relative
            raise refusal
        return _open(path, flags, mode)

    def create_builtin(spec, *, _create=_imp.create_builtin, _text=as_text, _getattr=getattr,
                       _spec=_frozen_importlib.ModuleSpec, _importer=_frozen_importlib.BuiltinImporter,
                       _ImportError=ImportError):
        """``_imp.create_builtin``, which makes no second ``posix`` (with the ``open`` of before) and no
        second ``_imp`` (with this function of before). The name is read once, and a spec of its own
        is passed on: a spec whose name changes between two reads cannot pass one name to the check
        and another to the interpreter."""
        name = _text(_getattr(spec, "name", None))
        if name is None or name in ("posix", "_imp"):
            raise _ImportError(f"{name} cannot be made again while grading")
        return _create(_spec(name, _importer))

    def exec_builtin(module, *, _exec=_imp.exec_builtin, _posix=posix, _ImportError=ImportError):
        """``_imp.exec_builtin``, which does not run ``posix``'s set-up again (``importlib.reload``),
        which would put the ``open`` of before back."""
        if module is _posix:
            raise _ImportError("posix cannot be reloaded while grading")
        return _exec(module)

    return find_spec, open_file, create_builtin, exec_builtin


def no_threads(*args, **kwargs):
    raise RuntimeError("starting threads is not allowed while grading")
