//! `tpch`: generates TPC-H data with the tpchgen crates, loads it into a
//! Tessera cluster through a compute node with COPY (six hash-partitioned
//! tables, nation and region mirrored), runs the 22 queries over the wire
//! and checks every answer against an independent oracle: the same SQL run
//! by plain DataFusion over the same generated data in memory. Optionally
//! the same queries on one PostgreSQL loaded with the same data, side by
//! side. Prints per-query time and pass/fail; writes JSON, TSV and an SVG
//! chart.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use benches::answer::connect;
use benches::servers::{Durability, Postgres, Tessera};
use benches::svg;
use clap::Parser;
use datafusion::arrow::array::{Array, RecordBatch};
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};
use datafusion::datasource::MemTable;
use datafusion::prelude::SessionContext;
use tpchgen::generators::*;
use tpchgen_arrow::*;

#[derive(Parser)]
#[command(
    about = "TPC-H on Tessera, checked against plain DataFusion, optionally timed against PostgreSQL"
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
    #[arg(long, default_value = "/tmp/tessera-tpch")]
    work: PathBuf,
    /// Comma-separated query numbers (default 1-22).
    #[arg(long)]
    queries: Option<String>,
    /// Also load one PostgreSQL 15 and time the queries there.
    #[arg(long)]
    postgres: bool,
    /// Per-query timeout in seconds (PostgreSQL side).
    #[arg(long, default_value_t = 300)]
    timeout: u64,
    #[arg(long, default_value = "benches/results")]
    out: PathBuf,
    #[arg(long, default_value_t = 26000)]
    base_port: u16,
    /// Commit flushing on Tessera and PostgreSQL alike: relaxed or durable.
    #[arg(long, value_enum, default_value = "relaxed")]
    durability: Durability,
    /// More `tessera cluster up` options (split on spaces), e.g.
    /// `--default-partitions 3`.
    #[arg(long, default_value = "", allow_hyphen_values = true)]
    cluster_args: String,
}

type Rows = Vec<Vec<Option<String>>>;

const TABLES: [&str; 8] = [
    "nation", "region", "part", "supplier", "partsupp", "customer", "orders", "lineitem",
];

fn generate(table: &str, sf: f64) -> Result<Vec<RecordBatch>, String> {
    let bs = 8192;
    let it: Box<dyn Iterator<Item = Result<RecordBatch, datafusion::arrow::error::ArrowError>>> =
        match table {
            "nation" => {
                Box::new(NationArrow::new(NationGenerator::new(sf, 1, 1)).with_batch_size(bs))
            }
            "region" => {
                Box::new(RegionArrow::new(RegionGenerator::new(sf, 1, 1)).with_batch_size(bs))
            }
            "part" => Box::new(PartArrow::new(PartGenerator::new(sf, 1, 1)).with_batch_size(bs)),
            "supplier" => {
                Box::new(SupplierArrow::new(SupplierGenerator::new(sf, 1, 1)).with_batch_size(bs))
            }
            "partsupp" => {
                Box::new(PartSuppArrow::new(PartSuppGenerator::new(sf, 1, 1)).with_batch_size(bs))
            }
            "customer" => {
                Box::new(CustomerArrow::new(CustomerGenerator::new(sf, 1, 1)).with_batch_size(bs))
            }
            "orders" => {
                Box::new(OrderArrow::new(OrderGenerator::new(sf, 1, 1)).with_batch_size(bs))
            }
            "lineitem" => {
                Box::new(LineItemArrow::new(LineItemGenerator::new(sf, 1, 1)).with_batch_size(bs))
            }
            other => return Err(format!("unknown table {other}")),
        };
    it.collect::<Result<Vec<_>, _>>().map_err(|e| e.to_string())
}

