//! Benchmark drivers: the programs that produce every figure in
//! `BENCHMARKS.md` (sysbench through haproxy against one MariaDB and one
//! PostgreSQL, TPC-H with an independent oracle, TPC-C), each run side by
//! side with its baselines in one invocation. They talk to Tessera only
//! through the `tessera` binary and the PostgreSQL wire. The drivers arrive
//! with the sysbench and analytics issues; see `ARCHITECTURE.md`.
