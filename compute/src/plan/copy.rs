//! COPY formats (text and CSV: splitting lines into fields and rendering
//! rows, header lines and FORCE_QUOTE) and what a COPY FROM STDIN is planned into.

use std::sync::Arc;

use common::{Error, Result};
use datafusion::sql::sqlparser::ast::{
    CopyLegacyCsvOption, CopyLegacyOption, CopyOption, CopySource, CopyTarget, Ident, ObjectName,
    Statement,
};
use meta::{Catalog, TableDef};
use shard_router::sql::normalize_ident;

use crate::plan::names::resolve_table;

#[derive(Debug, Clone, PartialEq)]
pub struct CopyFormat {
    pub csv: bool,
    pub delimiter: char,
    pub null: String,
    pub header: bool,
    pub quote: char,
    pub escape: char,
    /// FORCE_QUOTE (COPY TO, CSV): the columns whose non-NULL values are
    /// always quoted; [`ALL_COLUMNS`] alone stands for `*`.
    pub force_quote: Vec<String>,
}

pub use crate::tokens::ALL_COLUMNS;

impl CopyFormat {
    pub fn from_options(options: &[CopyOption], legacy: &[CopyLegacyOption]) -> Result<CopyFormat> {
        let mut f = CopyFormat {
            csv: false,
            delimiter: '\t',
            null: "\\N".into(),
            header: false,
            quote: '"',
            escape: '"',
            force_quote: vec![],
        };
        let mut delimiter = None;
        let mut null = None;
        let mut escape = None;
        for o in options {
            match o {
                CopyOption::Format(i) => match i.value.to_lowercase().as_str() {
                    "csv" => f.csv = true,
                    "text" => f.csv = false,
                    other => return Err(Error::unsupported(format!("COPY format {other}"))),
                },
                CopyOption::Delimiter(c) => delimiter = Some(*c),
                CopyOption::Null(s) => null = Some(s.clone()),
                CopyOption::Header(h) => f.header = *h,
                CopyOption::Quote(c) => f.quote = *c,
                CopyOption::Escape(c) => escape = Some(*c),
                CopyOption::Encoding(e)
                    if e.eq_ignore_ascii_case("utf8") || e.eq_ignore_ascii_case("utf-8") => {}
                CopyOption::Freeze(_) => {}
                CopyOption::ForceQuote(cols) => {
                    f.force_quote = cols.iter().map(quoted_name).collect()
                }
                other => return Err(Error::unsupported(format!("COPY option {other}"))),
            }
        }
        for o in legacy {
            match o {
                CopyLegacyOption::Csv(opts) => {
                    f.csv = true;
                    for c in opts {
                        match c {
                            CopyLegacyCsvOption::Header => f.header = true,
                            CopyLegacyCsvOption::Quote(q) => f.quote = *q,
                            CopyLegacyCsvOption::Escape(e) => escape = Some(*e),
                            CopyLegacyCsvOption::ForceQuote(cols) => {
                                f.force_quote = cols.iter().map(quoted_name).collect()
                            }
                            other => {
                                return Err(Error::unsupported(format!("COPY option {other}")))
                            }
                        }
                    }
                }
                CopyLegacyOption::Delimiter(c) => delimiter = Some(*c),
                CopyLegacyOption::Null(s) => null = Some(s.clone()),
                CopyLegacyOption::Header => f.header = true,
                other => return Err(Error::unsupported(format!("COPY option {other}"))),
            }
        }
        if f.csv {
            f.delimiter = ',';
            f.null = String::new();
        }
        if let Some(d) = delimiter {
            f.delimiter = d;
        }
        if let Some(n) = null {
            f.null = n;
        }
        f.escape = escape.unwrap_or(f.quote);
        if !f.force_quote.is_empty() && !f.csv {
            return Err(Error::unsupported(
                "COPY FORCE_QUOTE outside CSV format (PostgreSQL refuses it too)",
            ));
        }
        Ok(f)
    }

