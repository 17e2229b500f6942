//! Fragments: what a subtree compiles to (columns, SQL body, where its
//! rows live), the compiler from logical plans, and the co-location rule
//! for joins.

use super::exprs::{aggregate_arg_sql, aggregate_sql, simple_aggregate, surviving, unaliased};
use super::sql::{aliased, group_by_ordinals, Body, FromItem};
use std::collections::BTreeSet;
use std::sync::Arc;

use common::{ShardId, SqlType};
use datafusion::arrow::datatypes::DataType;
use datafusion::common::DFSchema;
use datafusion::datasource::source_as_provider;
use datafusion::logical_expr::{Aggregate, Expr, ExprSchemable, Join, JoinType, LogicalPlan};
use meta::Distribution;

use crate::dist::scan::ShardTableProvider;
use crate::sql::expr_sql::{compared_as_text, is_exact_numeric, render};
use crate::sql::{sql_type_of, ShardSql};
use crate::Router;

/// Where a fragment's rows live.
#[derive(Clone, Debug)]
pub(super) enum Dist {
    /// Only mirror tables: any one shard holds all rows; this one is read.
    Mirror { shard: Option<ShardId> },
    /// Partition `p` of every hash table in the fragment lives on
    /// `shards[p]`; `parts` are the partitions the filters leave.
    /// `keys[k]` lists the output columns holding partition key column k.
    Hash {
        shards: Vec<ShardId>,
        parts: BTreeSet<u32>,
        keys: Option<Vec<(SqlType, Vec<usize>)>>,
    },
}

/// A subtree every shard can evaluate over its own partitions.
#[derive(Clone)]
pub(super) struct Frag {
    /// SQL of each output column, by position in the subtree's schema.
    pub(super) cols: Vec<ShardSql>,
    pub(super) body: Body,
    pub(super) dist: Dist,
    pub(super) router: Arc<Router>,
}

impl Frag {
    /// (shard, partition) pairs the fragment's query runs on.
    pub(super) fn targets(&self) -> Vec<(ShardId, u32)> {
        match &self.dist {
            Dist::Mirror { shard } => shard.map(|s| (s, 0)).into_iter().collect(),
            Dist::Hash { shards, parts, .. } => parts
                .iter()
                .filter_map(|p| shards.get(*p as usize).map(|s| (*s, *p)))
                .collect(),
        }
    }

    /// The whole fragment is a single table scan (already pushed by the
    /// table provider itself).
    pub(super) fn is_single_table(&self) -> bool {
        self.body.tables.len() == 1
            && self.body.exists.is_empty()
            && self.body.ins.is_empty()
            && matches!(self.body.tables[0].1, FromItem::Table(_))
    }
}

pub(super) struct Compiler {
    pub(super) next_alias: usize,
}

impl Compiler {
    pub(super) fn alias(&mut self) -> String {
        self.next_alias += 1;
        format!("t{}", self.next_alias)
    }

    /// An aggregate whose GROUP BY includes the whole partition key (so no
    /// group spans partitions), with aggregates MariaDB computes exactly as
    /// DataFusion (SUM of exact numbers, COUNT, MIN, MAX): a derived table.
    pub(super) fn local_aggregate(&mut self, a: &Aggregate, inner: Frag) -> Option<Frag> {
        let input = a.input.schema();
        let Dist::Hash {
            shards,
            parts,
            keys,
        } = &inner.dist
        else {
            return None;
        };
        if a.group_expr.is_empty() {
            return None;
        }
        let group_sources: Vec<Option<usize>> = a
            .group_expr
            .iter()
            .map(|g| match g {
                Expr::Column(c) => input.index_of_column(c).ok(),
                _ => None,
            })
            .collect();
        let new_keys = if shards.len() == 1 {
            None
        } else {
            let mut out = vec![];
            for (ty, at) in keys.as_ref()? {
                let at = surviving(at, &group_sources);
                if at.is_empty() {
                    return None;
                }
                out.push((*ty, at));
            }
            Some(out)
        };
        let mut select = vec![];
        for g in &a.group_expr {
            select.push(render(g, input, &inner.cols)?);
        }
        for e in &a.aggr_expr {
            let (name, arg) = simple_aggregate(e)?;
            let t = arg.get_type(input).ok()?;
            let (func, exact) = match name.as_str() {
                "count" => ("COUNT", true),
                "sum" => ("SUM", is_exact_numeric(&t)),
                "min" => ("MIN", !t.is_floating() && sql_type_of(&t).is_some()),
                "max" => ("MAX", !t.is_floating() && sql_type_of(&t).is_some()),
                _ => return None,
            };
            if !exact {
                return None;
            }
            let arg_sql = aggregate_arg_sql(&name, arg, input, &inner.cols)?;
            select.push(aggregate_sql(func, &arg_sql));
        }
        let alias = self.alias();
        let cols = (0..select.len())
            .map(|i| {
                let mut c = ShardSql::new();
                c.column(&alias, &format!("c{i}"));
                c
            })
            .collect();
        Some(Frag {
            cols,
            body: Body {
                tables: vec![(
                    alias,
                    FromItem::Derived {
                        select: aliased(&select),
                        body: Box::new(inner.body),
                        group_by: group_by_ordinals(a.group_expr.len()),
                    },
                )],
                conds: vec![],
                exists: vec![],
                ins: vec![],
            },
            dist: Dist::Hash {
                shards: shards.clone(),
                parts: parts.clone(),
                keys: new_keys,
            },
            router: inner.router,
        })
    }

