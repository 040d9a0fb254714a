"""What a submission may not import or reach: one statement of it, read by every side.

The child's audit hook (``guard``), the loader's stand-ins (``loading``), the
confinement's covered directories, and the grading process's static scan of the
source (``grader.submission.source``) all read these names from here.
This module imports nothing.
"""


# Libraries that compute gradients for the student: using one means the gradients are not the student's.
AUTOGRAD_LIBRARIES = frozenset({"torch", "jax", "jaxlib", "autograd", "sympy", "micrograd", "tensorflow", "tinygrad",
                                "mxnet"})
# micrograde's own packages as installed (the grader and the reference engine): never readable by a submission.
GRADER_PACKAGES = ("grader", "reference")
# The names micrograde's own code can be imported by.
GRADER_MODULES = frozenset({*GRADER_PACKAGES, "micrograde"})
FORBIDDEN_MODULES = AUTOGRAD_LIBRARIES | GRADER_MODULES
# Modules that reach past the interpreter: refused (not recorded as cheating), as no solution needs them.
UNSAFE_MODULES = frozenset({"ctypes", "_ctypes", "cffi", "_testcapi", "_testinternalcapi"})
