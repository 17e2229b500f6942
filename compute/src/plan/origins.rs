//! Where a result column comes from: the table OID, column number and
//! type modifier a RowDescription carries for a column of a table (so
//! JDBC's `ResultSetMetaData` and psycopg's `cursor.description` show a
//! `numeric(8,2)`'s precision and scale and a `varchar(30)`'s length).

use datafusion::logical_expr::{Expr, LogicalPlan};
use meta::Catalog;

/// A result column that is a table's column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Origin {
    pub table_oid: i32,
    pub attnum: i16,
    pub typmod: i32,
}

/// The origin of column `i` of table `t`.
pub fn of_column(t: &meta::TableDef, i: usize) -> Option<Origin> {
    let c = t.columns.get(i)?;
    Some(Origin {
        table_oid: i32::try_from(crate::pgcatalog::oids::table(t.id)).ok()?,
        attnum: i16::try_from(i + 1).ok()?,
        typmod: crate::pgcatalog::oids::column_type(&c.ty).1,
    })
}

/// The origins of a logical plan's result columns, followed through
/// projections, filters, sorts, limits, aliases and joins to the scans.
pub fn of_plan(plan: &LogicalPlan, catalog: &Catalog, schema: &str) -> Vec<Option<Origin>> {
    (0..plan.schema().fields().len())
        .map(|i| origin(plan, i, catalog, schema, 0))
        .collect()
}

fn origin(
    plan: &LogicalPlan,
    i: usize,
    catalog: &Catalog,
    schema: &str,
    depth: usize,
) -> Option<Origin> {
    let (t, c) = source(plan, i, catalog, schema, depth)?;
    of_column(t, c)
}

/// The catalog type of column `c` of `input`'s output when it is a
/// table's column (followed as [`of_plan`] follows them).
pub fn column_type(
    input: &LogicalPlan,
    c: &datafusion::common::Column,
    catalog: &Catalog,
    schema: &str,
) -> Option<common::SqlType> {
    let j = input.schema().index_of_column(c).ok()?;
    let (t, k) = source(input, j, catalog, schema, 0)?;
    Some(t.columns.get(k)?.ty)
}

/// The table and column index that column `i` of `plan` is.
fn source<'c>(
    plan: &LogicalPlan,
    i: usize,
    catalog: &'c Catalog,
    schema: &str,
    depth: usize,
) -> Option<(&'c meta::TableDef, usize)> {
    if depth > 64 {
        return None;
    }
    let through = |input: &LogicalPlan, e: &Expr| -> Option<(&'c meta::TableDef, usize)> {
        let e = match e {
            Expr::Alias(a) => a.expr.as_ref(),
            e => e,
        };
        let Expr::Column(c) = e else {
            return None;
        };
        let j = input.schema().index_of_column(c).ok()?;
        source(input, j, catalog, schema, depth + 1)
    };
    match plan {
        LogicalPlan::Projection(p) => through(&p.input, p.expr.get(i)?),
        LogicalPlan::Filter(f) => source(&f.input, i, catalog, schema, depth + 1),
        LogicalPlan::Sort(s) => source(&s.input, i, catalog, schema, depth + 1),
        LogicalPlan::Limit(l) => source(&l.input, i, catalog, schema, depth + 1),
        LogicalPlan::SubqueryAlias(a) => source(&a.input, i, catalog, schema, depth + 1),
        LogicalPlan::Distinct(datafusion::logical_expr::Distinct::All(input)) => {
            source(input, i, catalog, schema, depth + 1)
        }
        LogicalPlan::Join(j) => {
            use datafusion::logical_expr::JoinType as J;
            let left = j.left.schema().fields().len();
            if matches!(j.join_type, J::RightSemi | J::RightAnti) {
                return source(&j.right, i, catalog, schema, depth + 1);
            }
            if i < left {
                source(&j.left, i, catalog, schema, depth + 1)
            } else {
                source(&j.right, i - left, catalog, schema, depth + 1)
            }
        }
        LogicalPlan::TableScan(s) => {
            let scanned = s.source.schema();
            let k = match &s.projection {
                Some(p) => *p.get(i)?,
                None => i,
            };
            let name = scanned.fields().get(k)?.name();
            let table_schema = s.table_name.schema().unwrap_or(schema);
            let t = catalog.table(table_schema, s.table_name.table())?;
            Some((t, t.column_index(name)?))
        }
        _ => None,
    }
}
