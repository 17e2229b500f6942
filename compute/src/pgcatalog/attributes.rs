//! `pg_attribute`'s rows: the columns of tables, indexes, sequences and
//! views.

use super::batch::V;
use super::defs::default_text;
use super::index::indexes;
use super::oids;
use super::Snapshot;

impl Snapshot {
    pub(super) fn pg_attribute(&self) -> Vec<Vec<V>> {
        let mut rows = vec![];
        let mut attr_of = |relid: i64,
                           name: &str,
                           (oid, typmod): (i64, i32),
                           num: usize,
                           not_null: bool,
                           has_def: bool,
                           identity: &str| {
            use pgwire::api::Type;
            // PostgreSQL's storage of the type: numeric "main", other
            // variable-width types "extended", fixed-width ones "plain".
            let ty = Type::from_oid(oid as u32);
            let textual = [Type::TEXT, Type::VARCHAR, Type::BPCHAR, Type::NAME];
            let storage = match &ty {
                Some(t) if *t == Type::NUMERIC => "m",
                Some(t) if textual.contains(t) || *t == Type::BYTEA => "x",
                Some(t) if matches!(t.kind(), postgres_types::Kind::Array(_)) => "x",
                _ => "p",
            };
            let collation = match &ty {
                Some(t) if textual.contains(t) => oids::DEFAULT_COLLATION,
                _ => 0,
            };
            rows.push(vec![
                relid.into(),
                name.into(),
                oid.into(),
                V::I(-1),
                V::I(-1),
                V::I(num as i64),
                V::I(0),
                V::I(-1),
                V::I(typmod as i64),
                false.into(),
                "i".into(),
                storage.into(),
                "".into(),
                not_null.into(),
                has_def.into(),
                false.into(),
                identity.into(),
                "".into(),
                false.into(),
                true.into(),
                V::I(0),
                V::I(collation),
                V::N,
                V::N,
                V::N,
                V::N,
            ]);
        };
        let mut attr = |relid: i64,
                        name: &str,
                        ty: &common::SqlType,
                        num: usize,
                        not_null: bool,
                        has_def: bool,
                        identity: &str| {
            attr_of(
                relid,
                name,
                oids::column_type(ty),
                num,
                not_null,
                has_def,
                identity,
            )
        };
        for t in self.tables() {
            for (i, c) in t.columns.iter().enumerate() {
                attr(
                    oids::table(t.id),
                    &c.name,
                    &c.ty,
                    i + 1,
                    c.not_null,
                    default_text(t, c).is_some(),
                    c.identity.map(|x| x.letter()).unwrap_or(""),
                );
            }
            for ix in indexes(t) {
                for (i, name) in ix.columns.iter().enumerate() {
                    if let Ok(c) = t.column(name) {
                        attr(ix.oid, name, &c.ty, i + 1, false, false, "");
                    }
                }
            }
        }
        for s in self.sequences() {
            for (i, (name, ty)) in [
                ("last_value", common::SqlType::BigInt),
                ("log_cnt", common::SqlType::BigInt),
                ("is_called", common::SqlType::Boolean),
            ]
            .iter()
            .enumerate()
            {
                attr(oids::sequence(s.id), name, ty, i + 1, true, false, "");
            }
        }
        for v in self.views() {
            for (i, (c, oid)) in v.columns.iter().zip(&v.type_oids).enumerate() {
                attr_of(
                    oids::view(v.id),
                    c,
                    (*oid as i64, -1),
                    i + 1,
                    false,
                    false,
                    "",
                );
            }
        }
        rows
    }
}
