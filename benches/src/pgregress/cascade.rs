//! Cascades: differences that follow from an earlier one, counted apart
//! so that the known list holds causes, not their echoes. An object is
//! *broken* when PostgreSQL has it and Tessera does not, or has it
//! otherwise: its CREATE failed or answered differently on Tessera only,
//! or a write into it (INSERT, UPDATE, DELETE, COPY, ALTER, TRUNCATE)
//! did. A later difference on a statement naming a broken object is a
//! cascade, and so is Tessera's 25P02 (transaction aborted) where
//! PostgreSQL's transaction is still alive. An object stops being broken
//! when it is dropped on PostgreSQL or created alike on both; temporary
//! ones when the session ends. A temporary table whose CREATE failed on
//! Tessera only (Tessera has no temporary table shadowing a permanent
//! one of the same name) is *shadowed*: Tessera's writes and DROP then
//! reach the permanent table, which stays broken after the session.

use std::collections::{HashMap, HashSet};

use super::verdict::Verdict;
use crate::answer::Answer;

/// The broken objects, each with the statement that broke it.
#[derive(Debug, Default)]
pub struct Broken {
    names: HashMap<String, String>,
    /// Names created as temporary in the current sessions.
    temp: HashSet<String>,
    /// Temporary names whose CREATE failed on Tessera only.
    shadowed: HashSet<String>,
}

fn words(sql: &str) -> Vec<&str> {
    sql.split(|c: char| c.is_whitespace() || c == '(' || c == ',' || c == ';')
        .filter(|w| !w.is_empty())
        .collect()
}

/// A name as the catalog has it: unqualified, lowercased unless quoted.
fn object_name(word: &str) -> Option<String> {
    let name = word.rsplit('.').next().unwrap_or(word);
    let name = name.trim_end_matches(')');
    if let Some(q) = name.strip_prefix('"') {
        return Some(q.trim_end_matches('"').to_string());
    }
    let name = name.to_lowercase();
    let ok = name.starts_with(|c: char| c.is_alphabetic() || c == '_');
    ok.then_some(name)
}

/// Skips the words at `i` that are in `skip`.
fn skip(words: &[&str], mut i: usize, skip: &[&str]) -> usize {
    while words
        .get(i)
        .is_some_and(|w| skip.contains(&w.to_ascii_lowercase().as_str()))
    {
        i += 1;
    }
    i
}

/// The name a `CREATE ...` or `SELECT ... INTO` statement creates, and
/// whether it is temporary.
pub fn created_name(sql: &str) -> Option<(String, bool)> {
    let w = words(sql);
    let first = w.first()?.to_ascii_lowercase();
    let (i, temp) = if first == "create" {
        let i = skip(
            &w,
            1,
            &[
                "or",
                "replace",
                "temp",
                "temporary",
                "unlogged",
                "global",
                "local",
                "recursive",
                "materialized",
                "unique",
                "trusted",
                "procedural",
            ],
        );
        let temp = w[1..i]
            .iter()
            .any(|m| m.eq_ignore_ascii_case("temp") || m.eq_ignore_ascii_case("temporary"));
        const KINDS: [&str; 9] = [
            "table",
            "view",
            "type",
            "function",
            "index",
            "sequence",
            "domain",
            "aggregate",
            "procedure",
        ];
        if !w
            .get(i)
            .is_some_and(|k| KINDS.contains(&k.to_ascii_lowercase().as_str()))
        {
            return None;
        }
        (
            skip(&w, i + 1, &["concurrently", "if", "not", "exists"]),
            temp,
        )
    } else if first == "select" {
        let into = 1 + w.iter().position(|x| x.eq_ignore_ascii_case("into"))?;
        let i = skip(&w, into, &["temp", "temporary", "unlogged", "table"]);
        let temp = w[into..i]
            .iter()
            .any(|m| m.eq_ignore_ascii_case("temp") || m.eq_ignore_ascii_case("temporary"));
        (i, temp)
    } else {
        return None;
    };
    let word = w.get(i)?;
    let temp = temp || word.to_ascii_lowercase().starts_with("pg_temp.");
    let name = object_name(word)?;
    (name != "on" && name != "as").then_some((name, temp))
}

