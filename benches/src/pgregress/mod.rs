//! `pgregress`: PostgreSQL 15's own regression files
//! (`src/test/regress/sql/*.sql`, fetched by `scripts/fetch-pg-regress.sh`)
//! run statement by statement on a Tessera cluster and on a PostgreSQL 15,
//! answers compared. PostgreSQL's expected-output files are not used: the
//! live server is the oracle, so a minor version apart or a different
//! plan does not matter.
//!
//! * [`script`]: a file split the way psql splits it (quotes, dollar
//!   quotes, COPY data, `\set` variables, meta-commands).
//! * [`run`]: one session per side per file, each statement on both.
//! * [`verdict`]: same, same error, refused, plan or differ.
//! * [`order`]: ORDER BY answers compared with ties in any order.
//! * [`cascade`]: which differences follow from an earlier one.
//! * [`report`]: the per-file table, JSON and the known-differences check.

pub mod cascade;
pub mod order;
pub mod report;
pub mod run;
pub mod script;
pub mod verdict;
