//! The `fz` table both servers hold: one column per type, rows built from
//! each column's edge values (row 1 all NULL), so the same expression can
//! be evaluated over stored values (on the shards, through MariaDB) and,
//! with every column replaced by the row's value as a typed literal, as a
//! constant.

use super::types::Ty;

/// One column of `fz`. `values[0]` is an ordinary value; the rest are
/// edges. Values are SQL literals as an INSERT writes them.
pub struct Column {
    pub name: &'static str,
    pub sql: &'static str,
    pub ty: Ty,
    pub values: &'static [&'static str],
}

pub const COLUMNS: &[Column] = &[
    Column {
        name: "c_smallint",
        sql: "smallint",
        ty: Ty::SmallInt,
        values: &["7", "-32768", "32767", "0", "-1"],
    },
    Column {
        name: "c_int",
        sql: "integer",
        ty: Ty::Int,
        values: &["42", "2147483647", "-2147483648", "0", "-1", "3"],
    },
    Column {
        name: "c_bigint",
        sql: "bigint",
        ty: Ty::BigInt,
        values: &[
            "1000",
            "9223372036854775807",
            "-9223372036854775808",
            "0",
            "-7",
        ],
    },
    Column {
        name: "c_numeric",
        sql: "numeric",
        ty: Ty::Numeric,
        values: &[
            "12.5",
            "0",
            "-0.001",
            "99999999999999999999.999999999",
            "0.00000000000000000001",
            "'NaN'",
            "123456789012345678901234567890.12345",
            "-2.5",
            "1.005",
        ],
    },
    Column {
        name: "c_numeric_10_2",
        sql: "numeric(10,2)",
        ty: Ty::Numeric,
        values: &[
            "3.14",
            "99999999.99",
            "-99999999.99",
            "0.00",
            "2.675",
            "-0.5",
        ],
    },
    Column {
        name: "c_real",
        sql: "real",
        ty: Ty::Real,
        values: &[
            "1.5",
            "'NaN'",
            "'Infinity'",
            "'-Infinity'",
            "'-0'",
            "3.4e38",
            "1e-45",
            "0.1",
        ],
    },
    Column {
        name: "c_double",
        sql: "double precision",
        ty: Ty::Double,
        values: &[
            "2.25",
            "'NaN'",
            "'Infinity'",
            "'-Infinity'",
            "'-0'",
            "1.7976931348623157e308",
            "5e-324",
            "0.1",
            "1e16",
        ],
    },
    Column {
        name: "c_text",
        sql: "text",
        ty: Ty::Text,
        values: &[
            "'hello'", "''", "'ab  '", "'日本'", "'Émile'", "'a%b_c'", "'x''y'", "'  12 '",
        ],
    },
    Column {
        name: "c_varchar",
        sql: "varchar(10)",
        ty: Ty::Text,
        values: &["'abc'", "''", "'ab  '", "'日本語テキスト'", "'1234567890'"],
    },
    Column {
        name: "c_char",
        sql: "char(4)",
        ty: Ty::Char,
        values: &["'ab'", "''", "'ab  '", "'日本'", "'abcd'"],
    },
    Column {
        name: "c_bool",
        sql: "boolean",
        ty: Ty::Bool,
        values: &["true", "false"],
    },
    Column {
        name: "c_date",
        sql: "date",
        ty: Ty::Date,
        values: &[
            "'2024-01-15'",
            "'0001-01-01'",
            "'9999-12-31'",
            "'2000-02-29'",
            "'2024-02-29'",
            "'1970-01-01'",
        ],
    },
    Column {
        name: "c_ts",
        sql: "timestamp",
        ty: Ty::Timestamp,
        values: &[
            "'2024-01-15 12:34:56'",
            "'2024-03-10 02:30:00'",
            "'2024-10-27 02:30:00'",
            "'0001-01-01 00:00:00'",
            "'9999-12-31 23:59:59.999999'",
            "'2000-02-29 12:00:00.5'",
            "'2024-11-03 01:30:00'",
        ],
    },
    Column {
        name: "c_tstz",
        sql: "timestamptz",
        ty: Ty::Timestamptz,
        values: &[
            "'2024-01-15 12:34:56+00'",
            "'2024-03-10 02:30:00'",
            "'2024-10-27 02:30:00 Europe/Paris'",
            "'2024-11-03 01:30:00-04'",
            "'1970-01-01 00:00:00+00'",
            "'0001-01-01 00:00:00+00'",
            "'9999-12-31 23:59:59+00'",
        ],
    },
];

/// Rows with an edge value in most columns (`id` 2 onward); `id` 1 is all
/// NULL and the last row NULL in every other column.
pub const ROWS: usize = 14;

/// One row: its id and each column's literal (`None`: NULL).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub id: usize,
    pub values: Vec<Option<&'static str>>,
}

/// The rows as first built, before the loader takes out values a server
/// cannot store.
pub fn rows() -> Vec<Row> {
    (1..=ROWS)
        .map(|id| Row {
            id,
            values: COLUMNS
                .iter()
                .enumerate()
                .map(|(c, col)| match id {
                    1 => None,
                    _ if id == ROWS && c % 2 == 0 => None,
                    _ => Some(col.values[(id - 2) % col.values.len()]),
                })
                .collect(),
        })
        .collect()
}

pub fn create_table() -> String {
    let cols: Vec<String> = COLUMNS
        .iter()
        .map(|c| format!("{} {}", c.name, c.sql))
        .collect();
    format!(
        "CREATE TABLE fz (id integer PRIMARY KEY, {})",
        cols.join(", ")
    )
}

pub fn insert(row: &Row) -> String {
    let vals: Vec<&str> = row.values.iter().map(|v| v.unwrap_or("NULL")).collect();
    format!("INSERT INTO fz VALUES ({}, {})", row.id, vals.join(", "))
}

/// `sql` with every column name outside string literals replaced by the
/// row's value as a typed literal: the constant form of an expression.
pub fn constant(sql: &str, row: &Row) -> String {
    let mut out = String::new();
    let mut chars = sql.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c == '\'' {
            out.push(c);
            for (_, d) in chars.by_ref() {
                out.push(d);
                if d == '\'' {
                    break;
                }
            }
            continue;
        }
        if !(c.is_ascii_alphanumeric() || c == '_') {
            out.push(c);
            continue;
        }
        let mut end = i + c.len_utf8();
        while let Some((j, d)) = chars.peek().copied() {
            if !(d.is_ascii_alphanumeric() || d == '_') {
                break;
            }
            end = j + d.len_utf8();
            chars.next();
        }
        let word = &sql[i..end];
        match COLUMNS.iter().position(|col| col.name == word) {
            Some(k) => {
                let v = row.values.get(k).copied().flatten().unwrap_or("NULL");
                out.push_str(&format!("CAST({v} AS {})", COLUMNS[k].sql));
            }
            None => out.push_str(word),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constant_form_replaces_columns_outside_literals() {
        let r = &rows()[1];
        assert_eq!(
            constant("(c_int + length('c_int')) || c_char", r),
            "(CAST(42 AS integer) + length('c_int')) || CAST('ab' AS char(4))"
        );
        assert_eq!(constant("c_int", &rows()[0]), "CAST(NULL AS integer)");
    }

    #[test]
    fn rows_cover_each_edge_value() {
        let rows = rows();
        for (k, col) in COLUMNS.iter().enumerate() {
            for v in col.values {
                assert!(
                    rows.iter().any(|r| r.values[k] == Some(*v)),
                    "{} {v}",
                    col.name
                );
            }
        }
    }
}
