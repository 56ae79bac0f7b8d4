//! Pieces shared by the randomized stress tests: a seed mixer and leaf work whose cost and value
//! depend on the seed only.

/// SplitMix64's step: a bijection that scrambles every bit.
pub fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
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
