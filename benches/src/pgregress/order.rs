//! Comparing ordered answers the way ORDER BY defines them: rows must
//! come in the order of their sort keys, but rows with equal keys (ties)
//! may come in any order, as on any other engine. When the statement's
//! top-level ORDER BY items are all output columns (by name or position)
//! the keys are known and ties are compared as multisets; otherwise the
//! whole order is compared.

use std::ops::Range;

type Row = Vec<Option<String>>;

/// `sql` with string literals, quoted identifiers and dollar-quoted
/// bodies blanked (`_`) and text inside parentheses blanked (` `), so
/// that top-level keywords and commas can be found by position.
fn mask(sql: &str) -> Vec<char> {
    let chars: Vec<char> = sql.chars().collect();
    let mut out = chars.clone();
    let mut depth = 0u32;
    let mut i = 0;
    let blank = |out: &mut Vec<char>, r: Range<usize>| {
        for c in &mut out[r] {
            *c = '_';
        }
    };
    while i < chars.len() {
        let c = chars[i];
        let start = i;
        if c == '\'' || c == '"' {
            i += 1;
            while i < chars.len() && !(chars[i] == c && chars.get(i + 1) != Some(&c)) {
                i += if chars[i] == c { 2 } else { 1 };
            }
            blank(&mut out, start..(i + 1).min(chars.len()));
        } else if c == '$' && chars.get(i + 1) == Some(&'$') {
            i += 2;
            while i + 1 < chars.len() && !(chars[i] == '$' && chars[i + 1] == '$') {
                i += 1;
            }
            i += 1;
            blank(&mut out, start..(i + 1).min(chars.len()));
        } else if c == '(' {
            depth += 1;
        } else if c == ')' {
            depth = depth.saturating_sub(1);
        } else if depth > 0 {
            out[i] = ' ';
        }
        i += 1;
    }
    out
}

/// The items of the statement's top-level ORDER BY (lowercased, without
/// ASC/DESC/NULLS ...), or None when there is none.
pub fn order_by_items(sql: &str) -> Option<Vec<String>> {
    // One ASCII byte per character, so that byte and char positions agree.
    let flat: String = mask(sql)
        .into_iter()
        .map(|c| match c {
            _ if c.is_whitespace() => ' ',
            _ if c.is_ascii() => c.to_ascii_lowercase(),
            _ => '_',
        })
        .collect();
    let spaced = |w: &str| format!(" {w} ");
    let at = flat.rfind(&spaced("order by"))? + " order by ".len();
    let end = ["limit", "offset", "fetch", "for"]
        .iter()
        .filter_map(|w| flat[at..].find(&spaced(w)).map(|i| at + i))
        .min()
        .unwrap_or(flat.len());
    let original: Vec<char> = sql.chars().collect();
    let mut items = vec![];
    let mut from = at;
    for (i, c) in flat.char_indices().take(end).skip(at) {
        if c == ',' {
            items.push(original[from..i].iter().collect::<String>());
            from = i + 1;
        }
    }
    items.push(original[from..end.min(original.len())].iter().collect());
    Some(
        items
            .into_iter()
            .map(|item| {
                let mut words: Vec<String> =
                    item.split_whitespace().map(|w| w.to_lowercase()).collect();
                while words.len() > 1
                    && matches!(
                        words.last().map(String::as_str),
                        Some("asc" | "desc" | "first" | "last" | "nulls")
                    )
                {
                    words.pop();
                }
                words.join(" ")
            })
            .collect(),
    )
}

/// The output columns the ORDER BY items name, if every item is one.
pub fn key_columns(items: &[String], columns: &[String]) -> Option<Vec<usize>> {
    items
        .iter()
        .map(|item| {
            if let Ok(n) = item.parse::<usize>() {
                return (n >= 1 && n <= columns.len()).then(|| n - 1);
            }
            let name = if item.starts_with('"') {
                item.trim_matches('"').to_string()
            } else {
                let simple = item
                    .chars()
                    .all(|c| c.is_alphanumeric() || c == '_' || c == '.');
                if !simple {
                    return None;
                }
                item.rsplit('.').next().unwrap_or(item).to_string()
            };
            let mut hits = columns
                .iter()
                .enumerate()
                .filter(|(_, c)| c.eq_ignore_ascii_case(&name));
            match (hits.next(), hits.next()) {
                (Some((i, _)), None) => Some(i),
                _ => None,
            }
        })
        .collect()
}

/// Whether two row lists agree in key order, ties compared as multisets.
pub fn same_order(pg: &[Row], ts: &[Row], keys: &[usize]) -> bool {
    if pg.len() != ts.len() {
        return false;
    }
    let key = |r: &Row| -> Vec<Option<String>> {
        keys.iter().map(|k| r.get(*k).cloned().flatten()).collect()
    };
    let mut i = 0;
    while i < pg.len() {
        let k = key(&pg[i]);
        let mut j = i;
        while j < pg.len() && key(&pg[j]) == k {
            j += 1;
        }
        if ts[i..j].iter().any(|r| key(r) != k) {
            return false;
        }
        let mut a = pg[i..j].to_vec();
        let mut b = ts[i..j].to_vec();
        a.sort();
        b.sort();
        if a != b {
            return false;
        }
        i = j;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(v: &[&str]) -> Row {
        v.iter().map(|s| Some(s.to_string())).collect()
    }

    #[test]
    fn order_by_items_are_found_at_the_top_level_only() {
        assert_eq!(
            order_by_items("SELECT a, b FROM t ORDER BY t.a DESC, 2 NULLS FIRST LIMIT 3"),
            Some(vec!["t.a".to_string(), "2".to_string()])
        );
        assert_eq!(
            order_by_items("SELECT sum(a) OVER (ORDER BY a), 'order by x' FROM t"),
            None
        );
        assert_eq!(
            order_by_items("SELECT a FROM t ORDER BY lower(a), b"),
            Some(vec!["lower(a)".to_string(), "b".to_string()])
        );
    }

    #[test]
    fn ties_may_come_in_any_order() {
        let cols = vec!["dep".to_string(), "id".to_string()];
        let keys = key_columns(&["dep".to_string()], &cols).unwrap();
        let pg = vec![row(&["a", "1"]), row(&["a", "2"]), row(&["b", "3"])];
        let ts = vec![row(&["a", "2"]), row(&["a", "1"]), row(&["b", "3"])];
        assert!(same_order(&pg, &ts, &keys));
        let wrong = vec![row(&["b", "3"]), row(&["a", "1"]), row(&["a", "2"])];
        assert!(!same_order(&pg, &wrong, &keys));
        assert_eq!(key_columns(&["lower(dep)".to_string()], &cols), None);
    }
}
