//! Tests of `hw`: kernels against direct definitions, every variant against the serial
//! version, the check, and the tracking against the video's true motion.

use super::steps::*;
use super::*;
use crate::InputOptions;
use crate::rng::SplitMix64;
use crate::testing;

fn random(n: usize, seed: u64) -> Vec<f32> {
    let mut r = SplitMix64::new(seed);
    (0..n)
        .map(|_| (r.next_u64() >> 40) as f32 / (1u64 << 24) as f32)
        .collect()
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * (1.0 + b.abs())
}

#[test]
fn convolution_is_the_full_2d_convolution() {
    let (sn, tn) = (7, 3);
    let (w, t) = (random(sn * sn, 1), random(tn * tn, 2));
    let cn = sn + tn - 1;
    let mut out = vec![0f32; cn * cn];
    convolve_full(&w, sn, &t, tn, &mut out);
    for i in 0..cn {
        for j in 0..cn {
            let mut s = 0f64;
            for a in 0..tn {
                for b in 0..tn {
                    let (y, x) = (i as i64 - a as i64, j as i64 - b as i64);
                    if (0..sn as i64).contains(&y) && (0..sn as i64).contains(&x) {
                        s += f64::from(t[a * tn + b]) * f64::from(w[y as usize * sn + x as usize]);
                    }
                }
            }
            assert!(close(f64::from(out[i * cn + j]), s, 1e-5), "{i} {j}");
        }
    }
}

#[test]
fn local_sums_are_window_sums() {
    let (sn, tn) = (6, 4);
    let src = random(sn * sn, 3);
    let cn = sn + tn - 1;
    let got = local_sums(&src, sn, tn);
    for i in 0..cn {
        for j in 0..cn {
            // The window of output (i, j) covers source rows i−tn+1..=i, columns j−tn+1..=j.
            let mut s = 0f64;
            for y in (i as i64 - tn as i64 + 1)..=i as i64 {
                for x in (j as i64 - tn as i64 + 1)..=j as i64 {
                    if (0..sn as i64).contains(&y) && (0..sn as i64).contains(&x) {
                        s += f64::from(src[y as usize * sn + x as usize]);
                    }
                }
            }
            assert!(close(f64::from(got[i * cn + j]), s, 1e-5), "{i} {j}");
        }
    }
}

#[test]
fn rotation_squares_and_statistics() {
    let t = random(9, 4);
    let (mut rot, mut sqr) = (vec![0f32; 9], vec![0f32; 9]);
    rotate_and_square(&t, &mut rot, &mut sqr);
    for r in 0..3 {
        for c in 0..3 {
            assert_eq!(rot[r * 3 + c], t[(2 - r) * 3 + (2 - c)]);
            assert_eq!(sqr[r * 3 + c], t[r * 3 + c] * t[r * 3 + c]);
        }
    }
    let st = template_stats(&t, &sqr);
    let mean = t.iter().map(|&x| f64::from(x)).sum::<f64>() / 9.0;
    let var = t
        .iter()
        .map(|&x| (f64::from(x) - mean).powi(2))
        .sum::<f64>()
        / 9.0;
    assert!(close(f64::from(st.sum), mean * 9.0, 1e-6));
    assert!(close(f64::from(st.denom), 8f64.sqrt() * var.sqrt(), 1e-4));
}