    pub(super) fn compile(&mut self, plan: &LogicalPlan) -> Option<Frag> {
        match plan {
            LogicalPlan::TableScan(ts) => {
                if ts.fetch.is_some() {
                    return None;
                }
                let provider = source_as_provider(&ts.source).ok()?;
                let p = provider.downcast_ref::<ShardTableProvider>()?;
                if p.lock.is_some() {
                    return None;
                }
                let alias = self.alias();
                let t = p.table.clone();
                let placement = p.router.placement();
                // Not placed (any more): the plain scan reports it.
                placement.slots(&t).ok()?;
                let all: Vec<ShardSql> = t
                    .columns
                    .iter()
                    .map(|c| {
                        let mut col = ShardSql::new();
                        col.column(&alias, &c.name);
                        col
                    })
                    .collect();
                let indices: Vec<usize> = match &ts.projection {
                    Some(p) => p.clone(),
                    None => (0..t.columns.len()).collect(),
                };
                let full =
                    DFSchema::try_from_qualified_schema(ts.table_name.clone(), &p.schema).ok()?;
                let conds: Vec<ShardSql> = ts
                    .filters
                    .iter()
                    .filter_map(|e| render(e, &full, &all))
                    .collect();
                let dist = match &t.distribution {
                    Distribution::Mirror => Dist::Mirror {
                        shard: p
                            .partitions(&[])
                            .first()
                            .and_then(|i| placement.shard_of(&t, *i).ok()),
                    },
                    Distribution::Single => Dist::Hash {
                        shards: placement.layout(t.id).to_vec(),
                        parts: [0].into(),
                        keys: None,
                    },
                    Distribution::Hash { .. } => {
                        let sources: Vec<Option<usize>> =
                            indices.iter().map(|i| Some(*i)).collect();
                        let keys = t
                            .key_indexes()
                            .into_iter()
                            .map(|k| (t.columns[k].ty, surviving(&[k], &sources)))
                            .collect();
                        Dist::Hash {
                            shards: placement.layout(t.id).to_vec(),
                            parts: p.partitions(&ts.filters).into_iter().collect(),
                            keys: Some(keys),
                        }
                    }
                };
                Some(Frag {
                    cols: indices.iter().map(|i| all[*i].clone()).collect(),
                    body: Body {
                        tables: vec![(alias, FromItem::Table(t))],
                        conds,
                        exists: vec![],
                        ins: vec![],
                    },
                    dist,
                    router: p.router.clone(),
                })
            }
            LogicalPlan::SubqueryAlias(s) => self.compile(&s.input),
            LogicalPlan::Aggregate(a) => {
                let inner = self.compile(&a.input)?;
                self.local_aggregate(a, inner)
            }
            LogicalPlan::Filter(fl) => {
                let mut f = self.compile(&fl.input)?;
                for p in datafusion::logical_expr::utils::split_conjunction(&fl.predicate) {
                    let c = render(p, fl.input.schema(), &f.cols)?;
                    if !f.body.conds.contains(&c) {
                        f.body.conds.push(c);
                    }
                }
                Some(f)
            }
            LogicalPlan::Projection(pr) => {
                let mut f = self.compile(&pr.input)?;
                let input = pr.input.schema();
                let cols: Option<Vec<ShardSql>> =
                    pr.expr.iter().map(|e| render(e, input, &f.cols)).collect();
                // Partition keys survive as plain column references.
                let sources: Vec<Option<usize>> = pr
                    .expr
                    .iter()
                    .map(|e| match unaliased(e) {
                        Expr::Column(c) => input.index_of_column(c).ok(),
                        _ => None,
                    })
                    .collect();
                if let Dist::Hash {
                    keys: Some(keys), ..
                } = &mut f.dist
                {
                    for (_, at) in keys.iter_mut() {
                        *at = surviving(at, &sources);
                    }
                }
                f.cols = cols?;
                Some(f)
            }
            LogicalPlan::Join(j) => self.join(j),
            _ => None,
        }
    }

