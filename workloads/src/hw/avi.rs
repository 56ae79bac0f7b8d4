//! A reader of uncompressed RIFF AVI video, for `hw`'s real input (Rodinia heartwall's
//! `test.avi`: 104 frames of 609 × 590, 8 bits per pixel), and a writer of 8-bit gray AVI.
//!
//! # What is read
//!
//! A RIFF file of form `AVI `: the `LIST hdrl` (the main header `avih` and one `LIST strl`
//! per stream, each with its stream header `strh` and format `strf`), then the `LIST movi`
//! with the stream data. The first stream whose `strh` type is `vids` is the video; its
//! `strf` is a `BITMAPINFOHEADER` (and, for 8 bits per pixel, an optional palette). Its
//! frames are the chunks `NNdb` / `NNdc` of `movi` (`NN` the stream's two-digit number),
//! also inside `LIST rec ` groups; other chunks (audio, `JUNK`, index chunks) are skipped,
//! `idx1` is not needed. A zero-length frame chunk repeats the previous frame (the AVI
//! meaning of a dropped frame).
//!
//! Accepted formats (anything else is an error naming the format):
//!
//! * `BI_RGB` (compression 0), 8 bits per pixel: palette indices. With no palette, or the
//!   identity gray ramp (entry `i` = `(i, i, i)`), the index is the gray level, as
//!   Rodinia's `get_frame` reads it; with another palette the entry's gray level is taken
//!   (the formula below).
//! * `BI_RGB`, 24 bits per pixel: blue, green, red bytes; gray =
//!   `round((299·R + 587·G + 114·B) / 1000)`, the ITU-R BT.601 luma, in integers.
//! * FOURCC `Y800`, `Y8  ` or `GREY`, 8 bits per pixel: raw gray bytes.
//!
//! Row order: `BI_RGB` frames are bottom-up when `biHeight > 0` and top-down when it is
//! negative; the gray FOURCC formats are always top-down (as every YUV format). Rows are
//! normally padded to a multiple of 4 bytes; a chunk of exactly `width · height · bytes per
//! pixel` bytes (unpadded rows, which Rodinia's reader assumes: it reads `width · height`
//! bytes) is accepted too.
//!
//! Frames become a [`Video`] like the synthetic one: row 0 at the top, each pixel the gray
//! byte `b` as `b / 255` (computed in `f64`, then rounded to `f32`, exactly as the synthetic
//! video quantises). Rodinia keeps the raw values `0..=255` (`get_frame(.., scaled = 0, ..)`);
//! the normalised cross-correlation and the template update are invariant under that
//! scaling, so the tracking agrees up to `f32` rounding.
//!
//! Every malformed input (not RIFF AVI, truncated chunks, no video stream, a compressed
//! codec, a frame chunk of the wrong size, no frames) is an `Err` saying what is wrong; the
//! reader never panics and never reads past the data. Two bounds keep a crafted file from
//! exhausting the process:
//!
//! * `LIST rec ` groups may nest to any depth; they are walked with a stack on the heap (one
//!   entry a level, each level's chunks), never by recursion, so deep nesting cannot overflow
//!   the thread's stack.
//! * Memory follows the rule of every size parameter ([`check_memory`]): before the frames
//!   are allocated, the file's bytes and the decoded frames (4 bytes a pixel, a zero-length
//!   chunk repeating a frame counting as a frame) must fit in the limit, and [`read_file`]
//!   refuses a file larger than the limit, or than one RIFF chunk can be (4 GiB), before
//!   reading it.

use super::video::Video;
use crate::params::{check_memory_within, memory_limit};
use std::fmt::Write as _;
use std::io::Read as _;
use std::path::Path;

/// What the headers of an AVI file say about its video.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AviInfo {
    /// Frame width in pixels.
    pub width: usize,
    /// Frame height in pixels.
    pub height: usize,
    /// Bits per pixel (8 or 24).
    pub bit_count: u16,
    /// The format: `BI_RGB` or the FOURCC without trailing spaces (`Y800`, `Y8`, `GREY`).
    pub format: String,
    /// Whether the file stores the top row first.
    pub top_down: bool,
    /// Frame chunks in `movi` (all of them, also those not decoded).
    pub frames_in_file: usize,
}

/// A decoded AVI: its frames and what its headers say.
#[derive(Debug, Clone, PartialEq)]
pub struct Avi {
    /// The decoded frames (at most the number asked for).
    pub video: Video,
    /// The headers.
    pub info: AviInfo,
}

