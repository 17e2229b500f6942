//! `pgregress`: PostgreSQL 15's regression files as an oracle. One Tessera
//! cluster and one PostgreSQL 15 are started; `sql/test_setup.sql` and then
//! each chosen file (by default those in `benches/pgregress/supported.txt`)
//! run statement by statement on both (`benches::pgregress`). A statement
//! Tessera refuses (0A000), or one that fails only because an object whose
//! CREATE failed on Tessera is missing (a cascade), is counted, not failed.
//! Any other difference fails the run unless it is listed in
//! `benches/pgregress/known-differences.txt`; a listed statement that now
//! agrees fails it too, so the list only shrinks. The regression files
//! come from `scripts/fetch-pg-regress.sh` (Debian's source package, kept
//! outside the repository).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use benches::pgregress::cascade::Broken;
use benches::pgregress::report::{FileReport, Known, Report};
use benches::pgregress::run::Runner;
use benches::pgregress::script::{one_line, split, Env, Item};
use benches::servers::{Durability, Postgres, Tessera};
use clap::Parser;

#[derive(Parser)]
#[command(
    about = "PostgreSQL 15's regression files on Tessera and on PostgreSQL: answers must agree"
)]
struct Args {
    /// The tessera binary used to start a cluster.
    #[arg(long, default_value = "target/release/tessera")]
    tessera: PathBuf,
    #[arg(long, default_value = "/tmp/tessera-pgregress")]
    work: PathBuf,
    /// Tessera's ports start here; PostgreSQL listens on base + 50.
    #[arg(long, default_value_t = 28000)]
    base_port: u16,
    /// PostgreSQL's src/test/regress folder (default: the one
    /// scripts/fetch-pg-regress.sh put in the cache).
    #[arg(long)]
    regress_dir: Option<PathBuf>,
    /// Seconds each side has for one statement.
    #[arg(long, default_value_t = 5)]
    timeout: u64,
    /// Also write the report as JSON here.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Rewrite known-differences.txt with this run's differences (after a
    /// fix, to drop what now agrees; review the change).
    #[arg(long)]
    write_known: bool,
    /// Listed statements that now agree are printed, not failed (CI: a
    /// run must not fail because another machine's timing let a slow
    /// statement finish; new differences still fail).
    #[arg(long)]
    stale_ok: bool,
    /// Only split the files and print their statements (no servers).
    #[arg(long)]
    split_only: bool,
    /// Print every statement's verdict.
    #[arg(long)]
    verbose: bool,
    /// Files to run (names in sql/, without .sql); default: supported.txt.
    files: Vec<String>,
}