    /// An inner join of co-located fragments, or a semi/anti join as an
    /// `EXISTS` / `NOT EXISTS` under the same co-location rule.
    fn join(&mut self, j: &Join) -> Option<Frag> {
        let semi = match j.join_type {
            JoinType::Inner => None,
            JoinType::LeftSemi => Some(false),
            JoinType::LeftAnti if !j.null_aware => Some(true),
            _ => return None,
        };
        if j.null_equality != datafusion::common::NullEquality::NullEqualsNothing {
            return None;
        }
        let l = self.compile(&j.left)?;
        let r = self.compile(&j.right)?;
        let (ls, rs) = (j.left.schema(), j.right.schema());
        let mut conds = vec![];
        let mut pairs = vec![];
        // A semi join on equalities of non-string values alone goes out
        // as `IN (SELECT ...)` (see `Body::ins`); strings keep EXISTS,
        // where a side may need its collation spelled.
        let as_in = semi == Some(false)
            && j.filter.is_none()
            && !j.on.is_empty()
            && j.on
                .iter()
                .all(|(a, b)| !maybe_string(a, ls) && !maybe_string(b, rs));
        let (mut lefts, mut rights) = (vec![], vec![]);
        for (a, b) in &j.on {
            let (x, y) = (render(a, ls, &l.cols)?, render(b, rs, &r.cols)?);
            if as_in {
                lefts.push(x.clone());
                rights.push(y.clone());
            }
            let mut cond = ShardSql::new();
            cond.keyword("(")
                .append(compared_as_text(x, a, ls, b, rs))
                .keyword(" = ")
                .append(compared_as_text(y, b, rs, a, ls))
                .keyword(")");
            conds.push(cond);
            if let (Expr::Column(a), Expr::Column(b)) = (a, b) {
                if let (Ok(x), Ok(y)) = (ls.index_of_column(a), rs.index_of_column(b)) {
                    pairs.push((x, y));
                }
            }
        }
        let both = ls.join(rs).ok()?;
        let all_cols: Vec<ShardSql> = l.cols.iter().chain(&r.cols).cloned().collect();
        if let Some(fe) = &j.filter {
            conds.push(render(fe, &both, &all_cols)?);
        }
        let dist = colocate(&l, &r, &pairs, semi.is_some())?;
        let mut body = l.body;
        match semi {
            None => {
                body.tables.extend(r.body.tables);
                body.conds.extend(r.body.conds);
                body.exists.extend(r.body.exists);
                body.ins.extend(r.body.ins);
                body.conds.extend(conds);
            }
            Some(_) if as_in => body.ins.push(super::sql::SemiIn {
                left: lefts,
                right: rights,
                body: r.body,
            }),
            Some(negated) => {
                let mut sub = r.body;
                sub.conds.extend(conds);
                body.exists.push((negated, sub));
            }
        }
        Some(Frag {
            cols: if semi.is_some() { l.cols } else { all_cols },
            body,
            dist,
            router: l.router,
        })
    }
}

/// Whether `e` may be a string (its comparison may need a collation):
/// anything but numbers, dates, timestamps and booleans.
fn maybe_string(e: &Expr, schema: &DFSchema) -> bool {
    !matches!(
        e.get_type(schema),
        Ok(t) if t.is_integer() || t.is_floating() || matches!(
            t,
            DataType::Date32 | DataType::Date64 | DataType::Decimal128(..) | DataType::Timestamp(..) | DataType::Boolean
        )
    )
}

/// Whether a join of `l` and `r` (on these left/right column position
/// pairs) can run inside each shard, and the resulting distribution.
pub(super) fn colocate(l: &Frag, r: &Frag, pairs: &[(usize, usize)], semi: bool) -> Option<Dist> {
    let shift = l.cols.len();
    match (&l.dist, &r.dist) {
        (Dist::Mirror { shard: a }, Dist::Mirror { shard: b }) => {
            Some(Dist::Mirror { shard: a.or(*b) })
        }
        (Dist::Hash { .. }, Dist::Mirror { .. }) => Some(l.dist.clone()),
        // A mirror row must not meet only one partition's rows in EXISTS.
        (Dist::Mirror { .. }, Dist::Hash { .. }) if semi => None,
        (
            Dist::Mirror { .. },
            Dist::Hash {
                shards,
                parts,
                keys,
            },
        ) => Some(Dist::Hash {
            shards: shards.clone(),
            parts: parts.clone(),
            keys: keys.as_ref().map(|k| {
                k.iter()
                    .map(|(t, at)| (*t, at.iter().map(|i| i + shift).collect()))
                    .collect()
            }),
        }),
        (
            Dist::Hash {
                shards: s1,
                parts: p1,
                keys: k1,
            },
            Dist::Hash {
                shards: s2,
                parts: p2,
                keys: k2,
            },
        ) => {
            if s1 != s2 {
                return None;
            }
            let keys = if s1.len() == 1 {
                None
            } else {
                let (k1, k2) = (k1.as_ref()?, k2.as_ref()?);
                if k1.len() != k2.len() || k1.is_empty() {
                    return None;
                }
                let mut merged = vec![];
                for ((t1, a1), (t2, a2)) in k1.iter().zip(k2) {
                    if t1 != t2 || !pairs.iter().any(|(x, y)| a1.contains(x) && a2.contains(y)) {
                        return None;
                    }
                    let mut at = a1.clone();
                    if !semi {
                        at.extend(a2.iter().map(|i| i + shift));
                    }
                    merged.push((*t1, at));
                }
                Some(merged)
            };
            Some(Dist::Hash {
                shards: s1.clone(),
                parts: p1.intersection(p2).copied().collect(),
                keys,
            })
        }
    }
}
