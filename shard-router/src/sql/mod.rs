//! SQL: the one renderer of client statements into MariaDB SQL
//! ([`ShardSql`]), the one MariaDB-compatibility policy for operators
//! (`compat`, asked by every renderer), the one `SqlType` <-> Arrow type
//! map, DataFusion expressions as shard SQL (`expr_sql`), literals typed as
//! the column they meet, and the PostgreSQL reading of a client's names
//! ([`normalize_ident`], [`placeholder_index`]) and constants
//! ([`eval_value`]). It knows no partitions, shards or connections.

mod arrow_types;
mod compat;
mod eval;
pub(crate) mod expr_sql;
mod ident;
mod render;
mod shard_sql;
mod typing;

pub use arrow_types::{arrow_type, sql_type_of, BPCHAR_WIDTH};
pub use compat::is_comparison;
pub use eval::{eval_const, eval_value, Clock};
pub use ident::{normalize_ident, placeholder_index};
pub use render::{count_params, is_safe_expr, render};
pub use shard_sql::ShardSql;
pub use typing::{type_assigned_literal, type_literals};

pub(crate) use arrow_types::decimal_params;
pub(crate) use render::physical_object;