async fn load(
    client: &tokio_postgres::Client,
    data: &[(String, Vec<RecordBatch>)],
    schema_sql: &str,
) -> Result<Duration, String> {
    for t in TABLES {
        client
            .batch_execute(&format!("DROP TABLE IF EXISTS {t}"))
            .await
            .map_err(|e| e.to_string())?;
    }
    for stmt in schema_sql
        .split(';')
        .map(str::trim)
        .filter(|s| !s.is_empty())
    {
        client
            .batch_execute(stmt)
            .await
            .map_err(|e| format!("{stmt}: {e}"))?;
    }
    let start = Instant::now();
    for (t, batches) in data {
        let rows: usize = batches.iter().map(|b| b.num_rows()).sum();
        eprint!("  loading {t} ({rows} rows) ...");
        let t0 = Instant::now();
        let it = batches.iter().cloned().map(Ok);
        benches::copyload::copy_batches(client, t, it, rows as u64).await?;
        eprintln!(
            " loaded {t}: {rows} rows in {:.1} s",
            t0.elapsed().as_secs_f64()
        );
    }
    Ok(start.elapsed())
}

async fn run_wire(client: &tokio_postgres::Client, sql: &str) -> Result<Rows, String> {
    let msgs = client
        .simple_query(sql)
        .await
        .map_err(|e| match e.as_db_error() {
            Some(db) => format!("{}: {}", db.code().code(), db.message()),
            None => e.to_string(),
        })?;
    Ok(msgs
        .into_iter()
        .filter_map(|m| match m {
            tokio_postgres::SimpleQueryMessage::Row(r) => Some(
                (0..r.len())
                    .map(|i| r.get(i).map(|s| s.to_string()))
                    .collect(),
            ),
            _ => None,
        })
        .collect())
}

async fn run_oracle(ctx: &SessionContext, sql: &str) -> Result<Rows, String> {
    let df = ctx.sql(sql).await.map_err(|e| e.to_string())?;
    let batches = df.collect().await.map_err(|e| e.to_string())?;
    let fo = FormatOptions::default();
    let mut rows = vec![];
    for b in &batches {
        let fmts: Vec<ArrayFormatter> = b
            .columns()
            .iter()
            .map(|c| ArrayFormatter::try_new(c.as_ref(), &fo).expect("fmt"))
            .collect();
        for r in 0..b.num_rows() {
            rows.push(
                (0..b.num_columns())
                    .map(|i| {
                        if b.column(i).is_null(r) {
                            None
                        } else {
                            Some(fmts[i].value(r).to_string())
                        }
                    })
                    .collect(),
            );
        }
    }
    Ok(rows)
}

/// Values agree: equal text (ignoring trailing blanks), or numbers within
/// a relative 1e-9 or one unit in the last place of the less precise text
/// (decimal text of the same value may differ in scale: the oracle's
/// DataFusion truncates `avg` of a decimal at 4 more places, PostgreSQL's
/// rounds at 16 significant digits or more).
fn same_value(a: &Option<String>, b: &Option<String>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(x), Some(y)) => {
            let (x, y) = (x.trim_end(), y.trim_end());
            if x == y {
                return true;
            }
            match (x.parse::<f64>(), y.parse::<f64>()) {
                (Ok(p), Ok(q)) => {
                    let places = |t: &str| {
                        t.split_once('.')
                            .filter(|_| !t.contains(['e', 'E']))
                            .map_or(0, |(_, f)| f.len() as i32)
                    };
                    let ulp = 10f64.powi(-places(x).min(places(y)));
                    let d = (p - q).abs();
                    d <= 1e-9 * p.abs().max(q.abs()).max(1.0) || (d <= ulp && ulp < 1.0)
                }
                _ => false,
            }
        }
        _ => false,
    }
}

fn compare(got: &Rows, want: &Rows) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!("{} rows, oracle has {}", got.len(), want.len()));
    }
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        if g.len() != w.len() || !g.iter().zip(w).all(|(a, b)| same_value(a, b)) {
            return Err(format!("row {i}: got {g:?}, oracle {w:?}"));
        }
    }
    Ok(())
}

