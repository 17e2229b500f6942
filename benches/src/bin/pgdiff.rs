//! `pgdiff`: the differential suite. One Tessera cluster and one
//! PostgreSQL 15 are loaded with the same schema and rows
//! (`benches/pgdiff/schema.sql`); every query of the corpus files
//! (`benches/pgdiff/*.sql`, one file per feature) runs on both, on Tessera
//! with pushdown on and off, and the answers are compared: column names,
//! the text of every value (as sorted multisets unless the query is marked
//! `-- ordered`), and the SQLSTATE of errors; then over the extended
//! protocol with binary results, decoded by type on both sides. A query Tessera refuses with
//! 0A000 is counted, not failed. A different answer fails the run unless
//! the query is listed in `benches/pgdiff/known-differences.txt` (the open
//! work of issue 13, printed on every run); a listed query that now agrees
//! fails too, so the list only shrinks.

use std::collections::BTreeMap;
use std::path::PathBuf;

use benches::answer::{answer, answer_extended, connect};
use benches::servers::{Durability, Postgres, Tessera};
use clap::Parser;

#[derive(Parser)]
#[command(about = "Tessera against PostgreSQL 15 on the same rows: answers must agree")]
struct Args {
    /// The tessera binary used to start a cluster.
    #[arg(long, default_value = "target/release/tessera")]
    tessera: PathBuf,
    #[arg(long, default_value = "/tmp/tessera-pgdiff")]
    work: PathBuf,
    #[arg(long, default_value_t = 27000)]
    base_port: u16,
    /// Print every differing answer in full.
    #[arg(long)]
    verbose: bool,
}

/// Statements of a file: `;`-terminated, `--` comments dropped; a query
/// whose line carries `-- ordered` is compared in order.
fn statements(text: &str) -> Vec<(String, bool)> {
    let mut out = vec![];
    let mut cur = String::new();
    let mut ordered = false;
    for line in text.lines() {
        let (code, comment) = match line.find("-- ") {
            Some(i) if !line[..i].contains('\'') || line[..i].matches('\'').count() % 2 == 0 => {
                (&line[..i], &line[i..])
            }
            _ => (line, ""),
        };
        if code.trim().is_empty() && cur.is_empty() {
            continue;
        }
        ordered |= comment.contains("ordered");
        cur.push_str(code);
        cur.push('\n');
        if code.trim_end().ends_with(';') {
            let s = cur.trim().trim_end_matches(';').trim().to_string();
            out.push((s, ordered));
            cur.clear();
            ordered = false;
        }
    }
    out
}

/// `schema.sql` for one side: `/*tessera ...*/` kept (without the comment
/// markers) for Tessera, dropped for PostgreSQL.
fn schema_for(text: &str, tessera: bool) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find("/*tessera ") {
        out.push_str(&rest[..i]);
        let after = &rest[i + "/*tessera ".len()..];
        let end = after.find("*/").unwrap_or(after.len());
        if tessera {
            out.push_str(&after[..end]);
        }
        rest = after.get(end + 2..).unwrap_or("");
    }
    out.push_str(rest);
    out
}

#[derive(Default)]
struct Counts {
    same: usize,
    refused: usize,
    known: usize,
    wrong: usize,
}

