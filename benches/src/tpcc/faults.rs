//! Faults for a run on a started cluster: SIGKILL a node by role, restart
//! what is down (`tessera cluster up`), and count the XA branches the
//! shards still hold prepared (none may stay once recovery has run).

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use mysql_async::prelude::Queryable;

fn status(bin: &Path, dir: &Path) -> Result<Vec<serde_json::Value>, String> {
    let out = Command::new(bin)
        .args(["cluster", "status", "--json", "--data-dir"])
        .arg(dir)
        .output()
        .map_err(|e| e.to_string())?;
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).map_err(|e| e.to_string())?;
    Ok(v.as_array().cloned().unwrap_or_default())
}

/// SIGKILL the `nth` (0-based) running node of `role`; its name.
pub fn kill(bin: &Path, dir: &Path, role: &str, nth: usize) -> Result<String, String> {
    let nodes = status(bin, dir)?;
    let n = nodes
        .iter()
        .filter(|n| n["role"] == role && n["pid"].is_u64())
        .nth(nth)
        .ok_or_else(|| format!("no running {role} #{nth}"))?;
    let pid = n["pid"].as_u64().unwrap_or(0);
    Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .map_err(|e| e.to_string())?;
    Ok(n["name"].as_str().unwrap_or(role).to_string())
}

/// Start again what is not running.
pub fn restart(bin: &Path, dir: &Path) -> Result<(), String> {
    let out = Command::new(bin)
        .args(["cluster", "up", "--data-dir"])
        .arg(dir)
        .output()
        .map_err(|e| e.to_string())?;
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

/// XA branches prepared on the shards (`XA RECOVER`), waited for until
/// they are none or `patience` has passed; what is left.
pub async fn prepared_left(bin: &Path, dir: &Path, patience: Duration) -> Result<u64, String> {
    let start = Instant::now();
    loop {
        let mut left = 0u64;
        for n in status(bin, dir)?.iter().filter(|n| n["role"] == "shard") {
            let url = format!(
                "mysql://{}:{}@127.0.0.1:{}/",
                n["user"].as_str().unwrap_or_default(),
                n["password"].as_str().unwrap_or_default(),
                n["port"]
            );
            let opts = mysql_async::Opts::from_url(&url).map_err(|e| e.to_string())?;
            let mut c = mysql_async::Conn::new(opts)
                .await
                .map_err(|e| format!("{}: {e}", n["name"]))?;
            let rows: Vec<mysql_async::Row> =
                c.query("XA RECOVER").await.map_err(|e| e.to_string())?;
            left += rows.len() as u64;
            let _ = c.disconnect().await;
        }
        if left == 0 || start.elapsed() > patience {
            return Ok(left);
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

/// `--rebalance`: `after` into the measured run, `tessera cluster
/// add-shard` and then `rebalance` on the started cluster (their output
/// passed on); the seconds since `start` at which the shard was asked for,
/// at which it was added and at which the rebalance ended.
pub async fn grow(
    bin: std::path::PathBuf,
    dir: std::path::PathBuf,
    after: Duration,
    start: Instant,
) -> Result<(f64, f64, f64), String> {
    tokio::time::sleep(after).await;
    let mut at = vec![start.elapsed().as_secs_f64()];
    for cmd in ["add-shard", "rebalance"] {
        let (b, d) = (bin.clone(), dir.clone());
        let out = tokio::task::spawn_blocking(move || {
            Command::new(b)
                .args(["cluster", cmd, "--data-dir"])
                .arg(d)
                .output()
        })
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| e.to_string())?;
        for l in String::from_utf8_lossy(&out.stdout).lines() {
            eprintln!("  {cmd}: {l}");
        }
        if !out.status.success() {
            return Err(format!("{cmd}: {}", String::from_utf8_lossy(&out.stderr)));
        }
        at.push(start.elapsed().as_secs_f64());
    }
    Ok((at[0], at[1], at[2]))
}

/// Per minute, from (seconds, running count) samples: the rate between
/// two moments.
pub fn rate_between(samples: &[(f64, u64)], from: f64, to: f64) -> f64 {
    let at = |t: f64| {
        samples
            .iter()
            .min_by(|a, b| (a.0 - t).abs().total_cmp(&(b.0 - t).abs()))
            .copied()
            .unwrap_or((t, 0))
    };
    let (a, b) = (at(from), at(to));
    if b.0 <= a.0 {
        return 0.0;
    }
    (b.1.saturating_sub(a.1)) as f64 * 60.0 / (b.0 - a.0)
}