/// Reads the AVI at `path`, decoding at most `max_frames` frames (`None` = all). Errors name
/// the file and the reason.
pub fn read(path: &Path, max_frames: Option<usize>) -> Result<Avi, String> {
    let bytes = read_file(path)?;
    decode(&bytes, max_frames).map_err(|e| format!("{}: {e}", path.display()))
}

/// The largest file [`read_file`] reads: one RIFF chunk (its 8-byte header and at most
/// `u32::MAX` bytes of data) and a pad byte. A larger file is an OpenDML AVI (refused by
/// [`decode`]) or not an AVI.
const MAX_FILE_BYTES: u64 = 8 + u32::MAX as u64 + 1;

/// The bytes of the file at `path`, refused (an `Err` naming the file) when it is larger than
/// one RIFF chunk or than [`memory_limit`], before they are read. A file whose size is not
/// known in advance (a pipe, a device) is read up to the bound and refused past it.
pub fn read_file(path: &Path) -> Result<Vec<u8>, String> {
    read_file_within(path, memory_limit())
}

/// [`read_file`] with the memory limit `limit`.
fn read_file_within(path: &Path, limit: u64) -> Result<Vec<u8>, String> {
    let cannot = |e: std::io::Error| format!("cannot read AVI {}: {e}", path.display());
    let file = std::fs::File::open(path).map_err(cannot)?;
    let bound = MAX_FILE_BYTES.min(limit);
    let too_large = |size: String| {
        let memory = if MAX_FILE_BYTES <= limit {
            String::new()
        } else {
            format!(" and the memory limit ({})", bytesize::ByteSize(limit))
        };
        format!(
            "{}: the file is {size}, larger than one RIFF chunk (4 GiB, the largest AVI this \
             reader takes){memory}",
            path.display()
        )
    };
    let known = file.metadata().map_err(cannot)?;
    if known.is_file() && known.len() > bound {
        return Err(too_large(format!("{} bytes", known.len())));
    }
    let mut bytes = Vec::new();
    file.take(bound + 1)
        .read_to_end(&mut bytes)
        .map_err(cannot)?;
    if bytes.len() as u64 > bound {
        return Err(too_large(format!("more than {bound} bytes")));
    }
    Ok(bytes)
}

/// A little-endian `u32` at `at` (the caller has checked the bounds).
fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// A little-endian `u16` at `at` (the caller has checked the bounds).
fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

/// A FOURCC for messages: its characters, or its bytes in hex if not printable.
fn fourcc(id: &[u8]) -> String {
    if id.iter().all(|&c| (0x20..0x7f).contains(&c)) {
        format!("'{}'", String::from_utf8_lossy(id))
    } else {
        let mut s = String::from("0x");
        for c in id {
            let _ = write!(s, "{c:02x}");
        }
        s
    }
}

/// One RIFF chunk: its id and where its data is (`start..start + len` of the file).
#[derive(Debug, Clone, Copy)]
struct Chunk<'a> {
    id: &'a [u8],
    start: usize,
    len: usize,
}

impl Chunk<'_> {
    /// For a `LIST` (or `RIFF`): its list type and where its sub-chunks are.
    fn list_type<'b>(&self, bytes: &'b [u8]) -> Result<(&'b [u8], usize, usize), String> {
        if self.len < 4 {
            return Err(format!(
                "{} list at offset {} is too short ({} bytes)",
                fourcc(self.id),
                self.start - 8,
                self.len
            ));
        }
        Ok((
            &bytes[self.start..self.start + 4],
            self.start + 4,
            self.start + self.len,
        ))
    }
}

/// The chunks of `bytes[start..end]`, in order; an `Err` for a chunk header or body that does
/// not fit (a truncated file).
fn chunks(bytes: &[u8], start: usize, end: usize) -> Result<Vec<Chunk<'_>>, String> {
    let mut out = Vec::new();
    let mut at = start;
    while at < end {
        if end - at < 8 {
            return Err(format!(
                "truncated: {} stray bytes at offset {at} where a chunk header (8 bytes) should be",
                end - at
            ));
        }
        let id = &bytes[at..at + 4];
        let len = u32_at(bytes, at + 4) as usize;
        let body = at + 8;
        if len > end - body {
            return Err(format!(
                "truncated: chunk {} at offset {at} says {len} bytes, only {} remain",
                fourcc(id),
                end - body
            ));
        }
        out.push(Chunk {
            id,
            start: body,
            len,
        });
        // Chunks are padded to an even length; the pad byte may be missing at the very end.
        at = (body + len + (len & 1)).min(end);
    }
    Ok(out)
}

