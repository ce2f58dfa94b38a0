//! The simulator's random numbers: xoshiro256** seeded through SplitMix64.
//!
//! One scenario seed gives every element (a link's loss model, a flow's start
//! jitter, …) its own stream, derived from the seed and the element's name, so
//! that adding or removing an element never changes the numbers the others
//! draw. The generator is implemented here, not taken from a crate, so that
//! its output can never change under a dependency update: the same seed gives
//! the same simulation, byte for byte, forever.

/// SplitMix64 (Steele, Lea, Flood 2014): expands a seed into well-mixed words.
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// FNV-1a of a name, to derive an element's stream from the scenario seed.
fn fnv1a(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// A seeded xoshiro256** generator (Blackman and Vigna).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimRng {
    state: [u64; 4],
}

impl SimRng {
    /// A generator for `seed`.
    pub fn new(seed: u64) -> SimRng {
        let mut mix = seed;
        let state = [
            splitmix64(&mut mix),
            splitmix64(&mut mix),
            splitmix64(&mut mix),
            splitmix64(&mut mix),
        ];
        SimRng { state }
    }

    /// The stream of the element called `name` under the scenario seed `seed`:
    /// independent of every other element's.
    pub fn for_element(seed: u64, name: &str) -> SimRng {
        SimRng::new(seed ^ fnv1a(name).rotate_left(17))
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let [s0, s1, s2, s3] = self.state;
        let result = s1.wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = s1 << 17;
        let mut s = [s0, s1, s2 ^ s0, s3 ^ s1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        self.state = s;
        result
    }

    /// A uniform float in [0, 1) with 53 bits of precision.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// `true` with probability `p` (clamped to [0, 1]).
    pub fn bernoulli(&mut self, p: f64) -> bool {
        self.next_f64() < p.clamp(0.0, 1.0)
    }

    /// An exponentially distributed value with the given mean (inverse CDF).
    pub fn exponential(&mut self, mean: f64) -> f64 {
        // 1 - u is in (0, 1], so the logarithm is finite.
        -mean * (1.0 - self.next_f64()).ln()
    }

    /// A Pareto (type I) value with tail index `shape` (α) and the given
    /// `mean` (inverse CDF, x_m / U^(1/α) with x_m = mean·(α − 1)/α); needs
    /// α > 1 for the mean to exist. Heavy-tailed: for α ≤ 2 the variance
    /// is infinite.
    pub fn pareto(&mut self, shape: f64, mean: f64) -> f64 {
        let scale = mean * (shape - 1.0) / shape;
        // 1 - u is in (0, 1], so the power is finite.
        scale / (1.0 - self.next_f64()).powf(1.0 / shape)
    }

    /// A uniform integer in [0, n) without modulo bias (Lemire's method);
    /// 0 when n is 0.
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            return 0;
        }
        loop {
            let product = u128::from(self.next_u64()) * u128::from(n);
            let low = product as u64;
            if low >= n.wrapping_neg() % n {
                return (product >> 64) as u64;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_output_never_changes() {
        // xoshiro256** seeded by SplitMix64 from 0: pinned so that a change of
        // the generator (which would change every simulation) fails loudly.
        let mut rng = SimRng::new(0);
        let first: Vec<u64> = (0..3).map(|_| rng.next_u64()).collect();
        let mut again = SimRng::new(0);
        assert_eq!(first, (0..3).map(|_| again.next_u64()).collect::<Vec<_>>());
        assert_eq!(first[0], 0x99ec_5f36_cb75_f2b4);
    }

    #[test]
    fn elements_get_independent_streams() {
        let mut a = SimRng::for_element(1, "link:a-b");
        let mut b = SimRng::for_element(1, "flow:video");
        let mut a2 = SimRng::for_element(1, "link:a-b");
        let xs: Vec<u64> = (0..4).map(|_| a.next_u64()).collect();
        assert_eq!(xs, (0..4).map(|_| a2.next_u64()).collect::<Vec<_>>());
        assert_ne!(xs, (0..4).map(|_| b.next_u64()).collect::<Vec<_>>());
        assert_ne!(
            SimRng::for_element(2, "link:a-b"),
            SimRng::for_element(1, "link:a-b")
        );
    }

    #[test]
    fn distributions_have_the_right_means() {
        let mut rng = SimRng::new(42);
        let n = 200_000;
        let mean = (0..n).map(|_| rng.next_f64()).sum::<f64>() / n as f64;
        assert!((mean - 0.5).abs() < 0.005, "{mean}");
        let hits = (0..n).filter(|_| rng.bernoulli(0.02)).count() as f64 / n as f64;
        assert!((hits - 0.02).abs() < 0.002, "{hits}");
        let exp = (0..n).map(|_| rng.exponential(3.0)).sum::<f64>() / n as f64;
        assert!((exp - 3.0).abs() < 0.05, "{exp}");
        assert!((0..1000).all(|_| rng.below(7) < 7));
        assert_eq!(rng.below(0), 0);
    }

    #[test]
    fn pareto_has_its_mean_and_scale() {
        let mut rng = SimRng::new(3);
        let n = 400_000;
        let draws: Vec<f64> = (0..n).map(|_| rng.pareto(2.5, 10.0)).collect();
        let mean = draws.iter().sum::<f64>() / f64::from(n);
        // x_m = 10 · 1.5 / 2.5 = 6: nothing below it.
        assert!(draws.iter().all(|x| *x >= 6.0));
        assert!((mean - 10.0).abs() < 0.2, "mean {mean}");
    }
}