    /// The header line of a COPY TO: the column names, written as values
    /// are (quoted in CSV when they need it, escaped in text).
    pub fn header_line(&self, names: &[String]) -> String {
        let plain = CopyFormat {
            force_quote: vec![],
            ..self.clone()
        };
        let fields: Vec<Option<String>> = names.iter().map(|n| Some(n.clone())).collect();
        plain.render(&fields, &[])
    }

    /// Which of the columns `names` FORCE_QUOTE names.
    pub fn forced(&self, names: &[String]) -> Vec<bool> {
        let all = self.force_quote.iter().any(|c| c == ALL_COLUMNS);
        names
            .iter()
            .map(|n| all || self.force_quote.contains(n))
            .collect()
    }

    /// Splits one line into fields; `None` fields are NULL.
    pub fn split(&self, line: &str) -> std::result::Result<Vec<Option<String>>, String> {
        if self.csv {
            self.split_csv(line)
        } else {
            self.split_text(line)
        }
    }

    fn split_text(&self, line: &str) -> std::result::Result<Vec<Option<String>>, String> {
        let mut out = vec![];
        for raw in line.split(self.delimiter) {
            if raw == self.null {
                out.push(None);
                continue;
            }
            let mut s = String::with_capacity(raw.len());
            let mut chars = raw.chars().peekable();
            while let Some(c) = chars.next() {
                if c != '\\' {
                    s.push(c);
                    continue;
                }
                match chars.next() {
                    Some('b') => s.push('\u{8}'),
                    Some('f') => s.push('\u{c}'),
                    Some('n') => s.push('\n'),
                    Some('r') => s.push('\r'),
                    Some('t') => s.push('\t'),
                    Some('v') => s.push('\u{b}'),
                    Some('x') => {
                        let mut v = 0u32;
                        let mut n = 0;
                        while n < 2 && chars.peek().is_some_and(|c| c.is_ascii_hexdigit()) {
                            v = v * 16 + chars.next().and_then(|c| c.to_digit(16)).unwrap_or(0);
                            n += 1;
                        }
                        s.push(char::from_u32(v).unwrap_or('?'));
                    }
                    Some(d @ '0'..='7') => {
                        let mut v = d.to_digit(8).unwrap_or(0);
                        let mut n = 1;
                        while n < 3 && chars.peek().is_some_and(|c| ('0'..='7').contains(c)) {
                            v = v * 8 + chars.next().and_then(|c| c.to_digit(8)).unwrap_or(0);
                            n += 1;
                        }
                        s.push(char::from_u32(v).unwrap_or('?'));
                    }
                    Some(other) => s.push(other),
                    None => return Err("a line ends with a lone backslash".into()),
                }
            }
            out.push(Some(s));
        }
        Ok(out)
    }

    fn split_csv(&self, line: &str) -> std::result::Result<Vec<Option<String>>, String> {
        let mut out = vec![];
        let mut cur = String::new();
        let mut quoted_field = false;
        let mut in_quotes = false;
        let mut chars = line.chars().peekable();
        loop {
            let c = chars.next();
            match c {
                Some(c) if in_quotes => {
                    if c == self.escape
                        && chars.peek() == Some(&self.quote)
                        && self.escape != self.quote
                    {
                        cur.push(self.quote);
                        chars.next();
                    } else if c == self.quote {
                        if self.escape == self.quote && chars.peek() == Some(&self.quote) {
                            cur.push(self.quote);
                            chars.next();
                        } else {
                            in_quotes = false;
                        }
                    } else {
                        cur.push(c);
                    }
                }
                Some(c) if c == self.quote => {
                    in_quotes = true;
                    quoted_field = true;
                }
                Some(c) if c == self.delimiter => {
                    out.push(if !quoted_field && cur == self.null {
                        None
                    } else {
                        Some(std::mem::take(&mut cur))
                    });
                    cur.clear();
                    quoted_field = false;
                }
                Some(c) => cur.push(c),
                None => {
                    if in_quotes {
                        return Err("unterminated CSV quoted field".into());
                    }
                    out.push(if !quoted_field && cur == self.null {
                        None
                    } else {
                        Some(cur)
                    });
                    return Ok(out);
                }
            }
        }
    }

