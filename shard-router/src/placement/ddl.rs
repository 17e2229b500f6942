//! DDL on the shards: the MariaDB statements that create, drop and index the
//! physical tables of a logical table, and their application on every shard.

use common::{Result, ShardId, SqlType};
use futures::future::join_all;
use meta::{IndexDef, Placement, TableDef};
use mysql_async::prelude::*;
use storage_adapter::{map_error, quote_ident};

use crate::sql::physical_object;
use crate::Router;

/// Longest string a key column may hold on a shard (3072-byte InnoDB key
/// limit / 4 bytes per utf8mb4 character).
pub const KEY_TEXT_CHARS: u32 = 768;

fn column_ddl(def: &TableDef, col: &meta::ColumnDef) -> String {
    let in_key = def.primary_key.contains(&col.name)
        || def.indexes.iter().any(|i| i.columns.contains(&col.name));
    let ty = match col.ty {
        SqlType::Text | SqlType::Varchar(None) if in_key => format!("VARCHAR({KEY_TEXT_CHARS})"),
        SqlType::Bytea if in_key => format!("VARBINARY({})", KEY_TEXT_CHARS * 4),
        t => t.mysql_ddl(),
    };
    let null = if col.not_null { " NOT NULL" } else { " NULL" };
    format!("{} {ty}{null}", quote_ident(&col.name))
}

