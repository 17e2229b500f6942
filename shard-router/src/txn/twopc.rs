//! The two-phase commit coordinator and the recovery of orphan branches,
//! written against small traits ([`Participant`], [`DecisionLog`],
//! [`RecoveryShard`]) so the state machine is unit tested with an in-memory
//! fake at every crash point, while production runs them on MariaDB XA and
//! the meta commit log.
//!
//! Protocol: writes on at most one shard commit in one phase. Otherwise every
//! writer is `XA END` + `XA PREPARE`d (in parallel); the decision row is
//! inserted in meta's `commit_log` (primary key on the gtrid: the first
//! decision stands, which settles a late committer racing recovery); then
//! every branch is `XA COMMIT`ted (in parallel). A failure before the
//! decision rolls everything back; not knowing whether the decision was
//! written answers 40003; a failure after it is left to recovery, which
//! commits from the log. A coordinator that gives up waiting on a server
//! that failed over settles its transaction itself on the new servers
//! ([`settle`]) rather than leave it to recovery's orphan timeout.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use common::{Error, Result, ShardId, SqlState};
use futures::future::join_all;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    Commit,
    Abort,
}

impl Decision {
    pub fn as_str(&self) -> &'static str {
        match self {
            Decision::Commit => "commit",
            Decision::Abort => "abort",
        }
    }

    pub fn parse(s: &str) -> Decision {
        if s == "commit" {
            Decision::Commit
        } else {
            Decision::Abort
        }
    }
}

/// One shard's branch of a transaction, seen by the coordinator.
#[async_trait]
pub trait Participant: Send {
    fn shard(&self) -> ShardId;
    /// `XA END` + `XA PREPARE`.
    async fn prepare(&mut self, gtrid: &str) -> Result<()>;
    /// `XA COMMIT` of a prepared branch.
    async fn commit_prepared(&mut self, gtrid: &str) -> Result<()>;
    /// `XA END` + `XA COMMIT ... ONE PHASE` (a branch that only read).
    async fn commit_one_phase(&mut self, gtrid: &str) -> Result<()>;
    /// Commits the transaction's only writing branch on its own, durably
    /// through a crash: `XA END` + `XA PREPARE` + `XA COMMIT` in one round
    /// trip. Not `ONE PHASE`: MariaDB binary-logs such a commit as an
    /// ordinary transaction (no XID), its engine commit is not flushed
    /// (the log's is), and after a crash its recovery leaves the user XID
    /// prepared (seen: several per kill under load, some already in the
    /// binary log), which no log names, so Tessera's recovery rolled back
    /// a commit the client had been told of. Prepared and committed
    /// separately, both steps name the XID in the log, and the restart's
    /// reconciliation finishes what the log says (`tessera
    /// cluster::rewind`).
    async fn commit_alone(&mut self, gtrid: &str) -> Result<()>;
    /// `XA END` (if still active) + `XA ROLLBACK`.
    async fn rollback(&mut self, gtrid: &str) -> Result<()>;
}

/// A shared hold of the snapshot barrier (`super::snapshot`): while a
/// commit holds it, no consistent read opens its snapshots.
#[async_trait]
pub trait BarrierHold: Send {
    /// Ends the hold; `done`: every branch of that transaction committed,
    /// so its decision is marked complete in the same step.
    async fn release(self: Box<Self>, done: Option<String>);
}

/// No barrier (the tests' logs).
pub struct NoBarrier;

#[async_trait]
impl BarrierHold for NoBarrier {
    async fn release(self: Box<Self>, _: Option<String>) {}
}