    /// Renders one row for COPY TO; `forced[i]`: column i is always
    /// quoted (FORCE_QUOTE, CSV).
    pub fn render(&self, fields: &[Option<String>], forced: &[bool]) -> String {
        let mut line = String::new();
        for (i, f) in fields.iter().enumerate() {
            if i > 0 {
                line.push(self.delimiter);
            }
            match f {
                None => line.push_str(&self.null),
                Some(s) if self.csv => {
                    if forced.get(i).copied().unwrap_or(false)
                        || s.contains(self.delimiter)
                        || s.contains(self.quote)
                        || s.contains('\n')
                        || s.contains('\r')
                        || s == &self.null
                    {
                        line.push(self.quote);
                        for c in s.chars() {
                            if c == self.quote {
                                line.push(self.escape);
                            }
                            line.push(c);
                        }
                        line.push(self.quote);
                    } else {
                        line.push_str(s);
                    }
                }
                Some(s) => {
                    for c in s.chars() {
                        match c {
                            '\\' => line.push_str("\\\\"),
                            '\n' => line.push_str("\\n"),
                            '\r' => line.push_str("\\r"),
                            '\t' => line.push_str("\\t"),
                            c if c == self.delimiter => {
                                line.push('\\');
                                line.push(c);
                            }
                            c => line.push(c),
                        }
                    }
                }
            }
        }
        line.push('\n');
        line
    }
}

/// A FORCE_QUOTE column as PostgreSQL reads the name.
fn quoted_name(i: &Ident) -> String {
    if i.value == ALL_COLUMNS {
        return i.value.clone();
    }
    normalize_ident(i)
}

/// What a COPY FROM STDIN was planned into.
#[derive(Debug)]
pub struct CopyInPlan {
    pub table: Arc<TableDef>,
    /// For each table column, the index of the field that feeds it.
    pub column_map: Vec<Option<usize>>,
    pub fields: usize,
    pub format: CopyFormat,
}

/// What a COPY statement is planned into: rows in from the client, or a
/// query whose rows go out in a format.
#[derive(Debug)]
pub enum CopyPlan {
    In(Arc<CopyInPlan>),
    Out(Arc<Statement>, Arc<CopyFormat>),
}

/// Plans a COPY statement (FROM STDIN or TO STDOUT) against `catalog`,
/// unqualified names resolved in `schema`.
pub(crate) fn plan_copy(catalog: &Catalog, schema: &str, stmt: &Statement) -> Result<CopyPlan> {
    let Statement::Copy {
        source,
        to,
        target,
        options,
        legacy_options,
        values,
    } = stmt
    else {
        return Err(Error::internal("not a COPY"));
    };
    let format = CopyFormat::from_options(options, legacy_options)?;
    if !*to && !format.force_quote.is_empty() {
        return Err(Error::Sql {
            state: common::SqlState("0A000"),
            message: "COPY FORCE_QUOTE cannot be used with COPY FROM".into(),
        });
    }
    if !values.is_empty() {
        return Err(Error::unsupported("COPY with inline data"));
    }
    match (source.clone(), *to, target.clone()) {
        (
            CopySource::Table {
                table_name,
                columns,
            },
            false,
            CopyTarget::Stdin,
        ) => {
            let table = resolve_table(catalog, &table_name, schema)?;
            let names: Vec<String> = if columns.is_empty() {
                table.columns.iter().map(|c| c.name.clone()).collect()
            } else {
                columns.iter().map(normalize_ident).collect()
            };
            let mut column_map = vec![None; table.columns.len()];
            for (j, c) in names.iter().enumerate() {
                let i = table
                    .column_index(c)
                    .ok_or_else(|| Error::ColumnNotFound { name: c.clone() })?;
                column_map[i] = Some(j);
            }
            Ok(CopyPlan::In(Arc::new(CopyInPlan {
                table,
                column_map,
                fields: names.len(),
                format,
            })))
        }
        (source, true, CopyTarget::Stdout) => {
            let query = match source {
                CopySource::Query(q) => Statement::Query(q),
                CopySource::Table {
                    table_name,
                    columns,
                } => table_query(catalog, schema, &table_name, &columns)?,
            };
            Ok(CopyPlan::Out(Arc::new(query), Arc::new(format)))
        }
        _ => Err(Error::unsupported(
            "COPY to or from a file on the server (use STDIN/STDOUT)",
        )),
    }
}

