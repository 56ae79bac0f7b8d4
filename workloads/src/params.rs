//! A workload's input parameters: the named values a size preset sets ([`Workload::preset`])
//! and `run --param key=value` overrides ([`Params::set`]), printed `key=value key=value` in
//! every result row.
//!
//! The preset fixes the keys and the kind of each value: an override can change a value but
//! never add a key or change its kind, so a misspelt key or a malformed value is refused with
//! one line instead of being ignored.
//!
//! A value that sizes the input's memory is bounded too: the workload estimates the memory the
//! input and one repetition's state need and refuses, before allocating, an estimate above
//! [`memory_limit`] ([`check_memory`]).
//!
//! [`Workload::preset`]: crate::Workload::preset

use bytesize::ByteSize;
use std::fmt;
use std::sync::OnceLock;

/// One parameter's value.
#[derive(Debug, Clone, PartialEq)]
enum Value {
    /// A count or size. Overrides accept `123`, `1_000`, `2^26` and `10^8`.
    Int(u64),
    /// A real number (`1e-9`, `0.124875`).
    Float(f64),
    /// A name (a UTS tree, a mode); no whitespace.
    Text(String),
}

/// A workload's input parameters, in the order the paper names them.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Params(Vec<(&'static str, Value)>);

impl Params {
    /// No parameters.
    pub fn new() -> Params {
        Params(Vec::new())
    }

    fn with(mut self, key: &'static str, value: Value) -> Params {
        assert!(
            self.0.iter().all(|(k, _)| *k != key),
            "parameter '{key}' given twice"
        );
        self.0.push((key, value));
        self
    }

    /// Adds an integer parameter.
    pub fn int(self, key: &'static str, value: u64) -> Params {
        self.with(key, Value::Int(value))
    }

    /// Adds a real parameter.
    pub fn float(self, key: &'static str, value: f64) -> Params {
        self.with(key, Value::Float(value))
    }

    /// Adds a text parameter.
    pub fn text(self, key: &'static str, value: &str) -> Params {
        self.with(key, Value::Text(value.to_string()))
    }

    fn get(&self, key: &str) -> &Value {
        match self.0.iter().find(|(k, _)| *k == key) {
            Some((_, v)) => v,
            None => panic!("no parameter '{key}' in {self}"),
        }
    }

    /// The integer `key`. Panics when the preset has no such integer (a bug in the workload).
    pub fn get_int(&self, key: &str) -> u64 {
        match self.get(key) {
            Value::Int(v) => *v,
            v => panic!("parameter '{key}' is {v:?}, not an integer"),
        }
    }

    /// The integer `key` as a `usize`; `Err` when it does not fit this machine's addresses.
    pub fn get_usize(&self, key: &str) -> Result<usize, String> {
        let v = self.get_int(key);
        usize::try_from(v).map_err(|_| format!("{key}={v} is too large for this machine"))
    }

    /// The real `key`. Panics when the preset has no such real (a bug in the workload).
    pub fn get_float(&self, key: &str) -> f64 {
        match self.get(key) {
            Value::Float(v) => *v,
            v => panic!("parameter '{key}' is {v:?}, not a real number"),
        }
    }

    /// The text `key`. Panics when the preset has no such text (a bug in the workload).
    pub fn get_text(&self, key: &str) -> &str {
        match self.get(key) {
            Value::Text(v) => v,
            v => panic!("parameter '{key}' is {v:?}, not a text"),
        }
    }

    /// The text `key` read as an integer (written as [`Params::set`] reads integers: `123`,
    /// `2^26`, ...), or `None` when it is `word`: a parameter whose preset value is derived
    /// from another one (mm's side from its paper, a UTS value from the named tree).
    pub fn get_int_or(&self, key: &str, word: &str) -> Result<Option<u64>, String> {
        match self.get_text(key) {
            v if v == word => Ok(None),
            v => parse_int(v).map(Some).ok_or_else(|| {
                format!("{key}={v}: expected a non-negative integer (123, 2^26, 10^8) or '{word}'")
            }),
        }
    }