/// Where decisions are kept (meta's `commit_log`).
#[async_trait]
pub trait DecisionLog: Send + Sync {
    /// Records `d` unless a decision exists; returns the one that stands.
    /// A commit is recorded as not complete, with the shards it wrote,
    /// until [`BarrierHold::release`] or [`DecisionLog::completed`] marks
    /// it. With `not_after`, a commit is recorded only if the log's own
    /// clock has not passed that time; past it the abort decision is
    /// recorded (and returned) instead.
    async fn decide(
        &self,
        gtrid: &str,
        d: Decision,
        shards: &[ShardId],
        not_after: Option<std::time::SystemTime>,
    ) -> Result<Decision>;
    async fn lookup(&self, gtrids: &[String]) -> Result<HashMap<String, Decision>>;
    /// Deletes decisions older than `age` whose gtrid is not in `keep`.
    async fn forget(&self, age: Duration, keep: &HashSet<String>) -> Result<usize>;
    /// Takes the snapshot barrier shared, for a commit's second phase.
    async fn hold_barrier(&self) -> Result<Box<dyn BarrierHold>> {
        Ok(Box::new(NoBarrier))
    }
    /// Commit decisions not marked complete.
    async fn incomplete(&self) -> Result<Vec<String>> {
        Ok(vec![])
    }
    /// Marks commit decisions complete (no branch of theirs is prepared).
    async fn completed(&self, _gtrids: &[String]) -> Result<()> {
        Ok(())
    }
}

/// How long recovery waits before deciding abort for a prepared branch
/// with no decision (config `xa_orphan_timeout_secs`, set at start).
pub static ORPHAN_TIMEOUT_MS: std::sync::atomic::AtomicU64 =
    std::sync::atomic::AtomicU64::new(10_000);

/// The latest a coordinator may record its commit decision after starting
/// to prepare: 60 % of the orphan timeout, leaving room for clock skew
/// between this node and meta.
pub fn decision_deadline() -> Duration {
    Duration::from_millis(ORPHAN_TIMEOUT_MS.load(std::sync::atomic::Ordering::Relaxed) * 6 / 10)
}

/// Points where a coordinator can die; the tests stop it there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    BeforePrepare,
    AfterPrepare(usize),
    BeforeDecision,
    AfterDecision,
    AfterCommit(usize),
}