#[test]
fn mask_box_and_argmax() {
    let (cn, m) = (9, 4); // offset 2: box rows i−1..=i+2
    let mut mask = vec![0f32; cn * cn];
    mask[4 * cn + 4] = 1.0;
    let (mut tmp, mut boxes) = (vec![0f32; cn * cn], vec![0f32; cn * cn]);
    mask_box(&mask, cn, m, &mut tmp, &mut boxes);
    for i in 0..cn {
        for j in 0..cn {
            let want: f32 = (0..cn)
                .flat_map(|p| (0..cn).map(move |q| (p, q)))
                .filter(|&(p, q)| {
                    let inr = |p: usize, i: usize| p + m > i + m / 2 && p <= i + m / 2;
                    inr(p, i) && inr(q, j)
                })
                .map(|(p, q)| mask[p * cn + q])
                .sum();
            assert_eq!(boxes[i * cn + j], want, "{i} {j}");
        }
    }
    // The one at 4 is seen by outputs 2..=5 (moves −2..=+1).
    assert_eq!(boxes[2 * cn + 5], 1.0);
    assert_eq!(boxes[6 * cn + 4], 0.0);
    // Argmax: positive products only, first maximum in column-major order.
    let mut corr = vec![-1f32; cn * cn];
    assert_eq!(argmax_positive(&corr, &boxes, cn), None);
    corr[3 * cn + 4] = 0.5;
    corr[2 * cn + 5] = 0.5;
    corr[5 * cn + 3] = 0.5;
    corr[8 * cn + 8] = 9.0; // outside the box
    assert_eq!(argmax_positive(&corr, &boxes, cn), Some((5, 3)));
}

/// Steps 1 to 8 produce the normalised cross-correlation of the template with the window at
/// every fully overlapping offset (computed here directly, in `f64`).
#[test]
fn steps_compute_the_normalised_cross_correlation() {
    let g = Geometry {
        t_size: 2,
        s_size: 4,
        max_move: 4,
        alpha: 0.87,
    };
    let (rows, cols) = (20, 22);
    let frame0 = random(rows * cols, 5);
    let frame1 = random(rows * cols, 6);
    let at = Pos { row: 9, col: 11 };
    let p = PointState::new(at, &g, 2);
    let f0 = Frame {
        no: 0,
        pixels: &frame0,
        rows,
        cols,
        geo: g,
    };
    let f1 = Frame {
        no: 1,
        pixels: &frame1,
        ..f0
    };
    startup(&f0, &p);
    for k in Step::ALL.iter().take(8) {
        k.run(&f1, &p);
    }
    let (tn, sn, cn) = (g.tn(), g.sn(), g.cn());
    let t: Vec<f64> = p.template().iter().map(|&x| f64::from(x)).collect();
    let tm = t.iter().sum::<f64>() / t.len() as f64;
    let px = |r: usize, c: usize| f64::from(frame1[r * cols + c]);
    let corr = p.correlation();
    // Full overlap: template top-left at window offset (i − tn + 1) in 0..=sn − tn.
    for i in tn - 1..sn {
        for j in tn - 1..sn {
            let (r0, c0) = (9 - 4 + i + 1 - tn, 11 - 4 + j + 1 - tn);
            let patch: Vec<f64> = (0..tn * tn).map(|k| px(r0 + k / tn, c0 + k % tn)).collect();
            let pm = patch.iter().sum::<f64>() / patch.len() as f64;
            let num: f64 = t.iter().zip(&patch).map(|(a, b)| (a - tm) * (b - pm)).sum();
            let dt: f64 = t.iter().map(|a| (a - tm).powi(2)).sum();
            let dp: f64 = patch.iter().map(|b| (b - pm).powi(2)).sum();
            // Rodinia's `denomT` uses the population deviation times sqrt(N − 1), so its
            // correlation is the textbook one times sqrt(N/(N − 1)).
            let n = (tn * tn) as f64;
            let want = num / (dt * dp).sqrt() * (n / (n - 1.0)).sqrt();
            let got = f64::from(corr[i * cn + j]);
            assert!((got - want).abs() < 1e-3, "{i} {j}: {got} vs {want}");
        }
    }
    // At zero displacement the template (frame 0's patch) is compared with frame 1's; in a
    // frame equal to frame 0 it would be 1 (times Rodinia's sqrt(N/(N − 1))). Check that too.
    let f1same = Frame { no: 1, ..f0 };
    for k in Step::ALL {
        k.run(&f1same, &p);
    }
    let c = g.center();
    let one = (25f32 / 24.0).sqrt();
    assert!((p.correlation()[c * cn + c] - one).abs() < 1e-4);
    assert_eq!(p.track(), vec![at, at]);
}