/// `COPY table [(columns)] TO STDOUT` as the query DataFusion runs.
fn table_query(
    catalog: &Catalog,
    schema: &str,
    table_name: &ObjectName,
    columns: &[Ident],
) -> Result<Statement> {
    let table = resolve_table(catalog, table_name, schema)?;
    let cols: Vec<String> = if columns.is_empty() {
        table.columns.iter().map(|c| c.name.clone()).collect()
    } else {
        columns.iter().map(normalize_ident).collect()
    };
    let sql = format!(
        "SELECT {} FROM \"{}\".\"{}\"",
        cols.iter()
            .map(|c| format!("\"{}\"", c.replace('"', "\"\"")))
            .collect::<Vec<_>>()
            .join(", "),
        table.schema.replace('"', "\"\""),
        table.name.replace('"', "\"\"")
    );
    datafusion::sql::sqlparser::parser::Parser::parse_sql(&crate::dialect::TesseraDialect, &sql)
        .map_err(Error::internal)?
        .pop()
        .ok_or_else(|| Error::internal("empty COPY query"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text() -> CopyFormat {
        CopyFormat::from_options(&[], &[]).unwrap()
    }

    #[test]
    fn text_format_escapes_and_nulls() {
        let f = text();
        assert_eq!(
            f.split("1\ta\\tb\\\\c\t\\N").unwrap(),
            vec![Some("1".into()), Some("a\tb\\c".into()), None]
        );
        let line = f.render(&[Some("a\tb\\c".into()), None], &[]);
        assert_eq!(line, "a\\tb\\\\c\t\\N\n");
        assert_eq!(
            f.split(line.trim_end_matches('\n')).unwrap(),
            vec![Some("a\tb\\c".into()), None]
        );
    }

    #[test]
    fn csv_quotes_and_nulls() {
        let f = CopyFormat::from_options(&[CopyOption::Format("csv".into())], &[]).unwrap();
        assert_eq!(
            f.split("1,\"a,\"\"b\"\"\",,\"\"").unwrap(),
            vec![
                Some("1".into()),
                Some("a,\"b\"".into()),
                None,
                Some("".into())
            ]
        );
        assert_eq!(f.render(&[Some("a,b".into()), None], &[]), "\"a,b\",\n");
    }

    fn format_of(sql: &str) -> CopyFormat {
        match &crate::dialect::parse(sql).unwrap()[0] {
            Statement::Copy {
                options,
                legacy_options,
                ..
            } => CopyFormat::from_options(options, legacy_options).unwrap(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn header_and_force_quote_as_postgresql_writes_them() {
        let f = format_of("COPY t TO STDOUT WITH (FORMAT csv, HEADER true, FORCE_QUOTE *)");
        let names = ["id".to_string(), "a,b".to_string()];
        assert_eq!(f.header_line(&names), "id,\"a,b\"\n");
        assert_eq!(
            f.render(&[Some("1".into()), None], &f.forced(&names)),
            "\"1\",\n"
        );
        let f = format_of("COPY t TO STDOUT WITH (FORMAT csv, FORCE_QUOTE (v))");
        assert_eq!(f.forced(&["id".into(), "v".into()]), vec![false, true]);
        let f = format_of("COPY t TO STDOUT CSV HEADER FORCE QUOTE *");
        assert_eq!(f.forced(&["id".into()]), vec![true]);
        // Text format: a header line too (PostgreSQL 15).
        let f = format_of("COPY t TO STDOUT WITH (HEADER)");
        assert_eq!(f.header_line(&names), "id\ta,b\n");
    }
}