/// Commits a transaction whose branches are `parts` (with whether each
/// wrote). `crash` lets tests stop the coordinator at a step.
pub async fn commit<P: Participant>(
    gtrid: &str,
    parts: Vec<(P, bool)>,
    log: &dyn DecisionLog,
    crash: &(dyn Fn(Step) -> bool + Sync),
) -> Result<()> {
    let (mut writers, readers): (Vec<_>, Vec<_>) = parts.into_iter().partition(|(_, w)| *w);
    // Branches that only read end first, all at once (one round trip each,
    // concurrently).
    let reader_errors = join_all(readers.into_iter().map(|(mut p, _)| async move {
        match p.commit_one_phase(gtrid).await {
            Ok(()) => None,
            Err(e) => {
                let _ = p.rollback(gtrid).await;
                Some(e)
            }
        }
    }))
    .await;
    // A reader that could not end (its connection broke) fails the
    // transaction before anything is committed: the client is told the
    // truth, a rollback.
    if let Some(e) = reader_errors.into_iter().flatten().next() {
        join_all(writers.iter_mut().map(|(p, _)| p.rollback(gtrid))).await;
        return Err(rolled_back(e));
    }
    if writers.len() <= 1 {
        // One writer commits on its own (no decision in meta).
        for (mut p, _) in writers {
            if let Err(e) = p.commit_alone(gtrid).await {
                let _ = p.rollback(gtrid).await;
                return Err(rolled_back(e));
            }
        }
        return Ok(());
    }
    if crash(Step::BeforePrepare) {
        return Err(crashed());
    }
    // The coordinator's deadline: recovery may decide abort for a branch
    // it has seen prepared for `orphan_timeout`, so the commit decision
    // must land well before that. Checked here on this node's clock and
    // again by the log on its own (a decision that arrives late, after a
    // stall, is recorded as an abort instead).
    let started = std::time::Instant::now();
    let deadline = decision_deadline();
    let not_after = std::time::SystemTime::now() + deadline;
    // A test crash "after prepare i" prepares only the first i + 1.
    let n = writers.len();
    let stop = (0..n).find(|i| crash(Step::AfterPrepare(*i)));
    let upto = stop.map(|i| i + 1).unwrap_or(n);
    let results = join_all(writers[..upto].iter_mut().map(|(p, _)| p.prepare(gtrid))).await;
    if stop.is_some() {
        return Err(crashed());
    }
    if let Some(e) = results.into_iter().find_map(|r| r.err()) {
        join_all(writers.iter_mut().map(|(p, _)| p.rollback(gtrid))).await;
        return Err(rolled_back(e));
    }
    if crash(Step::BeforeDecision) {
        return Err(crashed());
    }
    if started.elapsed() >= deadline {
        join_all(writers.iter_mut().map(|(p, _)| p.rollback(gtrid))).await;
        return Err(Error::Sql {
            state: SqlState::SERIALIZATION_FAILURE,
            message: format!(
                "transaction {gtrid} rolled back: preparing its branches took longer than {} ms",
                deadline.as_millis()
            ),
        });
    }
    // From the decision until every branch has committed, consistent
    // readers must not open their snapshots (`super::snapshot`).
    let hold = match log.hold_barrier().await {
        Ok(h) => h,
        Err(e) => {
            join_all(writers.iter_mut().map(|(p, _)| p.rollback(gtrid))).await;
            return Err(rolled_back(e));
        }
    };
    let shards: Vec<ShardId> = writers.iter().map(|(p, _)| p.shard()).collect();
    match log
        .decide(gtrid, Decision::Commit, &shards, Some(not_after))
        .await
    {
        Ok(Decision::Commit) => {}
        Ok(Decision::Abort) => {
            hold.release(None).await;
            // Recovery gave up on us first; its abort stands.
            join_all(writers.iter_mut().map(|(p, _)| p.rollback(gtrid))).await;
            return Err(Error::Sql {
                state: SqlState::SERIALIZATION_FAILURE,
                message: format!(
                    "transaction {gtrid} was aborted by recovery before it could commit"
                ),
            });
        }
        Err(e) => {
            hold.release(None).await;
            tracing::warn!("commit decision for {gtrid} not recorded: {e}");
            return Err(Error::TxnOutcomeUnknown {
                xid: gtrid.to_string(),
            });
        }
    }
    if crash(Step::AfterDecision) {
        // A coordinator that dies drops its hold (meta closes the
        // connection): the decision stays incomplete for recovery.
        drop(hold);
        return Err(crashed());
    }
    let stop = (0..n).find(|i| crash(Step::AfterCommit(*i)));
    let upto = stop.map(|i| i + 1).unwrap_or(n);
    let results = join_all(
        writers[..upto]
            .iter_mut()
            .map(|(p, _)| p.commit_prepared(gtrid)),
    )
    .await;
    if stop.is_some() {
        drop(hold);
        return Err(crashed());
    }
    let all_committed = results.iter().all(|r| r.is_ok());
    // Not awaited: the commit is complete; the hold only keeps readers out.
    tokio::spawn(hold.release(all_committed.then(|| gtrid.to_string())));
    for (i, r) in results.into_iter().enumerate() {
        if let Err(e) = r {
            // The decision is durable: recovery commits this branch.
            tracing::warn!(
                "XA COMMIT of {gtrid} on {} failed after the decision: {e}",
                writers[i].0.shard()
            );
        }
    }
    Ok(())
}

fn crashed() -> Error {
    Error::internal("coordinator stopped (test crash point)")
}

/// The error a client sees when its commit rolled back.
fn rolled_back(e: Error) -> Error {
    match e {
        Error::Shard {
            code: 1213,
            message,
        }
        | Error::Shard {
            code: 1614,
            message,
        } => Error::Sql {
            state: SqlState::DEADLOCK_DETECTED,
            message: format!("transaction rolled back: {message}"),
        },
        Error::Shard {
            code: 1402 | 1613,
            message,
        } => Error::Sql {
            state: SqlState::SERIALIZATION_FAILURE,
            message: format!("transaction rolled back: {message}"),
        },
        e @ (Error::ShardUnavailable { .. }
        | Error::Sql { .. }
        | Error::TxnOutcomeUnknown { .. }) => e,
        other => Error::Sql {
            state: SqlState::SERIALIZATION_FAILURE,
            message: format!("transaction rolled back: {other}"),
        },
    }
}

