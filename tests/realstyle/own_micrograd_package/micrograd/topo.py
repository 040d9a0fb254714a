def topological_order(root):
    """Every node reachable from root, each after all of the nodes it was computed from."""
    order, seen = [], set()

    def visit(node):
        if node not in seen:
            seen.add(node)
            for child in node._prev:
                visit(child)
            order.append(node)
    visit(root)
    return order