#[derive(serde::Serialize, Default, Clone)]
struct QueryResult {
    query: u32,
    tessera_s: f64,
    tessera_ok: bool,
    tessera_note: String,
    postgres_s: Option<f64>,
    postgres_ok: Option<bool>,
    rows: usize,
}

#[tokio::main]
async fn main() {
    let a = Args::parse();
    if let Err(e) = real_main(a).await {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

async fn real_main(a: Args) -> Result<(), String> {
    let queries: Vec<u32> = match &a.queries {
        Some(q) => q.split(',').filter_map(|x| x.trim().parse().ok()).collect(),
        None => (1..=22).collect(),
    };
    let qdir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tpch");
    let schema_sql = std::fs::read_to_string(qdir.join("schema.sql")).map_err(|e| e.to_string())?;
    let _ = std::fs::create_dir_all(&a.out);

    eprintln!("generating TPC-H SF {} ...", a.sf);
    let t0 = Instant::now();
    let mut data = vec![];
    for t in TABLES {
        data.push((t.to_string(), generate(t, a.sf)?));
    }
    eprintln!("generated in {:.1} s", t0.elapsed().as_secs_f64());

    // The oracle: plain DataFusion over the same batches.
    // PostgreSQL reads 0.06 as numeric; so does Tessera; so does the oracle.
    let mut cfg = datafusion::prelude::SessionConfig::new();
    cfg.options_mut().sql_parser.parse_float_as_decimal = true;
    let oracle = SessionContext::new_with_config(cfg);
    for (t, batches) in &data {
        let schema = batches.first().map(|b| b.schema()).ok_or("no data")?;
        let mem = MemTable::try_new(schema, vec![batches.clone()]).map_err(|e| e.to_string())?;
        oracle
            .register_table(t.as_str(), Arc::new(mem))
            .map_err(|e| e.to_string())?;
    }

    let mut _cluster = None;
    let url = match &a.url {
        Some(u) => u.clone(),
        None => {
            let dir = a.work.join("tessera");
            let _ = std::fs::remove_dir_all(&dir);
            let extra: Vec<String> = a
                .cluster_args
                .split_whitespace()
                .map(String::from)
                .collect();
            let (c, ep) =
                Tessera::start(&a.tessera, &dir, a.base_port, "hash", a.durability, &extra)?;
            _cluster = Some(c);
            ep.url()
        }
    };
    let client = connect(&url).await?;
    eprintln!("loading Tessera through COPY ...");
    let tessera_load = load(&client, &data, &schema_sql).await?;
    eprintln!("Tessera load: {:.1} s", tessera_load.as_secs_f64());

    let mut pg = None;
    let mut pg_load = None;
    if a.postgres {
        let (p, ep) = Postgres::start(&a.work.join("postgres"), a.base_port + 50, a.durability)?;
        let pg_url = ep.url();
        let pc = connect(&pg_url).await?;
        let plain: String = schema_sql
            .lines()
            .map(|l| {
                let l = l.split(" PARTITION BY").next().unwrap_or(l);
                let l = l.split(" WITH (").next().unwrap_or(l);
                format!("{};\n", l.trim_end_matches(';'))
            })
            .collect();
        eprintln!("loading PostgreSQL through COPY ...");
        pg_load = Some(load(&pc, &data, &plain).await?);
        pc.batch_execute("ANALYZE")
            .await
            .map_err(|e| e.to_string())?;
        pc.batch_execute(&format!("SET statement_timeout = '{}s'", a.timeout))
            .await
            .map_err(|e| e.to_string())?;
        pg = Some((p, pc));
    }

    let mut results = vec![];
    for q in &queries {
        let sql = std::fs::read_to_string(qdir.join("queries").join(format!("q{q}.sql")))
            .map_err(|e| e.to_string())?;
        let want = run_oracle(&oracle, &sql)
            .await
            .map_err(|e| format!("oracle q{q}: {e}"))?;
        let t = Instant::now();
        let got = run_wire(&client, &sql).await;
        let el = t.elapsed().as_secs_f64();
        let mut r = QueryResult {
            query: *q,
            tessera_s: el,
            rows: want.len(),
            ..Default::default()
        };
        match got.and_then(|g| compare(&g, &want)) {
            Ok(()) => r.tessera_ok = true,
            Err(e) => r.tessera_note = e.chars().take(300).collect(),
        }
        if let Some((_, pc)) = &pg {
            let t = Instant::now();
            let res = run_wire(pc, &sql).await;
            r.postgres_s = Some(t.elapsed().as_secs_f64());
            r.postgres_ok = Some(res.and_then(|g| compare(&g, &want)).is_ok());
        }
        eprintln!(
            "q{q:<2} tessera {:>8.3} s {}{}",
            r.tessera_s,
            if r.tessera_ok { "ok" } else { "WRONG/FAILED" },
            r.postgres_s
                .map(|p| format!("   postgres {p:>8.3} s"))
                .unwrap_or_default()
        );
        if !r.tessera_ok {
            eprintln!("    {}", r.tessera_note);
        }
        results.push(r);
    }
    drop(pg);

    println!(
        "TPC-H SF {}: Tessera load {:.1} s{}",
        a.sf,
        tessera_load.as_secs_f64(),
        pg_load
            .map(|p| format!(", PostgreSQL load {:.1} s", p.as_secs_f64()))
            .unwrap_or_default()
    );
    println!(
        "{:<6} {:>12} {:>8} {:>12} {:>10}",
        "query", "tessera s", "correct", "postgres s", "pg/tessera"
    );
    let mut tsv = String::from("query\ttessera_s\ttessera_ok\tpostgres_s\tpostgres_ok\tnote\n");
    for r in &results {
        println!(
            "q{:<5} {:>12.3} {:>8} {:>12} {:>10}",
            r.query,
            r.tessera_s,
            if r.tessera_ok { "yes" } else { "NO" },
            r.postgres_s
                .map(|p| format!("{p:.3}"))
                .unwrap_or("-".into()),
            r.postgres_s
                .map(|p| format!("{:.2}x", p / r.tessera_s.max(1e-6)))
                .unwrap_or("-".into())
        );
        tsv.push_str(&format!(
            "{}\t{:.4}\t{}\t{}\t{}\t{}\n",
            r.query,
            r.tessera_s,
            r.tessera_ok,
            r.postgres_s.map(|p| format!("{p:.4}")).unwrap_or_default(),
            r.postgres_ok.map(|p| p.to_string()).unwrap_or_default(),
            r.tessera_note.replace(['\t', '\n'], " ")
        ));
    }
    let correct = results.iter().filter(|r| r.tessera_ok).count();
    println!("{correct}/{} correct", results.len());
    let _ = std::fs::write(a.out.join(format!("tpch-sf{}.tsv", a.sf)), tsv);
    let _ = std::fs::write(
        a.out.join(format!("tpch-sf{}.json", a.sf)),
        serde_json::to_string_pretty(&results).unwrap_or_default(),
    );
    let groups: Vec<String> = results.iter().map(|r| format!("q{}", r.query)).collect();
    let mut series = vec![svg::Series {
        name: "tessera".into(),
        values: results.iter().map(|r| r.tessera_s).collect(),
    }];
    if a.postgres {
        series.push(svg::Series {
            name: "postgres".into(),
            values: results
                .iter()
                .map(|r| r.postgres_s.unwrap_or(0.0))
                .collect(),
        });
    }
    let _ = std::fs::write(
        a.out.join(format!("tpch-sf{}.svg", a.sf)),
        svg::bar_chart(
            &format!("TPC-H SF {} query time", a.sf),
            "seconds",
            &groups,
            &series,
        ),
    );
    if correct != results.len() {
        return Err(format!(
            "{} of {} queries wrong or failed",
            results.len() - correct,
            results.len()
        ));
    }
    Ok(())
}