fn cols(c: &[String]) -> String {
    c.iter()
        .map(|x| quote_ident(x))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `CREATE TABLE` of one physical table (a partition or a whole copy).
pub fn create_table_sql(def: &TableDef, partition: u32) -> String {
    let mut parts: Vec<String> = def.columns.iter().map(|c| column_ddl(def, c)).collect();
    if !def.primary_key.is_empty() {
        parts.push(format!("PRIMARY KEY ({})", cols(&def.primary_key)));
    }
    for ix in &def.indexes {
        parts.push(format!(
            "{}KEY {} ({})",
            if ix.unique { "UNIQUE " } else { "" },
            quote_ident(&ix.name),
            cols(&ix.columns)
        ));
    }
    format!(
        // No IF NOT EXISTS: the name carries the table id, so a table of
        // that name is never another table's to adopt.
        "CREATE TABLE {} ({}) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin",
        physical_object(&def.schema, &def.physical_name(partition)),
        parts.join(", ")
    )
}

/// Runs the statements on their shards, shards in parallel and each shard's
/// statements in order.
/// Runs each shard's statements in order, shards concurrently. Every
/// shard's work runs to its end or its first error before this returns
/// (then the first error is reported): a CREATE still running on one shard
/// when another failed would otherwise finish after the cleanup's DROP and
/// leave a table no queue entry remembers.
pub async fn run_on_shards(router: &Router, work: Vec<(ShardId, Vec<String>)>) -> Result<()> {
    let results = join_all(work.into_iter().map(|(shard, stmts)| async move {
        let mut conn = router.shard(shard)?.conn().await?;
        for s in stmts {
            conn.query_drop(&s).await.map_err(|e| map_error(shard, e))?;
        }
        Ok::<_, common::Error>(())
    }))
    .await;
    results.into_iter().collect::<Result<Vec<()>>>().map(|_| ())
}

fn group(
    placement: &Placement,
    def: &TableDef,
    f: impl Fn(u32) -> Vec<String>,
) -> Result<Vec<(ShardId, Vec<String>)>> {
    let mut out: Vec<(ShardId, Vec<String>)> = vec![];
    for (shard, p) in placement.partitions(def)? {
        let stmts = f(p);
        match out.iter_mut().find(|(s, _)| *s == shard) {
            Some((_, v)) => v.extend(stmts),
            None => out.push((shard, stmts)),
        }
    }
    Ok(out)
}

pub fn ensure_schema_sql(schema: &str) -> String {
    format!(
        "CREATE DATABASE IF NOT EXISTS {} CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin",
        quote_ident(&meta::physical_database(schema))
    )
}

/// Makes a table's physical tables where `placement` (the map with the
/// new table's layout, before its catalog commit) puts them.
pub async fn create_table(router: &Router, placement: &Placement, def: &TableDef) -> Result<()> {
    let schema_sql = ensure_schema_sql(&def.schema);
    run_on_shards(
        router,
        group(placement, def, |p| {
            vec![schema_sql.clone(), create_table_sql(def, p)]
        })?,
    )
    .await
}

/// Drops physical tables, each forgotten in the queue of meta's
/// `pending_drops` once gone. Shards in parallel; every drop is tried, and
/// the first error is returned after all were (the rest stay queued for
/// recovery).
pub async fn drop_physical(router: &Router, tables: &[(ShardId, String, String)]) -> Result<()> {
    let results = join_all(tables.iter().map(|(shard, db, tbl)| async move {
        let mut conn = router.shard(*shard)?.conn().await?;
        // A table other tables' foreign keys reference goes too (they are
        // dropped with it or before it, through the catalog).
        conn.query_drop(format!(
            "SET STATEMENT foreign_key_checks = 0 FOR DROP TABLE IF EXISTS {}.{}",
            quote_ident(db),
            quote_ident(tbl)
        ))
        .await
        .map_err(|e| map_error(*shard, e))?;
        router.meta.unqueue_drop(*shard, db, tbl).await
    }))
    .await;
    results.into_iter().collect::<Result<Vec<()>>>().map(|_| ())
}

/// Recovery's part of DDL: physical tables queued for dropping whose table
/// is not in the catalog, dropped under the DDL lock. Returns how many.
pub async fn drop_orphans(router: &Router) -> Result<usize> {
    let Some(claim) = router.meta.claim_orphans().await? else {
        return Ok(0);
    };
    let n = claim.drops.len();
    let r = drop_physical(router, &claim.drops).await;
    drop(claim);
    r.map(|_| n)
}

pub async fn create_index(router: &Router, def: &TableDef, ix: &IndexDef) -> Result<()> {
    run_on_shards(
        router,
        group(&router.placement(), def, |p| {
            vec![format!(
                "CREATE {}INDEX IF NOT EXISTS {} ON {} ({})",
                if ix.unique { "UNIQUE " } else { "" },
                quote_ident(&ix.name),
                physical_object(&def.schema, &def.physical_name(p)),
                cols(&ix.columns)
            )]
        })?,
    )
    .await
}

pub async fn drop_index(router: &Router, def: &TableDef, name: &str) -> Result<()> {
    run_on_shards(
        router,
        group(&router.placement(), def, |p| {
            vec![format!(
                "DROP INDEX IF EXISTS {} ON {}",
                quote_ident(name),
                physical_object(&def.schema, &def.physical_name(p))
            )]
        })?,
    )
    .await
}

pub async fn drop_schema(router: &Router, shards: &[ShardId], schema: &str) -> Result<()> {
    let sql = format!(
        "DROP DATABASE IF EXISTS {}",
        quote_ident(&meta::physical_database(schema))
    );
    run_on_shards(
        router,
        shards.iter().map(|s| (*s, vec![sql.clone()])).collect(),
    )
    .await
}

/// The clauses of one MariaDB `ALTER TABLE` taking a table's physical
/// tables from `old` to `new` (same placements), and the clauses undoing
/// them. Every clause is built from catalog names and types through the
/// quoting function (never from client text); where MariaDB allows it they
/// are idempotent (`IF [NOT] EXISTS`), so an ALTER cut short on some
/// partitions converges when run again.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct AlterSql {
    pub forward: Vec<String>,
    pub undo: Vec<String>,
}

impl AlterSql {
    pub fn is_empty(&self) -> bool {
        self.forward.is_empty()
    }
}

