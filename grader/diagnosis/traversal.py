"""Where a backward pass's topological sort breaks: the statement, read from the sort as written.

When the trace shows nodes skipped, run twice or out of order, the loop that runs them
(``for node in reversed(topo)``) is seldom at fault: the sort that built the order is. Every
depth-first sort has the same roles, whatever its names and whether it recurses or keeps a
stack: the node being visited (the builder's parameter, or what the loop pops), the check
against the nodes already seen, the marking of the node as seen, the walk over its operands,
the recursive call (or push) for each, the append that puts it in the order, and the call
that starts the sort from the root. Each role is checked for the names it should use; a role
that is missing is blamed where it belongs (the statement now standing there). The sort is
only read, never run, and only when the evidence already says the pass went wrong.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass

from grader.diagnosis.syntax import Function, calls, last_statement, statement_of
from grader.exercise.names import CHILDREN_NAMES
from grader.submission.tree import walk


@dataclass(frozen=True)
class Scope:
    """Code that visits one node: a recursive builder (``node`` is its parameter) or a loop
    over a stack or queue (``node`` is what it pops)."""

    code: Function | ast.While
    node: str
    recursive: bool


def names_in(node: ast.AST | None) -> set[str]:
    """The variables an expression reads (``id(child)`` reads ``child``; a called name is not read)."""
    if node is None:
        return set()
    called = {id(n.func) for n in walk(node) if isinstance(n, ast.Call)}
    return {n.id for n in walk(node) if isinstance(n, ast.Name) and id(n) not in called}


def own_nodes(scope: ast.AST) -> Iterator[ast.AST]:
    """The nodes inside ``scope``, not descending into functions defined in it."""
    stack = list(ast.iter_child_nodes(scope))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(node))


def by_position(nodes: Iterator[ast.AST]) -> list:
    return sorted(nodes, key=lambda n: (n.lineno, n.col_offset))


def children_reads(scope: ast.AST) -> list[ast.Attribute]:
    """Every read of a node's operands (``v._prev``) inside ``scope``."""
    return by_position(n for n in own_nodes(scope) if isinstance(n, ast.Attribute) and n.attr in CHILDREN_NAMES
                       and isinstance(n.ctx, ast.Load))


def method_calls(scope: ast.AST, method: str) -> list[ast.Call]:
    return by_position(n for n in own_nodes(scope) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                       and n.func.attr == method)


def receiver(call: ast.Call) -> str | None:
    """The variable a method is called on: ``topo`` in ``topo.append(v)``."""
    value = call.func.value if isinstance(call.func, ast.Attribute) else None
    return value.id if isinstance(value, ast.Name) else None


def names_in_targets(loops: list[ast.For]) -> set[str]:
    return {n.id for loop in loops for n in walk(loop.target) if isinstance(n, ast.Name)}


def popped(loop: ast.While) -> str | None:
    """The node a stack or queue loop takes each time round: ``v`` in ``v = stack.pop()``."""
    for stmt in loop.body:
        if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call) and isinstance(
                stmt.value.func, ast.Attribute) and stmt.value.func.attr in ("pop", "popleft"):
            target = stmt.targets[0]
            first = target.elts[0] if isinstance(target, ast.Tuple) and target.elts else target
            return first.id if isinstance(first, ast.Name) else None
    return None


def started_from(function: Function, builder: Function, me: str | None) -> bool:
    """Whether ``function`` calls the nested ``builder`` on the root (``build_topo(self)``)."""
    return me is not None and any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == builder.name and n.args
        and me in names_in(n.args[0]) for n in own_nodes(function))


def scopes(function: Function, me: str | None) -> list[Scope]:
    """The code that visits nodes: a nested function that reads operands, or that the function
    starts on the root (its walk may be what is missing); a stack loop that reads operands."""
    found = []
    for node in walk(function):
        if isinstance(node, Function) and node is not function and (
                children_reads(node) or started_from(function, node, me)):
            args = node.args.posonlyargs + node.args.args
            if args:
                found.append(Scope(node, args[0].arg, True))
        elif isinstance(node, ast.While) and children_reads(node) and (name := popped(node)) is not None:
            found.append(Scope(node, name, False))
    return found


def block_of(root: ast.AST, stmt: ast.stmt) -> list[ast.stmt]:
    """The statement list that holds ``stmt``."""
    for node in walk(root):
        for name in ("body", "orelse"):
            block = getattr(node, name, None)
            if isinstance(block, list) and any(s is stmt for s in block):
                return block
    return [stmt]


def loops_over_children(scope: Scope) -> list[ast.For]:
    return [n for n in own_nodes(scope.code) if isinstance(n, ast.For) and any(
        isinstance(a, ast.Attribute) and a.attr in CHILDREN_NAMES for a in walk(n.iter))]


def within(outer: ast.AST, inner: ast.AST) -> bool:
    return any(n is inner for n in walk(outer))


# ---------------------------------------------------------------- the roles, one by one


