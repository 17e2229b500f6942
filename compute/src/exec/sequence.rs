//! Sequences: CREATE/DROP SEQUENCE under the DDL lock, and the sequence
//! functions: `nextval` from the node's reserved range of the global
//! sequence (`Router::nextval`), `setval` in meta (every node's range
//! dropped before it answers), `currval`/`lastval` from the session.

use common::{Datum, Error, Result, SqlState};
use datafusion::sql::sqlparser::ast::{DataType, Expr, ObjectName, SequenceOptions};

use crate::plan::object_parts;
use crate::plan::sequence::{resolve_sequence, sequence_def, SeqCall};
use crate::session::{Output, Session};

use super::ddl_change::DdlChange;

impl Session {
    pub(crate) async fn create_sequence(
        &mut self,
        name: &ObjectName,
        if_not_exists: bool,
        data_type: Option<&DataType>,
        options: &[SequenceOptions],
        owned_by: Option<&ObjectName>,
    ) -> Result<()> {
        let router = self.router.clone();
        let parts = object_parts(name);
        let (schema, seq) = match parts.as_slice() {
            [n] => (self.current_schema(), n.clone()),
            [s, n] => (s.clone(), n.clone()),
            _ => return Err(Error::unsupported("three-part sequence names")),
        };
        let mut def = sequence_def(&schema, &seq, data_type, options)?;
        let mut txn = DdlChange::begin(&router, &format!("CREATE SEQUENCE {schema}.{seq}")).await?;
        let catalog = txn.catalog().await?;
        if !catalog.schemas.contains(&schema) {
            return Err(Error::SchemaNotFound { name: schema });
        }
        if catalog.sequence(&schema, &seq).is_some()
            || catalog.table(&schema, &seq).is_some()
            || catalog.view(&schema, &seq).is_some()
        {
            if if_not_exists {
                return Ok(());
            }
            return Err(Error::Sql {
                state: SqlState::DUPLICATE_TABLE,
                message: format!("relation \"{seq}\" already exists"),
            });
        }
        if let Some(o) = owned_by {
            let parts = object_parts(o);
            if parts.as_slice() != ["none"] {
                let (t, c) = match parts.as_slice() {
                    [t, c] => (t.clone(), c.clone()),
                    [s, t, c] if *s == schema => (t.clone(), c.clone()),
                    _ => {
                        return Err(Error::Sql {
                            state: SqlState("55000"),
                            message: "sequence must be in same schema as table it is linked to"
                                .into(),
                        })
                    }
                };
                let table = catalog
                    .table(&schema, &t)
                    .ok_or(Error::TableNotFound { name: t.clone() })?;
                table.column(&c)?;
                def.owned_by = Some((table.id, c));
            }
        }
        txn.create_sequence(&def).await?;
        txn.finish().await
    }

    /// DROP SEQUENCE: 2BP01 while a column default uses it, unless
    /// CASCADE (which drops those defaults, as PostgreSQL does).
    pub(crate) async fn drop_sequences(
        &mut self,
        names: &[ObjectName],
        if_exists: bool,
        cascade: bool,
    ) -> Result<()> {
        let router = self.router.clone();
        let mut txn = DdlChange::begin(&router, "DROP SEQUENCE").await?;
        let catalog = txn.catalog().await?;
        let schema = self.current_schema();
        for n in names {
            let parts = object_parts(n);
            let (s, seq) = match parts.as_slice() {
                [q] => (schema.clone(), q.clone()),
                [s, q] => (s.clone(), q.clone()),
                _ => return Err(Error::unsupported("three-part sequence names")),
            };
            let Some(def) = catalog.sequence(&s, &seq).cloned() else {
                if if_exists {
                    continue;
                }
                return Err(Error::Sql {
                    state: SqlState::UNDEFINED_TABLE,
                    message: format!("sequence \"{seq}\" does not exist"),
                });
            };
            let source = def.column_source();
            for t in catalog.tables.values() {
                if !t
                    .columns
                    .iter()
                    .any(|c| c.sequence.as_deref() == Some(&source))
                {
                    continue;
                }
                if !cascade {
                    return Err(Error::Sql {
                        state: SqlState("2BP01"),
                        message: format!(
                            "cannot drop sequence {seq} because other objects depend on it"
                        ),
                    });
                }
                let mut new = (**t).clone();
                for c in &mut new.columns {
                    if c.sequence.as_deref() == Some(&source) {
                        c.sequence = None;
                        c.default = None;
                    }
                }
                txn.update_table(&new, &[]).await?;
            }
            txn.drop_sequence(def.id).await?;
        }
        txn.finish().await
    }

    /// The name a sequence function's first argument gives (a literal, a
    /// parameter of a parameterized statement, a `::regclass` cast).
    fn sequence_of(&self, e: &Expr, params: &[Datum]) -> Result<std::sync::Arc<meta::SequenceDef>> {
        let inner = match e {
            Expr::Cast { expr, .. } => expr.as_ref(),
            e => e,
        };
        let text = match shard_router::sql::eval_const(inner, params)? {
            Datum::Text(s) => s,
            other => {
                return Err(Error::Sql {
                    state: SqlState::UNDEFINED_FUNCTION,
                    message: format!("a sequence is named by text, not {other:?}"),
                })
            }
        };
        resolve_sequence(&self.router.catalog(), &text, &self.current_schema())
    }

