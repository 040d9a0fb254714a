"""How a course calls its tensor ops: reshape's new shape as sizes or as one tuple, a reduction's axis by ``axis=``
or by ``dim=``.

numpy calls ``a.reshape(3, 2)`` and ``a.sum(axis=1)``; PyTorch-minded courses write ``a.reshape((3, 2))`` and
``a.sum(dim=1)``, and learners write their Tensor's methods for the calls their course makes. A course says which
(``shape_as``, ``axis_keyword`` in the request); where it says nothing, numpy's calls are made, unless the
method's own signature shows that it cannot take them and takes the other unambiguously (``def reshape(self,
shape)`` with one parameter and no ``*args``; ``def sum(self, dim=None)`` with no ``axis`` and no ``**kwargs``).
Then the other call is made and the reply says what was assumed, so that the report says it too.
"""

DEFAULTS = {"shape_as": "sizes", "axis_keyword": "axis"}


def parameters(method):
    """The method's parameters after ``self``, or ``None`` where its signature cannot be read."""
    import inspect  # when a tensor op is called, not as every child starts

    try:
        found = list(inspect.signature(method).parameters.values())
    except (TypeError, ValueError):
        return None
    return found[1:] if found and found[0].name in ("self", "cls") else found


def shape_style(method):
    """``"tuple"`` where the method takes the new shape as one argument only (one positional parameter, no
    ``*args``), ``"sizes"`` where it takes them one by one (``*args``), ``None`` where that cannot be told."""
    found = parameters(method)
    if found is None:
        return None
    if any(p.kind is p.VAR_POSITIONAL for p in found):
        return "sizes"
    positional = [p for p in found if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return "tuple" if len(positional) == 1 else None


def axis_style(method):
    """``"dim"`` where the method takes ``dim`` and neither ``axis`` nor ``**kwargs``, ``"axis"`` where it takes
    ``axis``, ``None`` where that cannot be told."""
    found = parameters(method)
    if found is None:
        return None
    names = {p.name for p in found if p.kind is not p.VAR_KEYWORD}
    if "axis" in names or any(p.kind is p.VAR_KEYWORD for p in found):
        return "axis"
    return "dim" if "dim" in names else None


def styled(method, request):
    """The arguments and keywords of the op's call, as the course calls it (or as the method shows it is called),
    and what was assumed where the course said nothing and the method showed another call than numpy's."""
    args, kwargs, assumed = list(request["args"]), dict(request["kwargs"]), {}

    def style(key, read):
        said = request.get(key)
        if said is not None:
            return said
        found = read(method)
        if found is not None and found != DEFAULTS[key]:
            assumed[key] = found
            return found
        return DEFAULTS[key]

    if args and style("shape_as", shape_style) == "tuple":
        args = [tuple(args)]
    if "axis" in kwargs and style("axis_keyword", axis_style) == "dim":
        kwargs = {"dim": kwargs.pop("axis"), **kwargs}
    return args, kwargs, assumed


def assumed_of(T, request):
    """What was assumed of the call style of the request's op on ``T`` (empty where nothing was)."""
    method = getattr(T, request["method"], None)
    return styled(method, request)[2] if method is not None and request["call"][0] != "operator" else {}


def course_input(namespaces, request, given):
    """A module's input as the course passes it: in the course's own tensor class (the request's ``input_class``,
    looked up where the module's code runs), else as micrograde made it (an array, or lists)."""
    name = request.get("input_class")
    if name is None:
        return given
    found = next((ns[name] for ns in namespaces if isinstance(ns.get(name), type)), None)
    if found is None:
        raise NameError(f"the course passes its modules a {name}, and the submission defines no {name}")
    return found(given)