fn test_input() -> HwInput {
    Hw::input_at(Size::Test)
}

#[test]
fn every_variant_on_serial_matches_the_serial_version() {
    let pool = testing::serial();
    let input = test_input();
    testing::check_every_variant::<Hw>(&pool, &pool, &input, |what, work, _| {
        assert_eq!(Reference::of(&work.states), input.reference, "{what}");
    });
}

#[test]
fn other_topological_orders_give_the_same_answer() {
    use Step::*;
    let input = test_input();
    for order in [
        [S9, S2, S3, S1, S5, S7, S4, S6, S8, S10],
        [S1, S5, S7, S2, S4, S3, S6, S8, S9, S10],
    ] {
        for (i, k) in order.iter().enumerate() {
            assert!(k.deps().iter().all(|d| order[..i].contains(d)));
        }
        let states = input.states();
        track_serial(&input, &states, &order);
        assert_eq!(Reference::of(&states), input.reference);
    }
}

#[test]
fn the_dag_is_the_artifacts() {
    use Step::*;
    let edges: Vec<(Step, Step)> = Step::ALL
        .iter()
        .flat_map(|&k| k.deps().iter().map(move |&d| (d, k)))
        .collect();
    let want = [
        (S2, S3),
        (S1, S4),
        (S2, S4),
        (S1, S5),
        (S3, S6),
        (S4, S6),
        (S5, S6),
        (S5, S7),
        (S6, S8),
        (S7, S8),
        (S8, S10),
        (S9, S10),
    ];
    assert_eq!(edges, want);
}

#[test]
fn check_rejects_wrong_answers() {
    let input = test_input();
    let good = input.reference.clone();
    let (frames, last) = (good.tracks[0].len(), *good.tracks[0].last().unwrap());
    assert_eq!(
        check_answer(&input.reference, &good).unwrap().answer,
        format!(
            "{} points tracked through {frames} frames, point 0 last at row {}, column {}",
            good.tracks.len(),
            last.row,
            last.col
        )
    );
    let mut moved = good.clone();
    moved.tracks[3][7].col += 1;
    let e = check_answer(&input.reference, &moved).unwrap_err();
    assert!(e.contains("point 3, frame 7"), "{e}");
    let mut short = good.clone();
    short.tracks[0].pop();
    assert!(check_answer(&input.reference, &short).is_err());
    let mut tmpl = good.clone();
    tmpl.templates[5][0] = f32::from_bits(tmpl.templates[5][0].to_bits() ^ 1);
    assert!(check_answer(&input.reference, &tmpl).is_err());
    // A run that skipped a frame's work fails through `Hw::check`.
    let work = Hw::prepare(&input);
    assert!(Hw::check(&input, &work, &()).is_err());
}

#[test]
fn tracking_follows_the_true_motion() {
    let input = test_input();
    let Source::Synthetic(spec) = &input.source else {
        panic!("the generated input is synthetic")
    };
    let (mut sum, mut n, mut worst) = (0f64, 0usize, 0f64);
    for (p, track) in input.initial.iter().zip(&input.reference.tracks) {
        for (t, got) in track.iter().enumerate() {
            let want = spec.true_position(*p, t);
            let e = (f64::from(got.row) - want.0).hypot(f64::from(got.col) - want.1);
            sum += e;
            n += 1;
            worst = worst.max(e);
        }
    }
    let mean = sum / n as f64;
    assert!(
        mean < 1.0 && worst < 3.0,
        "mean error {mean}, worst {worst}"
    );
    // And the points do move.
    let moved = (input.initial.iter().zip(&input.reference.tracks))
        .filter(|(p, t)| t.iter().any(|q| q != *p))
        .count();
    assert!(moved > input.initial.len() / 2, "{moved}");
}

