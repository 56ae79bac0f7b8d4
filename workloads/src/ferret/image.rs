//! Synthetic images for `ferret`: seeded scene descriptions (a colour gradient with coloured
//! blobs), their rendering, near-duplicate queries, and the PPM "files" the load stage decodes.
//!
//! PARSEC's ferret searches the Corel image collection; we have no image files, so every image
//! is a [`Scene`] drawn from a seeded [`SplitMix64`]: a linear gradient between two colours
//! plus 3 to 8 ellipses or rectangles of random colours. A query is a perturbed copy of a
//! database scene (blobs moved by up to 2 pixels, colours changed by up to ±12), so every
//! query has a true near-duplicate in the database, like ferret's query images.

use crate::rng::SplitMix64;

/// Width and height of every image, in pixels.
pub const SIDE: usize = 64;

/// An RGB image, row-major, 3 bytes per pixel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Image {
    /// Width in pixels.
    pub width: usize,
    /// Height in pixels.
    pub height: usize,
    /// `width * height * 3` bytes: R, G, B of each pixel, rows top to bottom.
    pub rgb: Vec<u8>,
}

impl Image {
    /// The R, G, B bytes of pixel `p` (`p = y * width + x`).
    #[inline]
    pub fn pixel(&self, p: usize) -> [u8; 3] {
        [self.rgb[3 * p], self.rgb[3 * p + 1], self.rgb[3 * p + 2]]
    }

    /// The image as a binary PPM file (`P6`, maxval 255): what the load stage reads.
    pub fn to_ppm(&self) -> Vec<u8> {
        let mut out = format!("P6\n{} {}\n255\n", self.width, self.height).into_bytes();
        out.extend_from_slice(&self.rgb);
        out
    }
}

/// Decodes a binary PPM (`P6`, maxval 255, single-space or newline separated header without
/// comments): ferret's load stage. `Err` says what is malformed.
pub fn load_ppm(file: &[u8]) -> Result<Image, String> {
    let mut fields = Vec::with_capacity(4);
    let mut pos = 0;
    while fields.len() < 4 {
        while pos < file.len() && file[pos].is_ascii_whitespace() {
            pos += 1;
        }
        let start = pos;
        while pos < file.len() && !file[pos].is_ascii_whitespace() {
            pos += 1;
        }
        if start == pos {
            return Err("PPM header ends early".into());
        }
        fields.push(&file[start..pos]);
    }
    // Exactly one whitespace byte separates the header from the pixels.
    pos += 1;
    if fields[0] != b"P6" {
        return Err("not a binary PPM (P6)".into());
    }
    let num = |f: &[u8]| -> Result<usize, String> {
        std::str::from_utf8(f)
            .ok()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| "bad number in PPM header".to_string())
    };
    let (width, height, maxval) = (num(fields[1])?, num(fields[2])?, num(fields[3])?);
    if maxval != 255 {
        return Err(format!("PPM maxval {maxval}, expected 255"));
    }
    let len = width * height * 3;
    if file.len() < pos || file.len() - pos != len {
        return Err(format!(
            "PPM has {} pixel bytes, expected {len}",
            file.len() - pos.min(file.len())
        ));
    }
    Ok(Image {
        width,
        height,
        rgb: file[pos..].to_vec(),
    })
}

/// A filled shape of one colour.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Blob {
    /// Centre, in pixels.
    pub cx: f64,
    /// Centre, in pixels.
    pub cy: f64,
    /// Half-width, in pixels.
    pub rx: f64,
    /// Half-height, in pixels.
    pub ry: f64,
    /// Ellipse (`true`) or axis-aligned rectangle (`false`).
    pub ellipse: bool,
    /// Its colour.
    pub color: [u8; 3],
}

/// The description of one synthetic image.
#[derive(Debug, Clone, PartialEq)]
pub struct Scene {
    /// Gradient colour at one end.
    pub from: [u8; 3],
    /// Gradient colour at the other end.
    pub to: [u8; 3],
    /// Gradient direction (not normalised; components in `[-1, 1]`).
    pub dir: [f64; 2],
    /// Blobs, painted in order over the gradient.
    pub blobs: Vec<Blob>,
}

fn color(r: &mut SplitMix64) -> [u8; 3] {
    [r.below(256) as u8, r.below(256) as u8, r.below(256) as u8]
}

/// A uniform value in `[lo, hi)`, from 53 random bits.
fn uniform(r: &mut SplitMix64, lo: f64, hi: f64) -> f64 {
    lo + (hi - lo) * ((r.next_u64() >> 11) as f64 / (1u64 << 53) as f64)
}

