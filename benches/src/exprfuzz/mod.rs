//! `exprfuzz`: a differential expression fuzzer. Random scalar expressions
//! with a known result type, over the types Tessera stores and their edge
//! values, are evaluated on Tessera and on PostgreSQL 15 as constants,
//! over one stored row (the fast path) and over all rows (the DataFusion
//! path, with pushdown on and off); answers compare as text and SQLSTATE
//! (`crate::answer`). See `benches/README.md`.
//!
//! * [`types`]: the types and their edge values.
//! * [`expr`]: the typed expression tree and its SQL.
//! * [`grammar`]: operators and functions per result type, as data.
//! * [`gen`]: the seeded generator.
//! * [`table`]: the `fz` table, its rows, the constant form.
//! * [`load`]: loading `fz` into both servers.
//! * [`check`]: the forms, run on both servers and judged.
//! * [`shrink`]: minimizing a finding.
//! * [`corpus`]: the findings corpus and the CI's known list.
//! * [`run`]: the loop, counts and the grouped summary.

pub mod check;
pub mod corpus;
pub mod expr;
pub mod gen;
pub mod grammar;
pub mod load;
pub mod run;
pub mod shrink;
pub mod table;
pub mod types;
