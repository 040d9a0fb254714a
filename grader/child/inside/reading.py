"""Reading what an object stores without running any of the student's code.

A property, a descriptor or a ``__getattribute__`` of the student's could
compute a gradient each time it is read: the harness reads an instance's own
dictionary or slot through the interpreter's descriptors, and says which
attributes a class computes instead of storing (``computed_attributes``).
"""

import math
import sys
import types

# A number unique to a live object, as ``id`` gives (its address, shifted past the alignment
# bits, as ``object``'s own hash is). ``id`` raises an audit event, so the audit hook would
# run on each of the many the harness takes; this does not, nor does it run a metaclass's
# ``__hash__``.
address = object.__hash__


def number(x):
    """A plain float for JSON, or a description of what the value really was.

    A ``Fraction`` is read as the float nearest it (``exact``). A subclass of ``float`` or ``int`` is
    read for the number it stores, through
    the base type's own C conversion: ``float(x)`` would call the subclass's
    ``__float__``, which could compute a different value at each read (123.0 where
    2.0 is stored). Its type is taken with ``type``, never ``isinstance``, which
    would ask a ``__class__`` of the student's."""
    kind = type(x)
    if kind is float and x - x == 0.0:  # the usual case, first: a finite float (inf - inf is nan)
        return x
    if "numpy" in sys.modules and not issubclass(kind, (int, float)):
        x = numpy_number(x)
        kind = type(x)
    try:
        if issubclass(kind, bool) or not issubclass(kind, (int, float)):
            f = exact(x)
            if f is None:
                return {"invalid": kind.__name__}
        else:
            f = float.__float__(x) if issubclass(kind, float) else int.__float__(x)
    except OverflowError:
        return {"invalid": "number too large for a float"}
    if math.isnan(f) or math.isinf(f):
        return {"invalid": repr(f)}
    return f


def numpy_number(x):
    """A numpy array of one entry (0-d, or of shape ``(1,)``, ``(1, 1)``...) or a numpy scalar as the Python
    number it holds, read through numpy's own base methods (never a subclass's ``item`` or ``__float__``);
    anything else as it is."""
    numpy = sys.modules["numpy"]
    array, scalar = getattr(numpy, "ndarray", None), getattr(numpy, "generic", None)
    kind = type(x)
    try:
        if isinstance(array, type) and issubclass(kind, array):
            if array.size.__get__(x) != 1 or array.dtype.__get__(x).kind not in "biuf":
                return x
            return array.item(x)
        if isinstance(scalar, type) and issubclass(kind, scalar):
            return scalar.item(x)
    except Exception:  # noqa: BLE001 - not an array numpy can read
        return x
    return x


def exact(x):
    """The float nearest a ``fractions.Fraction`` (exact arithmetic is right arithmetic), from the
    numerator and denominator it stores, divided by ``int``'s own division; ``None`` for anything else."""
    fractions = sys.modules.get("fractions")
    kind = type(x)
    if fractions is None or kind is not getattr(fractions, "Fraction", None):
        return None
    numerator, denominator = class_attribute(kind, "_numerator"), class_attribute(kind, "_denominator")
    if type(numerator) is not types.MemberDescriptorType or type(denominator) is not types.MemberDescriptorType:
        return None
    n, d = numerator.__get__(x, kind), denominator.__get__(x, kind)
    if type(n) is not int or type(d) is not int or d == 0:
        return None
    return int.__truediv__(n, d)


def class_attribute(cls, name):
    """``name`` as the first class of ``cls``'s MRO defines it, or ``None``: read from the
    classes' own dictionaries, so no metaclass or descriptor of the student's runs."""
    for klass in type.__dict__["__mro__"].__get__(cls):
        namespace = type.__dict__["__dict__"].__get__(klass)
        if name in namespace:
            return namespace[name]
    return None


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


# How ``stored`` reads ``name`` from instances of a class, found once per class: keyed by the
# class's address (a dictionary lookup by the class itself would run its metaclass's ``__hash__``),
# and holding the class, so that an id is never taken for another's.
READERS = {}
# The class ``stored`` last read ``name`` from, with its reader: nearly every read of a case is of the
# student's class, so most reads find it here, by name and the class's identity alone.
LAST_READ = {}


def stored(obj, name):
    """The value ``obj`` stores for ``name`` (instance dictionary or slot), read without
    running any of the student's code; ``AttributeError`` when it stores none."""
    cls = type(obj)
    found = LAST_READ.get(name)
    if found is None or found[0] is not cls:
        found = READERS.get((address(cls), name))
        if found is None or found[0] is not cls:
            found = READERS[(address(cls), name)] = (cls, reading(cls, name))
        LAST_READ[name] = found
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
    get = descriptor.__get__ if descriptor is not None else None

    def read(obj):
        # ``dictionary_of``, inlined: this runs for every attribute of every node the child reads.
        if get is not None:
            try:
                namespace = get(obj, cls)
            except TypeError:
                namespace = None
            if type(namespace) is dict and name in namespace:
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


def stored_or_none(obj, name):
    try:
        return stored(obj, name)
    except AttributeError:
        return None
