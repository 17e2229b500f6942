//! SQL: the one renderer of shard SQL ([`ShardSql`]: keywords, quoted
//! names, checked literals, placeholders) with its two front-ends, client
//! statements of the fast path (`stmt_sql`, sqlparser trees) and DataFusion
//! expressions for scans and pushdown (`expr_sql`, whose fragments
//! `crate::dist` composes into queries); the one MariaDB-compatibility
//! policy deciding which operators and functions may reach a shard
//! (`compat`, asked by both front-ends); the one `SqlType` <-> Arrow type
//! map; literals typed as the column they meet; and the PostgreSQL reading
//! of a client's names ([`normalize_ident`], [`placeholder_index`]) and
//! constants ([`eval_value`]). It knows no partitions, shards or
//! connections.

mod arrow_types;
mod compat;
mod eval;
pub(crate) mod expr_sql;
mod ident;
mod render;
mod shard_sql;
mod stmt_sql;
mod typing;

pub use arrow_types::{arrow_type, sql_type_of, BPCHAR_WIDTH};
pub use compat::is_comparison;
pub use eval::{eval_const, eval_value, Clock};
pub use ident::{normalize_ident, placeholder_index};
pub use render::{count_params, is_safe_expr, render};
pub use shard_sql::{widened_float, ShardSql};
pub use typing::{type_assigned_literal, type_literals};

pub(crate) use arrow_types::decimal_params;
pub(crate) use render::physical_object;