    /// `Err` unless the integer `key` is `value`: a parameter fixed at compile time (a block
    /// type's side), recorded so that the reader sees it.
    pub fn fixed(&self, key: &str, value: u64) -> Result<(), String> {
        match self.get_int(key) {
            v if v == value => Ok(()),
            v => Err(format!("{key}={v}: fixed at {value} in this build")),
        }
    }

    /// The keys, in order.
    pub fn keys(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.0.iter().map(|(k, _)| *k)
    }

    /// Overrides `key` with `value` parsed as the kind the preset gave it. `Err` (one line)
    /// for a key the preset does not have or a value of the wrong form.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        let known = self.keys().collect::<Vec<_>>().join(", ");
        let Some((_, slot)) = self.0.iter_mut().find(|(k, _)| *k == key) else {
            return Err(format!(
                "unknown parameter '{key}' (parameters: {})",
                if known.is_empty() { "none" } else { &known }
            ));
        };
        *slot = match slot {
            Value::Int(_) => Value::Int(parse_int(value).ok_or_else(|| {
                format!("{key}={value}: expected a non-negative integer (123, 2^26, 10^8)")
            })?),
            Value::Float(_) => Value::Float(
                value
                    .parse::<f64>()
                    .ok()
                    .filter(|v| v.is_finite())
                    .ok_or_else(|| format!("{key}={value}: expected a finite number"))?,
            ),
            Value::Text(_) => {
                if value.is_empty() || value.contains(char::is_whitespace) {
                    return Err(format!("{key}={value:?}: expected a word without spaces"));
                }
                Value::Text(value.to_string())
            }
        };
        Ok(())
    }

    /// Applies `key=value` overrides in order (see [`Params::set`]).
    pub fn apply<'a>(
        mut self,
        overrides: impl IntoIterator<Item = &'a (String, String)>,
    ) -> Result<Params, String> {
        for (k, v) in overrides {
            self.set(k, v)?;
        }
        Ok(self)
    }
}

/// `123`, `1_000`, `2^26`, `10^8`; `None` on anything else or on overflow.
fn parse_int(s: &str) -> Option<u64> {
    let plain = |t: &str| -> Option<u64> {
        let digits = t.replace('_', "");
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        digits.parse().ok()
    };
    match s.split_once('^') {
        None => plain(s),
        Some((base, exp)) => plain(base)?.checked_pow(u32::try_from(plain(exp)?).ok()?),
    }
}

/// The share of this machine's physical memory an input may need: the rest is left to the
/// system, the runtime's stacks and the harness.
pub const MEMORY_SHARE: (u64, u64) = (3, 4);

/// The most memory a workload's input and one repetition's state may need:
/// [`MEMORY_SHARE`] of this machine's physical memory, read once.
pub fn memory_limit() -> u64 {
    static LIMIT: OnceLock<u64> = OnceLock::new();
    *LIMIT.get_or_init(|| physical_memory() / MEMORY_SHARE.1 * MEMORY_SHARE.0)
}

/// The physical memory of this machine, in bytes.
fn physical_memory() -> u64 {
    // SAFETY: sysconf reads a configuration value and touches no memory of ours.
    let (pages, page) = unsafe {
        (
            libc::sysconf(libc::_SC_PHYS_PAGES),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    match (u64::try_from(pages), u64::try_from(page)) {
        (Ok(pages), Ok(page)) if pages > 0 && page > 0 => pages.saturating_mul(page),
        _ => panic!("sysconf does not tell this machine's physical memory"),
    }
}

/// `Err` (one line) when `bytes`, the memory that the input sized by `values` (`n=1000`) needs
/// with one repetition's state, is above [`memory_limit`]; the message names the values, the
/// memory and the limit. `bytes` is an estimate computed in `f64`, so that no product of
/// parameters overflows; a workload calls this before it allocates.
pub fn check_memory(values: &str, bytes: f64) -> Result<(), String> {
    check_memory_within(values, bytes, memory_limit())
}

/// [`check_memory`] against `limit`.
pub(crate) fn check_memory_within(values: &str, bytes: f64, limit: u64) -> Result<(), String> {
    if bytes <= limit as f64 {
        return Ok(());
    }
    // Above 2^64 bytes `as` saturates: the need is shown as at least 16 EiB.
    let need = ByteSize(bytes as u64);
    let need = if bytes >= u64::MAX as f64 {
        format!("more than {need}")
    } else {
        need.to_string()
    };
    let (share, of) = MEMORY_SHARE;
    Err(format!(
        "{values}: the input needs {need} of memory; the limit is {} ({share}/{of} of this \
         machine's physical memory)",
        ByteSize(limit)
    ))
}

impl fmt::Display for Params {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (k, v)) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            match v {
                Value::Int(v) => write!(f, "{k}={v}")?,
                // Debug prints the shortest form that reads back the same value (`1e-9`).
                Value::Float(v) => write!(f, "{k}={v:?}")?,
                Value::Text(v) => write!(f, "{k}={v}")?,
            }
        }
        Ok(())
    }
}

