//! A small seeded generator (splitmix64): each user draws from its own
//! stream, seeded from the run's seed and the user's global index, so a
//! run's choices (think times, a scenario's random picks) are the same
//! whichever worker, thread count or shard serves the user.

#[derive(Debug, Clone)]
pub struct Rng(u64);

const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;

fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Rng {
    pub fn for_user(seed: u64, user: u64) -> Rng {
        Rng(mix(seed.wrapping_add(GOLDEN)) ^ mix(user.wrapping_mul(GOLDEN).wrapping_add(1)))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(GOLDEN);
        mix(self.0)
    }

    /// Uniform in [0, 1).
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in [0, n); 0 when n is 0.
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// Uniform in [lo, hi], both included.
    pub fn between(&mut self, lo: i64, hi: i64) -> i64 {
        let span = (hi as i128 - lo as i128 + 1) as u128;
        if span > u128::from(u64::MAX) {
            return self.next_u64() as i64;
        }
        (lo as i128 + self.below(span as u64) as i128) as i64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reproducible_and_distinct_per_user() {
        let a: Vec<u64> = (0..4).map(|_| Rng::for_user(0, 1).next_u64()).collect();
        assert!(a.windows(2).all(|w| w[0] == w[1]));
        assert_ne!(
            Rng::for_user(0, 1).next_u64(),
            Rng::for_user(0, 2).next_u64()
        );
        assert_ne!(
            Rng::for_user(0, 1).next_u64(),
            Rng::for_user(1, 1).next_u64()
        );
    }

    #[test]
    fn ranges() {
        let mut r = Rng::for_user(7, 7);
        let mut seen = [0u32; 3];
        for _ in 0..3000 {
            let v = r.between(-1, 1);
            seen[(v + 1) as usize] += 1;
            let f = r.next_f64();
            assert!((0.0..1.0).contains(&f));
        }
        assert!(seen.iter().all(|&n| n > 900), "{seen:?}");
        assert_eq!(r.below(0), 0);
        let _ = r.between(i64::MIN, i64::MAX);
    }
}
