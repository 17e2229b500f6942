//! `exprfuzz`: random typed scalar expressions evaluated on a Tessera
//! cluster and on PostgreSQL 15, answers compared (`benches::exprfuzz`).
//! A random run prints each finding with both answers and its minimized
//! form (appended to `--findings`); `--corpus` replays such a file; `--ci`
//! runs a fixed seed and count and fails only on a finding not in
//! `benches/exprfuzz/known-findings.txt`, or on a listed one that now
//! agrees (the list only shrinks; `--stale-ok` prints those instead).

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use benches::exprfuzz::check::{Form, Sides};
use benches::exprfuzz::corpus::{normalize, read_corpus, Known};
use benches::exprfuzz::gen::Gen;
use benches::exprfuzz::load::load;
use benches::exprfuzz::run::{Fuzzer, Stats};
use benches::servers::{Durability, Postgres, Tessera};
use clap::Parser;

#[derive(Parser)]
#[command(about = "Random expressions on Tessera and on PostgreSQL 15: answers must agree")]
struct Args {
    /// The tessera binary used to start a cluster.
    #[arg(long, default_value = "target/debug/tessera")]
    tessera: PathBuf,
    #[arg(long, default_value = "/tmp/tessera-exprfuzz")]
    work: PathBuf,
    /// Tessera's ports start here; PostgreSQL listens on base + 50.
    #[arg(long, default_value_t = 28500)]
    base_port: u16,
    /// The generator's seed (default: from the clock, printed).
    #[arg(long)]
    seed: Option<u64>,
    /// Expressions to try (default 300 unless --secs is given).
    #[arg(long)]
    count: Option<usize>,
    /// Stop generating after this many seconds.
    #[arg(long)]
    secs: Option<u64>,
    /// Append each finding, minimized, to this corpus file.
    #[arg(long)]
    findings: Option<PathBuf>,
    /// Replay this corpus file's expressions instead of generating.
    #[arg(long)]
    corpus: Option<PathBuf>,
    /// Compare the findings with benches/exprfuzz/known-findings.txt.
    #[arg(long)]
    ci: bool,
    /// With --ci: listed findings that now agree are printed, not failed.
    #[arg(long)]
    stale_ok: bool,
    /// With --ci: rewrite known-findings.txt from this run (review it).
    #[arg(long)]
    write_known: bool,
    /// Do not minimize findings.
    #[arg(long)]
    no_shrink: bool,
    /// Every n-th expression also runs over all rows with pushdown off.
    #[arg(long, default_value_t = 3)]
    pushdown_off_every: usize,
    /// Seconds each side has for one statement.
    #[arg(long, default_value_t = 5)]
    timeout: u64,
    /// Only print the expressions the seed and count give (no servers).
    #[arg(long)]
    print: bool,
    /// Print refusals too.
    #[arg(long)]
    verbose: bool,
}

#[tokio::main]
async fn main() {
    match real_main(Args::parse()).await {
        Ok(()) => {}
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}

async fn real_main(a: Args) -> Result<(), String> {
    let started = Instant::now();
    let seed = a.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0)
    });
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("exprfuzz");
    let known_path = dir.join("known-findings.txt");
    let known_text = std::fs::read_to_string(&known_path).unwrap_or_default();
    let known = Known::parse(&known_text);

    if a.print {
        let mut gen = Gen::new(seed);
        for i in 0..a.count.unwrap_or(300) {
            let case = gen.next_case(benches::exprfuzz::table::ROWS);
            println!("{i} row {}: {}", case.row, case.expr.sql());
        }
        return Ok(());
    }
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
    let mut sides = Sides::open(&pep.url(), &ep.url(), Duration::from_secs(a.timeout)).await?;
    let loaded = load(&mut sides).await?;
    println!(
        "servers up and fz loaded ({} rows) in {:.1} s; seed {seed}",
        loaded.rows.len(),
        started.elapsed().as_secs_f64()
    );
    for n in &loaded.notes {
        println!("load: {n}");
    }
    let mut fz = Fuzzer {
        sides,
        rows: loaded.rows,
        shrink: !a.no_shrink,
        findings_file: a.findings.clone(),
        verbose: a.verbose,
        stats: Stats::default(),
        findings: vec![],
        known,
    };
    if let Some(corpus) = &a.corpus {
        let text =
            std::fs::read_to_string(corpus).map_err(|e| format!("{}: {e}", corpus.display()))?;
        let mut still = 0;
        for (sql, row) in read_corpus(&text) {
            still += usize::from(fz.replay(&sql, row).await);
        }
        println!("\n{}", fz.summary());
        println!("{still} corpus expressions still differ");
        return Ok(());
    }

    let t0 = Instant::now();
    let count = a
        .count
        .unwrap_or(if a.secs.is_some() { usize::MAX } else { 300 });
    let limit = a.secs.map(Duration::from_secs);
    let mut gen = Gen::new(seed);
    for i in 0..count {
        if limit.is_some_and(|l| t0.elapsed() >= l) {
            break;
        }
        let case = gen.next_case(fz.rows.len());
        let mut forms = vec![Form::Const, Form::Point, Form::Scan];
        if a.pushdown_off_every > 0 && i % a.pushdown_off_every == 0 {
            forms.push(Form::ScanNoPushdown);
        }
        fz.case(&case.expr, case.row, &forms).await?;
    }
    println!(
        "\nseed {seed}: {:.1} s generating and comparing\n{}",
        t0.elapsed().as_secs_f64(),
        fz.summary()
    );
    if a.ci {
        return ci_verdict(&fz, &known_path, &known_text, &a);
    }
    Ok(())
}

/// The CI rule: a finding not listed fails; a listed one not found is
/// stale (fails unless --stale-ok).
fn ci_verdict(fz: &Fuzzer, path: &std::path::Path, text: &str, a: &Args) -> Result<(), String> {
    let found: BTreeSet<String> = fz.findings.iter().map(|f| normalize(&f.expr)).collect();
    if a.write_known {
        std::fs::write(path, Known::rewritten(text, &found)).map_err(|e| e.to_string())?;
        println!("wrote {} ({} entries)", path.display(), found.len());
        return Ok(());
    }
    let new: Vec<&String> = found.iter().filter(|f| !fz.known.contains(f)).collect();
    let stale = fz.known.stale(&found);
    for s in &stale {
        println!("stale (listed, no longer differs): {s}");
    }
    if !stale.is_empty() && !a.stale_ok {
        return Err(format!(
            "{} expressions in known-findings.txt no longer differ (remove them)",
            stale.len()
        ));
    }
    for n in &new {
        println!("NEW: {n}");
    }
    if !new.is_empty() {
        return Err(format!(
            "{} new findings (not in known-findings.txt)",
            new.len()
        ));
    }
    println!("ci: every finding is known");
    Ok(())
}
