"""A tiny interpreter for loop nests: the statement instances a nest executes (guards respected)."""
from __future__ import annotations

from collections import Counter

from hlsgen.loopir import Loop


def instances(nest, limit: int = 2_000_000) -> Counter:
    """Multiset of (statement text before substitution, concrete access indices) over the iteration space."""
    out: Counter = Counter()
    executed = [0]

    def run(nodes, env):
        for n in nodes:
            if isinstance(n, Loop):
                for i in range(n.extent):
                    inner = {**env, n.name: i}
                    if all(e.evaluate(inner) < bound for e, bound in n.guards):
                        run(n.body, inner)
            else:
                key = tuple((a.buffer, tuple(e.evaluate(env) for e in a.index)) for a in n.reads() + n.writes())
                out[key] += 1
                executed[0] += 1
                if executed[0] > limit:
                    raise RuntimeError("nest too large to enumerate")

    run(nest.body, {})
    return out