/// `renamed`: (old name, new name) of renamed columns. `fill`: the value
/// existing rows get in an added column (its default evaluated once).
pub fn alter_clauses(
    old: &TableDef,
    new: &TableDef,
    renamed: &[(String, String)],
    fill: &[(String, common::Datum)],
) -> Result<AlterSql> {
    let mut out = AlterSql::default();
    let old_name_of = |new_name: &str| -> String {
        renamed
            .iter()
            .find(|(_, n)| n == new_name)
            .map(|(o, _)| o.clone())
            .unwrap_or_else(|| new_name.to_string())
    };
    let index_clause = |ix: &IndexDef| {
        format!(
            "ADD {}INDEX IF NOT EXISTS {} ({})",
            if ix.unique { "UNIQUE " } else { "" },
            quote_ident(&ix.name),
            cols(&ix.columns)
        )
    };
    // Indexes and the primary key go first (their columns may change).
    for ix in &old.indexes {
        if !new
            .indexes
            .iter()
            .any(|n| n == ix || (n.name == ix.name && renamed_index(ix, n, renamed)))
        {
            out.forward
                .push(format!("DROP INDEX IF EXISTS {}", quote_ident(&ix.name)));
            out.undo.push(index_clause(ix));
        }
    }
    let old_pk_renamed: Vec<String> = old
        .primary_key
        .iter()
        .map(|c| {
            renamed
                .iter()
                .find(|(o, _)| o == c)
                .map(|(_, n)| n.clone())
                .unwrap_or_else(|| c.clone())
        })
        .collect();
    let pk_changed = old_pk_renamed != new.primary_key;
    if pk_changed && !old.primary_key.is_empty() {
        out.forward.push("DROP PRIMARY KEY".into());
        out.undo
            .push(format!("ADD PRIMARY KEY ({})", cols(&old.primary_key)));
    }
    for c in &old.columns {
        let kept = new.columns.iter().any(|n| old_name_of(&n.name) == c.name);
        if !kept {
            out.forward
                .push(format!("DROP COLUMN IF EXISTS {}", quote_ident(&c.name)));
            out.undo
                .push(format!("ADD COLUMN IF NOT EXISTS {}", column_ddl(old, c)));
        }
    }
    for c in &new.columns {
        let was = old_name_of(&c.name);
        match old.columns.iter().find(|o| o.name == was) {
            Some(o) if o.name != c.name => {
                out.forward.push(format!(
                    "CHANGE COLUMN {} {}",
                    quote_ident(&o.name),
                    column_ddl(new, c)
                ));
                out.undo.push(format!(
                    "CHANGE COLUMN {} {}",
                    quote_ident(&c.name),
                    column_ddl(old, o)
                ));
            }
            Some(o) => {
                let (before, after) = (column_ddl(old, o), column_ddl(new, c));
                if before != after {
                    out.forward.push(format!("MODIFY COLUMN {after}"));
                    out.undo.push(format!("MODIFY COLUMN {before}"));
                }
            }
            None => {
                let mut clause = format!("ADD COLUMN IF NOT EXISTS {}", column_ddl(new, c));
                if let Some((_, v)) = fill.iter().find(|(n, _)| n == &c.name) {
                    if !matches!(v, common::Datum::Null) {
                        let lit = storage_adapter::convert::to_sql_literal(v).ok_or_else(|| {
                            common::Error::unsupported(format!(
                                "a default of column \"{}\" filled into existing rows of this type",
                                c.name
                            ))
                        })?;
                        clause.push_str(" DEFAULT ");
                        clause.push_str(&lit);
                    }
                }
                out.forward.push(clause);
                out.undo
                    .push(format!("DROP COLUMN IF EXISTS {}", quote_ident(&c.name)));
            }
        }
    }
    if pk_changed && !new.primary_key.is_empty() {
        out.forward
            .push(format!("ADD PRIMARY KEY ({})", cols(&new.primary_key)));
        out.undo.push("DROP PRIMARY KEY".into());
    }
    for ix in &new.indexes {
        if !old
            .indexes
            .iter()
            .any(|o| o == ix || (o.name == ix.name && renamed_index(o, ix, renamed)))
        {
            out.forward.push(index_clause(ix));
            out.undo
                .push(format!("DROP INDEX IF EXISTS {}", quote_ident(&ix.name)));
        }
    }
    out.undo.reverse();
    Ok(out)
}

/// Whether `new` is `old` with renamed columns (MariaDB renames index
/// columns with the column).
fn renamed_index(old: &IndexDef, new: &IndexDef, renamed: &[(String, String)]) -> bool {
    old.unique == new.unique
        && old.columns.len() == new.columns.len()
        && old
            .columns
            .iter()
            .zip(&new.columns)
            .all(|(o, n)| o == n || renamed.iter().any(|(ro, rn)| ro == o && rn == n))
}

