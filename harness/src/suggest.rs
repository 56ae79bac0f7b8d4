//! "Did you mean ...?": the nearest valid name to a mistyped one, by Levenshtein distance
//! (`strsim`).

/// The candidate nearest to `input`, if it is near enough to be a plausible typo: at most half
/// the longer name's length (and at least 1) edits away, or a prefix either way.
pub(crate) fn nearest<'a>(
    input: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let lower = input.to_ascii_lowercase();
    candidates
        .into_iter()
        .map(|c| (strsim::levenshtein(&lower, &c.to_ascii_lowercase()), c))
        .filter(|(d, c)| {
            let limit = (lower.chars().count().max(c.chars().count()) / 2).max(1);
            *d <= limit || (!lower.is_empty() && (c.starts_with(&lower) || lower.starts_with(*c)))
        })
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// `unknown <what> '<input>' (did you mean '<x>'? valid: a, b, c)`: one line naming the
/// nearest valid name where there is one.
pub(crate) fn unknown(what: &str, input: &str, candidates: &[&str]) -> String {
    let valid = candidates.join(", ");
    match nearest(input, candidates.iter().copied()) {
        Some(n) => format!("unknown {what} '{input}' (did you mean '{n}'? valid: {valid})"),
        None => format!("unknown {what} '{input}' (valid: {valid})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_names() {
        let sizes = ["paper", "small", "quick", "test"];
        assert_eq!(nearest("quik", sizes), Some("quick"));
        assert_eq!(nearest("smal", sizes), Some("small"));
        assert_eq!(nearest("zzzzzzzz", sizes), None);
        let figs = ["prows-fig2", "prows-fig3"];
        assert_eq!(nearest("prows-fig4", figs), Some("prows-fig2"));
        assert_eq!(nearest("prows3", figs), Some("prows-fig3"));
        assert_eq!(nearest("PROWS-FIG3", figs), Some("prows-fig3"));
    }

    #[test]
    fn message_names_the_nearest() {
        let m = unknown("size", "quik", &["paper", "small", "quick"]);
        assert_eq!(
            m,
            "unknown size 'quik' (did you mean 'quick'? valid: paper, small, quick)"
        );
        assert!(!unknown("size", "huge", &["paper"]).contains("did you mean"));
    }
}
