//! The files a run reads and writes:
//!
//! * the regression corpus (`benches/exprfuzz/findings.sql`): each finding
//!   minimized, one expression per line under a comment with the form, the
//!   row and both answers; `--corpus` replays it;
//! * the known list (`benches/exprfuzz/known-findings.txt`): the
//!   expressions (whitespace as one space) the CI seed finds today. A
//!   finding not listed fails the CI run, and so does a listed one that no
//!   longer differs (stale: remove it), so the list only shrinks.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::Path;

/// Whitespace runs as one space, ends trimmed.
pub fn normalize(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// An answer on one line, cut after 200 characters (a numeric can have
/// thousands of digits).
pub fn one_line(s: &str) -> String {
    let s = s.replace('\n', "\\n");
    match s.char_indices().nth(200) {
        Some((i, _)) => format!("{}... ({} characters)", &s[..i], s.chars().count()),
        None => s,
    }
}

/// Appends one finding to the corpus file, unless its expression is
/// there already.
pub fn append(path: &Path, comment: &str, expr: &str) -> Result<(), String> {
    let old = std::fs::read_to_string(path).unwrap_or_default();
    let expr = normalize(expr);
    if read_corpus(&old).iter().any(|(e, _)| *e == expr) {
        return Ok(());
    }
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    writeln!(f, "-- {}\n{expr}", one_line(comment)).map_err(|e| format!("{}: {e}", path.display()))
}

/// The corpus's expressions, each with the row named in its comment
/// (`row N`; row 2, the ordinary one, when none is named).
pub fn read_corpus(text: &str) -> Vec<(String, usize)> {
    let mut out = vec![];
    let mut row = 2;
    for line in text.lines() {
        let l = line.trim();
        if let Some(c) = l.strip_prefix("--") {
            let mut words = c.split_whitespace();
            while let Some(w) = words.next() {
                if w == "row" {
                    if let Some(n) = words.next().and_then(|n| {
                        n.trim_end_matches(|c: char| !c.is_ascii_digit())
                            .parse()
                            .ok()
                    }) {
                        row = n;
                        break;
                    }
                }
            }
        } else if !l.is_empty() {
            out.push((normalize(l), row));
            row = 2;
        }
    }
    out
}

/// The known list: normalized expressions.
#[derive(Debug, Default)]
pub struct Known {
    pub entries: BTreeSet<String>,
}

impl Known {
    pub fn parse(text: &str) -> Known {
        Known {
            entries: text
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && !l.starts_with('#'))
                .map(normalize)
                .collect(),
        }
    }

    pub fn contains(&self, expr: &str) -> bool {
        self.entries.contains(&normalize(expr))
    }

    /// Listed expressions this run did not find differing.
    pub fn stale(&self, found: &BTreeSet<String>) -> Vec<String> {
        self.entries.difference(found).cloned().collect()
    }

    /// The file's text with `found` as its entries, the header kept.
    pub fn rewritten(old: &str, found: &BTreeSet<String>) -> String {
        let mut out: String = old
            .lines()
            .take_while(|l| l.starts_with('#'))
            .map(|l| format!("{l}\n"))
            .collect();
        for f in found {
            out.push_str(f);
            out.push('\n');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn corpus_lines_carry_their_row() {
        let text = "-- point row 5: postgres 1 | tessera 2\n(c_int  + 1)\n\n-- scan\nabs(c_int)\n";
        assert_eq!(
            read_corpus(text),
            vec![
                ("(c_int + 1)".to_string(), 5),
                ("abs(c_int)".to_string(), 2)
            ]
        );
    }

    #[test]
    fn known_list_keeps_its_header_and_reports_stale_entries() {
        let k = Known::parse("# header\n(1  + 2)\nabs(3)\n");
        assert!(k.contains("(1 + 2)"));
        let found: BTreeSet<String> = ["abs(3)".to_string()].into();
        assert_eq!(k.stale(&found), vec!["(1 + 2)".to_string()]);
        assert_eq!(
            Known::rewritten("# header\n(1 + 2)\n", &found),
            "# header\nabs(3)\n"
        );
    }
}
