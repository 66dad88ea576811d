//! The order in which paired rounds' benches take their turns.
//!
//! A sample runs warmer right after a sample of its own bench (its code, its data and its
//! threads still in the caches) than after another bench's. An order where some benches follow
//! themselves and others never do hands the first ones a head start that no pairing cancels:
//! the old order (forward, then reversed) let the first and the last bench of a round follow
//! themselves at every round's edge and the ones between never, which moved a middle bench's
//! ratio to the first bench by about a point (docs/src/numbers.md, "Turns in a balanced
//! order").
//!
//! The rounds here form a Williams design, the crossover trials' balanced Latin square: over a
//! cycle of rounds (n rounds for n benches, 2n where n is odd) every bench takes every place in
//! a round equally often, follows every other bench equally often within the rounds, and, from
//! three benches on, never follows itself, the rounds' edges counted. Two benches keep the
//! order they had (a b, b a): each follows itself once a cycle, alike.

/// The first round's order for `n` benches: 0, 1, n-1, 2, n-2, ...
fn first_round(n: usize) -> Vec<usize> {
    let (mut low, mut high) = (1, n.saturating_sub(1));
    let mut order = Vec::with_capacity(n);
    if n > 0 {
        order.push(0);
    }
    while order.len() < n {
        order.push(low);
        low += 1;
        if order.len() < n {
            order.push(high);
            high -= 1;
        }
    }
    order
}

/// How many rounds one cycle of the design takes for `n` benches.
pub fn cycle(n: usize) -> usize {
    if !n.is_multiple_of(2) && n > 1 {
        2 * n
    } else {
        n.max(1)
    }
}

/// The places `0..n` in the order they take their turns in round `round` (any round number:
/// the design repeats every [`cycle`] rounds).
pub fn round_order(n: usize, round: usize) -> Vec<usize> {
    let first = first_round(n);
    let shifted = |by: usize| -> Vec<usize> { first.iter().map(|&b| (b + by) % n).collect() };
    let r = round % cycle(n);
    if cycle(n) == n.max(1) {
        return shifted(r);
    }
    // Odd n: the square's rows, each followed by a mirrored row two rows on, so that no round
    // ends on the bench the next one starts with.
    if r.is_multiple_of(2) {
        shifted(r / 2)
    } else {
        let mut mirrored = shifted((r / 2 + 2) % n);
        mirrored.reverse();
        mirrored
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// One cycle's turns, end to end.
    fn turns(n: usize) -> Vec<usize> {
        (0..cycle(n)).flat_map(|r| round_order(n, r)).collect()
    }

    /// How often each bench follows each bench over a cycle, the cycle's end followed by its
    /// start as the next cycle does.
    fn followers(n: usize) -> BTreeMap<(usize, usize), usize> {
        let t = turns(n);
        let mut count = BTreeMap::new();
        for i in 0..t.len() {
            let before = t[(i + t.len() - 1) % t.len()];
            *count.entry((before, t[i])).or_insert(0) += 1;
        }
        count
    }

    #[test]
    fn every_round_is_each_bench_once() {
        for n in 1..=24 {
            for r in 0..3 * cycle(n) {
                let mut order = round_order(n, r);
                order.sort_unstable();
                assert_eq!(order, (0..n).collect::<Vec<_>>(), "n {n}, round {r}");
            }
        }
    }

    /// The rounds of a cycle as the Williams design builds them (written out here from the
    /// construction, not from the code), and the same rounds again in the next cycles.
    #[test]
    fn the_design_repeats_every_cycle() {
        // Even n: the first row 0, 1, n-1, 2, ...; each next row adds 1 to every place.
        let four = [[0, 1, 3, 2], [1, 2, 0, 3], [2, 3, 1, 0], [3, 0, 2, 1]];
        // Odd n: each row of that square followed by a row two rows on, read backwards.
        let three = [
            [0, 1, 2],
            [1, 0, 2],
            [1, 2, 0],
            [2, 1, 0],
            [2, 0, 1],
            [0, 2, 1],
        ];
        for r in 0..12 {
            assert_eq!(round_order(4, r), four[r % 4], "n 4, round {r}");
        }
        for r in 0..18 {
            assert_eq!(round_order(3, r), three[r % 6], "n 3, round {r}");
        }
        assert_eq!(round_order(1, 5), [0]);
        assert_eq!(round_order(2, 3), [1, 0]);
    }

    #[test]
    fn every_bench_takes_every_place_equally_often() {
        for n in 1..=24 {
            let mut at = vec![vec![0usize; n]; n];
            for r in 0..cycle(n) {
                for (place, b) in round_order(n, r).into_iter().enumerate() {
                    at[b][place] += 1;
                }
            }
            let want = cycle(n) / n;
            assert!(at.iter().flatten().all(|&c| c == want), "n {n}: {at:?}");
        }
    }

    #[test]
    fn from_three_benches_on_none_follows_itself() {
        for n in 3..=24 {
            let f = followers(n);
            for b in 0..n {
                assert_eq!(f.get(&(b, b)), None, "n {n}: bench {b} follows itself");
            }
        }
        // Two benches: a b, b a. Each follows itself once a cycle, alike.
        let f = followers(2);
        assert_eq!(
            (f[&(0, 0)], f[&(1, 1)], f[&(0, 1)], f[&(1, 0)]),
            (1, 1, 1, 1)
        );
    }

    #[test]
    fn every_bench_follows_the_others_alike() {
        for n in 2..=24 {
            let f = followers(n);
            // Within the rounds, every ordered pair of benches is next to each other equally
            // often; the rounds' edges add one more for each bench, from a bench as far from it
            // for every bench, so every bench sees the same counts from the others.
            let within: BTreeMap<(usize, usize), usize> = (0..cycle(n))
                .flat_map(|r| {
                    let o = round_order(n, r);
                    (1..n).map(move |i| (o[i - 1], o[i])).collect::<Vec<_>>()
                })
                .fold(BTreeMap::new(), |mut m, p| {
                    *m.entry(p).or_insert(0) += 1;
                    m
                });
            let want = cycle(n) / n;
            for a in 0..n {
                for b in (0..n).filter(|&b| b != a) {
                    assert_eq!(within.get(&(a, b)), Some(&want), "n {n}: {a} then {b}");
                }
            }
            let shape = |b: usize| -> Vec<usize> {
                let mut s: Vec<usize> = (0..n)
                    .filter(|&a| a != b || n == 2)
                    .map(|a| f.get(&(a, b)).copied().unwrap_or(0))
                    .collect();
                s.sort_unstable();
                s
            };
            for b in 1..n {
                assert_eq!(shape(b), shape(0), "n {n}: bench {b}'s predecessors");
            }
        }
    }
}
