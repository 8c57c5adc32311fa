"""The exact Mann-Whitney U test of the benchmark scripts (bench/*.sh).

Samples are a handful per side (5 to 10), so every split of the pooled
samples is enumerated; ties take mid-ranks. Used from a script's Python
as `from utest import utest, pbelow` (lib.sh puts bench/ on PYTHONPATH),
or from the shell as `python3 bench/utest.py below "A..." "B..."`.
"""
import itertools
import statistics
import sys


def _ranks(xs):
    pooled = sorted(xs)
    rank = {}
    for v in set(pooled):
        idx = [i + 1 for i, x in enumerate(pooled) if x == v]
        rank[v] = sum(idx) / len(idx)
    return [rank[x] for x in xs]


def utest(a, b):
    """Two-sided p-value that samples a and b come from one distribution."""
    ranks = _ranks(list(a) + list(b))
    n1 = len(a)
    mean = n1 * (len(a) + len(b) + 1) / 2
    dev = abs(sum(ranks[:n1]) - mean)
    sums = [sum(c) for c in itertools.combinations(ranks, n1)]
    return sum(1 for s in sums if abs(s - mean) >= dev - 1e-9) / len(sums)


def pbelow(a, b, factor=0.95):
    """One-sided p-value that a runs below factor times b."""
    ranks = _ranks(list(a) + [factor * x for x in b])
    n1 = len(a)
    obs = sum(ranks[:n1])
    sums = [sum(c) for c in itertools.combinations(ranks, n1)]
    return sum(1 for s in sums if s <= obs + 1e-9) / len(sums)


def ab_row(cells, name, a, b, sides=("A", "B")):
    """Prints the markdown row of an A/B comparison: cells, then the
    medians of the samples a and b (space-separated strings), b/a, the
    two-sided U test's p and the number of samples; and every sample, on
    stderr, under name."""
    a, b = [float(x) for x in a.split()], [float(x) for x in b.split()]
    ma, mb = statistics.median(a), statistics.median(b)
    print("| " + " | ".join(cells) + f" | {ma:,.0f} | {mb:,.0f} | {mb / ma:.3f} | {utest(a, b):.3g} | {len(a)} |")
    print(f"samples {name}: {sides[0]} {' '.join(f'{x:.0f}' for x in a)}; {sides[1]} {' '.join(f'{x:.0f}' for x in b)}", file=sys.stderr)


if __name__ == "__main__":
    # utest.py two|below "A samples" "B samples": prints the p-value.
    kind, a, b = sys.argv[1], [float(x) for x in sys.argv[2].split()], [float(x) for x in sys.argv[3].split()]
    print(f"{(utest if kind == 'two' else pbelow)(a, b):.3f}")
