//! The checks PostgreSQL applies to a value before storing it in a column:
//! NOT NULL (23502) and the length of `varchar(n)` / `char(n)` (22001,
//! trailing blanks not counted). INSERT and COPY both check rows here.

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
            }],
            primary_key: vec![],
            distribution: meta::Distribution::Mirror,
            partition_shards: vec![],
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