def operand_walk(scope: Scope) -> ast.stmt | None:
    """Operands read of another node than the one being visited (``for child in self._prev``)."""
    for read in children_reads(scope.code):
        if isinstance(read.value, ast.Name) and read.value.id != scope.node:
            loops = [loop for loop in loops_over_children(scope) if within(loop.iter, read)]
            return loops[0] if loops else statement_of(scope.code, read)
    for loop in loops_over_children(scope):  # only some of them: ``v._prev[:-1]``, ``v._prev[0]``
        if any(isinstance(n, ast.Subscript) and isinstance(n.value, ast.Attribute) and n.value.attr in CHILDREN_NAMES
               for n in walk(loop.iter)):
            return loop
    return None


def recursion(scope: Scope) -> ast.stmt | None:
    """Each operand visited in turn: the builder called on the loop's operand (a missing call
    belongs in the loop's body)."""
    for made in own_nodes(scope.code):  # a comprehension over the operands yields each operand
        if isinstance(made, (ast.GeneratorExp, ast.ListComp, ast.SetComp)) and any(
                isinstance(a, ast.Attribute) and a.attr in CHILDREN_NAMES for a in walk(made.generators[0].iter)):
            inner = {n.id for n in walk(made.generators[0].target) if isinstance(n, ast.Name)}
            if not names_in(made.elt) & inner:
                return statement_of(scope.code, made)
    if not scope.recursive:
        loops = loops_over_children(scope)
        for loop in loops:  # each operand pushed, not another node
            inner = {n.id for n in walk(loop.target) if isinstance(n, ast.Name)}
            for call in method_calls(loop, "append"):
                if call.args and not names_in(call.args[0]) & inner:
                    return statement_of(loop, call)
        for call in method_calls(scope.code, "append"):  # outside them, the node popped is pushed or listed
            if call.args and not any(within(loop, call) for loop in loops) and \
                    not names_in(call.args[0]) & {scope.node, *names_in_targets(loops)}:
                return statement_of(scope.code, call)
        return None
    if not children_reads(scope.code):
        # No walk over the operands at all: it belongs before the node is put in the order.
        appends = method_calls(scope.code, "append")
        return statement_of(scope.code, appends[0]) if appends else scope.code.body[-1]
    name = scope.code.name
    for loop in loops_over_children(scope):
        inner = {n.id for n in walk(loop.target) if isinstance(n, ast.Name)}
        recursing = [n for n in walk(loop) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                     and n.func.id == name]
        if not recursing:
            return loop.body[0]
        for call in recursing:
            if not call.args or not names_in(call.args[0]) & inner:
                return statement_of(loop, call)
    return None


@dataclass(frozen=True)
class Guard:
    """``if v not in visited`` (or ``in``): which node it asks about, and of which collection."""

    test: ast.If
    element: set[str]
    seen: str
    negated: bool  # ``not in``: the body is where an unseen node goes


def guards(scope: Scope) -> list[Guard]:
    found = []
    for node in own_nodes(scope.code):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Compare) and len(node.test.ops) == 1 and \
                isinstance(node.test.ops[0], (ast.In, ast.NotIn)) and isinstance(node.test.comparators[0], ast.Name):
            found.append(Guard(node, names_in(node.test.left), node.test.comparators[0].id,
                               isinstance(node.test.ops[0], ast.NotIn)))
    return sorted(found, key=lambda g: (g.test.lineno, g.test.col_offset))


def branches(scope: Scope, guard: Guard) -> tuple[list[ast.stmt], list[ast.stmt]]:
    """The statements an unseen node reaches, and those a seen one reaches, past the guard."""
    body, orelse = guard.test.body, guard.test.orelse
    block = block_of(scope.code, guard.test)
    index = next(k for k, s in enumerate(block) if s is guard.test)
    after = block[index + 1:]
    leaves = bool(body) and isinstance(body[-1], (ast.Return, ast.Continue))
    if guard.negated:
        return body, orelse + (after if leaves else [])
    return orelse + (after if leaves else []), body


def marks(scope: Scope, seen: str) -> list[ast.Call]:
    return [c for c in method_calls(scope.code, "add") + method_calls(scope.code, "append") if receiver(c) == seen]


def guard_fault(scope: Scope, loops: list[ast.For]) -> ast.stmt | None:
    """The check for nodes already seen: about the node being visited (or, inside the walk,
    the operand), marking it in its unseen branch; a missing mark belongs first in that branch."""
    for guard in guards(scope):
        allowed = {scope.node} | {n.id for loop in loops if within(loop, guard.test)
                                  for n in walk(loop.target) if isinstance(n, ast.Name)}
        if not guard.element & allowed:
            return guard.test
        unseen, seen = branches(scope, guard)
        marked = marks(scope, guard.seen)
        if not marked:
            return unseen[0] if unseen else guard.test
        if any(within(s, call) for s in seen for call in marked) and not any(
                within(s, call) for s in unseen for call in marked):
            return guard.test  # the node is marked only when it was seen already: the test is turned round
        for call in marked:  # marking the node it asks about, or (checked before a visit) the one visited
            if call.args and not names_in(call.args[0]) & (guard.element | {scope.node}):
                return statement_of(scope.code, call)
        if all(call.args and ast.dump(call.args[0]) != ast.dump(guard.test.test.left) for call in marked) and \
                not names_in(guard.test.test.left) - {scope.node}:
            # It asks by one key and marks by another, so no node is ever found seen: the slip is the weaker key
            # (the node itself, then ``id(v)``, then the engine's own id, ``v.unique_id``).
            mark = marked[0]
            if key_strength(mark.args[0]) < key_strength(guard.test.test.left):
                return statement_of(scope.code, mark)
            return guard.test
    return None


