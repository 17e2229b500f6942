//! A statement's result columns and their RowDescription, decided once:
//! the fields a plan describes are turned into the wire's field list at the
//! first execution (per set of result format codes) and every later
//! execution of the plan sends the same list.

use std::sync::{Arc, OnceLock};

use parking_lot::Mutex;
use pgwire::api::portal::Format;
use pgwire::api::results::{FieldFormat, FieldInfo};
use pgwire::api::Type;

use super::origins::Origin;

/// Result columns: name and wire type, and where known the table column
/// each is; with their RowDescription for the last format asked.
#[derive(Debug, Default)]
pub struct Columns {
    pub fields: Vec<(String, Type)>,
    pub origins: Vec<Option<Origin>>,
    described: Mutex<Option<Description>>,
}

/// RowDescription fields made for one list of column formats.
type Description = (Vec<FieldFormat>, Arc<Vec<FieldInfo>>);

impl Columns {
    pub fn new(fields: Vec<(String, Type)>, origins: Vec<Option<Origin>>) -> Columns {
        Columns {
            fields,
            origins,
            described: Mutex::new(None),
        }
    }

    /// The RowDescription fields in `format`: made once per format, then
    /// shared.
    pub fn described(&self, format: &Format) -> Arc<Vec<FieldInfo>> {
        let mut memo = self.described.lock();
        if let Some((f, d)) = &*memo {
            if f.len() == self.fields.len()
                && f.iter()
                    .enumerate()
                    .all(|(i, x)| *x == column_format(format, i))
            {
                return d.clone();
            }
        }
        let formats = (0..self.fields.len())
            .map(|i| column_format(format, i))
            .collect();
        let d = Arc::new(fields_of(&self.fields, &self.origins, Some(format)));
        *memo = Some((formats, d.clone()));
        d
    }
}

/// A plan's [`Columns`], made at its first execution from the plan's
/// fields (a plan is not changed once planned). A copy of a plan makes
/// its own.
#[derive(Default)]
pub struct Described(OnceLock<Arc<Columns>>);

impl Clone for Described {
    fn clone(&self) -> Self {
        Described::default()
    }
}

impl std::fmt::Debug for Described {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Described")
    }
}

impl super::Plan {
    /// The plan's result columns, shared by its executions.
    pub fn columns(&self) -> Arc<Columns> {
        self.described
            .0
            .get_or_init(|| Arc::new(Columns::new(self.fields.clone(), self.origins.clone())))
            .clone()
    }
}

/// The format of result column `i` (pgwire's `format_for` indexes the
/// client's code list and panics past its end).
fn column_format(f: &Format, i: usize) -> FieldFormat {
    match f {
        Format::Individual(codes) => codes
            .get(i)
            .map_or(FieldFormat::Text, |c| FieldFormat::from(*c)),
        other => other.format_for(i),
    }
}

/// RowDescription fields: names and types, and for a column of a table
/// its table OID, column number and type modifier.
pub fn fields_of(
    fields: &[(String, Type)],
    origins: &[Option<Origin>],
    format: Option<&Format>,
) -> Vec<FieldInfo> {
    fields
        .iter()
        .enumerate()
        .map(|(i, (n, t))| {
            let format = format.map_or(FieldFormat::Text, |f| column_format(f, i));
            match origins.get(i).copied().flatten() {
                Some(o) => FieldInfo::new(
                    n.clone(),
                    Some(o.table_oid),
                    Some(o.attnum),
                    t.clone(),
                    format,
                )
                .with_type_modifier(o.typmod),
                None => crate::pgtypes::field(n, t.clone(), format),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_description_is_made_once_per_format() {
        let c = Columns::new(
            vec![("a".into(), Type::INT4), ("b".into(), Type::TEXT)],
            vec![],
        );
        let text = c.described(&Format::UnifiedText);
        assert!(Arc::ptr_eq(&text, &c.described(&Format::UnifiedText)));
        assert_eq!(text.len(), 2);
        let binary = c.described(&Format::UnifiedBinary);
        assert!(!Arc::ptr_eq(&text, &binary));
        assert_eq!(binary[1].format(), FieldFormat::Binary);
        // Codes for fewer columns than the result: text for the rest.
        let mixed = c.described(&Format::Individual(vec![1]));
        assert_eq!(mixed[0].format(), FieldFormat::Binary);
        assert_eq!(mixed[1].format(), FieldFormat::Text);
    }
}
