//! The checks PostgreSQL applies to a value before storing it in a column:
//! NOT NULL (23502) and the length of `varchar(n)` / `char(n)` (22001,
//! trailing blanks not counted). INSERT and COPY both check rows here, and
//! complete them with defaults and sequence values ([`RowFiller`]).

use common::{Datum, Error, Result, SqlType};
use meta::{ColumnDef, TableDef};

/// Checks `v` for column `col` of `table`.
pub fn check_value(table: &TableDef, col: &ColumnDef, v: &Datum) -> Result<()> {
    if v.is_null() && col.not_null {
        return Err(Error::NotNullViolation {
            column: col.name.clone(),
            table: table.name.clone(),
        });
    }
    if let (Datum::Text(s), SqlType::Varchar(Some(n)) | SqlType::Char(n)) = (v, &col.ty) {
        if s.trim_end_matches(' ').chars().count() > *n as usize {
            return Err(Error::ValueTooLong {
                ty: col.ty.to_string(),
            });
        }
    }
    Ok(())
}

/// Completes rows of a table: a column's given value coerced to its type,
/// else its sequence's next value (taken from `sequenced`, reserved in row
/// order), else its default (evaluated once, at the statement's clock);
/// NOT NULL and length limits checked as PostgreSQL checks them.
pub(crate) struct RowFiller<'a> {
    table: &'a meta::TableDef,
    clock: &'a shard_router::sql::Clock,
    defaults: Vec<Option<Datum>>,
    pub sequenced: Vec<std::collections::VecDeque<i64>>,
}

impl<'a> RowFiller<'a> {
    pub(crate) fn new(
        table: &'a meta::TableDef,
        clock: &'a shard_router::sql::Clock,
        sequenced: Vec<std::collections::VecDeque<i64>>,
    ) -> Self {
        RowFiller {
            table,
            clock,
            defaults: vec![None; table.columns.len()],
            sequenced,
        }
    }

    /// Column `ci`'s value: `given` (`None`: its default).
    pub(crate) fn value(&mut self, ci: usize, given: Option<Datum>) -> Result<Datum> {
        let col = &self.table.columns[ci];
        let v = match given {
            Some(v) => v.coerce(&col.ty)?,
            None if col.sequence.is_some() => {
                let next = self.sequenced[ci]
                    .pop_front()
                    .ok_or_else(|| Error::internal("sequence values ran out"))?;
                Datum::Int(next).coerce(&col.ty)?
            }
            None => match &self.defaults[ci] {
                Some(d) => d.clone(),
                None => {
                    let d = match &col.default {
                        Some(d) => {
                            let e = crate::parse::parse_stored_expr(d)?;
                            shard_router::sql::eval_value(&e, &[], Some(self.clock))?
                                .coerce(&col.ty)?
                        }
                        None => Datum::Null,
                    };
                    self.defaults[ci] = Some(d.clone());
                    d
                }
            },
        };
        check_value(self.table, col, &v)?;
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> TableDef {
        TableDef {
            id: common::TableId(1),
            schema: "public".into(),
            name: "t".into(),
            columns: vec![ColumnDef {
                name: "c".into(),
                ty: SqlType::Varchar(Some(3)),
                not_null: true,
                default: None,
                sequence: None,
                identity: None,
            }],
            primary_key: vec![],
            distribution: meta::Distribution::Mirror,
            indexes: vec![],
        }
    }

    #[test]
    fn null_and_length_are_checked_as_postgres_does() {
        let t = table();
        let c = &t.columns[0];
        let code = |v: Datum| check_value(&t, c, &v).map_err(|e| e.sqlstate().code());
        assert_eq!(code(Datum::Null), Err("23502"));
        assert_eq!(code(Datum::Text("abcd".into())), Err("22001"));
        assert_eq!(code(Datum::Text("abc  ".into())), Ok(()));
        assert_eq!(code(Datum::Text("日本語".into())), Ok(()));
        let e = check_value(&t, c, &Datum::Null).unwrap_err();
        assert_eq!(
            e.to_string(),
            "null value in column \"c\" of relation \"t\" violates not-null constraint"
        );
    }
}