/// A shard as recovery sees it.
#[async_trait]
pub trait RecoveryShard: Send + Sync {
    fn id(&self) -> ShardId;
    /// Prepared branches: (gtrid, bqual).
    async fn prepared(&self) -> Result<Vec<(String, String)>>;
    async fn commit(&self, gtrid: &str, bqual: &str) -> Result<()>;
    async fn rollback(&self, gtrid: &str, bqual: &str) -> Result<()>;
}

#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct RecoveryReport {
    pub committed: usize,
    pub rolled_back: usize,
    pub aborted: usize,
    pub forgotten: usize,
    pub pending: usize,
}

/// Resolves prepared branches left behind by coordinators that died.
pub struct Recovery {
    first_seen: HashMap<String, Instant>,
    /// How long a prepared branch may wait for its decision before recovery
    /// decides abort.
    pub orphan_timeout: Duration,
    /// How long resolved decisions are kept.
    pub keep_decisions: Duration,
    /// Only branches whose gtrid starts with this are Tessera's.
    pub prefix: String,
}

impl Recovery {
    pub fn new(orphan_timeout: Duration) -> Recovery {
        Recovery {
            first_seen: HashMap::new(),
            orphan_timeout,
            keep_decisions: Duration::from_secs(120),
            prefix: super::xid::GTRID_PREFIX.to_string(),
        }
    }

    pub async fn run_once(
        &mut self,
        shards: &[&dyn RecoveryShard],
        log: &dyn DecisionLog,
        now: Instant,
    ) -> Result<RecoveryReport> {
        let mut report = RecoveryReport::default();
        // Read before the scan: a decision listed here whose branches the
        // scan then finds none of (or commits) is complete.
        let incomplete = log.incomplete().await.unwrap_or_default();
        let mut branches: Vec<(ShardId, String, String)> = vec![];
        let mut all_reached = true;
        for s in shards {
            match s.prepared().await {
                Ok(list) => branches.extend(
                    list.into_iter()
                        .filter(|(g, _)| g.starts_with(&self.prefix))
                        .map(|(g, b)| (s.id(), g, b)),
                ),
                Err(_) => all_reached = false,
            }
        }
        let gtrids: Vec<String> = branches
            .iter()
            .map(|(_, g, _)| g.clone())
            .collect::<HashSet<_>>()
            .into_iter()
            .collect();
        let mut decisions = if gtrids.is_empty() {
            HashMap::new()
        } else {
            log.lookup(&gtrids).await?
        };
        for g in &gtrids {
            if decisions.contains_key(g) {
                continue;
            }
            let seen = *self.first_seen.entry(g.clone()).or_insert(now);
            if now.duration_since(seen) >= self.orphan_timeout {
                let d = log.decide(g, Decision::Abort, &[], None).await?;
                if d == Decision::Abort {
                    report.aborted += 1;
                }
                decisions.insert(g.clone(), d);
            }
        }
        let mut unresolved: HashSet<&str> = HashSet::new();
        for (shard, g, b) in &branches {
            let Some(s) = shards.iter().find(|s| s.id() == *shard) else {
                unresolved.insert(g);
                continue;
            };
            match decisions.get(g) {
                Some(Decision::Commit) => {
                    if s.commit(g, b).await.is_ok() {
                        report.committed += 1;
                    } else {
                        unresolved.insert(g);
                    }
                }
                Some(Decision::Abort) => {
                    if s.rollback(g, b).await.is_ok() {
                        report.rolled_back += 1;
                    }
                }
                None => report.pending += 1,
            }
        }
        if all_reached {
            let complete: Vec<String> = incomplete
                .into_iter()
                .filter(|g| !unresolved.contains(g.as_str()))
                .collect();
            if !complete.is_empty() {
                log.completed(&complete).await?;
            }
        }
        let live: HashSet<String> = gtrids.into_iter().collect();
        self.first_seen.retain(|g, _| live.contains(g));
        if all_reached {
            report.forgotten = log.forget(self.keep_decisions, &live).await?;
        }
        Ok(report)
    }
}

