//! Names in a client's statement as PostgreSQL reads them: identifiers
//! folded (unquoted names lower-cased) and `$n` parameter placeholders.
//! Every reader of a parsed statement (routing, the shard renderer, literal
//! typing, the compute node's planner) asks here.

/// PostgreSQL identifier folding: unquoted names are lower-cased.
pub fn normalize_ident(i: &datafusion::sql::sqlparser::ast::Ident) -> String {
    if i.quote_style.is_some() {
        i.value.clone()
    } else {
        i.value.to_lowercase()
    }
}

/// Returns the 0-based index of a `$n` placeholder.
pub fn placeholder_index(s: &str) -> Option<usize> {
    s.strip_prefix('$')?.parse::<usize>().ok()?.checked_sub(1)
}
