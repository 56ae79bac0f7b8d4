//! The harness's modules import one way: no two of them import each other, directly or
//! through others. This test reads `src/**/*.rs`, takes every path through `crate::` (a `use`,
//! a `crate::x::f()` call, a `use crate::{a, b}` group, `super::` up to the crate root) in the
//! code that the library builds, and refuses a cycle among the modules `lib.rs` declares (the
//! rooms: `claims`, `figures`, `plan`, ...; a submodule's imports count as its room's). Tests
//! (`#[cfg(test)]` items) are left out: a test may check its module against any other (a
//! figure's test reads the plan's default workers) and builds into no binary. Comments and
//! string literals are left out too, so a doc link is no import.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// `text` without its comments, and with every string and character literal emptied (`""`,
/// `' '`), so that neither a doc link nor a message is read as code. Each line keeps its
/// number: a block comment or a string that spans lines leaves its newlines.
fn code_only(text: &str) -> String {
    let b: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let newlines = |span: &[char]| span.iter().filter(|&&c| c == '\n').collect::<String>();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < b.len() && b[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let from = i;
            let mut depth = 0;
            while i < b.len() {
                if b[i] == '/' && b.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if b[i] == '*' && b.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            out.push_str(&newlines(&b[from..i.min(b.len())]));
        } else if c == 'r' && matches!(next, Some('#') | Some('"')) && !ident_before(&b, i) {
            // A raw string: r"..." or r#"..."#.
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            j += 1;
            loop {
                if j >= b.len() {
                    break;
                }
                if b[j] == '"' && (0..hashes).all(|k| b.get(j + 1 + k) == Some(&'#')) {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            out.push_str("\"\"");
            out.push_str(&newlines(&b[i..j.min(b.len())]));
            i = j;
        } else if c == '"' {
            let from = i;
            i += 1;
            while i < b.len() && b[i] != '"' {
                i += if b[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
            out.push_str(&newlines(&b[from..i.min(b.len())]));
        } else if c == '\'' {
            // A character literal ('x', '\n', '\u{7f}'), or a lifetime ('a), kept.
            let close = if next == Some('\\') {
                (i + 2..b.len().min(i + 12)).find(|&j| b[j] == '\'')
            } else {
                (b.get(i + 2) == Some(&'\'')).then_some(i + 2)
            };
            match close {
                Some(j) => {
                    out.push_str("' '");
                    i = j + 1;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// Whether the character before `i` continues an identifier (`for` in `for"`, `br` in `br"`).
fn ident_before(b: &[char], i: usize) -> bool {
    i > 0 && (b[i - 1].is_alphanumeric() || b[i - 1] == '_')
}

/// `code` (comments and literals gone) without its `#[cfg(test)]` items: the attribute and
/// the item after it, up to its `;` or its matching `}`, each replaced by its newlines, so
/// that every line keeps its number.
fn without_tests(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    let mut rest = code;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let item = &rest[at..];
        let end = match item.find(['{', ';']) {
            Some(open) if item.as_bytes()[open] == b'{' => {
                let mut depth = 0;
                let mut end = item.len();
                for (k, ch) in item[open..].char_indices() {
                    match ch {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                end = open + k + 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                end
            }
            Some(semi) => semi + 1,
            None => item.len(),
        };
        out.extend(item[..end].matches('\n'));
        rest = &item[end..];
    }
    out.push_str(rest);
    out
}

/// The first identifier at the start of `s`, if any.
fn ident(s: &str) -> Option<&str> {
    let end = s
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    (end > 0).then(|| &s[..end])
}

/// Every name `code` reaches through the crate root, with its line: `x` of `crate::x`, each
/// leading name of `crate::{x, y::z}` (a group may span lines, as rustfmt breaks a long one),
/// and `x` of `super::...::x` where the `super`s climb from a module `depth` below the root to
/// the root itself.
fn root_names(code: &str, depth: usize) -> Vec<(String, usize)> {
    let line_of = |at: usize| code[..at].matches('\n').count() + 1;
    let mut starts: Vec<usize> = code
        .match_indices("crate::")
        .map(|(i, m)| i + m.len())
        .filter(|&at| !code[..at].ends_with("$crate::"))
        .collect();
    // `super::` chains that reach the root.
    for (i, _) in code.match_indices("super::") {
        if code[..i].ends_with("super::") {
            continue;
        }
        let mut at = i;
        let mut ups = 0;
        while code[at..].starts_with("super::") {
            at += 7;
            ups += 1;
        }
        if ups == depth {
            starts.push(at);
        }
    }
    starts.sort_unstable();
    let mut out = Vec::new();
    for at in starts {
        let after = &code[at..];
        if let Some(group) = after.strip_prefix('{') {
            // The group's items at its first level: `a`, `b::c`, `d::{e, f}`.
            let mut level = 0;
            let mut item_start = true;
            for (k, ch) in group.char_indices() {
                match ch {
                    '{' => level += 1,
                    '}' if level == 0 => break,
                    '}' => level -= 1,
                    ',' if level == 0 => item_start = true,
                    c if c.is_whitespace() => {}
                    _ if item_start && level == 0 => {
                        item_start = false;
                        if let Some(name) = ident(&group[k..]) {
                            out.push((name.to_string(), line_of(at + 1 + k)));
                        }
                    }
                    _ => {}
                }
            }
        } else if let Some(name) = ident(after) {
            out.push((name.to_string(), line_of(at)));
        }
    }
    out
}

/// Every `.rs` file under `src`, sorted.
fn sources(src: &Path) -> Vec<PathBuf> {
    let (mut dirs, mut files) = (vec![src.to_path_buf()], Vec::new());
    while let Some(dir) = dirs.pop() {
        for path in std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()) {
            match path.extension() {
                _ if path.is_dir() => dirs.push(path),
                Some(e) if e == "rs" => files.push(path),
                _ => {}
            }
        }
    }
    files.sort();
    files
}

/// The room of the file at `rel` (relative to `src/`), and how deep its module is below the
/// crate root: `plan.rs` is `plan` at 1, `claims/mod.rs` `claims` at 1, `claims/check.rs`
/// `claims` at 2. `lib.rs` is the root (`None`).
fn room_of(rel: &Path) -> Option<(String, usize)> {
    let parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let last = parts.last()?.trim_end_matches(".rs").to_string();
    let depth = parts.len() - usize::from(last == "mod");
    if parts.len() == 1 && last == "lib" {
        return None;
    }
    Some((parts[0].trim_end_matches(".rs").to_string(), depth))
}

/// The modules `lib.rs` declares for the library (its `#[cfg(test)]` ones aside).
fn declared_rooms(lib: &str) -> BTreeSet<String> {
    without_tests(&code_only(lib))
        .lines()
        .filter_map(|l| {
            let l = l.trim();
            let l = l.strip_prefix("pub ").unwrap_or(l);
            let l = l.strip_prefix("pub(crate) ").unwrap_or(l);
            l.strip_prefix("mod ")?
                .strip_suffix(';')
                .map(str::to_string)
        })
        .collect()
}

/// Room -> the rooms it imports, each with where (`file:line`).
type Graph = BTreeMap<String, BTreeMap<String, Vec<String>>>;

/// The import graph of the rooms of the library in `src`.
fn graph(src: &Path) -> Graph {
    let rooms = declared_rooms(&std::fs::read_to_string(src.join("lib.rs")).unwrap());
    let mut g = Graph::new();
    for path in sources(src) {
        let rel = path.strip_prefix(src).unwrap();
        let Some((room, depth)) = room_of(rel) else {
            continue;
        };
        if !rooms.contains(&room) {
            continue;
        }
        let code = without_tests(&code_only(&std::fs::read_to_string(&path).unwrap()));
        let edges = g.entry(room.clone()).or_default();
        for (name, line) in root_names(&code, depth) {
            if name != room && rooms.contains(&name) {
                edges
                    .entry(name)
                    .or_default()
                    .push(format!("{}:{line}", rel.display()));
            }
        }
    }
    g
}

/// A cycle of `g`, as its rooms in order (the first repeated at the end), if it has one.
fn find_cycle(g: &Graph) -> Option<Vec<String>> {
    /// 0: not seen, 1: on the path, 2: done.
    fn visit<'a>(
        g: &'a Graph,
        v: &'a str,
        state: &mut BTreeMap<&'a str, u8>,
        path: &mut Vec<&'a str>,
    ) -> Option<Vec<String>> {
        state.insert(v, 1);
        path.push(v);
        for w in g.get(v).into_iter().flat_map(|e| e.keys()) {
            match state.get(w.as_str()).copied().unwrap_or(0) {
                1 => {
                    let from = path.iter().position(|x| *x == w).unwrap();
                    let mut cycle: Vec<String> =
                        path[from..].iter().map(|s| s.to_string()).collect();
                    cycle.push(w.clone());
                    return Some(cycle);
                }
                0 => {
                    if let Some(c) = visit(g, w, state, path) {
                        return Some(c);
                    }
                }
                _ => {}
            }
        }
        path.pop();
        state.insert(v, 2);
        None
    }
    let mut state = BTreeMap::new();
    for v in g.keys() {
        if state.get(v.as_str()).copied().unwrap_or(0) == 0 {
            let mut path = Vec::new();
            if let Some(c) = visit(g, v, &mut state, &mut path) {
                return Some(c);
            }
        }
    }
    None
}

#[test]
fn no_two_modules_import_each_other() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let g = graph(&src);
    // The graph was read: the commands import the rooms below them.
    assert!(g["reproduce"].contains_key("plan"), "{g:?}");
    assert!(g["figures"].contains_key("claims"), "{g:?}");
    if let Some(cycle) = find_cycle(&g) {
        let steps: Vec<String> = cycle
            .windows(2)
            .map(|w| format!("{} -> {} ({})", w[0], w[1], g[&w[0]][&w[1]].join(", ")))
            .collect();
        panic!(
            "the harness's modules import in a circle: {}",
            steps.join("; ")
        );
    }
}

#[test]
fn the_reader_finds_imports_in_code_only() {
    let text = r#"
//! Links to [`crate::doc_only`].
use crate::{a, b::{c, d}, e::f};
use crate::g::h;
fn x() { crate::i::j(); let s = "crate::in_a_string"; let c = '{'; }
/* crate::in_a_block_comment,
   over two lines */
macro_rules! m { () => { $crate::in_a_macro() }; }
#[cfg(test)]
mod tests {
    use crate::in_a_test;
    fn t() { let s = "}"; }
}
fn y<'a>(v: &'a str) { super::super::k::l(); super::not_root(); }
use crate::{
    m::n,
    o,
};
use super::super::{p, q::r};
"#;
    let names: Vec<String> = root_names(&without_tests(&code_only(text)), 2)
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    assert_eq!(names, ["a", "b", "e", "g", "i", "k", "m", "o", "p", "q"]);
    // A name is placed on its own line, inside a group that spans lines too.
    let lines: Vec<usize> = root_names(&without_tests(&code_only(text)), 2)
        .into_iter()
        .map(|(_, line)| line)
        .collect();
    assert_eq!(lines[5..], [14, 16, 17, 19, 19]);
}

#[test]
fn a_cycle_is_found_and_named() {
    let mut g = Graph::new();
    let edge = |g: &mut Graph, a: &str, b: &str| {
        g.entry(a.to_string())
            .or_default()
            .insert(b.to_string(), vec![]);
    };
    edge(&mut g, "cli", "spec");
    edge(&mut g, "spec", "shard");
    edge(&mut g, "plan", "cli");
    assert_eq!(find_cycle(&g), None);
    edge(&mut g, "shard", "cli");
    assert_eq!(
        find_cycle(&g),
        Some(vec![
            "cli".into(),
            "spec".into(),
            "shard".into(),
            "cli".into()
        ])
    );
}

#[test]
fn files_belong_to_their_rooms() {
    assert_eq!(room_of(Path::new("plan.rs")), Some(("plan".into(), 1)));
    assert_eq!(
        room_of(Path::new("claims/mod.rs")),
        Some(("claims".into(), 1))
    );
    assert_eq!(
        room_of(Path::new("claims/check.rs")),
        Some(("claims".into(), 2))
    );
    assert_eq!(room_of(Path::new("lib.rs")), None);
    let rooms = declared_rooms("mod a;\npub(crate) mod b;\n#[cfg(test)]\nmod t;\n");
    assert_eq!(rooms.into_iter().collect::<Vec<_>>(), ["a", "b"]);
}
