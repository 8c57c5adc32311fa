"""The exact Mann-Whitney U test of the benchmark scripts (bench/*.sh).

The distribution of the rank sum is exact: the number of splits of the
pooled samples with each sum, counted by dynamic programming over doubled
mid-ranks (integers), so 16 samples a side take milliseconds where
enumerating the 600 million splits would not end. Ties take mid-ranks. Used from a script's Python
as `from utest import utest, pbelow` (lib.sh puts bench/ on PYTHONPATH),
or from the shell as `python3 bench/utest.py below "A..." "B..."`.
"""
import statistics
import sys


def _ranks(xs):
    pooled = sorted(xs)
    rank = {}
    for v in set(pooled):
        idx = [i + 1 for i, x in enumerate(pooled) if x == v]
        rank[v] = sum(idx) / len(idx)
    return [rank[x] for x in xs]


def _sum_counts(ranks, n1):
    """How many ways n1 of ranks sum to each total: {2 * sum: count}."""
    # ways[k] maps a doubled sum of k ranks to its number of subsets.
    ways = [dict() for _ in range(n1 + 1)]
    ways[0][0] = 1
    for r in ranks:
        r2 = round(2 * r)
        for k in range(n1, 0, -1):
            for s, c in ways[k - 1].items():
                ways[k][s + r2] = ways[k].get(s + r2, 0) + c
    return ways[n1]


def utest(a, b):
    """Two-sided p-value that samples a and b come from one distribution."""
    ranks = _ranks(list(a) + list(b))
    n1 = len(a)
    mean2 = n1 * (len(a) + len(b) + 1)  # twice the rank sum's mean
    dev2 = abs(round(2 * sum(ranks[:n1])) - mean2)
    counts = _sum_counts(ranks, n1)
    hits = sum(c for s, c in counts.items() if abs(s - mean2) >= dev2)
    return hits / sum(counts.values())


def pbelow(a, b, factor=0.95):
    """One-sided p-value that a runs below factor times b."""
    ranks = _ranks(list(a) + [factor * x for x in b])
    n1 = len(a)
    obs2 = round(2 * sum(ranks[:n1]))
    counts = _sum_counts(ranks, n1)
    return sum(c for s, c in counts.items() if s <= obs2) / sum(counts.values())


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