/// Runs `sql` on every physical table of `def` (one `ALTER TABLE` each,
/// atomic on its shard). If one fails, the ones that succeeded are undone
/// and the first error is returned.
pub async fn alter_table(router: &Router, def: &TableDef, sql: &AlterSql) -> Result<()> {
    alter_partitions(router, def, |_| sql.clone()).await
}

/// [`alter_table`] with each physical table's own clauses (`sql_of` its
/// partition number).
pub async fn alter_partitions(
    router: &Router,
    def: &TableDef,
    sql_of: impl Fn(u32) -> AlterSql,
) -> Result<()> {
    let stmt = |p: u32, clauses: &[String]| {
        format!(
            "ALTER TABLE {} {}",
            physical_object(&def.schema, &def.physical_name(p)),
            clauses.join(", ")
        )
    };
    let work: Vec<(ShardId, u32, AlterSql)> = router
        .placement()
        .partitions(def)?
        .into_iter()
        .map(|(shard, p)| (shard, p, sql_of(p)))
        .filter(|(_, _, sql)| !sql.is_empty())
        .collect();
    let results = join_all(work.iter().map(|(shard, p, sql)| async move {
        let shard = *shard;
        let r = async {
            let mut conn = router.shard(shard)?.conn().await?;
            conn.query_drop(stmt(*p, &sql.forward))
                .await
                .map_err(|e| map_error(shard, e))
        }
        .await;
        (shard, *p, r)
    }))
    .await;
    let Some(err) = results
        .iter()
        .find_map(|(_, _, r)| r.as_ref().err())
        .cloned()
    else {
        return Ok(());
    };
    let undo: Vec<(ShardId, Vec<String>)> = results
        .iter()
        .zip(&work)
        .filter(|((_, _, r), _)| r.is_ok())
        .map(|((shard, p, _), (_, _, sql))| (*shard, vec![stmt(*p, &sql.undo)]))
        .collect();
    if let Err(e) = run_on_shards(router, undo).await {
        tracing::warn!(
            "ALTER TABLE {}: undoing it on the partitions where it ran failed: {e}",
            def.qualified_name()
        );
    }
    Err(err)
}

/// The physical table of `parent` a partition `p` of `child` references
/// on its shard (co-located: a hash parent's partition `p`, a mirror
/// parent's copy, a single parent's table).
fn parent_physical(parent: &TableDef, p: u32) -> String {
    let part = if matches!(parent.distribution, meta::Distribution::Hash { .. }) {
        p
    } else {
        0
    };
    physical_object(&parent.schema, &parent.physical_name(part))
}

/// The InnoDB foreign key of each partition of `child` (co-located with
/// `parent`), added, or dropped (`add` false).
pub async fn foreign_key(
    router: &Router,
    child: &TableDef,
    parent: &TableDef,
    fk: &meta::ForeignKeyDef,
    add: bool,
) -> Result<()> {
    let action = |a: &str| match a {
        "CASCADE" | "SET NULL" | "RESTRICT" => a.to_string(),
        _ => "NO ACTION".to_string(),
    };
    alter_partitions(router, child, |p| {
        let add_clause = format!(
            "ADD CONSTRAINT {} FOREIGN KEY ({}) REFERENCES {} ({}) ON DELETE {} ON UPDATE {}",
            quote_ident(&fk.physical_name(p)),
            cols(&fk.columns),
            parent_physical(parent, p),
            cols(&fk.ref_columns),
            action(&fk.on_delete),
            action(&fk.on_update)
        );
        let drop_clause = format!(
            "DROP FOREIGN KEY IF EXISTS {}",
            quote_ident(&fk.physical_name(p))
        );
        if add {
            AlterSql {
                forward: vec![add_clause],
                undo: vec![drop_clause],
            }
        } else {
            AlterSql {
                forward: vec![drop_clause],
                undo: vec![add_clause],
            }
        }
    })
    .await
}

/// Renames every physical table of `old` to its name in `new` (a table
/// renamed: physical names carry the logical name).
pub async fn rename_table(router: &Router, old: &TableDef, new: &TableDef) -> Result<()> {
    let work = router
        .placement()
        .partitions(old)?
        .into_iter()
        .map(|(shard, p)| {
            (
                shard,
                vec![format!(
                    "RENAME TABLE {} TO {}",
                    physical_object(&old.schema, &old.physical_name(p)),
                    physical_object(&new.schema, &new.physical_name(p))
                )],
            )
        })
        .collect();
    run_on_shards(router, work).await
}