def key_strength(key: ast.expr) -> int:
    """How a key tells nodes apart: 0 the node itself, 1 its ``id()``, 2 an attribute of it (``v.unique_id``)."""
    if isinstance(key, ast.Attribute):
        return 2
    return 1 if isinstance(key, ast.Call) else 0


def order_list(function: Function) -> str | None:
    """The list the nodes are run from: ``topo`` in ``for node in reversed(topo)``, one the function makes."""
    made = {n.id for n in walk(function) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    for loop in (n for n in walk(function) if isinstance(n, ast.For)):
        if any(isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute) and c.func.attr == "_backward"
               for c in walk(loop)):
            names = names_in(loop.iter)
            if len(names) == 1 and names <= made:
                return next(iter(names))
    return None


def append_fault(scope: Scope, order: str | None, loops: list[ast.For]) -> ast.stmt | None:
    """The node put in the order once its operands are: the append of the visited node (a missing
    one belongs at the end of the block that walks the operands)."""
    if order is None or not scope.recursive:
        return None
    appends = [c for c in method_calls(scope.code, "append") + method_calls(scope.code, "insert")
               if receiver(c) == order]
    if not appends:
        if loops:
            return last_statement(block_of(scope.code, loops[0])[-1])
        return last_statement(scope.code.body[-1])
    for call in appends:
        if call.args and scope.node not in names_in(call.args[-1]):
            return statement_of(scope.code, call)
    return None


def start_fault(function: Function, scope: Scope, me: str | None, order: str | None) -> ast.stmt | None:
    """The sort started from the root, before the nodes are run: the builder's first call (a builder
    never called is at fault only when the nodes are run from the order it would have made)."""
    if not scope.recursive:
        return None
    name = scope.code.name
    starts = [n for n in own_nodes(function) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
              and n.func.id == name and not within(scope.code, n)]
    if not starts and not any(receiver(c) == order for c in method_calls(scope.code, "append")):
        return None
    if not starts:
        block = block_of(function, scope.code)
        index = next(k for k, s in enumerate(block) if s is scope.code)
        return block[index + 1] if index + 1 < len(block) else scope.code
    call = starts[0]
    if me is not None and call.args and me not in names_in(call.args[0]):
        return statement_of(function, call)
    runs = [c for c in method_calls(function, "_backward") if not within(scope.code, c)]
    if runs and call.lineno > runs[0].lineno:
        return statement_of(function, call)  # started after the nodes were run
    return None


def run_fault(function: Function, step: str = "_backward") -> ast.stmt | None:
    """Each node of the order run: ``node._backward()`` (the engine's ``step``) on the loop's own variable; with
    no call at all, the call belongs in the loop over the order (or after the last statement)."""
    runs = calls(function, step)
    if not runs:
        loops = [s for s in function.body if isinstance(s, (ast.For, ast.While)) and not children_reads(s)]
        return loops[-1].body[0] if loops else function.body[-1]
    for loop in (n for n in walk(function) if isinstance(n, ast.For) and not children_reads(n)):
        target = {n.id for n in walk(loop.target) if isinstance(n, ast.Name)}
        for call in runs:
            if within(loop, call) and receiver(call) is not None and receiver(call) not in target:
                return statement_of(loop, call)
    return None


def sort_fault(function: Function, me: str | None, step: str = "_backward") -> ast.stmt | None:
    """The first statement of the sort (or of the run over its order, of nodes whose chain-rule step is ``step``)
    that breaks it, if one does."""
    return builder_fault(function, me) or run_fault(function, step)


def builder_fault(function: Function, me: str | None, recursive: bool = False) -> ast.stmt | None:
    """The first statement of the sort that ``function`` builds (a nested builder, a stack loop) that breaks it;
    ``recursive``: ``function`` is itself the builder (a top-level function that calls itself on the operands)."""
    order = order_list(function)
    found_scopes = scopes(function, me)
    if recursive and me is not None:
        found_scopes.insert(0, Scope(function, me, True))
    for scope in found_scopes:
        loops = loops_over_children(scope)
        found = (operand_walk(scope) or guard_fault(scope, loops) or recursion(scope)
                 or append_fault(scope, order, loops) or start_fault(function, scope, me, order))
        if found is not None:
            return found
    return None
