"""One subprocess: one entry's file loaded beside the course's, every target that file holds observed.

Prints one JSON object: for each target, ``status`` ("ok" or "fail"), the misconception ``code`` a failure shows
(several, joined by "/", where the behaviour cannot tell them apart), a few words ``why``, and ``fd`` (the
learner's own backward pass agrees with central differences of its own forward pass), where measured.
"""

from __future__ import annotations

import ast
import contextlib
import io
import json
import random
import sys
import tomllib
import traceback
from pathlib import Path

import numpy as np

from probing import loading, numeric_checks, parts, scalar_checks, tensor_checks
from probing.forms import KNOWN_FORMULAS, Engine
from probing.scalar_checks import Failed


def kind_of(name: str, target: dict, config: dict) -> str:
    if "kind" in target:
        return target["kind"]
    if name == "backward":
        return "backward"
    if name in config.get("ops", {}) or name in KNOWN_FORMULAS or name in scalar_checks.BINARY:
        return "op"
    raise SystemExit(f"target {name}: no kind")


def sources(path: Path) -> list[str]:
    """A .py file's source, or each code cell's of a notebook."""
    if path.suffix != ".ipynb":
        return [path.read_text(encoding="utf-8")]
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return [loading.neutralise("".join(c["source"])) for c in cells if c["cell_type"] == "code"]


def still_a_stub(path: Path, names: list[str]) -> bool:
    """Whether a function of the target's code is still the course's placeholder: nothing but ``pass`` (under a
    ``# TODO``) after its docstring. A stub that raises ``NotImplementedError`` is seen when it runs."""
    for source in sources(path):
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            methods = [(f"{node.name}.{c.name}", c) for c in node.body if isinstance(c, ast.FunctionDef)] \
                if isinstance(node, ast.ClassDef) else []
            chosen = [f for q, f in methods if q in names or node.name in names]
            if isinstance(node, ast.FunctionDef) and node.name in names:
                chosen.append(node)
            for function in chosen:
                body = [s for s in function.body
                        if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
                if all(isinstance(s, ast.Pass) for s in body):
                    return True
    return False


def observe(name: str, target: dict, config: dict, loaded: loading.Loaded, family: Path, stub: bool) -> dict:
    kind = kind_of(name, target, config)
    if stub:
        return {"status": "fail", "code": "not-implemented", "why": "still the course's pass"}
    engine = Engine(config, loaded.namespace) if config["scaffold"]["class"] in loaded.namespace else None
    random.seed(20261205)
    np.random.seed(20261205)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            if kind == "op":
                seen = scalar_checks.check_op(engine, name)
            elif kind == "backward":
                seen = scalar_checks.check_backward(engine)
            elif kind == "tensor":
                seen = tensor_checks.check_tensor_op(engine, target)
            elif kind == "numerical-derivative":
                seen = numeric_checks.check_numerical_derivative(loaded.namespace, target)
            elif kind == "gradient":
                seen = numeric_checks.check_gradient(loaded.namespace, target)
            elif kind == "expression":
                seen = numeric_checks.check_expression(engine, target)
            elif kind == "module":
                seen = parts.check_module(engine, target, loaded, family)
            elif kind == "optimizer":
                seen = parts.check_optimizer(engine, target)
            elif kind == "graph":  # a method of a graph's output: as an optimizer made of its leaves
                seen = parts.check_optimizer(engine, {"init": "sum(params)", "call": target.get("call") or (
                    "out.step(lr)" if target["method"] == "step" else "out.zero_grad()"), **target})
            elif kind == "training":
                seen = parts.check_training(engine, target, loaded, family)
            else:
                raise SystemExit(f"target {name}: unknown kind {kind}")
        return {"status": "ok", **seen}
    except Failed as failed:
        return {"status": "fail", "code": failed.code, "why": failed.why}
    except NotImplementedError as exc:
        return {"status": "fail", "code": "not-implemented", "why": str(exc)}
    except TypeError as exc:
        if "unhashable" not in str(exc):
            return crashed(exc)
        return {"status": "fail", "code": "value-equality", "why": str(exc)}
    except Exception as exc:  # noqa: BLE001 (whatever a learner's code raises is what the TA sees)
        return crashed(exc)


def crashed(exc: BaseException) -> dict:
    frames = [f"{Path(f.filename).name}:{f.lineno}" for f in traceback.extract_tb(exc.__traceback__)][-2:]
    return {"status": "fail", "code": "crash", "why": f"{type(exc).__name__}: {exc} ({', '.join(frames)})"}


def main(family: str, entry: str, file: str) -> None:
    family_dir = Path(family)
    config = tomllib.loads((family_dir / "micrograde.toml").read_text(encoding="utf-8"))
    expected = tomllib.loads((family_dir / "expected.toml").read_text(encoding="utf-8"))
    loaded = loading.load(family_dir, Path(entry), file)
    seen = {name: observe(name, config["targets"][name], config, loaded, family_dir,
                          still_a_stub(Path(entry) / file, expected["locate"][name]))
            for name in expected["files"][file]}
    sys.stdout.write(json.dumps({"targets": seen, "cells": loaded.cells}) + "\n")


if __name__ == "__main__":
    main(*sys.argv[1:4])
