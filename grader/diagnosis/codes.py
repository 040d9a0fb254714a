"""Every diagnosis code micrograde gives, stated once: what it applies to, what it means, what the
student reads, and the concept behind it.

The rules (``rules``), the blame (``blame``), the wording (``feedback``), the
docs' table of diagnoses and the mutation corpus all name codes from here; a
test checks that the docs' table and every code the grader can produce are in
this registry, so a code can never reach a student without its words. Adding a
diagnosis is one entry here, a rule that gives it, and a mutant that shows it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Code:
    name: str
    targets: str  # what it applies to, as the docs' table says: "any op", "backward", "submission"...
    meaning: str  # the docs' one-line meaning, in Markdown
    what: str  # what is wrong, as the student reads it: may name {method}, {error}, {detail}
    concept: str  # the idea to go back to; never the code that fixes it


@dataclass(frozen=True)
class Unusable:
    """An error after which no further check of a target can tell anything."""

    code: str  # the diagnosis it is
    skipped: str  # what the checks it skipped say: "not run: <skipped>"


CODES: dict[str, Code] = {code.name: code for code in (
    Code('not-implemented', 'any',
         meaning='the stub still raises `NotImplementedError`, or the class has no such method; the message says '
                 'what it has instead (`def pow` for `__pow__`, a def indented into another method, the other ops '
                 'it has); or the code is still the course\'s placeholder (a `pass` under `# TODO` or '
                 '`# YOUR CODE HERE`), at that line',
         what='{method} is not written yet: it still raises NotImplementedError, or is missing.',
         concept='Fill in the stub; its docstring says what it must do.'),
    Code('crash', 'any',
         meaning='raises another exception in normal use (the message names it)',
         what='{method} raised an exception: {error}.',
         concept='Run the smallest failing case yourself and read the traceback.'),
    Code('timeout', 'any',
         meaning='ran past its time limit (`--timeout`, 10 s per target by default)',
         what='{method} did not finish in time: {detail}.',
         concept='Look for a loop that never ends or a recursion that never stops.'),
    Code('missing-module', 'any',
         meaning='the graded code uses a module that is not installed where micrograde runs (named); an import '
                 'that graded code never uses only gives a warning; a constructor that uses it '
                 '(`np.float64(data)`) makes it the verdict of every target that makes nodes',
         what='{method} uses a module that is not installed where micrograde runs: {error}.',
         concept='Graded code may use only the standard library (math, random) and the modules your course '
                 'allows: write the formula with math instead, and keep other libraries for plots and demos.'),
    Code('wrong-forward', 'any op',
         meaning="the result's `.data` is wrong",
         what="{method} computes the wrong value: the result's .data is wrong.",
         concept="The forward value is ordinary arithmetic on the operands' .data."),
    Code('wrong-local-grad', 'any op',
         meaning='the local derivative is wrong (includes forgetting `out.grad`)',
         what='{method} passes the wrong gradient to its operands, even when every node is used once.',
         concept="Chain rule: each operand's gradient grows by (this op's local derivative with respect to that "
                 'operand) times out.grad. Check the derivative rule, and that it is multiplied by out.grad.'),
    Code('grad-overwrite', 'any op',
         meaning='`=` instead of `+=`: wrong only when a node is used more than once',
         what='{method} gets gradients right when each node is used once, but wrong when a node is used twice: one '
              'contribution replaces the other.',
         concept='A node used twice must receive both contributions: gradients accumulate (+=), they are never '
                 'assigned (=).'),
    Code('constant-operand', 'two-operand ops',
         meaning='fails or is wrong when the other operand is a plain number',
         what='{method} goes wrong when the other operand is a plain number, not a Value.',
         concept='Turn a plain number into a Value before you use its .data; check the reflected operators too (2 '
                 '+ a, 3 * a).'),
    Code('missing-child', 'any op',
         meaning="the result's children (`_prev`) leave out an operand, so no backward pass reaches it",
         what="{method} leaves an operand out of the result's children (_prev), so a backward pass never reaches "
              'it and nothing below it gets a gradient.',
         concept="The result's children are every operand it was computed from: the graph is found through them, "
                 'and backward() visits only what it can find.'),
    Code('number-child', 'any op',
         meaning="the result's children (`_prev`) hold a plain number (the exponent), which is no node: a "
                 'backward pass that walks the children fails on it',
         what="{method} keeps a plain number among the result's children (_prev): it is no node, so a backward "
              'pass that walks the children (yours, the course\'s) fails on it (it has no _prev and no _backward).',
         concept="The children are the nodes the result was computed from; a constant such as an exponent is "
                 'used in the local derivative, but it is not a node of the graph.'),
    Code('detached-backward', 'any op',
         meaning="the op's `_backward` is not attached to the node it returns (never attached, or attached to an "
                 'operand)',
         what='{method} does not attach its _backward to the node it returns, so the result never passes its '
              "gradient on as its own (or another node's is replaced).",
         concept='Each op defines how its result passes gradient to its operands, and that function belongs to the '
                 'result node: the one the op returns.'),
    Code('relu-at-zero', 'relu',
         meaning='wrong exactly at 0 (a value other than 0, a gradient outside 0..1, or an error); any gradient '
                 'between 0 and 1 there is right',
         what='{method} goes wrong at exactly 0: its value must be 0 and its gradient a number between 0 and 1 '
              '(micrograd uses 0).',
         concept='relu has a kink at 0: there, take the gradient of one side (1 or 0) consistently, without '
                 'dividing by the input.'),
    Code('value-equality', 'any',
         meaning='`__eq__`/`__hash__` on `data` make two distinct nodes with the same value one (in a set), or '
                 'make the class unhashable; the case shows two such nodes',
         what='{method} goes wrong because two distinct nodes with the same value are taken for one.',
         concept='Nodes are distinct objects even when their values are equal: compare and hash them by identity '
                 '(leave __eq__ and __hash__ out), or keep visited nodes by id().'),
    Code('computed-grad', 'ops, backward',
         meaning='`.grad` or `.data` is a property, descriptor or `__getattribute__` that computes when read: '
                 'those targets score 0',
         what="{method} is not graded: Value's .grad (or .data) is computed each time it is read instead of being "
              'a stored number, so reading it says nothing about the backward pass.',
         concept='Keep .data and .grad as plain attributes that hold numbers; the backward pass is what fills in '
                 '.grad, one _backward at a time.'),
    Code('missing-seed', 'backward',
         meaning="the root's gradient is not 1 when its own `_backward` runs: never set, set to something else, or "
                 'set only after the pass',
         what="The output's own gradient is not 1 when the backward pass starts from it, so the wrong amount (or "
              'nothing) flows back.',
         concept='The derivative of the output with respect to itself is 1: the backward pass starts there, so it '
                 'is set before any _backward runs.'),
    Code('incomplete-traversal', 'backward',
         meaning="some nodes' `_backward` never runs",
         what='backward() never runs the _backward of some nodes, so their operands get no gradient.',
         concept='The graph is every node reachable through _prev, at any depth; backward() must reach all of them.'),
    Code('wrong-order', 'backward',
         meaning='every node runs once, but not in reverse topological order',
         what='backward() runs every node once, but some node passes its gradient on before every node that uses '
              'it has added its share.',
         concept='Reverse topological order: list a node only after all of its _prev are listed, then call '
                 '_backward from the output back to the inputs.'),
    Code('repeated-visit', 'backward',
         meaning="some node's `_backward` runs more than once",
         what='backward() runs the _backward of some node more than once, so its gradient is passed on twice.',
         concept='Keep track of the nodes already visited, so each is listed (and run) once.'),
    Code('no-accumulation', 'backward',
         meaning='`backward()` replaces gradient it should add to (e.g. resets grads inside `backward`)',
         what='backward() replaces gradient it should only add to: a second backward() on a graph that shares '
              'leaves (or the pass itself) wipes out gradient already there.',
         concept="backward() only adds to .grad; resetting gradients is the training loop's job (zero_grad), "
                 'before the next backward pass.'),
    Code('missing-zero-grad', 'train_step',
         meaning='gradients are not reset between steps, so they pile up',
         what='Gradients are not reset between steps: every step after the first moves the parameters by the '
              'gradients of the steps before it too, piled up on top of its own.',
         concept="Gradients accumulate, so each step must start from zero: reset every parameter's gradient before "
                 'the backward pass.'),
    Code('zero-grad-misplaced', 'train_step',
         meaning='gradients are reset after `backward()` and before the update',
         what='The parameters do not move: the gradients are gone by the time the update uses them.',
         concept='Reset gradients before the backward pass (or after the update), never between the backward pass '
                 'and the update.'),
    Code('wrong-update', 'train_step',
         meaning='the update has the wrong sign or size, or changes `p.grad` instead of `p.data`',
         what='The parameters move in the wrong direction or by the wrong amount (or the gradients are changed '
              'instead of the parameters).',
         concept="Gradient descent moves each parameter's data against its gradient, by lr times the gradient."),
    Code('missing-backward', 'train_step',
         meaning="the loss's backward pass is never run, so no parameter moves",
         what='The parameters do not move: the backward pass is never run, so every gradient stays 0.',
         concept='Gradients exist only after a backward pass from the loss: run it after resetting the gradients '
                 'and before the update.'),
    Code('missing-update', 'train_step',
         meaning='nothing updates the parameters after the backward pass',
         what='The parameters do not move: nothing changes them after the backward pass.',
         concept="A training step ends by moving every parameter's data against its gradient."),
    Code('wrong-loss', 'train_step',
         meaning='the returned value is not the loss before the update, or the loss itself is wrong (then the '
                 'update, which follows it, is not blamed too)',
         what='{method} returns the wrong loss: it should be {detail}.',
         concept='Keep the loss of the forward pass and return its .data, computed before any parameter changes.'),
    Code('wrong-derivative', 'a gradient',
         meaning="the gradient the learner derived is not the course's function's: the message names the partial "
                 'derivatives that are wrong at the smallest point',
         what="{method} does not return the gradient of the course's function: some partial derivatives are wrong.",
         concept='Differentiate term by term: each partial derivative treats the other inputs as constants, and '
                 'every term that holds the input contributes (product and chain rules).'),
    Code('pasted-constants', 'a gradient',
         meaning="the numbers do not follow the course's function: a function returns the same ones at every "
                 'point, a value the same ones for every function (or is never estimated from it): numbers pasted '
                 'from the expected output, not a gradient',
         what='{method} gives the same numbers wherever it is asked (at another point, or for another function), '
              'but the gradient changes: the numbers are constants, not computed.',
         concept='A gradient is a function of the point: compute each partial derivative from the inputs, as a '
                 'formula of them, or estimate it by evaluating the function itself.'),
    Code('finite-difference', 'a gradient',
         meaning="the numbers come near the course's function's derivatives but are exact nowhere a derivation is "
                 'told from an estimate: a finite difference of the function, not a derivation',
         what='{method} gives numbers close to the derivatives but not equal to them where a derivation is exact '
              '(the smallest case shows it): it estimates them from the function instead of deriving them.',
         concept='A derivation gives each partial derivative as a formula of the inputs (power, product and chain '
                 'rules), exact at every point; a difference of the function only comes near it.'),
    Code('wrong-shape', 'a tensor op',
         meaning='the result has the wrong shape (an axis kept or lost, shapes not broadcast, a product of the wrong '
                 'sides): the message names both shapes',
         what='{method} returns a result of the wrong shape.',
         concept="A result's shape follows from its operands': broadcasting lines shapes up from the right and "
                 'stretches sizes of 1, a reduction along an axis removes that axis, a matrix product of (n, k) '
                 'and (k, m) is (n, m), and reshape keeps every entry in order.'),
    Code('wrong-grad-shape', 'a tensor op',
         meaning="an operand's own gradient (a Tensor that keeps one) does not have the operand's shape: the message "
                 'names both shapes',
         what="{method} gives an operand a gradient whose shape is not the operand's.",
         concept='A gradient has the shape of what it is the gradient of: each entry of an operand gets one number, '
                 "so what was spread over more entries (a broadcast, a reduction's result, a matrix product) is "
                 "brought back to the operand's shape."),
    Code('detached-result', 'a tensor op',
         meaning="the result's entries have the right values but are new Values made from `.data` (or plain "
                 'numbers), so no gradient reaches the operands',
         what="{method} returns entries with the right values, but they are not computed from the operands' Values, "
              'so no gradient reaches the operands.',
         concept="A tensor op builds its result from the operands' Values with Value operations (or keeps the very "
                 'same Values, as reshape does): the graph they make is the only way back for the gradient.'),
    Code('wrong-element', 'tensor max',
         meaning='`max` returns the right values but passes the gradient to an entry that is not the largest',
         what='{method} returns the largest values, but passes the gradient to another entry than the one it picked.',
         concept='The maximum is the chosen entry itself: only that entry gets the gradient, every other entry '
                 'of its row gets none.'),
    Code('broadcast-not-summed', 'a tensor op',
         meaning='gradients are right for operands of one shape, wrong where one is broadcast: its entries do not '
                 'get the sum of the gradients of every place they were used',
         what='{method} gets gradients right when the operands have one shape, but an operand it broadcasts does '
              'not get the gradient of every place its entries were used.',
         concept='An entry broadcast along an axis is used once at every position of that axis: its gradient is '
                 'the sum over all of them (the same Value used each time adds them up by itself; copies of it '
                 'do not pass anything back).'),
    Code('one-sided-difference', 'a numerical gradient or derivative',
         meaning='a one-sided difference `(f(x+h) - f(x)) / h` where the symmetric one `(f(x+h) - f(x-h)) / 2h` '
                 'was asked (the message names the derivatives and the step)',
         what='{method} estimates with a one-sided difference, where the symmetric one was asked.',
         concept='A symmetric difference compares f on both sides of the point: for the same h its error is about '
                 'h**2/6 times the third derivative, instead of h/2 times the second.'),
    Code('wrong-step', 'a numerical gradient or derivative',
         meaning="the difference quotient is the one asked for, but its step h is so large (or so small) that the "
                 "estimate misses the course's tolerance; for a function, one that does not use the h it is given",
         what='{method} takes the right difference, but with a step h that makes the estimate miss the derivative.',
         concept="A difference quotient's error depends on its step: a large h shows the function's curvature "
                 '(about h/2 times the second derivative, one-sided), a tiny one the rounding of its values (about '
                 '1e-16 |f| / h); take the h you are given, or one in between.'),
    Code('wrong-difference-quotient', 'a numerical gradient or derivative',
         meaning='the difference of f is divided by the wrong length (`f(x+h) - f(x-h)` over h, not 2h), or its '
                 'sign is reversed',
         what='{method} divides the difference of f by the wrong length: the estimate is off by a constant factor.',
         concept='A difference quotient is the change in f divided by the distance between the two points it '
                 'compares, taken in the same direction.'),
    Code('detached-data', 'a whole expression, a module',
         meaning='the value is right but some input or parameter gets no gradient from it: part of the computation '
                 'goes through `.data`, a plain number, so no gradient flows along that path',
         what='{method} gives the right value, but part of the computation goes through .data, a plain number: no '
              'gradient flows back along that path to the inputs or parameters it came from.',
         concept='Keep every step of the computation on Values, with their operations: .data is a number the graph '
                 'cannot see, so the backward pass cannot reach what it came from; read .data only for numbers '
                 'that need no gradient.'),
    Code('wrong-expression', 'a whole expression',
         meaning="the computation's value is wrong although every op computes right from its operands: the "
                 "learner's function computes something else",
         what="{method} makes the course's computation give the wrong value, although every op computes right from "
              'its operands.',
         concept='Write the computation from its definition, step by step with the Value operations, and check its '
                 'value by hand on the smallest case.'),
    Code('nested-parameters', 'a module',
         meaning='`parameters()` returns lists of Values (one per neuron or layer) instead of one flat list',
         what='{method}.parameters() returns lists nested in its list (one per neuron or layer), not one flat list '
              'of Values.',
         concept='parameters() is one flat list of every Value the module learns: gather the parameters of its '
                 'parts into one list, so that a training loop can update each p.data.'),
    Code('wrong-parameters', 'a module',
         meaning="`parameters()` leaves out, repeats or adds Values: not exactly the module's weights and biases, "
                 'once each (any consistent order is right)',
         what="{method}.parameters() does not hold exactly the module's weights and biases, each once.",
         concept='Every weight and every bias the module uses is a parameter, listed once: those are the Values a '
                 'training loop updates.'),
    Code('missing-bias', 'a neuron, a layer, an MLP, a linear layer',
         meaning='the bias is a parameter but is never added in the forward pass',
         what='{method} never adds its bias: its output is the weighted sum of the inputs alone.',
         concept='A neuron computes w . x + b: the bias is added to the weighted sum, before any nonlinearity, '
                 'and learned like the weights.'),
    Code('wrong-activation', 'a neuron, a layer, an MLP',
         meaning="the wrong nonlinearity: another function than the course's, one where none belongs (an MLP's last "
                 'layer, a neuron asked to be linear), or none where one belongs',
         what='{method} applies the wrong nonlinearity: another function, or one where none belongs, or none where '
              'one does.',
         concept="A nonlinear neuron applies the course's nonlinearity to w . x + b, a linear one applies nothing; "
                 "an MLP's last layer is linear."),
    Code('wrong-output', 'a module',
         meaning="the module's outputs (or their gradients) are not the reference's for the same parameters and "
                 'inputs, in a way no named mistake explains',
         what='{method} computes the wrong output for the same parameters and inputs.',
         concept='Compute what the module is defined to compute from its parameters and inputs, with Value '
                 'operations only, so that the output is right and gradient flows back to every Value.'),
    Code('grad-not-reset', 'a module, an optimizer',
         meaning="`zero_grad()` leaves some parameter's gradient other than 0",
         what="{method}: after zero_grad(), some parameter's gradient is not 0.",
         concept='zero_grad() sets the gradient of every parameter back to 0 before the next backward pass, '
                 'because backward() only adds to .grad.'),
    Code('load-error', 'submission',
         meaning='the submission cannot be read or run (syntax error, with the Python version it needs when that '
                 'is the cause; exception at import)',
         what='The submission could not be loaded: {error}.',
         concept='The file must run on its own without errors: try `python yourfile.py`.'),
    Code('load-timeout', 'submission',
         meaning='code at the top level ran past the load limit: the message names the statement and the `if '
                 '__name__ == "__main__":` guard (or, in a notebook, the `skip-grading` tag)',
         what='Loading the submission took longer than its time limit: {detail}.',
         concept='Code at the top level runs every time the file is loaded: keep only definitions there.'),
    Code('interface', 'submission',
         meaning='no node can be made of the class (no `Value(x)` for a number `x`, operands in no known '
                 'attribute): said once, saying what was tried',
         what='micrograde cannot use your code the way the exercise defines it: {detail}.',
         concept='micrograde makes nodes as Value(x) for a number x and finds their operands in _prev (or '
                 '_children, prev, parents); train_step gets a model with model(x), model.parameters() and '
                 'model.zero_grad(), whose parameters have only .data and .grad. An engine shaped otherwise (its '
                 'leaves made another way, its operands, gradient or steps kept elsewhere) is graded as its course '
                 'describes it in micrograde.toml: [engine] leaf, operands, grad, step.'),
    Code('nested-definition', 'submission',
         meaning='graded methods defined inside another method by an indentation slip: said once, at the first of '
                 'them',
         what='Methods are missing from the class: {detail}.',
         concept="A method's def sits at the class's indentation level, not inside another method: move these defs "
                 'one level out.'),
    Code('forbidden-import', 'submission',
         meaning='an autograd library, the grader or the reference engine is imported or read: the score is 0',
         what="The submission uses an autograd library or the grader's own code ({detail}), so its gradients "
              'cannot be its own: the score is 0.',
         concept='Write the gradients yourself: that is the exercise.'),
)}

# By the type of the error the child reported (the types the child gives them: ``grader.child.inside``).
UNUSABLE: dict[str, Unusable] = {
    "NotImplementedError": Unusable("not-implemented", "not implemented"),
    "ComputedAttribute": Unusable("computed-grad", "gradients are computed when read"),
    "InterfaceError": Unusable("interface", "no nodes can be made"),
}