/// The tables a statement writes: the target of a leading COPY,
/// TRUNCATE or ALTER TABLE, and of every INSERT INTO, UPDATE, DELETE FROM
/// and MERGE INTO in it (in a WITH, a rule, ...).
pub fn written_tables(sql: &str) -> Vec<String> {
    let w = words(sql);
    let lower: Vec<String> = w.iter().map(|x| x.to_ascii_lowercase()).collect();
    let is = |i: usize, s: &str| lower.get(i).is_some_and(|x| x == s);
    let mut starts = vec![];
    if matches!(
        lower.first().map(String::as_str),
        Some("copy" | "truncate" | "alter")
    ) {
        starts.push(1);
    }
    for i in 0..lower.len() {
        let after_keyword = i > 0 && matches!(lower[i - 1].as_str(), "for" | "on" | "key");
        match lower[i].as_str() {
            "insert" | "merge" if is(i + 1, "into") => starts.push(i + 2),
            "delete" if is(i + 1, "from") => starts.push(i + 2),
            "update" if !after_keyword && !is(i + 1, "of") => starts.push(i + 1),
            _ => {}
        }
    }
    starts
        .into_iter()
        .filter_map(|at| w.get(skip(&w, at, &["table", "only", "if", "exists"])))
        .filter_map(|x| object_name(x))
        .filter(|n| !matches!(n.as_str(), "set" | "of" | "nowait" | "skip"))
        .collect()
}

/// The names a DROP statement removes.
fn dropped_names(sql: &str) -> Vec<String> {
    let w = words(sql);
    if !w.first().is_some_and(|x| x.eq_ignore_ascii_case("drop")) {
        return vec![];
    }
    let i = skip(
        &w,
        2,
        &["if", "exists", "concurrently", "materialized", "view"],
    );
    w[i.min(w.len())..]
        .iter()
        .filter(|x| !x.eq_ignore_ascii_case("cascade") && !x.eq_ignore_ascii_case("restrict"))
        .filter_map(|x| object_name(x))
        .collect()
}

impl Broken {
    /// Why a differing statement is a cascade, if it is one.
    pub fn explains(&self, sql: &str, pg: &Answer, ts: &Answer) -> Option<String> {
        if ts.code() == Some("25P02") && pg.code() != Some("25P02") {
            return Some("transaction aborted on Tessera only".into());
        }
        if self.names.is_empty() {
            return None;
        }
        // Names in string literals ('foo') do not count.
        super::verdict::words(sql)
            .into_iter()
            .find_map(|(w, _)| self.names.get(&w).map(|cause| format!("{w}: {cause}")))
    }

    /// Records what the statement broke or mended; `at` names it.
    pub fn update(&mut self, sql: &str, pg: &Answer, ts: &Answer, v: Verdict, at: &str) {
        let alike = matches!(v, Verdict::Same | Verdict::ErrorBoth | Verdict::Plan);
        let ts_ok = ts.code().is_none();
        if let Some((name, temp)) = created_name(sql) {
            if temp {
                self.temp.insert(name.clone());
                if pg.code().is_none() && !ts_ok {
                    self.shadowed.insert(name.clone());
                }
            }
            if pg.code().is_none() && alike {
                self.names.remove(&name);
            } else if pg.code().is_none() || ts.code().is_none() {
                self.names.entry(name).or_insert_with(|| at.to_string());
            }
            return;
        }
        if pg.code().is_none() {
            for name in dropped_names(sql) {
                if ts_ok && self.shadowed.remove(&name) {
                    // Tessera dropped the permanent table.
                    self.temp.remove(&name);
                } else {
                    self.names.remove(&name);
                }
            }
        }
        let one_side_wrote = pg.code().is_none() || ts_ok;
        for name in written_tables(sql) {
            if ts_ok && self.shadowed.contains(&name) {
                // Tessera wrote into the permanent table.
                self.temp.remove(&name);
            }
            if !alike && one_side_wrote {
                self.names.entry(name).or_insert_with(|| at.to_string());
            }
        }
    }

