//! Foreign keys: PostgreSQL's checks of `ADD FOREIGN KEY`, and whether the
//! shards can enforce it (the tables co-located, see ARCHITECTURE.md,
//! "Foreign keys"). Pure; `exec::alter` applies the plan.

use common::{Error, Result, SqlState, SqlType};
use meta::{Catalog, Distribution, Enforcement, ForeignKeyDef, TableDef};
use shard_router::sql::normalize_ident;

use crate::plan::ddl::missing_column;

/// Why `child`'s foreign key `cols` -> `parent` (`ref_cols`) cannot be
/// checked by InnoDB on each shard, if it cannot: the referenced rows of
/// every child row must live on the child row's shard, in a physical table
/// InnoDB can reference.
pub fn not_co_located(
    placement: &meta::Placement,
    child: &TableDef,
    parent: &TableDef,
    cols: &[String],
    ref_cols: &[String],
) -> Option<String> {
    for (c, r) in cols.iter().zip(ref_cols) {
        let (ct, rt) = (child.column(c).ok()?.ty, parent.column(r).ok()?.ty);
        let same = match (ct, rt) {
            (SqlType::Varchar(Some(_)), SqlType::Varchar(Some(_))) => true,
            (SqlType::Text | SqlType::Varchar(None) | SqlType::Bytea, _) => false,
            (a, b) => a == b,
        };
        if !same {
            return Some(format!(
                "column \"{c}\" ({ct}) and referenced column \"{r}\" ({rt}) are not of one type the shards can index alike"
            ));
        }
    }
    match (&child.distribution, &parent.distribution) {
        (_, Distribution::Mirror) => None,
        (Distribution::Single, Distribution::Single)
            if placement.same_layout(child.id, parent.id) =>
        {
            None
        }
        (Distribution::Hash { columns: ck, .. }, Distribution::Hash { columns: pk, .. }) => {
            if !placement.same_layout(child.id, parent.id) {
                return Some("the tables' partitions are not on the same shards".into());
            }
            let maps = ck.len() == pk.len()
                && pk.iter().zip(ck).all(|(p, c)| {
                    ref_cols
                        .iter()
                        .position(|r| r == p)
                        .is_some_and(|j| &cols[j] == c)
                });
            if maps {
                None
            } else {
                Some(format!(
                    "the key does not map the partition key ({}) to the referenced table's ({})",
                    ck.join(", "),
                    pk.join(", ")
                ))
            }
        }
        _ => Some(format!(
            "the tables are distributed differently ({} and {})",
            child.distribution.kind(),
            parent.distribution.kind()
        )),
    }
}