/// The video stream's header fields this reader needs.
#[derive(Debug)]
struct VideoFormat {
    width: usize,
    height: usize,
    top_down: bool,
    bit_count: u16,
    format: String,
    /// For 8 bits per pixel: each index's gray level.
    gray_of_index: Option<[u8; 256]>,
}

/// The BT.601 luma of an RGB triple, rounded: `round((299·R + 587·G + 114·B) / 1000)`.
pub fn luma(r: u8, g: u8, b: u8) -> u8 {
    let y = 299 * u32::from(r) + 587 * u32::from(g) + 114 * u32::from(b);
    // At most 255·1000, so the quotient fits a byte.
    ((y + 500) / 1000) as u8
}

/// Parses a `strf` `BITMAPINFOHEADER` (and palette).
fn parse_strf(d: &[u8]) -> Result<VideoFormat, String> {
    if d.len() < 40 {
        return Err(format!(
            "the video format (strf) is {} bytes, a BITMAPINFOHEADER needs 40",
            d.len()
        ));
    }
    let header_size = (u32_at(d, 0) as usize).clamp(40, d.len());
    let width = u32_at(d, 4) as i32;
    let height = u32_at(d, 8) as i32;
    let bit_count = u16_at(d, 14);
    let compression = &d[16..20];
    let colors_used = u32_at(d, 32) as usize;
    if width <= 0 || height == 0 || height == i32::MIN {
        return Err(format!(
            "invalid frame size {width} x {height} in the video format"
        ));
    }
    let (width, rows) = (width as usize, height.unsigned_abs() as usize);
    if width > 1 << 16 || rows > 1 << 16 {
        return Err(format!(
            "frame size {width} x {rows} is larger than this reader accepts (65536 x 65536)"
        ));
    }
    let raw_gray = [b"Y800", b"Y8  ", b"GREY"].contains(&&[
        compression[0],
        compression[1],
        compression[2],
        compression[3],
    ]);
    let bi_rgb = compression == [0, 0, 0, 0];
    let format = if bi_rgb {
        "BI_RGB".to_string()
    } else {
        String::from_utf8_lossy(compression).trim_end().to_string()
    };
    if !bi_rgb && !raw_gray {
        let what = match u32_at(d, 16) {
            1 => "BI_RLE8 (run-length encoded)".to_string(),
            2 => "BI_RLE4 (run-length encoded)".to_string(),
            3 => "BI_BITFIELDS".to_string(),
            _ => format!("codec {}", fourcc(compression)),
        };
        return Err(format!(
            "compressed video ({what}) is not supported: only uncompressed frames \
             (BI_RGB with 8 or 24 bits per pixel, or Y800/GREY)"
        ));
    }
    if raw_gray && bit_count != 8 {
        return Err(format!(
            "format {} with {bit_count} bits per pixel (expected 8)",
            fourcc(compression)
        ));
    }
    if bit_count != 8 && bit_count != 24 {
        return Err(format!(
            "{bit_count} bits per pixel is not supported (only 8 or 24)"
        ));
    }
    let gray_of_index = (bit_count == 8).then(|| {
        let mut map = [0u8; 256];
        for (i, m) in map.iter_mut().enumerate() {
            *m = i as u8;
        }
        if bi_rgb {
            // The palette follows the header: `colors_used` entries (0 = 256), as many as are
            // present. Entries are blue, green, red, reserved.
            let n = if colors_used == 0 { 256 } else { colors_used }.min(256);
            let present = (d.len() - header_size) / 4;
            for (i, m) in map.iter_mut().enumerate().take(n.min(present)) {
                let e = header_size + 4 * i;
                *m = luma(d[e + 2], d[e + 1], d[e]);
            }
        }
        map
    });
    Ok(VideoFormat {
        width,
        height: rows,
        // YUV formats (the gray FOURCCs) are top-down whatever the sign of the height.
        top_down: raw_gray || height < 0,
        bit_count,
        format,
        gray_of_index,
    })
}

