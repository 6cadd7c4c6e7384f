//! A small seeded pseudo-random generator and Fisher–Yates shuffle.
//!
//! [`Rng`] is xoshiro256** (Blackman & Vigna, 2018) seeded through
//! splitmix64, so a `u64` seed gives the same stream of integers on every
//! platform and every build: the lab's randomized run orders and bootstrap
//! intervals are reproducible from the seed recorded with an experiment.
//! The reference script re-implements both in Python integers and the unit
//! tests check the exact outputs.

/// One step of splitmix64: advances `state` and returns the next output.
pub fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// xoshiro256**, seeded from a `u64` through splitmix64.
///
/// Integer draws ([`Rng::next_u64`], [`Rng::below`]) and [`Rng::next_f64`]
/// are bit-identical everywhere. [`Rng::normal`] goes through the
/// platform's `ln`/`sqrt`/`cos`, so its last bits may differ between
/// platforms' math libraries; the lab uses it only in tests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    /// A generator whose whole stream is fixed by `seed`.
    pub fn new(seed: u64) -> Self {
        let mut state = seed;
        let s = [
            splitmix64(&mut state),
            splitmix64(&mut state),
            splitmix64(&mut state),
            splitmix64(&mut state),
        ];
        Rng { s }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// A uniform integer in `0..n` (Lemire's multiply-shift with rejection,
    /// so without bias). Returns 0 when `n` is 0.
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            return 0;
        }
        let threshold = n.wrapping_neg() % n;
        loop {
            let m = u128::from(self.next_u64()) * u128::from(n);
            if (m as u64) >= threshold {
                return (m >> 64) as u64;
            }
        }
    }

    /// A uniform index in `0..n`.
    pub fn index(&mut self, n: usize) -> usize {
        self.below(n as u64) as usize
    }

    /// A uniform float in [0, 1) with 53 random bits.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// A standard normal draw (Box–Muller on two [`Rng::next_f64`] draws).
    pub fn normal(&mut self) -> f64 {
        let u1 = 1.0 - self.next_f64(); // (0, 1]
        let u2 = self.next_f64();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }
}

/// Shuffles `xs` in place, uniformly (Fisher–Yates, from the last element
/// down: element i swaps with a uniform j in 0..=i).
pub fn shuffle<T>(xs: &mut [T], rng: &mut Rng) {
    for i in (1..xs.len()).rev() {
        let j = rng.index(i + 1);
        xs.swap(i, j);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::reference::reference;

    fn u64s(v: &serde_json::Value) -> Vec<u64> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap())
            .collect()
    }

    #[test]
    fn splitmix64_matches_reference_vector() {
        let r = &reference()["rng"];
        let mut state = r["splitmix64_seed"].as_u64().unwrap();
        let got: Vec<u64> = (0..5).map(|_| splitmix64(&mut state)).collect();
        assert_eq!(got, u64s(&r["splitmix64"]));
    }

    #[test]
    fn xoshiro_below_and_shuffle_match_reference() {
        let r = &reference()["rng"];
        for case in r["xoshiro"].as_array().unwrap() {
            let mut rng = Rng::new(case["seed"].as_u64().unwrap());
            let got: Vec<u64> = (0..6).map(|_| rng.next_u64()).collect();
            assert_eq!(got, u64s(&case["u64"]), "seed {}", case["seed"]);
        }
        for case in r["below"].as_array().unwrap() {
            let mut rng = Rng::new(case["seed"].as_u64().unwrap());
            let n = case["n"].as_u64().unwrap();
            let got: Vec<u64> = (0..8).map(|_| rng.below(n)).collect();
            assert_eq!(got, u64s(&case["draws"]), "below({n})");
        }
        for case in r["shuffle"].as_array().unwrap() {
            let mut rng = Rng::new(case["seed"].as_u64().unwrap());
            let n = case["n"].as_u64().unwrap();
            let mut xs: Vec<u64> = (0..n).collect();
            shuffle(&mut xs, &mut rng);
            assert_eq!(xs, u64s(&case["order"]), "shuffle of {n}");
        }
    }

    #[test]
    fn shuffle_is_uniform_enough() {
        // Each of the 6 orders of 3 items about 1/6 of 60 000 shuffles.
        let mut rng = Rng::new(9);
        let mut counts = std::collections::HashMap::new();
        for _ in 0..60_000 {
            let mut xs = [0, 1, 2];
            shuffle(&mut xs, &mut rng);
            *counts.entry(xs).or_insert(0u32) += 1;
        }
        assert_eq!(counts.len(), 6);
        for (order, c) in counts {
            assert!((9_500..10_500).contains(&c), "{order:?}: {c}");
        }
    }

    #[test]
    fn floats_and_normals_are_sane() {
        let mut rng = Rng::new(3);
        let (mut sum, mut sum2) = (0.0, 0.0);
        for _ in 0..20_000 {
            let u = rng.next_f64();
            assert!((0.0..1.0).contains(&u));
            let z = rng.normal();
            sum += z;
            sum2 += z * z;
        }
        assert!((sum / 20_000.0).abs() < 0.03);
        assert!((sum2 / 20_000.0 - 1.0).abs() < 0.05);
    }
}