/// Settles at once a transaction whose coordinator gave up its commit
/// (a server failed over while it ran), instead of leaving its prepared
/// branches, and their row locks, to recovery's orphan timeout: the abort
/// is recorded unless a decision already stands (the coordinator's own
/// commit, if it landed first, wins on the log's primary key), then every
/// branch of it prepared on `shards` is finished the way that stands.
/// Recovery waits out the orphan timeout only because a live coordinator
/// might still record its commit; here the coordinator is the one asking.
/// A branch still preparing when this runs is left to recovery, which
/// finds the decision and needs no wait.
pub async fn settle(
    gtrid: &str,
    shards: &[&dyn RecoveryShard],
    log: &dyn DecisionLog,
) -> Result<Decision> {
    let d = log.decide(gtrid, Decision::Abort, &[], None).await?;
    let mut finished = true;
    for s in shards {
        let Ok(list) = s.prepared().await else {
            finished = false;
            continue;
        };
        for (g, b) in list.into_iter().filter(|(g, _)| g == gtrid) {
            let r = match d {
                Decision::Commit => s.commit(&g, &b).await,
                Decision::Abort => s.rollback(&g, &b).await,
            };
            finished &= r.is_ok();
        }
    }
    if d == Decision::Commit && finished {
        log.completed(&[gtrid.to_string()]).await?;
    }
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use parking_lot::Mutex;
    use std::sync::Arc;

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum St {
        Active,
        Prepared,
        Committed,
        /// Committed as a transaction's only writer (prepared, then
        /// committed, without a decision row).
        CommittedAlone,
        RolledBack,
    }

    /// An in-memory shard: branch states by gtrid.
    #[derive(Default)]
    struct FakeShard {
        id: u32,
        branches: Mutex<HashMap<String, St>>,
        fail_prepare: bool,
    }

    struct FakeParticipant(Arc<FakeShard>);

    #[async_trait]
    impl Participant for FakeParticipant {
        fn shard(&self) -> ShardId {
            ShardId(self.0.id)
        }
        async fn prepare(&mut self, g: &str) -> Result<()> {
            if self.0.fail_prepare {
                return Err(Error::Shard {
                    code: 1213,
                    message: "deadlock".into(),
                });
            }
            self.0.branches.lock().insert(g.into(), St::Prepared);
            Ok(())
        }
        async fn commit_prepared(&mut self, g: &str) -> Result<()> {
            let mut b = self.0.branches.lock();
            assert_eq!(b.get(g), Some(&St::Prepared));
            b.insert(g.into(), St::Committed);
            Ok(())
        }
        async fn commit_one_phase(&mut self, g: &str) -> Result<()> {
            self.0.branches.lock().insert(g.into(), St::Committed);
            Ok(())
        }
        async fn commit_alone(&mut self, g: &str) -> Result<()> {
            self.0.branches.lock().insert(g.into(), St::CommittedAlone);
            Ok(())
        }
        async fn rollback(&mut self, g: &str) -> Result<()> {
            self.0.branches.lock().insert(g.into(), St::RolledBack);
            Ok(())
        }
    }

    #[async_trait]
    impl RecoveryShard for FakeShard {
        fn id(&self) -> ShardId {
            ShardId(self.id)
        }
        async fn prepared(&self) -> Result<Vec<(String, String)>> {
            Ok(self
                .branches
                .lock()
                .iter()
                .filter(|(_, s)| **s == St::Prepared)
                .map(|(g, _)| (g.clone(), self.id.to_string()))
                .collect())
        }
        async fn commit(&self, g: &str, _: &str) -> Result<()> {
            self.branches.lock().insert(g.into(), St::Committed);
            Ok(())
        }
        async fn rollback(&self, g: &str, _: &str) -> Result<()> {
            self.branches.lock().insert(g.into(), St::RolledBack);
            Ok(())
        }
    }

    #[derive(Default)]
    struct FakeLog {
        rows: Mutex<HashMap<String, Decision>>,
        down: bool,
    }

    #[async_trait]
    impl DecisionLog for FakeLog {
        async fn decide(
            &self,
            g: &str,
            d: Decision,
            _shards: &[ShardId],
            _not_after: Option<std::time::SystemTime>,
        ) -> Result<Decision> {
            if self.down {
                return Err(Error::meta("unreachable"));
            }
            Ok(*self.rows.lock().entry(g.into()).or_insert(d))
        }
        async fn lookup(&self, gs: &[String]) -> Result<HashMap<String, Decision>> {
            let rows = self.rows.lock();
            Ok(gs
                .iter()
                .filter_map(|g| rows.get(g).map(|d| (g.clone(), *d)))
                .collect())
        }
        async fn forget(&self, _: Duration, keep: &HashSet<String>) -> Result<usize> {
            let mut rows = self.rows.lock();
            let before = rows.len();
            rows.retain(|g, _| keep.contains(g));
            Ok(before - rows.len())
        }
    }

    const G: &str = "tsr-1-1-1";

    fn shards(n: u32) -> Vec<Arc<FakeShard>> {
        (1..=n)
            .map(|id| {
                let s = FakeShard {
                    id,
                    ..Default::default()
                };
                s.branches.lock().insert(G.into(), St::Active);
                Arc::new(s)
            })
            .collect()
    }

    fn parts(shards: &[Arc<FakeShard>]) -> Vec<(FakeParticipant, bool)> {
        shards
            .iter()
            .map(|s| (FakeParticipant(s.clone()), true))
            .collect()
    }

    fn states(shards: &[Arc<FakeShard>]) -> Vec<St> {
        shards.iter().map(|s| s.branches.lock()[G]).collect()
    }

    /// A crashed coordinator's branches are resolved by recovery, all the
    /// same way: committed iff the decision was written.
    async fn crash_then_recover(step: Step) -> (Vec<St>, Option<Decision>) {
        let shards = shards(3);
        let log = FakeLog::default();
        let r = commit(G, parts(&shards), &log, &|s| s == step).await;
        assert!(r.is_err(), "the coordinator was told to stop at {step:?}");
        // Branches still active when the coordinator died are rolled back by
        // MariaDB when its connection drops.
        for s in &shards {
            let mut b = s.branches.lock();
            if b[G] == St::Active {
                b.insert(G.into(), St::RolledBack);
            }
        }
        let mut rec = Recovery::new(Duration::from_secs(10));
        let t0 = Instant::now();
        let dyn_shards: Vec<&dyn RecoveryShard> = shards
            .iter()
            .map(|s| s.as_ref() as &dyn RecoveryShard)
            .collect();
        rec.run_once(&dyn_shards, &log, t0).await.unwrap();
        rec.run_once(&dyn_shards, &log, t0 + Duration::from_secs(11))
            .await
            .unwrap();
        let decision = log.rows.lock().get(G).copied();
        (states(&shards), decision)
    }

    #[tokio::test]
    async fn every_crash_point_resolves_consistently() {
        use St::*;
        for (step, expect) in [
            (Step::BeforePrepare, RolledBack),
            (Step::AfterPrepare(0), RolledBack),
            (Step::AfterPrepare(1), RolledBack),
            (Step::BeforeDecision, RolledBack),
            (Step::AfterDecision, Committed),
            (Step::AfterCommit(0), Committed),
            (Step::AfterCommit(1), Committed),
        ] {
            let (st, decision) = crash_then_recover(step).await;
            assert_eq!(st, vec![expect; 3], "crash at {step:?}");
            // Abort decisions stay while the scan still saw the branches;
            // commit decisions are forgotten once every branch is resolved;
            // a crash before any prepare leaves nothing to decide.
            let want = match (step, expect) {
                (Step::BeforePrepare, _) => None,
                (_, RolledBack) => Some(Decision::Abort),
                _ => None,
            };
            assert_eq!(decision, want, "crash at {step:?}");
        }
    }

    #[tokio::test]
    async fn happy_path_and_one_phase() {
        let s = shards(3);
        let log = FakeLog::default();
        commit(G, parts(&s), &log, &|_| false).await.unwrap();
        assert_eq!(states(&s), vec![St::Committed; 3]);
        assert_eq!(log.rows.lock().get(G), Some(&Decision::Commit));
        // One writer: no decision row at all.
        let s = shards(3);
        let log = FakeLog::default();
        let mut p = parts(&s);
        p[1].1 = false;
        p[2].1 = false;
        commit(G, p, &log, &|_| false).await.unwrap();
        // The writer is never committed ONE PHASE (not crash-safe in
        // MariaDB with a binary log: `Participant::commit_alone`).
        assert_eq!(
            states(&s),
            vec![St::CommittedAlone, St::Committed, St::Committed]
        );
        assert!(log.rows.lock().is_empty());
    }

    #[tokio::test]
    async fn failed_prepare_rolls_everything_back() {
        let mut s = shards(3);
        Arc::get_mut(&mut s[2]).unwrap().fail_prepare = true;
        let log = FakeLog::default();
        let e = commit(G, parts(&s), &log, &|_| false).await.unwrap_err();
        assert_eq!(e.sqlstate().code(), "40P01");
        assert_eq!(states(&s), vec![St::RolledBack; 3]);
    }

    #[tokio::test]
    async fn unreachable_log_answers_40003_and_recovery_aborts() {
        let s = shards(2);
        let log = FakeLog {
            down: true,
            ..Default::default()
        };
        let e = commit(G, parts(&s), &log, &|_| false).await.unwrap_err();
        assert_eq!(e.sqlstate().code(), "40003");
        assert_eq!(states(&s), vec![St::Prepared; 2]);
        let log = FakeLog::default();
        let mut rec = Recovery::new(Duration::from_secs(5));
        let t0 = Instant::now();
        let d: Vec<&dyn RecoveryShard> =
            s.iter().map(|x| x.as_ref() as &dyn RecoveryShard).collect();
        let r = rec.run_once(&d, &log, t0).await.unwrap();
        assert_eq!(r.pending, 2, "not aborted before the timeout");
        let r = rec
            .run_once(&d, &log, t0 + Duration::from_secs(6))
            .await
            .unwrap();
        assert_eq!((r.aborted, r.rolled_back), (1, 2));
        assert_eq!(states(&s), vec![St::RolledBack; 2]);
    }

    #[tokio::test]
    async fn late_committer_loses_to_recovery_abort() {
        let s = shards(2);
        let log = FakeLog::default();
        log.rows.lock().insert(G.into(), Decision::Abort);
        let e = commit(G, parts(&s), &log, &|_| false).await.unwrap_err();
        assert_eq!(e.sqlstate().code(), "40001");
        assert_eq!(states(&s), vec![St::RolledBack; 2]);
    }

    #[tokio::test]
    async fn settle_aborts_an_undecided_commit_at_once() {
        // The coordinator prepared every branch, then gave up before its
        // decision: settling rolls them back with no orphan wait.
        let s = shards(3);
        let log = FakeLog::default();
        let r = commit(G, parts(&s), &log, &|st| st == Step::BeforeDecision).await;
        assert!(r.is_err());
        let d: Vec<&dyn RecoveryShard> =
            s.iter().map(|x| x.as_ref() as &dyn RecoveryShard).collect();
        assert_eq!(settle(G, &d, &log).await.unwrap(), Decision::Abort);
        assert_eq!(states(&s), vec![St::RolledBack; 3]);
        assert_eq!(log.rows.lock().get(G), Some(&Decision::Abort));
    }

    #[tokio::test]
    async fn settle_keeps_a_commit_that_landed() {
        // The decision was recorded, the coordinator gave up in phase two:
        // settling commits what is still prepared.
        let s = shards(3);
        let log = FakeLog::default();
        let r = commit(G, parts(&s), &log, &|st| st == Step::AfterCommit(0)).await;
        assert!(r.is_err());
        let d: Vec<&dyn RecoveryShard> =
            s.iter().map(|x| x.as_ref() as &dyn RecoveryShard).collect();
        assert_eq!(settle(G, &d, &log).await.unwrap(), Decision::Commit);
        assert_eq!(states(&s), vec![St::Committed; 3]);
        // An unreachable log settles nothing: the branches stay for recovery.
        let s = shards(2);
        let down = FakeLog {
            down: true,
            ..Default::default()
        };
        let r = commit(G, parts(&s), &FakeLog::default(), &|st| {
            st == Step::BeforeDecision
        })
        .await;
        assert!(r.is_err());
        let d: Vec<&dyn RecoveryShard> =
            s.iter().map(|x| x.as_ref() as &dyn RecoveryShard).collect();
        assert!(settle(G, &d, &down).await.is_err());
        assert_eq!(states(&s), vec![St::Prepared; 2]);
    }
}