/// A temporary directory for input files, removed on drop.
struct Scratch(std::path::PathBuf);

impl Scratch {
    fn new(tag: &str) -> Scratch {
        let p = std::env::temp_dir().join(format!("stealbench-hw-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        Scratch(p)
    }

    fn write(&self, name: &str, bytes: &[u8]) -> std::path::PathBuf {
        let p = self.0.join(name);
        std::fs::write(&p, bytes).unwrap();
        p
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn points_text(pts: &[Pos]) -> String {
    let mut s = String::from("# row col\n");
    for p in pts {
        s.push_str(&format!("{} {}\n", p.row, p.col));
    }
    s
}

/// The synthetic test video written as an AVI, with its points in a file, gives exactly the
/// synthetic input's frames and serial answer, and every variant checks against it.
#[test]
fn a_real_video_with_its_points_tracks_like_the_synthetic_one() {
    let dir = Scratch::new("same");
    let synthetic = test_input();
    let bytes = avi::encode_gray8(&synthetic.video);
    let options = InputOptions {
        hw_video: Some(dir.write("v.avi", &bytes)),
        hw_points: Some(dir.write("p.txt", points_text(&synthetic.initial).as_bytes())),
        ..InputOptions::default()
    };
    let input = Hw::input_with(&Hw::preset(Size::Test), &options).unwrap();
    assert_eq!(input.video, synthetic.video);
    assert_eq!(input.initial, synthetic.initial);
    assert_eq!(input.reference, synthetic.reference);
    let Source::Avi(src) = &input.source else {
        panic!("not read from the file")
    };
    assert_eq!(src.fingerprint, fnv1a64(&bytes));
    assert_eq!(
        src.points,
        PointsOrigin::File(options.hw_points.clone().unwrap())
    );
    assert_eq!(
        (src.info.width, src.info.height, src.info.frames_in_file),
        (160, 150, 12)
    );
    let pool = testing::serial();
    testing::check_every_variant::<Hw>(&pool, &pool, &input, |_, _, _| {});
    let params = Hw::params_with(&Hw::preset(Size::Test), &options).unwrap();
    for part in [
        "v.avi",
        &format!("fnv1a64 {:016x}", fnv1a64(&bytes)),
        "160x150 8-bit BI_RGB, 12 frames in the file",
        "12 frames processed",
        "20 points (from ",
        "p.txt",
        "tSize=5",
    ] {
        assert!(params.contains(part), "{part}: {params}");
    }
}

#[test]
fn the_frames_processed_are_a_prefix_of_the_file() {
    let dir = Scratch::new("prefix");
    let long = VideoSpec::test(15).generate();
    let opts = |v: std::path::PathBuf| InputOptions {
        hw_video: Some(v),
        hw_points: None,
        ..InputOptions::default()
    };
    let long_opts = opts(dir.write("long.avi", &avi::encode_gray8(&long)));
    let input = Hw::input_with(&Hw::preset(Size::Test), &long_opts).unwrap();
    assert_eq!(input.video.frames, 12);
    assert_eq!(input.video.frame(11), long.frame(11));
    let p = Hw::params_with(&Hw::preset(Size::Test), &long_opts).unwrap();
    assert!(
        p.contains("15 frames in the file), 12 frames processed"),
        "{p}"
    );
    // Fewer frames than the size asks for: all of them. Points: rings scaled to the frame.
    let short = VideoSpec::test(3).generate();
    let short_opts = opts(dir.write("short.avi", &avi::encode_gray8(&short)));
    let input = Hw::input_with(&Hw::preset(Size::Test), &short_opts).unwrap();
    assert_eq!(input.video.frames, 3);
    assert_eq!(input.reference.tracks[0].len(), 3);
    assert_eq!(input.initial, points_for(150, 160).0);
    let p = Hw::params_with(&Hw::preset(Size::Test), &short_opts).unwrap();
    assert!(
        p.contains("3 frames processed, 51 points (on two rings"),
        "{p}"
    );
}

#[test]
fn initial_points_of_real_videos() {
    let (rodinia, origin) = points_for(590, 609);
    assert_eq!(origin, PointsOrigin::Rodinia);
    assert_eq!(rodinia.len(), 51);
    // Every template (51 × 51 around the point) lies inside the frame, and the endocardium
    // (the first 20) lies inside the epicardium: nearer the epicardium's centre.
    for p in &rodinia {
        assert!(
            (25..590 - 25).contains(&p.row) && (25..609 - 25).contains(&p.col),
            "{p:?}"
        );
    }
    let centre = |pts: &[Pos]| {
        let n = pts.len() as f64;
        (
            pts.iter().map(|p| f64::from(p.row)).sum::<f64>() / n,
            pts.iter().map(|p| f64::from(p.col)).sum::<f64>() / n,
        )
    };
    let c = centre(&rodinia[20..]);
    let dist = |p: &Pos| (f64::from(p.row) - c.0).hypot(f64::from(p.col) - c.1);
    let endo_max = rodinia[..20].iter().map(dist).fold(0.0, f64::max);
    let epi_min = rodinia[20..].iter().map(dist).fold(f64::MAX, f64::min);
    assert!(endo_max < epi_min, "{endo_max} {epi_min}");
    // Other sizes: the ring layout, inside the frame.
    for (rows, cols) in [(590, 610), (100, 300), (40, 30)] {
        let (pts, origin) = points_for(rows, cols);
        assert_eq!((pts.len(), origin), (51, PointsOrigin::Rings));
        assert!(
            pts.iter()
                .all(|p| (0..rows as i32).contains(&p.row) && (0..cols as i32).contains(&p.col))
        );
    }
    assert_eq!(points_for(590, 609 - 1).0.len(), 51);
}

#[test]
fn points_files_are_parsed_strictly() {
    let ok = parse_points("# header\n\n1 2\n 3,4  # comment\n5\t6\n", 10, 10).unwrap();
    assert_eq!(
        ok,
        [(1, 2), (3, 4), (5, 6)].map(|(row, col)| Pos { row, col })
    );
    let e = parse_points("1 2\n3 x\n", 10, 10).unwrap_err();
    assert!(e.contains("line 2") && e.contains("'3 x'"), "{e}");
    assert!(
        parse_points("1 2 3\n", 10, 10)
            .unwrap_err()
            .contains("line 1")
    );
    let e = parse_points("0 0\n9 10\n", 10, 10).unwrap_err();
    assert!(e.contains("line 2") && e.contains("outside"), "{e}");
    assert!(parse_points("-1 0\n", 10, 10).is_err());
    assert!(
        parse_points("# nothing\n", 10, 10)
            .unwrap_err()
            .contains("no points")
    );
}

#[test]
fn bad_inputs_are_errors_naming_the_file() {
    let dir = Scratch::new("bad");
    let missing = dir.0.join("missing.avi");
    let opts = InputOptions {
        hw_video: Some(missing),
        hw_points: None,
        ..InputOptions::default()
    };
    let e = Hw::input_with(&Hw::preset(Size::Test), &opts).unwrap_err();
    assert!(e.contains("missing.avi"), "{e}");
    assert_eq!(
        Hw::params_with(&Hw::preset(Size::Test), &opts).unwrap_err(),
        e
    );
    let garbage = dir.write("garbage.avi", b"RIFF\x10\0\0\0AVI LIST\x04\0\0\0hdrl");
    let e = Hw::input_with(
        &Hw::preset(Size::Test),
        &InputOptions {
            hw_video: Some(garbage),
            hw_points: None,
            ..InputOptions::default()
        },
    )
    .unwrap_err();
    assert!(e.contains("garbage.avi") && e.contains("avih"), "{e}");
    let video = dir.write("v.avi", &avi::encode_gray8(&VideoSpec::test(2).generate()));
    let points = dir.write("p.txt", b"1 1\n200 1\n");
    let e = Hw::input_with(
        &Hw::preset(Size::Test),
        &InputOptions {
            hw_video: Some(video),
            hw_points: Some(points.clone()),
            ..InputOptions::default()
        },
    )
    .unwrap_err();
    assert!(e.contains("p.txt") && e.contains("line 2"), "{e}");
    let e = Hw::input_with(
        &Hw::preset(Size::Test),
        &InputOptions {
            hw_video: None,
            hw_points: Some(points),
            ..InputOptions::default()
        },
    )
    .unwrap_err();
    assert!(e.contains("only read with a video"), "{e}");
    // No options: the generated input.
    let d = InputOptions::default();
    assert_eq!(
        Hw::params_with(&Hw::preset(Size::Quick), &d).unwrap(),
        "frames=4 scale=paper: 609x590, 51 points (20 endo + 31 epi), tSize=25 sSize=40 maxMove=10 alpha=0.87"
    );
    assert_eq!(
        Hw::input_with(&Hw::preset(Size::Test), &d)
            .unwrap()
            .reference,
        test_input().reference
    );
}

/// A real video of a texture translated by a known step per frame: every point follows it.
#[test]
fn points_follow_a_translated_texture_in_a_real_video() {
    let dir = Scratch::new("shift");
    let (rows, cols, frames, side) = (120, 130, 6, 160);
    let mut r = SplitMix64::new(9);
    // A smooth-ish texture: random levels on a 3-pixel lattice, so matches are unique.
    let coarse: Vec<u8> = (0..(side / 3 + 2) * (side / 3 + 2))
        .map(|_| r.next_u64() as u8)
        .collect();
    let tex = |y: usize, x: usize| coarse[(y / 3) * (side / 3 + 2) + x / 3];
    let mut pixels = Vec::new();
    for t in 0..frames {
        for y in 0..rows {
            for x in 0..cols {
                // Content moves up and right by one pixel per frame (at most 5 from the
                // template's frame: the test geometry's window of ±10 holds the whole 11 × 11
                // template up to ±5).
                pixels.push(avi::gray_level(tex(y + t, x + 10 - t)));
            }
        }
    }
    let video = Video {
        rows,
        cols,
        frames,
        pixels,
    };
    let options = InputOptions {
        hw_video: Some(dir.write("shift.avi", &avi::encode_gray8(&video))),
        hw_points: None,
        ..InputOptions::default()
    };
    let input = Hw::input_with(&Hw::preset(Size::Test), &options).unwrap();
    assert_eq!(input.video, video);
    for (p, track) in input.initial.iter().zip(&input.reference.tracks) {
        for (t, got) in track.iter().enumerate() {
            let t = t as i32;
            assert_eq!(
                *got,
                Pos {
                    row: p.row - t,
                    col: p.col + t
                },
                "{p:?} frame {t}"
            );
        }
    }
}

/// A crafted video asking for more memory than any machine has (one real 1024 × 1024 frame
/// and 2^20 zero-length chunks repeating it, with `frames=2^20`: 4 TiB of frames from a 9 MiB
/// file) is refused in one line naming the file, before the frames are allocated.
#[test]
fn a_real_video_is_bounded_by_the_memory_rule() {
    let dir = Scratch::new("memory");
    let one = Video {
        rows: 1024,
        cols: 1024,
        frames: 1,
        pixels: vec![0.5; 1024 * 1024],
    };
    let mut bytes = avi::encode_gray8(&one);
    // Insert the empty chunks after the frame, inside `movi`, and fix up the lengths.
    let frame = bytes.windows(4).position(|x| x == b"00db").unwrap();
    let after = frame + 8 + 1024 * 1024;
    let empties = b"00db\0\0\0\0".repeat(1 << 20);
    bytes.splice(after..after, empties.iter().copied());
    let movi = bytes.windows(4).position(|x| x == b"movi").unwrap() - 8;
    for at in [4, movi + 4] {
        let len = u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) + empties.len() as u32;
        bytes[at..at + 4].copy_from_slice(&len.to_le_bytes());
    }
    let options = InputOptions {
        hw_video: Some(dir.write("crafted.avi", &bytes)),
        ..InputOptions::default()
    };
    let mut params = Hw::preset(Size::Test);
    params.set("frames", "2^20").unwrap();
    let e = Hw::params_with(&params, &options).unwrap_err();
    assert!(
        e.contains("crafted.avi: 1048576 frames of 1024 x 1024 pixels: the input needs 4.0 TiB")
            && e.contains("the limit is")
            && !e.contains('\n'),
        "{e}"
    );
    assert_eq!(Hw::input_with(&params, &options).unwrap_err(), e);
    // The file's own two frames' worth is fine.
    params.set("frames", "2").unwrap();
    assert_eq!(Hw::input_with(&params, &options).unwrap().video.frames, 2);
}

#[test]
fn points_text_is_what_parse_points_reads() {
    let spec = VideoSpec::test(12);
    let pts = spec.initial_points();
    let (rows, cols) = (spec.rows, spec.cols);
    assert_eq!(parse_points(&points_text(&pts), rows, cols).unwrap(), pts);
}

#[test]
fn points_are_bounded_by_the_memory_limit() {
    let video = Video {
        rows: 128,
        cols: 128,
        frames: 12,
        pixels: vec![0.0; 128 * 128 * 12],
    };
    // A point's state: its buffers at the test geometry (an f32 a pixel) and its track.
    let g = Geometry::TEST;
    assert_eq!(
        PointState::bytes(&g, 12),
        (4 * (4 * 121 + 2 * 441 + 5 * 961 + 43 * 43 + 31 * 43) + 12 * 8) as f64
    );
    check_points_memory(&video, 51, &g).unwrap();
    // 10^9 points need about 75 TB: refused in one line before any state is allocated.
    let e = check_points_memory(&video, 1_000_000_000, &Geometry::PAPER).unwrap_err();
    assert!(
        e.starts_with("1000000000 points over 12 frames of 128 x 128 pixels: the input needs"),
        "{e}"
    );
    assert!(e.contains("3/4 of this machine's physical memory"), "{e}");
}

/// A points file read with a video is bounded where it is read: the points a limit admits beside
/// the frames load, and one point more is refused in one line that names the points file's
/// count and the video, before any point's state is allocated.
#[test]
fn a_points_file_beyond_the_memory_limit_is_refused_when_read() {
    let dir = Scratch::new("points-limit");
    let synthetic = test_input();
    let video = &synthetic.video;
    let g = Geometry::TEST;
    let frames = 4 * video.frames * video.rows * video.cols;
    let answer = video.frames * std::mem::size_of::<Pos>() + 4 * g.tn() * g.tn();
    let per_point = 2 * PointState::bytes(&g, video.frames) as usize + answer;
    // A limit that holds the frames and exactly 100 points.
    let limit = (frames + 100 * per_point) as u64;
    let load = |points: usize| {
        let pts = vec![synthetic.initial[0]; points];
        let options = InputOptions {
            hw_video: Some(dir.write("v.avi", &avi::encode_gray8(video))),
            hw_points: Some(dir.write("p.txt", points_text(&pts).as_bytes())),
            ..InputOptions::default()
        };
        load_real_within(&options, video.frames, &g, limit)
    };
    let (_, _, initial) = load(100).unwrap().expect("a video was given");
    assert_eq!(initial.len(), 100);
    let e = load(101).unwrap_err();
    assert!(
        e.starts_with(&format!(
            "101 points over {} frames of {} x {} pixels: the input needs",
            video.frames, video.cols, video.rows
        )),
        "{e}"
    );
    assert!(!e.contains('\n'), "{e}");
}
