//! Pieces shared by the randomized stress tests: a seed mixer and leaf work whose cost and value
//! depend on the seed only.

/// SplitMix64's step: a bijection that scrambles every bit.
pub fn splitmix(z: u64) -> u64 {
    stealbench_schedulers::rng::mix(z.wrapping_add(0x9E37_79B9_7F4A_7C15))
}

/// Combines two children's values, order-sensitively.
pub fn mix(a: u64, b: u64) -> u64 {
    splitmix(a ^ b.rotate_left(17))
}

/// A leaf: up to 63 rounds of mixing.
pub fn leaf(seed: u64) -> u64 {
    let mut x = seed;
    for _ in 0..(seed % 64) {
        x = splitmix(x);
    }
    x
}
