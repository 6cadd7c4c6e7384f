//! What may name a variable, a data set or a column: one rule, shared by
//! templates and data sets (a leaf, so neither imports the other for it).

/// A plain name: a letter or `_`, then letters, digits, `_` or `-`.
pub(crate) fn is_ident(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}
