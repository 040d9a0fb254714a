"""Graph helpers."""


def topo(root):
    """Every node reachable from root, each after all of its children."""
    order, seen = [], set()

    def visit(v):
        if id(v) in seen:
            return
        seen.add(id(v))
        for child in v._prev:
            visit(child)
        order.append(v)

    visit(root)
    return order
