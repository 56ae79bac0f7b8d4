//! Tests of the AVI reader: files written here in every accepted layout are read back
//! exactly; truncated, garbled and unsupported files are errors, never panics.

use super::*;
use crate::hw::video::VideoSpec;
use crate::rng::SplitMix64;

/// How the test writer lays out a file.
#[derive(Debug, Clone)]
struct Layout {
    /// 8 or 24 (other values are written as given, for error tests).
    bits: u16,
    /// Negative `biHeight` (top-down rows).
    top_down: bool,
    /// Rows padded to 4 bytes.
    pad: bool,
    /// Frames grouped in `LIST rec ` lists, with `JUNK` chunks between.
    rec: bool,
    /// An audio stream before the video (the video is stream 01).
    audio_first: bool,
    /// The palette written after the header (8 bits only).
    palette: Option<Vec<[u8; 3]>>,
    /// `biCompression`.
    compression: [u8; 4],
}

impl Layout {
    fn new(bits: u16) -> Self {
        Layout {
            bits,
            top_down: false,
            pad: true,
            rec: false,
            audio_first: false,
            palette: (bits == 8).then(|| (0..=255).map(|i| [i, i, i]).collect()),
            compression: [0; 4],
        }
    }
}

fn chunk(id: &[u8; 4], data: &[u8]) -> Vec<u8> {
    let mut out = id.to_vec();
    out.extend_from_slice(&(data.len() as u32).to_le_bytes());
    out.extend_from_slice(data);
    if data.len() % 2 == 1 {
        out.push(0);
    }
    out
}

fn list_of(kind: &[u8; 4], parts: &[Vec<u8>]) -> Vec<u8> {
    let mut body = kind.to_vec();
    for p in parts {
        body.extend_from_slice(p);
    }
    chunk(b"LIST", &body)
}

