//! `tpcds`: TPC-DS on Tessera against one PostgreSQL 15 with the same
//! rows. Generates the 24 tables with the `tpcdsgen` crates, loads them
//! through a compute node and into PostgreSQL with COPY, makes the 99
//! queries with the specification's qualification parameters
//! (`scripts/fetch-tpcds-queries.sh`), runs each on both, and judges every
//! Tessera answer against PostgreSQL's (`benches::tpcds::verdict`). Prints
//! per-query times and verdicts; writes TSV, JSON and an SVG chart.
//! Derived from TPC-DS; not comparable with published TPC-DS results.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use benches::answer::{answer, connect, Answer};
use benches::servers::{Durability, Postgres, Tessera};
use benches::svg;
use benches::tpcds::verdict::{judge, Verdict};
use benches::tpcds::{self, TABLES};
use clap::Parser;

#[derive(Parser)]
#[command(
    about = "TPC-DS on Tessera, every answer checked against PostgreSQL 15, timed side by side"
)]
struct Args {
    /// Scale factor.
    #[arg(long, default_value_t = 0.01)]
    sf: f64,
    /// The tessera binary used to start a cluster.
    #[arg(long, default_value = "target/release/tessera")]
    tessera: PathBuf,
    /// Use this running cluster instead (a libpq connection string).
    #[arg(long)]
    url: Option<String>,
    #[arg(long, default_value = "/tmp/tessera-tpcds")]
    work: PathBuf,
    /// Comma-separated query numbers (default 1-99).
    #[arg(long)]
    queries: Option<String>,
    /// The folder of q1.sql .. q99.sql (default: made by
    /// scripts/fetch-tpcds-queries.sh into its cache).
    #[arg(long)]
    query_dir: Option<PathBuf>,
    /// Per-query timeout in seconds, on both.
    #[arg(long, default_value_t = 600)]
    timeout: u64,
    #[arg(long, default_value = "benches/results")]
    out: PathBuf,
    #[arg(long, default_value_t = 27500)]
    base_port: u16,
    /// Commit flushing on Tessera and PostgreSQL alike: relaxed or durable.
    #[arg(long, value_enum, default_value = "relaxed")]
    durability: Durability,
    /// Exit 0 even when an answer differs (for measuring).
    #[arg(long)]
    no_fail: bool,
    /// Queries whose answers are known to differ (`q56  # why` per line):
    /// the run fails only on a difference not listed there.
    #[arg(long)]
    known: Option<PathBuf>,
}

#[derive(serde::Serialize)]
struct QueryResult {
    query: u32,
    tessera_s: f64,
    postgres_s: f64,
    rows: usize,
    verdict: Verdict,
}

/// The query numbers of a known-differences file.
fn known_queries(text: &str) -> Vec<u32> {
    text.lines()
        .filter_map(|l| l.split('#').next())
        .filter_map(|l| l.trim().strip_prefix('q')?.parse().ok())
        .collect()
}