#[tokio::main]
async fn main() {
    if let Err(e) = real_main(Args::parse()).await {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

async fn real_main(a: Args) -> Result<(), String> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("pgdiff");
    let schema = std::fs::read_to_string(dir.join("schema.sql")).map_err(|e| e.to_string())?;
    let known: Vec<String> = std::fs::read_to_string(dir.join("known-differences.txt"))
        .unwrap_or_default()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_string)
        .collect();

    let _ = std::fs::remove_dir_all(&a.work);
    let (_cluster, ep) = Tessera::start(
        &a.tessera,
        &a.work.join("tessera"),
        a.base_port,
        "hash",
        Durability::Relaxed,
        &[],
    )?;
    let (_pg, pep) = Postgres::start(
        &a.work.join("postgres"),
        a.base_port + 50,
        Durability::Relaxed,
    )?;
    let t = connect(&ep.url()).await?;
    let p = connect(&pep.url()).await?;
    t.batch_execute(&schema_for(&schema, true))
        .await
        .map_err(|e| format!("loading Tessera: {e}"))?;
    p.batch_execute(&schema_for(&schema, false))
        .await
        .map_err(|e| format!("loading PostgreSQL: {e}"))?;

    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map_err(|e| e.to_string())?
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.extension().is_some_and(|x| x == "sql")
                && p.file_name().is_some_and(|n| n != "schema.sql")
        })
        .collect();
    files.sort();
    let mut by_file: BTreeMap<String, Counts> = BTreeMap::new();
    let mut new_wrong = vec![];
    let mut still_known = vec![];
    for f in &files {
        let name = f
            .file_stem()
            .map(|s| s.to_string_lossy().to_string())
            .unwrap_or_default();
        let text = std::fs::read_to_string(f).map_err(|e| e.to_string())?;
        let counts = by_file.entry(name.clone()).or_default();
        for (sql, ordered) in statements(&text) {
            // pgdiff compares rows and errors, not command counts.
            let want = answer(&p, &sql).await.without_count();
            let want_extended = answer_extended(&p, &sql).await;
            let mut verdict = "same";
            let mut got_shown = String::new();
            // The simple protocol with pushdown on and off, then the
            // extended protocol (binary results) with pushdown on.
            for (pushdown, extended) in [("on", false), ("off", false), ("on", true)] {
                t.batch_execute(&format!("SET tessera.pushdown = {pushdown}"))
                    .await
                    .map_err(|e| e.to_string())?;
                let (got, want) = if extended {
                    (answer_extended(&t, &sql).await, &want_extended)
                } else {
                    (answer(&t, &sql).await.without_count(), &want)
                };
                let want = want.clone();
                let agrees = if ordered {
                    got == want
                } else {
                    got.sorted() == want.sorted()
                };
                if agrees {
                    continue;
                }
                if got.code() == Some("0A000") {
                    if verdict == "same" {
                        verdict = "refused";
                    }
                    continue;
                }
                verdict = "wrong";
                got_shown = format!(
                    "{}pushdown {pushdown}: {}",
                    if extended { "extended protocol, " } else { "" },
                    got.short()
                );
                break;
            }
            let listed = known.contains(&sql);
            match (verdict, listed) {
                ("same", false) => counts.same += 1,
                ("refused", false) => {
                    counts.refused += 1;
                    if a.verbose {
                        println!("refused [{name}] {sql}");
                    }
                }
                ("wrong", true) => {
                    counts.known += 1;
                    println!("known difference [{name}] {sql}\n    postgres: {}\n    tessera {got_shown}", want.short());
                }
                ("wrong", false) => {
                    counts.wrong += 1;
                    println!(
                        "WRONG [{name}] {sql}\n    postgres: {}\n    tessera {got_shown}",
                        want.short()
                    );
                    if a.verbose {
                        println!("    full postgres answer: {want:?}");
                    }
                    new_wrong.push(sql.clone());
                }
                (_, true) => {
                    still_known.push(sql.clone());
                    if verdict == "same" {
                        counts.same += 1;
                    } else {
                        counts.refused += 1;
                    }
                }
                _ => {}
            }
        }
    }
    println!(
        "\n{:<16} {:>6} {:>8} {:>7} {:>6}",
        "file", "same", "refused", "known", "WRONG"
    );
    let mut total = Counts::default();
    for (f, c) in &by_file {
        println!(
            "{f:<16} {:>6} {:>8} {:>7} {:>6}",
            c.same, c.refused, c.known, c.wrong
        );
        total.same += c.same;
        total.refused += c.refused;
        total.known += c.known;
        total.wrong += c.wrong;
    }
    let n = total.same + total.refused + total.known + total.wrong;
    println!(
        "{:<16} {:>6} {:>8} {:>7} {:>6}   ({n} queries, {:.1} % same)",
        "total",
        total.same,
        total.refused,
        total.known,
        total.wrong,
        100.0 * total.same as f64 / n.max(1) as f64
    );
    if !still_known.is_empty() {
        return Err(format!(
            "listed in known-differences.txt but no longer different (remove them): {still_known:?}"
        ));
    }
    if !new_wrong.is_empty() {
        return Err(format!(
            "{} queries answered differently from PostgreSQL",
            new_wrong.len()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_split_on_semicolons_and_keep_quoted_dashes() {
        let s = statements("-- c\nSELECT 1;\nSELECT '-- x' FROM t\n  WHERE a = 1; -- ordered\n");
        assert_eq!(
            s,
            vec![
                ("SELECT 1".to_string(), false),
                ("SELECT '-- x' FROM t\n  WHERE a = 1".to_string(), true)
            ]
        );
    }

    #[test]
    fn tessera_only_text_goes_to_tessera_only() {
        let s = "CREATE TABLE t (id int) /*tessera PARTITION BY HASH (id)*/;";
        assert_eq!(
            schema_for(s, true),
            "CREATE TABLE t (id int) PARTITION BY HASH (id);"
        );
        assert_eq!(schema_for(s, false), "CREATE TABLE t (id int) ;");
    }
}