/// Parses one `key=value` override (an argument of `--param`, a part of a spec).
pub fn parse_override(arg: &str) -> Result<(String, String), String> {
    match arg.split_once('=') {
        Some((k, v)) if !k.is_empty() => Ok((k.to_string(), v.to_string())),
        _ => Err(format!("{arg:?}: expected key=value")),
    }
}

/// `key=value` overrides of parameters, in the order given: a later value of a key wins.
pub type Overrides = Vec<(String, String)>;

/// Splits a workload spec `NAME[/key=value]...` into the workload's name and its overrides.
/// A spec is a workload with some parameters set, as figures' rows and result files spell it
/// (`uts/tree=T3L`), the way a runtime arm spells a runtime's configuration (`libfork/idle=busy`).
pub fn split_spec(spec: &str) -> Result<(&str, Overrides), String> {
    let mut parts = spec.split('/');
    let name = parts.next().unwrap_or_default();
    let overrides = parts.map(parse_override).collect::<Result<_, _>>()?;
    Ok((name, overrides))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn preset() -> Params {
        Params::new()
            .int("n", 4096)
            .float("eps", 1e-9)
            .text("tree", "T1")
    }

    #[test]
    fn prints_in_order_and_reads_back() {
        let p = preset();
        assert_eq!(p.to_string(), "n=4096 eps=1e-9 tree=T1");
        assert_eq!(
            (p.get_int("n"), p.get_float("eps"), p.get_text("tree")),
            (4096, 1e-9, "T1")
        );
        let mut q = p.clone();
        for (k, v) in [("n", "4096"), ("eps", "1e-9"), ("tree", "T1")] {
            q.set(k, v).unwrap();
        }
        assert_eq!(q, p);
    }

    #[test]
    fn overrides_parse_by_the_presets_kind() {
        let o = |k: &str, v: &str| (k.to_string(), v.to_string());
        let p = preset()
            .apply(&[o("n", "2^26"), o("eps", "0.5"), o("tree", "T3L")])
            .unwrap();
        assert_eq!(p.to_string(), "n=67108864 eps=0.5 tree=T3L");
        assert_eq!(parse_int("10^8"), Some(100_000_000));
        assert_eq!(parse_int("1_000"), Some(1000));
        assert_eq!(parse_int("2^64"), None);
        for (k, v) in [
            ("n", "-1"),
            ("n", "1.5"),
            ("n", ""),
            ("eps", "x"),
            ("eps", "inf"),
            ("tree", "a b"),
        ] {
            let e = preset().set(k, v).unwrap_err();
            assert!(e.starts_with(&format!("{k}=")), "{e}");
        }
        let e = preset().set("m", "3").unwrap_err();
        assert_eq!(e, "unknown parameter 'm' (parameters: n, eps, tree)");
    }

    #[test]
    fn override_arguments_need_a_key_and_an_equals_sign() {
        assert_eq!(parse_override("n=3").unwrap(), ("n".into(), "3".into()));
        assert_eq!(parse_override("q=").unwrap(), ("q".into(), "".into()));
        assert!(parse_override("n").is_err());
        assert!(parse_override("=3").is_err());
        assert_eq!(split_spec("fib").unwrap(), ("fib", vec![]));
        assert_eq!(
            split_spec("uts/tree=T3L/r=7").unwrap(),
            (
                "uts",
                vec![("tree".into(), "T3L".into()), ("r".into(), "7".into())]
            )
        );
        assert!(split_spec("uts/tree").unwrap_err().contains("key=value"));
    }

    #[test]
    fn a_number_or_a_word_reads_integers_as_set_does() {
        let p = Params::new().text("n", "input");
        assert_eq!(p.get_int_or("n", "input"), Ok(None));
        for (v, want) in [("2^6", 64), ("10^3", 1000), ("1_024", 1024), ("77", 77)] {
            let mut q = p.clone();
            q.set("n", v).unwrap();
            assert_eq!(q.get_int_or("n", "input"), Ok(Some(want)), "{v}");
        }
        let mut q = p.clone();
        q.set("n", "2^64").unwrap();
        let e = q.get_int_or("n", "input").unwrap_err();
        assert_eq!(
            e,
            "n=2^64: expected a non-negative integer (123, 2^26, 10^8) or 'input'"
        );
    }

    #[test]
    fn memory_above_the_limit_is_one_line_naming_both() {
        let gib = 1u64 << 30;
        assert_eq!(
            check_memory_within("n=8", 3.0 * gib as f64, 3 * gib),
            Ok(())
        );
        let e = check_memory_within("n=10^9", 24e9, 12 * gib).unwrap_err();
        assert_eq!(
            e,
            "n=10^9: the input needs 22.4 GiB of memory; the limit is 12.0 GiB (3/4 of this \
             machine's physical memory)"
        );
        let e = check_memory_within("n=2^40", 1e30, gib).unwrap_err();
        assert!(e.contains("needs more than 16.0 EiB of memory"), "{e}");
        // The machine's own limit: some memory, less than all of it.
        let limit = memory_limit();
        assert!(0 < limit && limit < physical_memory(), "{limit}");
        let e = check_memory("n=10^18", 8e18).unwrap_err();
        assert!(
            e.starts_with("n=10^18: the input needs 6.9 EiB of memory"),
            "{e}"
        );
    }

    #[test]
    fn every_size_parameter_is_refused_before_it_allocates() {
        use crate::{Size, Workload};
        // Values whose input would need more memory than any machine has: each is one line
        // naming the memory (an allocation would abort the test instead). smm, bst and
        // cholesky also have caps of their own, below that (tens to hundreds of GiB).
        let memory = "of memory; the limit is";
        let cases = [
            ("sort", "n=10^18", memory),
            ("quicksort", "n=10^15", memory),
            ("fft", "n=2^50", memory),
            ("mm", "n=2^40", memory),
            ("lu", "n=2^30", memory),
            ("rectmul", "n=2^30", memory),
            ("heat", "nx=2^30 ny=2^30", memory),
            ("ferret", "db=10^15", memory),
            ("hw", "frames=10^12", memory),
            ("lcs", "n=2^40 b=1", memory),
            ("sw", "n=2^30 b=2^30", memory),
            ("bst", "s1=2^32", "at most 4294967294 nodes"),
            ("smm", "n=2^16", "n = 64·2^k <= 32768"),
        ];
        for (name, values, needle) in cases {
            let overrides: Overrides = values
                .split(' ')
                .map(|v| parse_override(v).unwrap())
                .collect();
            let e = crate::with_workload!(name, W => {
                W::input(&W::preset(Size::Test).apply(&overrides).unwrap()).err()
            })
            .expect("a workload");
            let e = e.unwrap_or_else(|| panic!("{name} {values} was accepted"));
            assert!(e.contains(needle) && !e.contains('\n'), "{name}: {e}");
        }
        // mm's side is a number or `input`, the number written as integers are.
        use crate::mm::Mm;
        let side = Mm::preset(Size::Test).apply(&[("n".into(), "2^6".into())]);
        assert_eq!(Mm::input(&side.unwrap()).unwrap().n, 64);
    }

    #[test]
    #[should_panic(expected = "not an integer")]
    fn a_wrong_getter_is_a_bug() {
        preset().get_int("eps");
    }
}