#[tokio::main]
async fn main() {
    if let Err(e) = real_main(Args::parse()).await {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn query_dir(a: &Args) -> Result<PathBuf, String> {
    if let Some(d) = &a.query_dir {
        return Ok(d.clone());
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/fetch-tpcds-queries.sh");
    let out = std::process::Command::new(&script)
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| format!("{}: {e}", script.display()))?;
    if !out.status.success() {
        return Err(format!("{} failed", script.display()));
    }
    Ok(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
}

async fn load(
    client: &tokio_postgres::Client,
    schema: &[String],
    sf: f64,
    who: &str,
) -> Result<Duration, String> {
    for t in TABLES.iter().rev() {
        client
            .batch_execute(&format!("DROP TABLE IF EXISTS {t}"))
            .await
            .map_err(|e| e.to_string())?;
    }
    for stmt in schema {
        client
            .batch_execute(stmt)
            .await
            .map_err(|e| format!("{stmt}: {e}"))?;
    }
    let start = Instant::now();
    for t in TABLES {
        let (batches, count) = tpcds::generate(t, sf)?;
        eprint!("  {who}: {t} ...");
        let t0 = Instant::now();
        let n = benches::copyload::copy_batches(client, t, batches, count).await?;
        eprintln!(" {n} rows in {:.1} s", t0.elapsed().as_secs_f64());
    }
    client
        .batch_execute("ANALYZE")
        .await
        .map_err(|e| format!("ANALYZE: {e}"))?;
    Ok(start.elapsed())
}

/// A query's answer: its statements run in turn (q14, q23, q24 and q39
/// have two); the answer is their columns and rows one after the other,
/// or the first error.
async fn run(client: &tokio_postgres::Client, statements: &[String]) -> (Answer, f64) {
    let t = Instant::now();
    let mut all_rows = vec![];
    let mut columns = vec![];
    for s in statements {
        match answer(client, s).await {
            Answer::Rows {
                columns: c, rows, ..
            } => {
                columns.extend(c);
                all_rows.extend(rows);
            }
            e => return (e, t.elapsed().as_secs_f64()),
        }
    }
    let a = Answer::Rows {
        columns,
        rows: all_rows,
        affected: None,
    };
    (a, t.elapsed().as_secs_f64())
}

async fn start_both(
    a: &Args,
) -> Result<
    (
        Option<Tessera>,
        Postgres,
        tokio_postgres::Client,
        tokio_postgres::Client,
    ),
    String,
> {
    let mut cluster = None;
    let url = match &a.url {
        Some(u) => u.clone(),
        None => {
            let dir = a.work.join("tessera");
            let _ = std::fs::remove_dir_all(&dir);
            let (c, ep) = Tessera::start(&a.tessera, &dir, a.base_port, "hash", a.durability, &[])?;
            cluster = Some(c);
            ep.url()
        }
    };
    let (pg, ep) = Postgres::start(&a.work.join("postgres"), a.base_port + 50, a.durability)?;
    let pg_url = ep.url();
    Ok((cluster, pg, connect(&url).await?, connect(&pg_url).await?))
}

async fn real_main(a: Args) -> Result<(), String> {
    let queries: Vec<u32> = match &a.queries {
        Some(q) => q.split(',').filter_map(|x| x.trim().parse().ok()).collect(),
        None => (1..=99).collect(),
    };
    let qdir = query_dir(&a)?;
    let schema_file = Path::new(env!("CARGO_MANIFEST_DIR")).join("tpcds/schema.sql");
    let schema_sql = std::fs::read_to_string(&schema_file).map_err(|e| e.to_string())?;
    let _ = std::fs::create_dir_all(&a.out);
    let (_cluster, _pg, ts, pg) = start_both(&a).await?;
    eprintln!("loading TPC-DS SF {} ...", a.sf);
    let ts_load = load(
        &ts,
        &tpcds::schema_statements(&schema_sql, false),
        a.sf,
        "tessera",
    )
    .await?;
    let pg_load = load(
        &pg,
        &tpcds::schema_statements(&schema_sql, true),
        a.sf,
        "postgres",
    )
    .await?;
    let timeout = format!("SET statement_timeout = '{}s'", a.timeout);
    for c in [&ts, &pg] {
        c.batch_execute(&timeout).await.map_err(|e| e.to_string())?;
    }
    let mut results = vec![];
    for q in queries {
        let sql = std::fs::read_to_string(qdir.join(format!("q{q}.sql")))
            .map_err(|e| format!("q{q}: {e}"))?;
        let stmts = tpcds::statements(&sql);
        let (want, pg_s) = run(&pg, &stmts).await;
        let (got, ts_s) = run(&ts, &stmts).await;
        let verdict = judge(&want, &got);
        let rows = match &want {
            Answer::Rows { rows, .. } => rows.len(),
            Answer::Error { .. } => 0,
        };
        eprintln!(
            "q{q:<3} tessera {ts_s:>8.3} s  postgres {pg_s:>8.3} s  {} {}",
            verdict.label(),
            verdict.note().chars().take(200).collect::<String>()
        );
        results.push(QueryResult {
            query: q,
            tessera_s: ts_s,
            postgres_s: pg_s,
            rows,
            verdict,
        });
    }
    report(&a, &results, ts_load, pg_load)
}

fn report(
    a: &Args,
    results: &[QueryResult],
    ts_load: Duration,
    pg_load: Duration,
) -> Result<(), String> {
    println!(
        "TPC-DS SF {} (derived from TPC-DS; not comparable with published results): load Tessera {:.1} s, PostgreSQL {:.1} s",
        a.sf,
        ts_load.as_secs_f64(),
        pg_load.as_secs_f64()
    );
    println!(
        "{:<6} {:>11} {:>11} {:>9} {:>6}  verdict",
        "query", "tessera s", "postgres s", "pg/ts", "rows"
    );
    let mut tsv = String::from("query\ttessera_s\tpostgres_s\trows\tverdict\tnote\n");
    for r in results {
        println!(
            "q{:<5} {:>11.3} {:>11.3} {:>8.2}x {:>6}  {}",
            r.query,
            r.tessera_s,
            r.postgres_s,
            r.postgres_s / r.tessera_s.max(1e-6),
            r.rows,
            r.verdict.label()
        );
        tsv.push_str(&format!(
            "{}\t{:.4}\t{:.4}\t{}\t{}\t{}\n",
            r.query,
            r.tessera_s,
            r.postgres_s,
            r.rows,
            r.verdict.label(),
            r.verdict.note().replace(['\t', '\n'], " ")
        ));
    }
    let correct = results.iter().filter(|r| r.verdict.correct()).count();
    let refused = results
        .iter()
        .filter(|r| matches!(r.verdict, Verdict::Refused(_)))
        .count();
    let timed_out = results
        .iter()
        .filter(|r| r.verdict == Verdict::TimedOut)
        .count();
    let faster = results
        .iter()
        .filter(|r| r.verdict.correct() && r.tessera_s < r.postgres_s)
        .count();
    let (ts_total, pg_total): (f64, f64) = results
        .iter()
        .filter(|r| r.verdict.correct())
        .fold((0.0, 0.0), |(t, p), r| (t + r.tessera_s, p + r.postgres_s));
    println!(
        "{correct}/{} correct, {refused} refused, {timed_out} timed out, {} different; faster than PostgreSQL on {faster}; total of the correct ones: Tessera {ts_total:.2} s, PostgreSQL {pg_total:.2} s",
        results.len(),
        results.len() - correct - refused - timed_out
    );
    let path = |ext: &str| a.out.join(format!("tpcds-sf{}.{ext}", a.sf));
    let _ = std::fs::write(path("tsv"), tsv);
    let _ = std::fs::write(
        path("json"),
        serde_json::to_string_pretty(results).unwrap_or_default(),
    );
    let groups: Vec<String> = results.iter().map(|r| format!("q{}", r.query)).collect();
    let series = vec![
        svg::Series {
            name: "tessera".into(),
            values: results.iter().map(|r| r.tessera_s).collect(),
        },
        svg::Series {
            name: "postgres".into(),
            values: results.iter().map(|r| r.postgres_s).collect(),
        },
    ];
    let title = format!("TPC-DS SF {} query time", a.sf);
    let _ = std::fs::write(
        path("svg"),
        svg::bar_chart(&title, "seconds", &groups, &series),
    );
    let known = match &a.known {
        Some(p) => known_queries(&std::fs::read_to_string(p).map_err(|e| e.to_string())?),
        None => vec![],
    };
    for r in results
        .iter()
        .filter(|r| r.verdict.correct() && known.contains(&r.query))
    {
        println!(
            "q{} is now answered as PostgreSQL does: take it off the known list",
            r.query
        );
    }
    let new: Vec<String> = results
        .iter()
        .filter(|r| matches!(r.verdict, Verdict::Different(_)) && !known.contains(&r.query))
        .map(|r| format!("q{}", r.query))
        .collect();
    if !new.is_empty() && !a.no_fail {
        return Err(format!(
            "answers differ from PostgreSQL's and are not known: {}",
            new.join(" ")
        ));
    }
    Ok(())
}