/// The headers of `LIST hdrl`: the main header's frame size (0 = unknown), and the video
/// stream's number and format.
fn parse_hdrl(
    bytes: &[u8],
    start: usize,
    end: usize,
) -> Result<((usize, usize), usize, VideoFormat), String> {
    let mut main_size = None;
    let mut stream_no = 0usize;
    let mut video = None;
    for c in chunks(bytes, start, end)? {
        match c.id {
            b"avih" => {
                if c.len < 56 {
                    return Err(format!(
                        "the main header (avih) is {} bytes, expected 56",
                        c.len
                    ));
                }
                let w = u32_at(bytes, c.start + 32) as usize;
                let h = u32_at(bytes, c.start + 36) as usize;
                main_size = Some((w, h));
            }
            b"LIST" => {
                let (kind, s, e) = c.list_type(bytes)?;
                if kind != b"strl" {
                    continue;
                }
                let mut is_video = false;
                let mut format = None;
                for sc in chunks(bytes, s, e)? {
                    match sc.id {
                        b"strh" => {
                            if sc.len < 36 {
                                return Err(format!(
                                    "stream {stream_no}: its header (strh) is {} bytes, expected at least 36",
                                    sc.len
                                ));
                            }
                            is_video = &bytes[sc.start..sc.start + 4] == b"vids";
                        }
                        b"strf" => format = Some(&bytes[sc.start..sc.start + sc.len]),
                        _ => {}
                    }
                }
                if is_video && video.is_none() {
                    let f = format.ok_or_else(|| {
                        format!("video stream {stream_no} has no format chunk (strf)")
                    })?;
                    video = Some((stream_no, parse_strf(f)?));
                }
                stream_no += 1;
            }
            _ => {}
        }
    }
    let main_size = main_size.ok_or("no main AVI header (avih) in LIST hdrl")?;
    let (no, format) = video.ok_or("no video stream (no strh of type 'vids')")?;
    Ok((main_size, no, format))
}

/// The data chunks of video stream `no` in `movi` (`bytes[start..end]`) and its `LIST rec `
/// groups, in file order. The groups are walked with a heap stack of the lists entered (their
/// chunks not yet visited), not by recursion: a file may nest them as deep as its size allows.
fn collect_frames(bytes: &[u8], start: usize, end: usize, no: usize) -> Result<Vec<&[u8]>, String> {
    let tag = format!("{no:02}");
    let mut out = Vec::new();
    let mut open = vec![chunks(bytes, start, end)?.into_iter()];
    while let Some(level) = open.last_mut() {
        let Some(c) = level.next() else {
            open.pop();
            continue;
        };
        if c.id == b"LIST" {
            let (kind, s, e) = c.list_type(bytes)?;
            if kind == b"rec " {
                open.push(chunks(bytes, s, e)?.into_iter());
            }
            continue;
        }
        if &c.id[..2] != tag.as_bytes() {
            continue;
        }
        match &c.id[2..] {
            b"db" | b"dc" => out.push(&bytes[c.start..c.start + c.len]),
            b"pc" => {
                return Err(format!(
                    "palette changes inside the video ({} chunk) are not supported",
                    fourcc(c.id)
                ));
            }
            _ => {}
        }
    }
    Ok(out)
}

/// Decodes an AVI held in memory: at most `max_frames` frames (`None` = all). The file and
/// the decoded frames must fit in [`memory_limit`] (checked before the frames are allocated).
pub fn decode(bytes: &[u8], max_frames: Option<usize>) -> Result<Avi, String> {
    decode_within(bytes, max_frames, memory_limit())
}