/// `ADD [CONSTRAINT name] FOREIGN KEY (cols) REFERENCES parent (cols)`:
/// PostgreSQL's checks (42830 without a unique key on the referenced
/// columns), then enforced if the tables are co-located, else recorded
/// unenforced when the session allows it (`tessera.unenforced_foreign_keys`),
/// else 0A000 naming why.
pub fn foreign_key(
    f: &datafusion::sql::sqlparser::ast::ForeignKeyConstraint,
    table: &TableDef,
    catalog: &Catalog,
    unenforced_allowed: bool,
) -> Result<(ForeignKeyDef, std::sync::Arc<TableDef>)> {
    use datafusion::sql::sqlparser::ast::ReferentialAction as A;
    let parent = crate::plan::resolve_table(catalog, &f.foreign_table, &table.schema)?;
    let cols: Vec<String> = f.columns.iter().map(normalize_ident).collect();
    for c in &cols {
        table
            .column(c)
            .map_err(|_| missing_column(c, &table.name))?;
    }
    let ref_cols: Vec<String> = if f.referred_columns.is_empty() {
        parent.primary_key.clone()
    } else {
        f.referred_columns.iter().map(normalize_ident).collect()
    };
    for c in &ref_cols {
        parent
            .column(c)
            .map_err(|_| missing_column(c, &parent.name))?;
    }
    if cols.len() != ref_cols.len() {
        return Err(Error::Sql {
            state: SqlState("42830"),
            message: "number of referencing and referenced columns for foreign key disagree".into(),
        });
    }
    let same_set =
        |k: &[String]| k.len() == ref_cols.len() && k.iter().all(|c| ref_cols.contains(c));
    if !same_set(&parent.primary_key)
        && !parent
            .indexes
            .iter()
            .any(|i| i.unique && same_set(&i.columns))
    {
        return Err(Error::Sql {
            state: SqlState("42830"),
            message: format!(
                "there is no unique constraint matching given keys for referenced table \"{}\"",
                parent.name
            ),
        });
    }
    let name = match &f.name {
        Some(n) => normalize_ident(n),
        None => format!("{}_{}_fkey", table.name, cols.join("_")),
    };
    if catalog
        .foreign_keys_of(table.id, true)
        .iter()
        .any(|k| k.name == name)
    {
        return Err(Error::Sql {
            state: SqlState::DUPLICATE_OBJECT,
            message: format!(
                "constraint \"{name}\" for relation \"{}\" already exists",
                table.name
            ),
        });
    }
    let action = |a: &Option<A>| -> Result<String> {
        Ok(match a {
            None | Some(A::NoAction) => "NO ACTION".into(),
            Some(A::Restrict) => "RESTRICT".into(),
            Some(A::Cascade) => "CASCADE".into(),
            Some(A::SetNull) => "SET NULL".into(),
            Some(A::SetDefault) => return Err(Error::unsupported("ON DELETE/UPDATE SET DEFAULT")),
        })
    };
    // Co-located: InnoDB checks it on each shard. Else the compute node
    // does (`exec::foreign_keys`), for the actions that only check; or,
    // when the session asks, it is recorded only.
    let enforcement = match not_co_located(&catalog.placement, table, &parent, &cols, &ref_cols) {
        None => Enforcement::Shards,
        Some(_) if unenforced_allowed => Enforcement::Recorded,
        Some(why) => {
            for (what, a) in [("DELETE", &f.on_delete), ("UPDATE", &f.on_update)] {
                if !matches!(a, None | Some(A::NoAction) | Some(A::Restrict)) {
                    return Err(Error::unsupported(format!(
                        "ON {what} {} in foreign key \"{name}\" between tables on different shards ({why}; co-locate them, or make \"{}\" a mirror table)",
                        action(a)?,
                        parent.name
                    )));
                }
            }
            Enforcement::Compute
        }
    };
    Ok((
        ForeignKeyDef {
            id: 0,
            table: table.id,
            name,
            columns: cols,
            ref_table: parent.id,
            ref_columns: ref_cols,
            on_delete: action(&f.on_delete)?,
            on_update: action(&f.on_update)?,
            enforcement,
        },
        parent,
    ))
}

/// Why an UPDATE or DELETE of `t` must take the two steps of
/// `plan::readwrite` (the rows read first, so the compute node knows the
/// keys it checks), if it must; an error when it cannot be checked.
pub fn write_checks(
    catalog: &Catalog,
    t: &TableDef,
    assigned: Option<&[String]>,
) -> Result<Option<&'static str>> {
    let mut two_steps = None;
    for fk in catalog.checked_foreign_keys(t.id, false) {
        let touched = assigned.is_none_or(|a| a.iter().any(|c| fk.ref_columns.contains(c)));
        if !touched {
            continue;
        }
        let by_key = fk.ref_columns.len() == t.primary_key.len()
            && fk.ref_columns.iter().all(|c| t.primary_key.contains(c));
        if !by_key {
            return Err(Error::Sql {
                state: SqlState::FEATURE_NOT_SUPPORTED,
                message: format!(
                    "{} of a unique key other than the primary key of \"{}\" referenced by foreign key \"{}\" from another shard is not supported yet",
                    if assigned.is_some() { "UPDATE" } else { "DELETE" },
                    t.name,
                    fk.name
                ),
            });
        }
        two_steps = Some("a write of keys referenced from other shards");
    }
    if let Some(a) = assigned {
        if catalog
            .checked_foreign_keys(t.id, true)
            .iter()
            .any(|fk| fk.columns.iter().any(|c| a.contains(c)))
        {
            two_steps = Some("an UPDATE of a foreign key to a table on other shards");
        }
    }
    Ok(two_steps)
}