    /// The sessions ended: their temporary objects are gone on both sides.
    pub fn end_session(&mut self) {
        for name in self.temp.drain() {
            self.names.remove(&name);
        }
        self.shadowed.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok() -> Answer {
        Answer::Rows {
            columns: vec![],
            rows: vec![],
            affected: Some(1),
        }
    }

    #[test]
    fn names_created_written_and_dropped() {
        assert_eq!(
            created_name("CREATE TEMP TABLE IF NOT EXISTS s.Foo (a int)"),
            Some(("foo".into(), true))
        );
        assert_eq!(
            created_name("select * into \"Bar\" from t"),
            Some(("Bar".into(), false))
        );
        assert_eq!(created_name("CREATE INDEX ON t (a)"), None);
        assert_eq!(
            created_name("CREATE FUNCTION pg_temp.f(int) RETURNS int"),
            Some(("f".into(), true))
        );
        assert_eq!(created_name("CREATE OPERATOR CLASS c FOR TYPE int4"), None);
        assert_eq!(
            written_tables("INSERT INTO public.t(a) VALUES (1)"),
            vec!["t".to_string()]
        );
        assert_eq!(written_tables("DELETE FROM ONLY t"), vec!["t".to_string()]);
        assert_eq!(
            written_tables("WITH d AS (DELETE FROM a RETURNING *) INSERT INTO b SELECT * FROM d"),
            vec!["a".to_string(), "b".to_string()]
        );
        assert!(written_tables("SELECT * FROM t FOR UPDATE OF t").is_empty());
        assert_eq!(
            dropped_names("DROP TABLE IF EXISTS a, b CASCADE"),
            vec!["a".to_string(), "b".to_string()]
        );
    }

    #[test]
    fn a_difference_on_a_broken_object_is_a_cascade() {
        let mut b = Broken::default();
        let err = Answer::error("0A000");
        b.update(
            "CREATE TABLE foo (a point)",
            &ok(),
            &err,
            Verdict::Refused,
            "f:1",
        );
        let missing = Answer::error("42P01");
        assert!(b.explains("SELECT * FROM foo", &ok(), &missing).is_some());
        assert!(b.explains("SELECT * FROM food", &ok(), &missing).is_none());
        assert!(b.explains("SELECT 'foo'", &ok(), &missing).is_none());
        b.update(
            "CREATE TABLE foo (a int)",
            &ok(),
            &ok(),
            Verdict::Same,
            "f:2",
        );
        assert!(b.explains("SELECT * FROM foo", &ok(), &missing).is_none());
        b.update(
            "INSERT INTO foo VALUES (1)",
            &ok(),
            &err,
            Verdict::Refused,
            "f:3",
        );
        assert!(b.explains("SELECT * FROM foo", &ok(), &ok()).is_some());
        b.update("DROP TABLE foo", &ok(), &ok(), Verdict::Same, "f:4");
        assert!(b.explains("SELECT * FROM foo", &ok(), &ok()).is_none());
        b.update(
            "CREATE TEMP TABLE t (a int)",
            &ok(),
            &err,
            Verdict::Refused,
            "f:5",
        );
        b.end_session();
        assert!(b.explains("SELECT * FROM t", &ok(), &missing).is_none());
        // A temporary table Tessera could not create shadows nothing
        // there: its DROP removes the permanent one, broken for good.
        let exists = Answer::error("42P07");
        b.update(
            "CREATE TEMP TABLE c (a int)",
            &ok(),
            &exists,
            Verdict::Differ,
            "f:6",
        );
        b.update("DROP TABLE c", &ok(), &ok(), Verdict::Same, "f:7");
        b.end_session();
        assert!(b.explains("SELECT * FROM c", &ok(), &missing).is_some());
        let aborted = Answer::error("25P02");
        assert!(b.explains("SELECT 1", &ok(), &aborted).is_some());
    }
}
