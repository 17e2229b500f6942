//! How fast a move copies (issue 33: "the copy is throttled so foreground
//! latency stays within a bound").
//!
//! The copy works in batches and sleeps after each so that copying takes
//! at most a share (`duty`) of the wall time. With a latency guard the
//! share adapts to what the copy does to the shards' clients: before the
//! copy, each shard the move reads or writes is probed (a trivial
//! statement on a pooled connection, as a client's would run) to learn its
//! response time under the running load; after each batch it is probed
//! again, and while any probe is slower than `max_slowdown` times its
//! baseline (plus 1 ms of slack for the timer's and the scheduler's noise)
//! the share is halved, down to 2 %; while every probe is within it, the
//! share grows by 5 points back to `duty` (additive increase,
//! multiplicative decrease). The bound is on the shards' response time to
//! a statement, which is what a client's statement waits for first;
//! statements that wait on locks or on other shards are not measured.

use std::time::{Duration, Instant};

use common::Result;
use mysql_async::prelude::*;
use parking_lot::Mutex;
use storage_adapter::{map_error, ShardClient};

/// Probes per shard for its baseline (the median is taken).
const BASELINE_PROBES: usize = 5;
/// The share never falls below this (the copy always progresses).
const MIN_DUTY: f64 = 0.02;
/// Slack over the baseline's multiple.
const SLACK: Duration = Duration::from_millis(1);
/// A pause after a batch is at most this long.
const MAX_PAUSE: Duration = Duration::from_secs(2);

struct Guard {
    shards: Vec<ShardClient>,
    /// Each shard's probe time may reach this before the copy slows.
    limits: Vec<Duration>,
    duty: Mutex<f64>,
    /// The lowest share the copy ran at, for the report.
    lowest: Mutex<f64>,
}

/// Keeps the copy to a share of the time (see the module's documentation).
pub struct Throttle {
    duty: f64,
    guard: Option<Guard>,
}

async fn probe(shard: &ShardClient) -> Result<Duration> {
    let mut conn = shard.conn().await?;
    let t = Instant::now();
    conn.query_drop("SELECT 1")
        .await
        .map_err(|e| map_error(shard.id, e))?;
    Ok(t.elapsed())
}

impl Throttle {
    /// A fixed share of the time (`duty` >= 1: no pause).
    pub fn fixed(duty: f64) -> Throttle {
        Throttle { duty, guard: None }
    }

    /// A share of at most `duty` that falls while a probe of `shards` is
    /// slower than `max_slowdown` times its baseline, measured now (0:
    /// fixed).
    pub async fn guarded(
        duty: f64,
        max_slowdown: f64,
        shards: Vec<ShardClient>,
    ) -> Result<Throttle> {
        if max_slowdown <= 0.0 || shards.is_empty() {
            return Ok(Throttle::fixed(duty));
        }
        let mut limits = vec![];
        for s in &shards {
            let mut times = vec![];
            for _ in 0..BASELINE_PROBES {
                times.push(probe(s).await?);
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            times.sort();
            limits.push(times[BASELINE_PROBES / 2].mul_f64(max_slowdown) + SLACK);
        }
        Ok(Throttle {
            duty,
            guard: Some(Guard {
                shards,
                limits,
                duty: Mutex::new(duty),
                lowest: Mutex::new(duty),
            }),
        })
    }

    /// The lowest share the copy ran at.
    pub fn lowest_duty(&self) -> f64 {
        self.guard.as_ref().map_or(self.duty, |g| *g.lowest.lock())
    }

    /// After a batch begun at `batch_started`: the share adapted to the
    /// probes, then the pause that keeps the copy to it.
    pub async fn after(&self, batch_started: Instant) -> Result<()> {
        let spent = batch_started.elapsed().as_secs_f64();
        let duty = match &self.guard {
            None => self.duty,
            Some(g) => {
                // The better of two probes: one slow answer is noise.
                let mut slow = false;
                for (s, limit) in g.shards.iter().zip(&g.limits) {
                    slow |= probe(s).await?.min(probe(s).await?) > *limit;
                }
                let mut d = g.duty.lock();
                *d = if slow {
                    (*d * 0.5).max(MIN_DUTY)
                } else {
                    (*d + 0.05).min(self.duty)
                };
                let mut lowest = g.lowest.lock();
                *lowest = lowest.min(*d);
                *d
            }
        };
        if duty >= 1.0 || duty <= 0.0 {
            return Ok(());
        }
        let pause = Duration::from_secs_f64(spent * (1.0 - duty) / duty);
        tokio::time::sleep(pause.min(MAX_PAUSE)).await;
        Ok(())
    }
}