#[tokio::main]
async fn main() {
    if let Err(e) = real_main(Args::parse()).await {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

/// The cache folder scripts/fetch-pg-regress.sh fills.
fn default_regress_dir() -> Result<PathBuf, String> {
    let cache = std::env::var("TESSERA_CACHE")
        .map(PathBuf::from)
        .or_else(|_| std::env::var("HOME").map(|h| Path::new(&h).join(".cache/tessera")))
        .map_err(|_| "neither TESSERA_CACHE nor HOME is set")?
        .join("postgresql-15");
    let mut found: Vec<PathBuf> = std::fs::read_dir(&cache)
        .map_err(|e| format!("{}: {e} (run scripts/fetch-pg-regress.sh)", cache.display()))?
        .flatten()
        .map(|e| e.path().join("src/test/regress"))
        .filter(|p| p.join("sql/test_setup.sql").exists())
        .collect();
    found.sort();
    found
        .pop()
        .ok_or_else(|| format!("no regression files under {}", cache.display()))
}

/// Non-empty, non-comment lines of a list file.
fn list(path: &Path) -> Result<Vec<String>, String> {
    Ok(std::fs::read_to_string(path)
        .map_err(|e| format!("{}: {e}", path.display()))?
        .lines()
        .map(|l| l.split('#').next().unwrap_or_default().trim().to_string())
        .filter(|l| !l.is_empty())
        .collect())
}

/// pg_regress's environment, for the files' `\getenv`.
fn regress_env(regress: &Path) -> Env {
    let dir = regress.to_string_lossy().to_string();
    [
        ("PG_ABS_SRCDIR", dir.clone()),
        ("PG_ABS_BUILDDIR", dir),
        ("PG_LIBDIR", "/usr/lib/postgresql/15/lib".to_string()),
        ("PG_DLSUFFIX", ".so".to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

/// `--split-only`: each file's items, one per line, for checking the
/// splitter against a file by eye.
fn split_only(regress: &Path, files: &[String]) -> Result<(), String> {
    for f in files {
        let path = regress.join("sql").join(format!("{f}.sql"));
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        for item in split(&text, &regress_env(regress), regress)? {
            match item {
                Item::Sql { text, line } => println!("{f}:{line}: {}", one_line(&text)),
                Item::Copy { text, data, line } => {
                    println!("{f}:{line}: {} ({} bytes)", one_line(&text), data.len())
                }
                Item::Meta { command, line } => println!("{f}:{line}: skipped {command}"),
            }
        }
    }
    Ok(())
}

async fn real_main(a: Args) -> Result<(), String> {
    let started = Instant::now();
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("pgregress");
    let regress = match a.regress_dir {
        Some(d) => d,
        None => default_regress_dir()?,
    };
    let files = if a.files.is_empty() {
        list(&dir.join("supported.txt"))?
    } else {
        a.files.clone()
    };
    if a.split_only {
        return split_only(&regress, &files);
    }
    let known_path = dir.join("known-differences.txt");
    let known_text = std::fs::read_to_string(&known_path).unwrap_or_default();
    let known = Known::parse(&known_text);

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
    println!(
        "servers up in {:.1} s; files from {}",
        started.elapsed().as_secs_f64(),
        regress.display()
    );
    let mut runner = Runner {
        env: regress_env(&regress),
        regress,
        postgres_url: pep.url(),
        tessera_url: ep.url(),
        limit: Duration::from_secs(a.timeout),
        known: known.clone(),
        verbose: a.verbose,
        broken: Broken::default(),
        cascades: Default::default(),
    };
    let mut report = Report::default();
    let mut ran = vec!["test_setup".to_string()];
    ran.extend(files.iter().filter(|f| *f != "test_setup").cloned());
    for f in &ran {
        let (counts, diffs) = runner.file(f).await?;
        report.total.add(&counts);
        report.files.push(FileReport {
            file: f.clone(),
            counts,
        });
        report.differences.extend(diffs);
    }
    report.seconds = started.elapsed().as_secs_f64();
    let mut causes: Vec<(String, usize)> =
        std::mem::take(&mut runner.cascades).into_iter().collect();
    causes.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    report.cascade_causes = causes;
    report.stale = known.stale(&ran, &report.differences);
    println!("\n{}", report.table());
    if let Some(out) = &a.out {
        let json = serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?;
        std::fs::write(out, json).map_err(|e| format!("{}: {e}", out.display()))?;
    }
    if a.write_known {
        std::fs::write(&known_path, known.rewritten(&ran, &report.differences))
            .map_err(|e| e.to_string())?;
        println!("wrote {}", known_path.display());
        return Ok(());
    }
    if !report.stale.is_empty() && a.stale_ok {
        println!(
            "note: {} statements listed in known-differences.txt now agree (remove them with --write-known):\n  {}",
            report.stale.len(),
            report.stale.join("\n  ")
        );
    } else if !report.stale.is_empty() {
        return Err(format!(
            "listed in known-differences.txt but no longer different (remove them):\n  {}",
            report.stale.join("\n  ")
        ));
    }
    if report.total.unlisted > 0 {
        return Err(format!(
            "{} statements answered differently from PostgreSQL and are not in known-differences.txt",
            report.total.unlisted
        ));
    }
    Ok(())
}
