//! Definitions as PostgreSQL prints them, for the catalog tables and the
//! catalog functions alike: quoted identifiers, an index's `CREATE INDEX`
//! (`pg_get_indexdef`, `pg_indexes`), a column's default (`pg_attrdef`,
//! `information_schema.columns`).

use meta::ColumnDef;

use super::index::Index;

/// A column's default as `pg_attrdef.adbin` and `information_schema`
/// show it: its sequence's `nextval(...)`, else its expression.
pub fn default_text(t: &meta::TableDef, c: &ColumnDef) -> Option<String> {
    // An identity column has no default (its sequence is the identity's).
    if c.identity.is_some() {
        return None;
    }
    if let Some(seq) = &c.sequence {
        // A SERIAL column's counter is shown under the name PostgreSQL
        // gives its sequence.
        let name = seq
            .strip_prefix(meta::SEQUENCE_SOURCE_PREFIX)
            .map(|q| match q.split_once('.') {
                Some(("public", n)) => n.to_string(),
                _ => q.to_string(),
            })
            .unwrap_or_else(|| format!("{}_{}_seq", t.name, c.name));
        return Some(format!("nextval('{}'::regclass)", name.replace('\'', "''")));
    }
    c.default.clone()
}

/// An identifier as PostgreSQL prints it: quoted unless it is a plain
/// lower-case name and no reserved word.
pub(super) fn quote(name: &str) -> String {
    let plain = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '$');
    if plain && !is_reserved(name) {
        name.to_string()
    } else {
        format!("\"{}\"", name.replace('"', "\"\""))
    }
}

fn is_reserved(w: &str) -> bool {
    matches!(
        w,
        "all"
            | "analyse"
            | "analyze"
            | "and"
            | "any"
            | "array"
            | "as"
            | "asc"
            | "asymmetric"
            | "both"
            | "case"
            | "cast"
            | "check"
            | "collate"
            | "column"
            | "constraint"
            | "create"
            | "current_catalog"
            | "current_date"
            | "current_role"
            | "current_time"
            | "current_timestamp"
            | "current_user"
            | "default"
            | "deferrable"
            | "desc"
            | "distinct"
            | "do"
            | "else"
            | "end"
            | "except"
            | "false"
            | "fetch"
            | "for"
            | "foreign"
            | "from"
            | "grant"
            | "group"
            | "having"
            | "in"
            | "initially"
            | "intersect"
            | "into"
            | "lateral"
            | "leading"
            | "limit"
            | "localtime"
            | "localtimestamp"
            | "not"
            | "null"
            | "offset"
            | "on"
            | "only"
            | "or"
            | "order"
            | "placing"
            | "primary"
            | "references"
            | "returning"
            | "select"
            | "session_user"
            | "some"
            | "symmetric"
            | "table"
            | "then"
            | "to"
            | "trailing"
            | "true"
            | "union"
            | "unique"
            | "user"
            | "using"
            | "variadic"
            | "when"
            | "where"
            | "window"
            | "with"
    )
}

/// `pg_get_indexdef` of an index.
pub fn index_def(ix: &Index<'_>) -> String {
    format!(
        "CREATE {}INDEX {} ON {}.{} USING btree ({})",
        if ix.unique { "UNIQUE " } else { "" },
        quote(&ix.name),
        quote(&ix.table.schema),
        quote(&ix.table.name),
        ix.columns
            .iter()
            .map(|c| quote(c))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_quoted_as_postgresql_quotes_them() {
        assert_eq!(quote("abc_1"), "abc_1");
        assert_eq!(quote("Abc"), "\"Abc\"");
        assert_eq!(quote("user"), "\"user\"");
        assert_eq!(quote("a\"b"), "\"a\"\"b\"");
    }
}
