//! The segmentation stage of `ferret`: colour quantisation, then connected regions.
//!
//! Every pixel's colour is quantised to 4 levels per channel (64 classes); the image is split
//! into 4-connected regions of one class (flood fill). The [`MAX_SEGMENTS`]` - 1` largest
//! regions (ties: the one whose first pixel comes first in raster order) become segments
//! `0, 1, ...` in that order; all smaller regions together form one last "rest" segment.
//! PARSEC's ferret segments with a graph-based method; this one is cheaper but has the same
//! role: a small set of regions whose features form the image's signature.

use super::image::Image;

/// At most this many segments per image (the EMD signatures are at most this long).
pub const MAX_SEGMENTS: usize = 16;

/// The segment of every pixel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segmentation {
    /// Number of segments (`1..=MAX_SEGMENTS` for a non-empty image).
    pub count: usize,
    /// Segment index of each pixel, row-major.
    pub labels: Vec<u8>,
}

/// The colour class of a pixel: 2 bits per channel.
#[inline]
fn class(rgb: [u8; 3]) -> u8 {
    ((rgb[0] >> 6) << 4) | ((rgb[1] >> 6) << 2) | (rgb[2] >> 6)
}

/// Segments `img`.
pub fn segment(img: &Image) -> Segmentation {
    let (w, h) = (img.width, img.height);
    let n = w * h;
    let classes: Vec<u8> = (0..n).map(|p| class(img.pixel(p))).collect();
    const UNSEEN: u32 = u32::MAX;
    let mut region = vec![UNSEEN; n];
    // (area, first pixel) of each region, in discovery (raster) order.
    let mut regions: Vec<(u32, u32)> = Vec::new();
    let mut stack: Vec<u32> = Vec::new();
    for start in 0..n {
        if region[start] != UNSEEN {
            continue;
        }
        let id = regions.len() as u32;
        let c = classes[start];
        region[start] = id;
        stack.push(start as u32);
        let mut area = 0u32;
        while let Some(p) = stack.pop() {
            area += 1;
            let p = p as usize;
            let (x, y) = (p % w, p / w);
            let mut visit = |q: usize| {
                if region[q] == UNSEEN && classes[q] == c {
                    region[q] = id;
                    stack.push(q as u32);
                }
            };
            if x > 0 {
                visit(p - 1);
            }
            if x + 1 < w {
                visit(p + 1);
            }
            if y > 0 {
                visit(p - w);
            }
            if y + 1 < h {
                visit(p + w);
            }
        }
        regions.push((area, start as u32));
    }
    // Largest first; equal areas in raster order of their first pixel.
    let mut order: Vec<u32> = (0..regions.len() as u32).collect();
    order.sort_unstable_by_key(|&r| {
        (
            std::cmp::Reverse(regions[r as usize].0),
            regions[r as usize].1,
        )
    });
    let kept = if regions.len() <= MAX_SEGMENTS {
        regions.len()
    } else {
        MAX_SEGMENTS - 1
    };
    let rest = kept as u8;
    let mut segment_of = vec![rest; regions.len()];
    for (s, &r) in order.iter().take(kept).enumerate() {
        segment_of[r as usize] = s as u8;
    }
    let count = if regions.len() <= MAX_SEGMENTS {
        regions.len()
    } else {
        MAX_SEGMENTS
    };
    Segmentation {
        count,
        labels: region.iter().map(|&r| segment_of[r as usize]).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn image(w: usize, h: usize, pixels: &[[u8; 3]]) -> Image {
        Image {
            width: w,
            height: h,
            rgb: pixels.iter().flatten().copied().collect(),
        }
    }

    #[test]
    fn regions_are_connected_and_ordered_by_area() {
        const A: [u8; 3] = [255, 0, 0];
        // Another red in the same colour class as A: they join.
        const A2: [u8; 3] = [200, 10, 60];
        const B: [u8; 3] = [0, 0, 255];
        // A A2 B / B B B / B A B: one B region of 6, a red region of 2, a lone red pixel.
        let img = image(3, 3, &[A, A2, B, B, B, B, B, A, B]);
        let seg = segment(&img);
        assert_eq!(seg.count, 3);
        assert_eq!(seg.labels, vec![1, 1, 0, 0, 0, 0, 0, 2, 0]);
        // A diagonal neighbour is not connected.
        let img = image(2, 2, &[A, B, B, A]);
        let seg = segment(&img);
        assert_eq!(seg.count, 4);
        assert_eq!(seg.labels, vec![0, 1, 2, 3]);
    }

    #[test]
    fn small_regions_merge_into_the_rest_segment() {
        // A 1 × 40 strip of alternating colours: 40 one-pixel regions.
        let px: Vec<[u8; 3]> = (0..40)
            .map(|i| {
                if i % 2 == 0 {
                    [0, 0, 0]
                } else {
                    [255, 255, 255]
                }
            })
            .collect();
        let seg = segment(&image(40, 1, &px));
        assert_eq!(seg.count, MAX_SEGMENTS);
        let want: Vec<u8> = (0..40)
            .map(|i| {
                if i < MAX_SEGMENTS - 1 {
                    i as u8
                } else {
                    (MAX_SEGMENTS - 1) as u8
                }
            })
            .collect();
        assert_eq!(seg.labels, want);
    }

    #[test]
    fn matches_a_union_find_reference_on_random_images() {
        let mut r = crate::rng::SplitMix64::new(5);
        for _ in 0..20 {
            let (w, h) = (1 + r.below(9) as usize, 1 + r.below(9) as usize);
            let px: Vec<[u8; 3]> = (0..w * h)
                .map(|_| [(r.below(2) * 200) as u8, 0, 0])
                .collect();
            let img = image(w, h, &px);
            let seg = segment(&img);
            // Reference: two pixels share a region iff they are connected; with at most
            // MAX_SEGMENTS - 1 regions, labels equal iff same region.
            let mut parent: Vec<usize> = (0..w * h).collect();
            fn find(p: &mut [usize], x: usize) -> usize {
                if p[x] == x {
                    x
                } else {
                    let r = find(p, p[x]);
                    p[x] = r;
                    r
                }
            }
            for y in 0..h {
                for x in 0..w {
                    let a = y * w + x;
                    for b in [(x + 1 < w).then(|| a + 1), (y + 1 < h).then(|| a + w)]
                        .into_iter()
                        .flatten()
                    {
                        if px[a] == px[b] {
                            let (ra, rb) = (find(&mut parent, a), find(&mut parent, b));
                            parent[ra] = rb;
                        }
                    }
                }
            }
            let roots: Vec<usize> = (0..w * h).map(|x| find(&mut parent, x)).collect();
            let mut distinct = roots.clone();
            distinct.sort_unstable();
            distinct.dedup();
            if distinct.len() < MAX_SEGMENTS {
                assert_eq!(seg.count, distinct.len());
                for a in 0..w * h {
                    for b in 0..w * h {
                        assert_eq!(roots[a] == roots[b], seg.labels[a] == seg.labels[b]);
                    }
                }
            }
        }
    }
}