    /// `nextval` of the sequence `e` names, remembered for `currval` and
    /// `lastval`.
    pub(crate) async fn nextval_of(&mut self, e: &Expr, params: &[Datum]) -> Result<i64> {
        let def = self.sequence_of(e, params)?;
        let v = self.router.nextval(&def).await?;
        self.sequence_values.insert(def.id, v);
        self.last_sequence_value = Some((def.id, v));
        Ok(v)
    }

    /// The next value of a column's sequence (a SERIAL's own counter, or
    /// the user sequence of a `DEFAULT nextval(...)`, remembered for
    /// `currval` as PostgreSQL does).
    pub(crate) async fn next_source_value(&mut self, source: &str) -> Result<i64> {
        let v = self.router.next_sequence_value(source).await?;
        if let Some(q) = source.strip_prefix(meta::SEQUENCE_SOURCE_PREFIX) {
            let (schema, name) = q.split_once('.').unwrap_or(("public", q));
            if let Some(def) = self.router.catalog().sequence(schema, name) {
                self.sequence_values.insert(def.id, v);
                self.last_sequence_value = Some((def.id, v));
            }
        }
        Ok(v)
    }

    /// A scalar subquery's value (setval's argument), run here.
    async fn scalar_subquery(
        &mut self,
        q: &datafusion::sql::sqlparser::ast::Query,
    ) -> Result<Datum> {
        let rows = self.query_rows(q, 2).await.map_err(|e| match e {
            Error::Sql { state, .. } if state.0 == "54000" => Error::Sql {
                state: SqlState("21000"),
                message: "more than one row returned by a subquery used as an expression".into(),
            },
            e => e,
        })?;
        if rows.len() > 1 {
            return Err(Error::Sql {
                state: SqlState("21000"),
                message: "more than one row returned by a subquery used as an expression".into(),
            });
        }
        match rows.into_iter().next().and_then(|r| r.into_iter().next()) {
            None => Ok(Datum::Null),
            Some(c) => c.into_datum(&common::SqlType::BigInt),
        }
    }

    async fn sequence_call(&mut self, call: &SeqCall, params: &[Datum]) -> Result<Datum> {
        Ok(match call {
            SeqCall::Nextval(n) => Datum::Int(self.nextval_of(n, params).await?),
            SeqCall::Currval(n) => {
                let def = self.sequence_of(n, params)?;
                match self.sequence_values.get(&def.id) {
                    Some(v) => Datum::Int(*v),
                    None => {
                        return Err(Error::Sql {
                            state: SqlState("55000"),
                            message: format!(
                                "currval of sequence \"{}\" is not yet defined in this session",
                                def.name
                            ),
                        })
                    }
                }
            }
            SeqCall::Lastval => match self.last_sequence_value {
                Some((id, v)) if self.router.catalog().sequences.values().any(|s| s.id == id) => {
                    Datum::Int(v)
                }
                _ => {
                    return Err(Error::Sql {
                        state: SqlState("55000"),
                        message: "lastval is not yet defined in this session".into(),
                    })
                }
            },
            SeqCall::Setval(args) => {
                let (n, v, called) = &**args;
                let def = self.sequence_of(n, params)?;
                let value = match v {
                    Expr::Subquery(q) => self.scalar_subquery(q).await?,
                    Expr::Nested(inner) if matches!(**inner, Expr::Subquery(_)) => {
                        let Expr::Subquery(q) = &**inner else {
                            return Err(Error::internal("not a subquery"));
                        };
                        self.scalar_subquery(q).await?
                    }
                    e => shard_router::sql::eval_const(e, params)?,
                };
                let called = match called {
                    None => true,
                    Some(e) => match shard_router::sql::eval_const(e, params)? {
                        Datum::Bool(b) => b,
                        other => {
                            return Err(Error::Sql {
                                state: SqlState::UNDEFINED_FUNCTION,
                                message: format!(
                                    "setval's third argument must be boolean, not {other:?}"
                                ),
                            })
                        }
                    },
                };
                // setval(s, NULL) is NULL and changes nothing (strict).
                let Datum::Int(value) = value.coerce(&common::SqlType::BigInt)? else {
                    return Ok(Datum::Null);
                };
                self.router
                    .meta
                    .set_sequence_value(def.id, value, called)
                    .await?;
                // Every node's cached range of it goes before the answer.
                self.router.reload().await?;
                if called {
                    self.sequence_values.insert(def.id, value);
                }
                Datum::Int(value)
            }
        })
    }

    /// `SELECT nextval('s'), ...`: one row.
    pub(crate) async fn execute_sequence_select(
        &mut self,
        items: &[(String, SeqCall)],
        params: &[Datum],
    ) -> Result<Output> {
        let mut row = vec![];
        for (_, call) in items {
            row.push(self.sequence_call(call, params).await?);
        }
        Ok(Output::Rows(vec![row]))
    }
}
