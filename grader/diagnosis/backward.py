"""The statement at fault in a ``backward()``: the seed, the sort that made the order, the loop that runs the nodes,
the reset where a gradient should add up.

The order's own code (a topological sort's roles) is read by ``traversal``; code written for an engine of
another shape (a tape, a gradient table) by ``engines``. Read from the tree, never run.
"""

from __future__ import annotations

import ast

from grader.diagnosis import traversal
from grader.diagnosis.engines import ORDER_CODES, gradient_table, replaced_entry
from grader.diagnosis.syntax import (
    Function,
    calls,
    enclosing,
    grad_updates,
    parameter,
    statement_of,
    statements,
    top_level,
    walks_children,
)
from grader.exercise.words import MICROGRAD, Words
from grader.judging.judge import Verdict
from grader.submission.tree import walk


def every_node_repeated(verdict: Verdict | None) -> bool:
    """Whether, in a pass that ran nodes more than once, every node ran equally often: the
    loop over the order repeats it, rather than the order holding some node twice."""
    if verdict is None or not verdict.traces:
        return False
    for trace in verdict.traces:
        counts = {i: trace.count(i) for i in trace}
        if len(set(counts.values())) == 1 and next(iter(counts.values())) > 1:
            return True
    return False


def backward_statement(code: str, function: Function, verdict: Verdict | None,
                       words: Words = MICROGRAD) -> ast.AST | None:
    """For a diagnosis of ``backward()``: the statement at fault."""
    runs = calls(function, words.step)
    if not runs and words.local is not None:
        # An engine whose nodes keep (operand, local derivative) pairs: a node runs where the pass reads its pairs
        # (``for parent, local in v.parents``), outside the sort.
        runs = [loop.iter for loop in traversal.own_nodes(function) if isinstance(loop, ast.For)
                and any(isinstance(n, ast.Attribute) and n.attr == words.local for n in walk(loop.iter))]
    last_run = loop_or_call(function, runs[-1]) if runs else None
    me = parameter(function, 0)
    if not runs and words != MICROGRAD and code in ("missing-seed", *ORDER_CODES):
        # An engine whose pass runs no step micrograde can name (it walks a tape of its own): its first loop runs
        # the nodes, its header states their order, and the seed belongs before it.
        loop = next((s for s in function.body if isinstance(s, (ast.For, ast.While))), None)
        if loop is not None:
            return loop
    if code == "missing-seed":
        seeds = [s for s, o in grad_updates(function, words) if o == me and top_level(function, s) is s]
        # No seed at all: where the pass makes its own table of gradients (the seed is its first entry), else
        # before the first statement that runs the nodes.
        return seeds[0] if seeds else (gradient_table(function) or (top_level(function, runs[0]) if runs else None))
    if code == "wrong-order" and (keyed := sorted_by_key(function)) is not None:
        return keyed  # the nodes put in the order of something of theirs (a label, a value): no graph's order
    if code in ("wrong-order", "incomplete-traversal", "repeated-visit"):
        # Nodes skipped, repeated or out of order: the sort that made the order, if it is visibly broken.
        broken = traversal.sort_fault(function, me, words.step)
        if broken is not None:
            return broken
    if code == "wrong-order":
        early = appended_before_children(function)
        if early is not None:
            return early
        return loop_or_call(function, runs[0]) if runs else None
    if code == "incomplete-traversal":
        return last_run
    if code == "repeated-visit":
        if every_node_repeated(verdict):
            return last_run
        return first_of_builder(function) or last_run
    if code == "no-accumulation":
        resets = [s for s, o in grad_updates(function, words) if isinstance(s, ast.Assign) and o != me]
        return resets[0] if resets else replaced_entry(function) or last_run
    if code == "timeout":
        return next((s for s in statements(function) if isinstance(s, ast.While)), None)
    return None


def sorted_by_key(function: Function) -> ast.AST | None:
    """The statement of a backward pass that sorts by a key (``topo.sort(key=lambda v: v.label)``,
    ``sorted(nodes, key=...)``), if it has one."""
    for node in walk(function):
        if isinstance(node, ast.Call) and any(k.arg == "key" for k in node.keywords) and (
                (isinstance(node.func, ast.Attribute) and node.func.attr == "sort")
                or (isinstance(node.func, ast.Name) and node.func.id == "sorted")):
            return statement_of(function, node) or node
    return None


def loop_or_call(function: Function, call: ast.Call) -> ast.AST:
    """A ``_backward()`` call's ``for`` loop (its header states the order), or the call itself."""
    for node in reversed(enclosing(function, call)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.While)):
            break
        if isinstance(node, ast.For) and not any(n is call for n in walk(node.iter)):
            return node  # (a loop over what the call returns, the shares of a step, states no order)
    return statement_of(function, call) or call


def appended_before_children(function: Function) -> ast.stmt | None:
    """A node put in the order before its operands are visited (``topo.append(v)`` above the
    loop over ``v._prev`` or the ``stack.extend(v._prev)``)."""
    names = {n.name for n in walk(function) if isinstance(n, Function)}
    order = traversal.order_list(function)  # when known, only appends to it put nodes in the order
    for block in (n for n in walk(function) if hasattr(n, "body")):
        body = [s for s in getattr(block, "body", []) if isinstance(s, ast.stmt)]
        for k, stmt in enumerate(body):
            if (isinstance(stmt, ast.Expr) and calls(stmt, "append")
                    and (order is None or any(traversal.receiver(c) == order for c in calls(stmt, "append")))
                    and not walks_children(stmt, names)
                    and any(walks_children(later, names) for later in body[k + 1:])):
                return stmt
    return None


def first_of_builder(function: Function) -> ast.stmt | None:
    """The first statement of the code that walks operands (a nested function or a loop): where a
    check for nodes already visited belongs."""
    names = {n.name for n in walk(function) if isinstance(n, Function)}
    for node in walk(function):
        if isinstance(node, Function) and node is not function and walks_children(node, {node.name}):
            return node.body[0]
    for node in statements(function):
        if isinstance(node, ast.While) and walks_children(node, names):
            return node.body[0]
    return None