/// [`decode`] with the memory limit `limit`.
fn decode_within(bytes: &[u8], max_frames: Option<usize>, limit: u64) -> Result<Avi, String> {
    if bytes.len() < 12 || &bytes[0..4] != b"RIFF" || &bytes[8..12] != b"AVI " {
        let head = &bytes[..bytes.len().min(12)];
        return Err(format!(
            "not a RIFF AVI file (it starts with {})",
            if head.is_empty() {
                "nothing: the file is empty".to_string()
            } else {
                fourcc(head)
            }
        ));
    }
    let riff_len = u32_at(bytes, 4) as usize;
    if riff_len < 4 || riff_len > bytes.len() - 8 {
        return Err(format!(
            "truncated: the RIFF header says {} bytes follow, the file has {}",
            riff_len,
            bytes.len() - 8
        ));
    }
    let end = 8 + riff_len;
    // OpenDML files continue in further `RIFF AVIX` chunks after the first.
    if let Ok(rest) = chunks(bytes, end + (end & 1).min(bytes.len() - end), bytes.len())
        && rest
            .iter()
            .any(|c| c.id == b"RIFF" && c.len >= 4 && &bytes[c.start..c.start + 4] == b"AVIX")
    {
        return Err("OpenDML AVI (RIFF AVIX extensions, files over 1 GiB) is not supported".into());
    }
    let mut hdrl = None;
    let mut frames = Vec::new();
    let mut movi = false;
    for c in chunks(bytes, 12, end)? {
        if c.id != b"LIST" {
            continue;
        }
        let (kind, s, e) = c.list_type(bytes)?;
        match kind {
            b"hdrl" if hdrl.is_none() => hdrl = Some(parse_hdrl(bytes, s, e)?),
            b"movi" if !movi => {
                let no = hdrl
                    .as_ref()
                    .ok_or("the movi list comes before the headers (LIST hdrl)")?
                    .1;
                frames = collect_frames(bytes, s, e, no)?;
                movi = true;
            }
            _ => {}
        }
    }
    let ((main_w, main_h), _, f) = hdrl.ok_or("no header list (LIST hdrl)")?;
    if !movi {
        return Err("no frame data (no LIST movi)".to_string());
    }
    if (main_w, main_h) != (0, 0) && (main_w, main_h) != (f.width, f.height) {
        return Err(format!(
            "the main header says {main_w} x {main_h} pixels, the video format {} x {}",
            f.width, f.height
        ));
    }
    if frames.is_empty() {
        return Err("the video has no frames".to_string());
    }
    if frames[0].is_empty() {
        return Err("the first frame is empty (a dropped frame with nothing before it)".into());
    }
    let (w, h) = (f.width, f.height);
    let bpp = usize::from(f.bit_count / 8);
    let tight = w * bpp;
    let padded = tight.div_ceil(4) * 4;
    let decoded = max_frames.map_or(frames.len(), |m| m.min(frames.len()));
    let n = w * h;
    let what = format!("{decoded} frames of {w} x {h} pixels");
    // The file (held by the caller) and the frames, a pixel an `f32`.
    let need = bytes.len() as f64 + 4.0 * decoded as f64 * n as f64;
    check_memory_within(&what, need, limit)?;
    let total = n
        .checked_mul(decoded)
        .ok_or_else(|| format!("{what} are too many pixels"))?;
    let mut pixels = vec![0f32; total];
    let mut last = 0;
    let mut gray_row = vec![0u8; w];
    for t in 0..decoded {
        let data = if frames[t].is_empty() {
            frames[last]
        } else {
            last = t;
            frames[t]
        };
        let stride = if data.len() == padded * h {
            padded
        } else if data.len() == tight * h {
            tight
        } else {
            return Err(format!(
                "frame {t}: its chunk has {} bytes, expected {} ({h} rows of {padded} bytes, \
                 padded to 4) or {} (unpadded rows)",
                data.len(),
                padded * h,
                tight * h
            ));
        };
        let frame = &mut pixels[t * n..(t + 1) * n];
        for (r, out) in frame.chunks_exact_mut(w).enumerate() {
            let src_row = if f.top_down { r } else { h - 1 - r };
            let src = &data[src_row * stride..src_row * stride + tight];
            match &f.gray_of_index {
                Some(map) => {
                    for (g, &i) in gray_row.iter_mut().zip(src) {
                        *g = map[usize::from(i)];
                    }
                }
                None => {
                    for (g, bgr) in gray_row.iter_mut().zip(src.chunks_exact(3)) {
                        *g = luma(bgr[2], bgr[1], bgr[0]);
                    }
                }
            }
            for (o, &g) in out.iter_mut().zip(&gray_row) {
                *o = gray_level(g);
            }
        }
    }
    Ok(Avi {
        video: Video {
            rows: h,
            cols: w,
            frames: decoded,
            pixels,
        },
        info: AviInfo {
            width: w,
            height: h,
            bit_count: f.bit_count,
            format: f.format,
            top_down: f.top_down,
            frames_in_file: frames.len(),
        },
    })
}

/// A gray byte as a pixel value in `[0, 1]`: `b / 255` in `f64`, rounded to `f32` (the same
/// value the synthetic video stores for that level).
pub fn gray_level(b: u8) -> f32 {
    (f64::from(b) / 255.0) as f32
}

