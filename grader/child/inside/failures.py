"""How the child describes what went wrong in submission code, as plain data for the grading process."""



SUBMISSION_FILES: set = set()


class SubmissionError(Exception):
    """The submission did something that makes this observation impossible."""


class MissingMethod(Exception):
    """The class has no method for what is being graded."""


class InterfaceError(Exception):
    """The grader cannot make nodes of the student's class (see ``Interface``)."""


def error_report(exc, phase):
    """Describe an exception raised by submission code, with the student's line if any."""
    line = None
    where = None
    frames = [frame for frame in traceback_lines(exc) if frame[0] in SUBMISSION_FILES]
    if frames:
        # Where the student's code raised; for a load out of time, the top-level statement it was in.
        where, line, _ = frames[0] if type(exc).__name__ == "LoadTimeout" else frames[-1]
    message = str(exc)
    if len(message) > 300:
        message = message[:300] + "..."
    kind = {MissingMethod: "NotImplementedError"}.get(type(exc), type(exc).__name__)
    report = {"type": kind, "message": message, "phase": phase, "line": line, "file": where}
    if len(frames) > 1 and frames[-1][2] == "__init__":
        # A constructor that raised on what it was given: the student's call of it, one frame out.
        report["caller_file"], report["caller_line"], report["caller"] = frames[-2]
    if isinstance(exc, ModuleNotFoundError) and isinstance(exc.name, str):
        report["module"] = exc.name.split(".")[0]
    if isinstance(exc, RecursionError):
        report["depth"] = len(traceback_lines(exc))
    return report


def traceback_lines(exc):
    """The (file, line, function) of every frame ``exc`` passed through, outermost first: what
    ``traceback.extract_tb`` gives, without reading any source file."""
    found = []
    tb = exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        found.append((code.co_filename, tb.tb_lineno, code.co_name))
        tb = tb.tb_next
    return found
