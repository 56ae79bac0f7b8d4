//! The feature-extraction stage of `ferret`: a weighted signature of segment features (for the
//! EMD ranking) and a fixed-length descriptor (for the LSH index).
//!
//! * The **signature** has one entry per segment: its weight is its area in pixels (an
//!   integer, so the EMD is a balanced integer transportation problem between two images of
//!   the same size), its feature the segment's mean colour (R, G, B in `[0, 1]`) and centroid
//!   (x, y in `[0, 1]`, scaled by [`POSITION_WEIGHT`]).
//! * The **descriptor** is the mean colour of each of the 4 × 4 tiles of the image
//!   ([`DESCRIPTOR_LEN`] = 48 values in `[0, 1]`), a coarse layout-and-colour vector that
//!   near-duplicate images share.

use super::image::Image;
use super::segment::{MAX_SEGMENTS, Segmentation};

/// Dimensions of a segment's feature vector.
pub const FEATURE_LEN: usize = 5;

/// How much a segment's position counts relative to its colour in the ground distance.
pub const POSITION_WEIGHT: f64 = 0.5;

/// Tiles per side of the descriptor grid.
pub const GRID: usize = 4;

/// Length of the descriptor: a mean colour per tile.
pub const DESCRIPTOR_LEN: usize = GRID * GRID * 3;

/// A descriptor for the LSH index.
pub type Descriptor = [f64; DESCRIPTOR_LEN];

/// A weighted set of segment features (an EMD signature).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Signature {
    /// Number of entries used (`1..=MAX_SEGMENTS`).
    pub len: usize,
    /// Weight (area in pixels) of each entry; entries `len..` are 0.
    pub weights: [u32; MAX_SEGMENTS],
    /// Feature of each entry; entries `len..` are 0.
    pub features: [[f64; FEATURE_LEN]; MAX_SEGMENTS],
}

impl Signature {
    /// A signature from `(weight, feature)` pairs (at most [`MAX_SEGMENTS`]).
    pub fn new(entries: &[(u32, [f64; FEATURE_LEN])]) -> Signature {
        assert!(entries.len() <= MAX_SEGMENTS, "too many signature entries");
        let mut s = Signature {
            len: entries.len(),
            weights: [0; MAX_SEGMENTS],
            features: [[0.0; FEATURE_LEN]; MAX_SEGMENTS],
        };
        for (i, &(w, f)) in entries.iter().enumerate() {
            s.weights[i] = w;
            s.features[i] = f;
        }
        s
    }

    /// The sum of the weights.
    pub fn total_weight(&self) -> u64 {
        self.weights[..self.len].iter().map(|&w| u64::from(w)).sum()
    }
}

/// The ground distance between two segment features: Euclidean.
#[inline]
pub fn ground_distance(a: &[f64; FEATURE_LEN], b: &[f64; FEATURE_LEN]) -> f64 {
    let mut s = 0.0;
    for k in 0..FEATURE_LEN {
        let d = a[k] - b[k];
        s += d * d;
    }
    s.sqrt()
}

/// Extracts the signature (from the segmentation) and the descriptor (from the tiles).
pub fn extract(img: &Image, seg: &Segmentation) -> (Signature, Descriptor) {
    let (w, h) = (img.width, img.height);
    let mut area = [0u64; MAX_SEGMENTS];
    let mut sums = [[0u64; FEATURE_LEN]; MAX_SEGMENTS];
    let mut tile_sums = [[0u64; 3]; GRID * GRID];
    let mut tile_area = [0u64; GRID * GRID];
    for y in 0..h {
        let ty = y * GRID / h;
        for x in 0..w {
            let p = y * w + x;
            let [r, g, b] = img.pixel(p);
            let s = usize::from(seg.labels[p]);
            area[s] += 1;
            let acc = &mut sums[s];
            acc[0] += u64::from(r);
            acc[1] += u64::from(g);
            acc[2] += u64::from(b);
            acc[3] += x as u64;
            acc[4] += y as u64;
            let t = ty * GRID + x * GRID / w;
            tile_area[t] += 1;
            tile_sums[t][0] += u64::from(r);
            tile_sums[t][1] += u64::from(g);
            tile_sums[t][2] += u64::from(b);
        }
    }
    let mut sig = Signature {
        len: seg.count,
        weights: [0; MAX_SEGMENTS],
        features: [[0.0; FEATURE_LEN]; MAX_SEGMENTS],
    };
    for s in 0..seg.count {
        let a = area[s] as f64;
        sig.weights[s] = area[s] as u32;
        let f = &mut sig.features[s];
        for k in 0..3 {
            f[k] = sums[s][k] as f64 / a / 255.0;
        }
        // Pixel centres, normalised to [0, 1].
        f[3] = POSITION_WEIGHT * (sums[s][3] as f64 / a + 0.5) / w as f64;
        f[4] = POSITION_WEIGHT * (sums[s][4] as f64 / a + 0.5) / h as f64;
    }
    let mut desc = [0.0; DESCRIPTOR_LEN];
    for t in 0..GRID * GRID {
        for k in 0..3 {
            desc[3 * t + k] = tile_sums[t][k] as f64 / tile_area[t].max(1) as f64 / 255.0;
        }
    }
    (sig, desc)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ferret::segment::segment;

    #[test]
    fn features_of_a_two_segment_image() {
        // 4 × 4: left half black, right half white.
        let rgb: Vec<u8> = (0..16)
            .flat_map(|p| if p % 4 < 2 { [0u8; 3] } else { [255u8; 3] })
            .collect();
        let img = Image {
            width: 4,
            height: 4,
            rgb,
        };
        let seg = segment(&img);
        let (sig, desc) = extract(&img, &seg);
        assert_eq!(sig.len, 2);
        assert_eq!(&sig.weights[..2], &[8, 8]);
        assert_eq!(sig.total_weight(), 16);
        // Segment 0 is the black half (equal areas: first pixel first).
        assert_eq!(
            sig.features[0],
            [0.0, 0.0, 0.0, 0.5 * 1.0 / 4.0, 0.5 * 2.0 / 4.0]
        );
        assert_eq!(
            sig.features[1],
            [1.0, 1.0, 1.0, 0.5 * 3.0 / 4.0, 0.5 * 2.0 / 4.0]
        );
        // Tiles are single pixels here: columns 0, 1 black, 2, 3 white.
        for t in 0..16 {
            let want = if t % 4 < 2 { 0.0 } else { 1.0 };
            assert_eq!(&desc[3 * t..3 * t + 3], &[want; 3]);
        }
    }

    #[test]
    fn ground_distance_is_euclidean() {
        let a = [0.0, 3.0, 0.0, 0.0, 0.0];
        let b = [4.0, 0.0, 0.0, 0.0, 0.0];
        assert_eq!(ground_distance(&a, &b), 5.0);
        assert_eq!(ground_distance(&a, &a), 0.0);
    }
}