fn words(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// An AVI of `frames` (`h` rows of `w` RGB pixels each, top row first). 8-bit files store the
/// red channel as the palette index.
fn write(frames: &[Vec<[u8; 3]>], w: usize, h: usize, l: &Layout) -> Vec<u8> {
    let bpp = usize::from(l.bits / 8).max(1);
    let tight = w * bpp;
    let stride = if l.pad { tight.div_ceil(4) * 4 } else { tight };
    let mut avih = words(&[33_333, 0, 0, 0, frames.len() as u32, 0, 1, 0]);
    avih.extend(words(&[w as u32, h as u32, 0, 0, 0, 0]));
    let mut strls = Vec::new();
    if l.audio_first {
        let mut strh = b"auds".to_vec();
        strh.extend(words(&[0; 12]));
        strls.push(list_of(
            b"strl",
            &[chunk(b"strh", &strh), chunk(b"strf", &[1, 0, 1, 0])],
        ));
    }
    let mut strh = b"vids".to_vec();
    strh.extend(words(&[
        0,
        0,
        0,
        0,
        1,
        30,
        0,
        frames.len() as u32,
        0,
        0,
        0,
        0,
        0,
    ]));
    let height = if l.top_down { -(h as i32) } else { h as i32 };
    let mut strf = words(&[40, w as u32, height as u32]);
    strf.extend_from_slice(&1u16.to_le_bytes());
    strf.extend_from_slice(&l.bits.to_le_bytes());
    strf.extend_from_slice(&l.compression);
    let colors = l.palette.as_ref().map_or(0, |p| p.len() as u32);
    strf.extend(words(&[0, 0, 0, colors, 0]));
    for [r, g, b] in l.palette.iter().flatten() {
        strf.extend_from_slice(&[*b, *g, *r, 0]);
    }
    strls.push(list_of(
        b"strl",
        &[chunk(b"strh", &strh), chunk(b"strf", &strf)],
    ));
    let mut hdrl = vec![chunk(b"avih", &avih)];
    hdrl.extend(strls);
    let tag = if l.audio_first { b"01dc" } else { b"00db" };
    let mut movi = Vec::new();
    for (t, px) in frames.iter().enumerate() {
        let mut data = vec![0u8; stride * h];
        for r in 0..h {
            let fr = if l.top_down { r } else { h - 1 - r };
            for c in 0..w {
                let [red, green, blue] = px[r * w + c];
                let at = fr * stride + c * bpp;
                if l.bits == 24 {
                    data[at..at + 3].copy_from_slice(&[blue, green, red]);
                } else {
                    data[at] = red;
                }
            }
        }
        if l.audio_first {
            movi.push(chunk(b"00wb", &[7, 7, 7]));
        }
        let frame = chunk(tag, &data);
        if l.rec {
            movi.push(list_of(b"rec ", &[frame, chunk(b"JUNK", &[0; 5])]));
            movi.push(chunk(b"JUNK", &vec![0xAB; t + 1]));
        } else {
            movi.push(frame);
        }
    }
    let body = [
        b"AVI ".to_vec(),
        list_of(b"hdrl", &hdrl),
        chunk(b"JUNK", &[0; 12]),
        list_of(b"movi", &movi),
        chunk(b"idx1", &[]),
    ]
    .concat();
    chunk(b"RIFF", &body)
}

/// `n` seeded frames of `w × h` pixels: gray (r = g = b) or colour.
fn frames(n: usize, w: usize, h: usize, colour: bool, seed: u64) -> Vec<Vec<[u8; 3]>> {
    let mut r = SplitMix64::new(seed);
    (0..n)
        .map(|_| {
            (0..w * h)
                .map(|_| {
                    let x = r.next_u64().to_le_bytes();
                    if colour {
                        [x[0], x[1], x[2]]
                    } else {
                        [x[0]; 3]
                    }
                })
                .collect()
        })
        .collect()
}

/// What the reader must return for `frames` with gray levels `gray`.
fn expected(frames: &[Vec<[u8; 3]>], gray: impl Fn([u8; 3]) -> u8) -> Vec<f32> {
    frames
        .iter()
        .flatten()
        .map(|&p| gray_level(gray(p)))
        .collect()
}

fn check(frames_: &[Vec<[u8; 3]>], w: usize, h: usize, l: &Layout, gray: impl Fn([u8; 3]) -> u8) {
    let avi = decode(&write(frames_, w, h, l), None).unwrap_or_else(|e| panic!("{l:?}: {e}"));
    assert_eq!(
        (avi.video.cols, avi.video.rows, avi.video.frames),
        (w, h, frames_.len()),
        "{l:?}"
    );
    assert_eq!(avi.video.pixels, expected(frames_, gray), "{l:?}");
    assert_eq!(avi.info.frames_in_file, frames_.len());
    assert_eq!(avi.info.bit_count, l.bits);
}

#[test]
fn eight_bit_files_read_back_exactly_in_every_layout() {
    // Width 5: rows of 5 bytes are padded to 8.
    let (w, h) = (5, 3);
    let fr = frames(3, w, h, false, 1);
    for top_down in [false, true] {
        for pad in [true, false] {
            for rec in [false, true] {
                for audio_first in [false, true] {
                    let l = Layout {
                        top_down,
                        pad,
                        rec,
                        audio_first,
                        ..Layout::new(8)
                    };
                    check(&fr, w, h, &l, |p| p[0]);
                }
            }
        }
    }
    // No palette: the index is the gray level.
    let l = Layout {
        palette: None,
        ..Layout::new(8)
    };
    check(&fr, w, h, &l, |p| p[0]);
    // A palette that is not the gray ramp: each entry's luma.
    let inverted: Vec<[u8; 3]> = (0..=255u8).map(|i| [255 - i, 255 - i, 255 - i]).collect();
    let l = Layout {
        palette: Some(inverted),
        ..Layout::new(8)
    };
    check(&fr, w, h, &l, |p| 255 - p[0]);
    // Raw gray FOURCCs are top-down even with a positive height.
    for cc in [*b"Y800", *b"GREY", *b"Y8  "] {
        let l = Layout {
            compression: cc,
            palette: None,
            top_down: true,
            ..Layout::new(8)
        };
        let mut bytes = write(&fr, w, h, &l);
        // Make the height positive: the rows stay top-down.
        let at = bytes
            .windows(4)
            .position(|x| x == (-(h as i32)).to_le_bytes())
            .unwrap();
        bytes[at..at + 4].copy_from_slice(&(h as i32).to_le_bytes());
        let avi = decode(&bytes, None).unwrap();
        assert!(avi.info.top_down);
        assert_eq!(avi.video.pixels, expected(&fr, |p| p[0]));
    }
}

#[test]
fn twenty_four_bit_files_become_luma() {
    let (w, h) = (3, 4); // rows of 9 bytes, padded to 12
    let fr = frames(2, w, h, true, 2);
    for top_down in [false, true] {
        for pad in [true, false] {
            let l = Layout {
                top_down,
                pad,
                ..Layout::new(24)
            };
            check(&fr, w, h, &l, |[r, g, b]| {
                (0.299 * f64::from(r) + 0.587 * f64::from(g) + 0.114 * f64::from(b)).round() as u8
            });
        }
    }
    assert_eq!(luma(255, 255, 255), 255);
    assert_eq!(luma(0, 0, 0), 0);
    assert_eq!(luma(10, 10, 10), 10);
    assert_eq!(luma(255, 0, 0), 76); // 76.245
    assert_eq!(luma(0, 0, 255), 29); // 29.07
}

#[test]
fn dropped_frames_repeat_and_max_frames_limits_decoding() {
    let (w, h) = (4, 2);
    let fr = frames(4, w, h, false, 3);
    let mut bytes = write(&fr, w, h, &Layout::new(8));
    // Empty the third frame's chunk: rename it JUNK and insert an empty 00db before it.
    let starts: Vec<usize> = (0..bytes.len() - 4)
        .filter(|&i| &bytes[i..i + 4] == b"00db")
        .collect();
    assert_eq!(starts.len(), 4);
    bytes[starts[2]..starts[2] + 4].copy_from_slice(b"JUNK");
    bytes.splice(starts[2]..starts[2], chunk(b"00db", &[]));
    let riff = (bytes.len() - 8) as u32;
    bytes[4..8].copy_from_slice(&riff.to_le_bytes());
    let movi = bytes.windows(4).position(|x| x == b"movi").unwrap() - 8;
    let movi_len = u32_at(&bytes, movi + 4) + 8;
    bytes[movi + 4..movi + 8].copy_from_slice(&movi_len.to_le_bytes());
    let avi = decode(&bytes, None).unwrap();
    assert_eq!(avi.info.frames_in_file, 4);
    let want = [0, 1, 1, 3]; // the empty chunk repeats frame 1; the renamed one is gone
    for (t, &src) in want.iter().enumerate() {
        assert_eq!(
            avi.video.frame(t),
            &expected(&fr[src..=src], |p| p[0])[..],
            "{t}"
        );
    }
    let two = decode(&bytes, Some(2)).unwrap();
    assert_eq!((two.video.frames, two.info.frames_in_file), (2, 4));
    assert_eq!(two.video.pixels, avi.video.pixels[..2 * w * h]);
}

#[test]
fn the_writer_round_trips_the_synthetic_video() {
    let video = VideoSpec::test(3).generate();
    let bytes = encode_gray8(&video);
    let avi = decode(&bytes, None).unwrap();
    assert_eq!(avi.video, video);
    assert_eq!(
        avi.info,
        AviInfo {
            width: 160,
            height: 150,
            bit_count: 8,
            format: "BI_RGB".into(),
            top_down: false,
            frames_in_file: 3,
        }
    );
    // Odd widths are padded.
    let odd = Video {
        rows: 2,
        cols: 3,
        frames: 1,
        pixels: [0u8, 1, 2, 253, 254, 255].map(gray_level).to_vec(),
    };
    assert_eq!(decode(&encode_gray8(&odd), None).unwrap().video, odd);
}

fn err(bytes: &[u8]) -> String {
    match decode(bytes, None) {
        Ok(_) => panic!("accepted"),
        Err(e) => e,
    }
}

#[test]
fn unsupported_files_are_errors_naming_the_reason() {
    let (w, h) = (4, 2);
    let fr = frames(2, w, h, false, 4);
    assert!(err(&[]).contains("empty"));
    assert!(err(b"RIFF\x04\0\0\0WAVE").contains("not a RIFF AVI"));
    assert!(err(b"GIF89a..........").contains("not a RIFF AVI"));
    let compressed = |cc: [u8; 4]| {
        err(&write(
            &fr,
            w,
            h,
            &Layout {
                compression: cc,
                ..Layout::new(8)
            },
        ))
    };
    let e = compressed(*b"MJPG");
    assert!(e.contains("compressed") && e.contains("'MJPG'"), "{e}");
    assert!(compressed([1, 0, 0, 0]).contains("BI_RLE8"));
    let e = err(&write(&fr, w, h, &Layout::new(16)));
    assert!(e.contains("16 bits per pixel"), "{e}");
    let e = err(&write(&[], w, h, &Layout::new(8)));
    assert!(e.contains("no frames"), "{e}");
    // Frame chunks of the wrong size: both headers claim 3 rows, the chunks hold 2.
    let mut bytes = write(&fr, w, h, &Layout::new(8));
    let avih = bytes.windows(4).position(|x| x == b"avih").unwrap() + 8 + 36;
    let strf = bytes.windows(4).position(|x| x == b"strf").unwrap() + 8 + 8;
    for at in [avih, strf] {
        bytes[at..at + 4].copy_from_slice(&3u32.to_le_bytes());
    }
    let e = err(&bytes);
    assert!(e.contains("frame 0") && e.contains("8 bytes"), "{e}");
    // No video stream.
    let mut bytes = write(&fr, w, h, &Layout::new(8));
    let at = bytes.windows(4).position(|x| x == b"vids").unwrap();
    bytes[at..at + 4].copy_from_slice(b"txts");
    assert!(err(&bytes).contains("no video stream"));
    // Headers that disagree.
    let mut bytes = write(&fr, w, h, &Layout::new(8));
    let at = bytes.windows(4).position(|x| x == b"avih").unwrap() + 8 + 32;
    bytes[at..at + 4].copy_from_slice(&5u32.to_le_bytes());
    assert!(err(&bytes).contains("main header says 5 x 2"));
}

#[test]
fn truncated_and_garbled_files_are_errors_not_panics() {
    let (w, h) = (5, 3);
    let fr = frames(3, w, h, false, 5);
    let good = write(&fr, w, h, &Layout::new(8));
    assert!(decode(&good, None).is_ok());
    for len in 0..good.len() {
        let cut = &good[..len];
        let e = err(cut);
        assert!(
            e.contains("truncated") || e.contains("not a RIFF AVI"),
            "{len}: {e}"
        );
        // With the RIFF length fixed up, inner chunks are cut instead: still never a panic,
        // and never more frames than were written.
        if len >= 12 {
            let mut fixed = cut.to_vec();
            fixed[4..8].copy_from_slice(&((len - 8) as u32).to_le_bytes());
            if let Ok(avi) = decode(&fixed, None) {
                assert!(avi.info.frames_in_file <= 3);
            }
        }
    }
    // Random byte changes anywhere: an error or a well-formed video, never a panic.
    let mut r = SplitMix64::new(6);
    for _ in 0..3000 {
        let mut bad = good.clone();
        for _ in 0..1 + r.next_u64() % 4 {
            let i = (r.next_u64() % bad.len() as u64) as usize;
            bad[i] = r.next_u64() as u8;
        }
        if let Ok(avi) = decode(&bad, None) {
            assert_eq!(
                avi.video.pixels.len(),
                avi.video.rows * avi.video.cols * avi.video.frames
            );
        }
    }
    // Pure noise.
    for n in [0usize, 7, 12, 100, 5000] {
        let noise: Vec<u8> = (0..n).map(|_| r.next_u64() as u8).collect();
        assert!(decode(&noise, None).is_err());
    }
}

#[test]
fn read_names_the_file() {
    let dir = std::env::temp_dir().join(format!("stealbench-avi-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let missing = dir.join("missing.avi");
    let e = read(&missing, None).unwrap_err();
    assert!(
        e.contains("missing.avi") && e.contains("cannot read"),
        "{e}"
    );
    let bad = dir.join("bad.avi");
    std::fs::write(&bad, b"RIFF\xff\0\0\0AVI LIST").unwrap();
    let e = read(&bad, None).unwrap_err();
    assert!(e.contains("bad.avi") && e.contains("truncated"), "{e}");
    let good = dir.join("good.avi");
    let video = VideoSpec::test(2).generate();
    std::fs::write(&good, encode_gray8(&video)).unwrap();
    assert_eq!(read(&good, None).unwrap().video, video);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `bytes` (a file from [`write`]) with `bytes[range]`, which lies inside `LIST movi`, replaced
/// by `new`: the RIFF and `movi` lengths fixed up.
fn replace_in_movi(bytes: &[u8], range: std::ops::Range<usize>, new: &[u8]) -> Vec<u8> {
    let grow = new.len() as i64 - range.len() as i64;
    let mut out = bytes[..range.start].to_vec();
    out.extend_from_slice(new);
    out.extend_from_slice(&bytes[range.end..]);
    let movi = out.windows(4).position(|x| x == b"movi").unwrap() - 8;
    for at in [4, movi + 4] {
        let len = (i64::from(u32_at(&out, at)) + grow) as u32;
        out[at..at + 4].copy_from_slice(&len.to_le_bytes());
    }
    out
}

/// `payload` (of even length) inside `depth` nested `LIST rec ` lists, written outermost first
/// (no copying per level).
fn nested_rec(depth: usize, payload: &[u8]) -> Vec<u8> {
    assert!(payload.len().is_multiple_of(2));
    let mut out = Vec::with_capacity(12 * depth + payload.len());
    for level in 0..depth {
        let len = 4 + 12 * (depth - 1 - level) + payload.len();
        out.extend_from_slice(b"LIST");
        out.extend_from_slice(&(len as u32).to_le_bytes());
        out.extend_from_slice(b"rec ");
    }
    out.extend_from_slice(payload);
    out
}

/// The range of the first `00db` chunk (header included) of a file from [`write`].
fn first_frame_chunk(bytes: &[u8]) -> std::ops::Range<usize> {
    let at = bytes.windows(4).position(|x| x == b"00db").unwrap();
    at..at + 8 + u32_at(bytes, at + 4) as usize
}

/// 50,000 nested `LIST rec ` groups (600 KB) around the only frame: walked without recursion,
/// on a thread whose stack is far smaller than a recursive walk of that depth needs, and the
/// frame deep inside is found; the same nesting with no frame is an error.
#[test]
fn deeply_nested_rec_lists_do_not_overflow_the_stack() {
    let (w, h) = (4, 2);
    let fr = frames(1, w, h, false, 7);
    let good = write(&fr, w, h, &Layout::new(8));
    let frame = first_frame_chunk(&good);
    let deep = replace_in_movi(
        &good,
        frame.clone(),
        &nested_rec(50_000, &good[frame.clone()]),
    );
    assert!(deep.len() > 600_000);
    let empty = replace_in_movi(&good, frame.clone(), &nested_rec(50_000, &[]));
    let (avi, e) = std::thread::Builder::new()
        .stack_size(256 << 10)
        .spawn(move || (decode(&deep, None), decode(&empty, None)))
        .unwrap()
        .join()
        .unwrap();
    let avi = avi.unwrap();
    assert_eq!(avi.video.pixels, expected(&fr, |p| p[0]));
    assert_eq!(avi.info.frames_in_file, 1);
    assert!(e.unwrap_err().contains("no frames"));
}

/// One real frame and 499 zero-length chunks (each repeating it), with 500 frames asked for:
/// the decoded frames' memory is checked against the limit before it is allocated.
#[test]
fn repeated_frames_are_bounded_by_the_memory_limit() {
    let (w, h) = (64, 32);
    let fr = frames(1, w, h, false, 8);
    let good = write(&fr, w, h, &Layout::new(8));
    let frame = first_frame_chunk(&good);
    let mut movi = good[frame.clone()].to_vec();
    for _ in 0..499 {
        movi.extend_from_slice(&chunk(b"00db", &[]));
    }
    let bytes = replace_in_movi(&good, frame, &movi);
    let need = bytes.len() as u64 + 4 * 500 * (w * h) as u64; // about 4 MiB
    let e = decode_within(&bytes, Some(500), need - 1).unwrap_err();
    assert!(
        e.starts_with("500 frames of 64 x 32 pixels: the input needs 3.9 MiB")
            && e.contains("of memory; the limit is")
            && !e.contains('\n'),
        "{e}"
    );
    let avi = decode_within(&bytes, Some(500), need).unwrap();
    assert_eq!(avi.info.frames_in_file, 500);
    assert_eq!(avi.video.frame(499), avi.video.frame(0));
    // Fewer frames asked for: fewer to hold.
    assert_eq!(
        decode_within(&bytes, Some(2), need / 100)
            .unwrap()
            .video
            .frames,
        2
    );
}

/// A file larger than the limit is refused before it is read, a regular file by its size and
/// a device or pipe once the bound is passed.
#[test]
fn files_larger_than_the_limit_are_refused_unread() {
    let dir = std::env::temp_dir().join(format!("stealbench-avi-big-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("big.avi");
    std::fs::write(&file, [0u8; 100]).unwrap();
    let e = read_file_within(&file, 99).unwrap_err();
    assert!(
        e.contains("big.avi") && e.contains("the file is 100 bytes") && e.contains("99 B"),
        "{e}"
    );
    assert_eq!(read_file_within(&file, 100).unwrap().len(), 100);
    std::fs::remove_dir_all(&dir).unwrap();
    let e = read_file_within(Path::new("/dev/zero"), 1 << 20).unwrap_err();
    assert!(
        e.contains("/dev/zero: the file is more than 1048576 bytes"),
        "{e}"
    );
}