/// Whether some physical table of `def` holds a row (with `column` NULL,
/// when given): the checks PostgreSQL makes before adding a NOT NULL
/// column without a default or setting NOT NULL.
pub async fn any_row(router: &Router, def: &TableDef, null_in: Option<&str>) -> Result<bool> {
    let parts = router.placement().partitions(def)?;
    let results = join_all(parts.into_iter().map(|(shard, p)| async move {
        let mut conn = router.shard(shard)?.conn().await?;
        let filter = match null_in {
            Some(c) => format!(" WHERE {} IS NULL", quote_ident(c)),
            None => String::new(),
        };
        let found: Option<i64> = conn
            .query_first(format!(
                "SELECT 1 FROM {}{filter} LIMIT 1",
                physical_object(&def.schema, &def.physical_name(p))
            ))
            .await
            .map_err(|e| map_error(shard, e))?;
        Ok::<_, common::Error>(found.is_some())
    }))
    .await;
    let mut any = false;
    for r in results {
        any |= r?;
    }
    Ok(any)
}

#[cfg(test)]
mod tests {
    use super::*;
    use common::{Datum, TableId};
    use meta::{ColumnDef, Distribution};

    fn col(name: &str, ty: SqlType) -> ColumnDef {
        ColumnDef {
            name: name.into(),
            ty,
            not_null: false,
            default: None,
            sequence: None,
            identity: None,
        }
    }

    fn table() -> TableDef {
        TableDef {
            id: TableId(7),
            schema: "public".into(),
            name: "t".into(),
            columns: vec![col("a", SqlType::Integer), col("b", SqlType::Text)],
            primary_key: vec![],
            distribution: Distribution::Single,
            indexes: vec![],
        }
    }

    #[test]
    fn alter_clauses_and_their_undo() {
        let old = table();
        let mut new = old.clone();
        new.columns[1].name = "c".into();
        new.columns[0].not_null = true;
        new.primary_key = vec!["a".into()];
        new.columns.push(col("d", SqlType::Integer));
        let sql = alter_clauses(
            &old,
            &new,
            &[("b".into(), "c".into())],
            &[("d".into(), Datum::Int(5))],
        )
        .unwrap();
        assert_eq!(
            sql.forward,
            vec![
                "MODIFY COLUMN \"a\" INT NOT NULL",
                "CHANGE COLUMN \"b\" \"c\" LONGTEXT NULL",
                "ADD COLUMN IF NOT EXISTS \"d\" INT NULL DEFAULT 5",
                "ADD PRIMARY KEY (\"a\")",
            ]
        );
        assert_eq!(
            sql.undo,
            vec![
                "DROP PRIMARY KEY",
                "DROP COLUMN IF EXISTS \"d\"",
                "CHANGE COLUMN \"c\" \"b\" LONGTEXT NULL",
                "MODIFY COLUMN \"a\" INT NULL",
            ]
        );
        // A key on a text column makes it a bounded VARCHAR on the shard.
        let mut keyed = old.clone();
        keyed.primary_key = vec!["b".into()];
        keyed.columns[1].not_null = true;
        let sql = alter_clauses(&old, &keyed, &[], &[]).unwrap();
        assert_eq!(
            sql.forward,
            vec![
                "MODIFY COLUMN \"b\" VARCHAR(768) NOT NULL",
                "ADD PRIMARY KEY (\"b\")"
            ]
        );
        // Names from clients are quoted, never spliced.
        let mut evil = old.clone();
        evil.columns
            .push(col("x\" INT, DROP TABLE y; --", SqlType::Integer));
        let sql = alter_clauses(&old, &evil, &[], &[]).unwrap();
        assert_eq!(
            sql.forward,
            vec!["ADD COLUMN IF NOT EXISTS \"x\"\" INT, DROP TABLE y; --\" INT NULL"]
        );
        assert!(alter_clauses(&old, &old, &[], &[]).unwrap().is_empty());
    }
}
