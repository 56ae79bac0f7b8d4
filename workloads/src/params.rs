//! A workload's input parameters: the named values a size preset sets ([`Workload::preset`])
//! and `run --param key=value` overrides ([`Params::set`]), printed `key=value key=value` in
//! every result row.
//!
//! The preset fixes the keys and the kind of each value: an override can change a value but
//! never add a key or change its kind, so a misspelt key or a malformed value is refused with
//! one line instead of being ignored.
//!
//! [`Workload::preset`]: crate::Workload::preset

use std::fmt;

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
    #[should_panic(expected = "not an integer")]
    fn a_wrong_getter_is_a_bug() {
        preset().get_int("eps");
    }
}