/// A pixel value in `[0, 1]` as a gray byte: `round(255·v)`, clamped.
fn gray_byte(v: f32) -> u8 {
    (f64::from(v) * 255.0).round().clamp(0.0, 255.0) as u8
}

/// Writes a RIFF chunk (`id`, length, data, pad byte) to `out`.
fn put_chunk(out: &mut Vec<u8>, id: &[u8; 4], data: &[u8]) {
    out.extend_from_slice(id);
    out.extend_from_slice(&(data.len() as u32).to_le_bytes());
    out.extend_from_slice(data);
    if data.len() % 2 == 1 {
        out.push(0);
    }
}

/// A `LIST` of type `kind` around `body`.
fn list(kind: &[u8; 4], body: &[u8]) -> Vec<u8> {
    let mut data = kind.to_vec();
    data.extend_from_slice(body);
    let mut out = Vec::new();
    put_chunk(&mut out, b"LIST", &data);
    out
}

/// Encodes `video` as an uncompressed AVI the way common writers store gray video: 8-bit
/// `BI_RGB` with the identity gray palette, bottom-up rows padded to 4 bytes, one `00db`
/// chunk per frame, an `idx1` index, 25 frames per second. Pixel values become
/// `round(255·v)`, so [`decode`] gives back every video whose values are multiples of
/// 1/255 (the synthetic video's) exactly.
pub fn encode_gray8(video: &Video) -> Vec<u8> {
    let (w, h) = (video.cols, video.rows);
    let stride = w.div_ceil(4) * 4;
    let frame_bytes = stride * h;
    let le = |v: u32| v.to_le_bytes();
    let mut avih = Vec::new();
    for v in [
        40_000, // microseconds per frame
        (frame_bytes * 25) as u32,
        0,
        0x10, // AVIF_HASINDEX
        video.frames as u32,
        0,
        1,
        frame_bytes as u32,
        w as u32,
        h as u32,
        0,
        0,
        0,
        0,
    ] {
        avih.extend_from_slice(&le(v));
    }
    let mut strh = Vec::new();
    strh.extend_from_slice(b"vids");
    strh.extend_from_slice(b"DIB ");
    for v in [
        0u32,
        0,
        0,
        1,
        25,
        0,
        video.frames as u32,
        frame_bytes as u32,
        0,
        0,
    ] {
        strh.extend_from_slice(&le(v));
    }
    strh.extend_from_slice(&[0; 8]); // rcFrame
    let mut strf = Vec::new();
    for v in [40u32, w as u32, h as u32] {
        strf.extend_from_slice(&le(v));
    }
    strf.extend_from_slice(&1u16.to_le_bytes());
    strf.extend_from_slice(&8u16.to_le_bytes());
    for v in [0u32, frame_bytes as u32, 0, 0, 256, 0] {
        strf.extend_from_slice(&le(v));
    }
    for i in 0..=255u8 {
        strf.extend_from_slice(&[i, i, i, 0]);
    }
    let mut strl = Vec::new();
    put_chunk(&mut strl, b"strh", &strh);
    put_chunk(&mut strl, b"strf", &strf);
    let mut hdrl = Vec::new();
    put_chunk(&mut hdrl, b"avih", &avih);
    hdrl.extend_from_slice(&list(b"strl", &strl));

    let mut movi = Vec::new();
    let mut idx1 = Vec::new();
    let mut frame = vec![0u8; frame_bytes];
    for t in 0..video.frames {
        let px = video.frame(t);
        for r in 0..h {
            let dst = &mut frame[(h - 1 - r) * stride..(h - 1 - r) * stride + w];
            for (d, &v) in dst.iter_mut().zip(&px[r * w..(r + 1) * w]) {
                *d = gray_byte(v);
            }
        }
        // idx1 offsets are relative to the `movi` list type field.
        let offset = 4 + movi.len();
        put_chunk(&mut movi, b"00db", &frame);
        idx1.extend_from_slice(b"00db");
        for v in [0x10u32, offset as u32, frame_bytes as u32] {
            idx1.extend_from_slice(&le(v));
        }
    }
    let mut body = b"AVI ".to_vec();
    body.extend_from_slice(&list(b"hdrl", &hdrl));
    body.extend_from_slice(&list(b"movi", &movi));
    put_chunk(&mut body, b"idx1", &idx1);
    let mut out = Vec::new();
    put_chunk(&mut out, b"RIFF", &body);
    out
}

#[cfg(test)]
mod tests;
