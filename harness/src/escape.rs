//! Text from outside the code (a path, a CPU model, a compiler's version) made safe for the
//! pages: in Markdown it stays on its line and in its table cell, and no raw HTML passes; in
//! HTML it is text, never markup.

/// `s` as Markdown text that stays on its line and in its table cell and shows as written,
/// for a value from outside the code (a path, a CPU model, a compiler's version): a control
/// character (a newline would start a heading or a paragraph) becomes a space, `|` is escaped
/// (it would end a table cell), and `&`, `<`, `>` become entities (no raw HTML reaches a page).
pub(crate) fn md_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            c if c.is_control() => out.push(' '),
            '|' => out.push_str("\\|"),
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
    out
}

/// `s` for a code span (between single backticks), where Markdown shows text as written: a
/// control character becomes a space, a backtick (it would end the span) a `'`, and `|` is
/// escaped, since a table reads it as a cell's end even inside a code span.
pub(crate) fn md_code(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            c if c.is_control() => " ".to_string(),
            '`' => "'".to_string(),
            '|' => "\\|".to_string(),
            c => c.to_string(),
        })
        .collect()
}

/// `s` with HTML's special characters escaped.
pub(crate) fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outside_text_stays_in_its_line_and_cell() {
        assert_eq!(
            md_text("a|b\n## <img src=x onerror=alert(1)> & c"),
            "a\\|b ## &lt;img src=x onerror=alert(1)&gt; &amp; c"
        );
        assert_eq!(md_code("/tmp/a|b`c\nd"), "/tmp/a\\|b'c d");
        assert_eq!(md_text("Intel(R) Xeon(R)"), "Intel(R) Xeon(R)");
    }
}