impl Scene {
    /// A random scene.
    pub fn random(r: &mut SplitMix64) -> Scene {
        let from = color(r);
        let to = color(r);
        let dir = [uniform(r, -1.0, 1.0), uniform(r, -1.0, 1.0)];
        let n = 3 + r.below(6) as usize;
        let side = SIDE as f64;
        let blobs = (0..n)
            .map(|_| Blob {
                cx: uniform(r, 0.0, side),
                cy: uniform(r, 0.0, side),
                rx: uniform(r, 4.0, 16.0),
                ry: uniform(r, 4.0, 16.0),
                ellipse: r.below(2) == 0,
                color: color(r),
            })
            .collect();
        Scene {
            from,
            to,
            dir,
            blobs,
        }
    }

    /// A near duplicate: every blob moved by up to 2 pixels each way, every colour changed by
    /// up to ±12 per channel.
    pub fn perturbed(&self, r: &mut SplitMix64) -> Scene {
        let jitter = |r: &mut SplitMix64, c: [u8; 3]| -> [u8; 3] {
            c.map(|v| (i64::from(v) + r.below(25) as i64 - 12).clamp(0, 255) as u8)
        };
        let from = jitter(r, self.from);
        let to = jitter(r, self.to);
        let blobs = self
            .blobs
            .iter()
            .map(|b| Blob {
                cx: b.cx + uniform(r, -2.0, 2.0),
                cy: b.cy + uniform(r, -2.0, 2.0),
                color: jitter(r, b.color),
                ..*b
            })
            .collect();
        Scene {
            from,
            to,
            dir: self.dir,
            blobs,
        }
    }

    /// Renders the scene as a `SIDE × SIDE` image.
    pub fn render(&self) -> Image {
        let mut rgb = Vec::with_capacity(SIDE * SIDE * 3);
        let side = SIDE as f64;
        for y in 0..SIDE {
            for x in 0..SIDE {
                let (px, py) = (x as f64 + 0.5, y as f64 + 0.5);
                let t = ((px / side - 0.5) * self.dir[0] + (py / side - 0.5) * self.dir[1] + 0.5)
                    .clamp(0.0, 1.0);
                let mut c = [0u8; 3];
                for (k, ck) in c.iter_mut().enumerate() {
                    let (a, b) = (f64::from(self.from[k]), f64::from(self.to[k]));
                    *ck = (a + (b - a) * t).round() as u8;
                }
                for b in &self.blobs {
                    let (dx, dy) = ((px - b.cx) / b.rx, (py - b.cy) / b.ry);
                    let inside = if b.ellipse {
                        dx * dx + dy * dy <= 1.0
                    } else {
                        dx.abs() <= 1.0 && dy.abs() <= 1.0
                    };
                    if inside {
                        c = b.color;
                    }
                }
                rgb.extend_from_slice(&c);
            }
        }
        Image {
            width: SIDE,
            height: SIDE,
            rgb,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ppm_round_trip_and_errors() {
        let img = Scene::random(&mut SplitMix64::new(3)).render();
        assert_eq!(img.rgb.len(), SIDE * SIDE * 3);
        let file = img.to_ppm();
        assert_eq!(load_ppm(&file).unwrap(), img);
        assert!(load_ppm(&file[..file.len() - 1]).is_err());
        assert!(load_ppm(b"P5\n1 1\n255\n\0").is_err());
        assert!(load_ppm(b"P6\n1 1\n").is_err());
        assert!(load_ppm(b"P6\n1 1\n15\nabc").is_err());
        assert_eq!(load_ppm(b"P6 1 1 255\nabc").unwrap().rgb, b"abc".to_vec());
    }

    #[test]
    fn rendering_paints_blobs_over_the_gradient() {
        let scene = Scene {
            from: [0, 0, 0],
            to: [200, 100, 0],
            dir: [1.0, 0.0],
            blobs: vec![Blob {
                cx: 10.0,
                cy: 10.0,
                rx: 3.0,
                ry: 3.0,
                ellipse: false,
                color: [1, 2, 3],
            }],
        };
        let img = scene.render();
        assert_eq!(img.pixel(10 * SIDE + 10), [1, 2, 3]);
        // Left edge: t = 0.5/64; right edge: t = 63.5/64.
        assert_eq!(img.pixel(40 * SIDE), [2, 1, 0]);
        assert_eq!(img.pixel(40 * SIDE + 63), [198, 99, 0]);
    }

    #[test]
    fn scenes_are_deterministic() {
        let a = Scene::random(&mut SplitMix64::new(9));
        let b = Scene::random(&mut SplitMix64::new(9));
        assert_eq!(a, b);
        let p = a.perturbed(&mut SplitMix64::new(1));
        assert_eq!(p.blobs.len(), a.blobs.len());
        assert!(
            p.blobs
                .iter()
                .zip(&a.blobs)
                .all(|(p, a)| (p.cx - a.cx).abs() <= 2.0)
        );
    }
}
