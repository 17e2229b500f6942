//! Deep pushdown: a DataFusion optimizer rule that hands whole plan
//! fragments to the shards. It runs after DataFusion's own rules, finds the
//! largest subtrees every shard can evaluate on its own partitions and
//! replaces them with a scan of one MySQL query per partition:
//!
//! * select-project-join fragments: filters and projections, inner joins
//!   between co-located hash tables (same partition count and placement,
//!   joined on the whole partition key) and with mirror tables, and
//!   semi/anti joins (`EXISTS` / `NOT EXISTS`) under the same rule;
//! * aggregates over such a fragment, split in two: each shard computes
//!   partial aggregates (SUM, COUNT, MIN, MAX, AVG as SUM + COUNT) per group,
//!   DataFusion merges them;
//! * `ORDER BY ... LIMIT n` over a fragment as a per-shard top-n, which
//!   DataFusion merges with the same sort.
//!
//! Only expressions MariaDB evaluates exactly like PostgreSQL are rendered
//! (see [`render`]); anything else leaves the subtree to DataFusion, so
//! pushdown changes where work happens, never the answer.

use std::collections::BTreeSet;
use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use common::{ShardId, SqlType};
use datafusion::arrow::array::{Array, ArrayRef, Decimal128Array, Decimal128Builder, Int64Array};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef, TimeUnit};
use datafusion::catalog::{Session, TableProvider};
use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::common::{Column, DFSchema, DataFusionError, ScalarValue, TableReference};
use datafusion::datasource::{provider_as_source, source_as_provider, TableType};
use datafusion::logical_expr::expr::{AggregateFunction, ScalarFunction};
use datafusion::logical_expr::{
    cast, create_udf, Aggregate, ColumnarValue, Expr, ExprSchemable, JoinType, LogicalPlan,
    LogicalPlanBuilder, Operator, Sort, TableProviderFilterPushDown, Volatility,
};
use datafusion::optimizer::{OptimizerConfig, OptimizerRule};
use datafusion::physical_plan::streaming::StreamingTableExec;
use datafusion::physical_plan::ExecutionPlan;
use meta::{Distribution, TableDef};
use storage_adapter::quote_ident;

use crate::render::physical_object;
use crate::scan::{arrow_type, literal_sql, shard_streams, ScanLog, ShardTableProvider};
use crate::txn::SharedAccess;
use crate::Router;

/// The optimizer rule; see the module documentation.
#[derive(Debug, Default)]
pub struct ShardPushdown;

impl OptimizerRule for ShardPushdown {
    fn name(&self) -> &str {
        "tessera_shard_pushdown"
    }

    fn rewrite(
        &self,
        plan: LogicalPlan,
        _config: &dyn OptimizerConfig,
    ) -> datafusion::error::Result<Transformed<LogicalPlan>> {
        let plan = plan.transform_up(|node| {
            Ok(match rotate(&node)? {
                Some(new) => Transformed::yes(new),
                None => Transformed::no(node),
            })
        })?;
        let rotated = plan.transformed;
        let mut plan = plan.data.transform_down(|node| {
            Ok(match push(&node)? {
                Some(new) => Transformed::new(new, true, TreeNodeRecursion::Jump),
                None => Transformed::no(node),
            })
        })?;
        plan.transformed |= rotated;
        if !plan.transformed {
            return Ok(plan);
        }
        // Parents of replaced subtrees still carry their old schemas (the
        // nullability of a column can differ): recompute them.
        plan.data
            .transform_up(|p| p.recompute_schema().map(Transformed::yes))
            .map(|p| Transformed::yes(p.data))
    }
}

/// Regroups `(X JOIN Y) JOIN C` so that C meets the input it can be joined
/// with inside the shards: `X JOIN (Y JOIN C)` when the upper join's keys on
/// the left are all Y's and Y, C are co-located (likewise with X). Inner
/// joins without extra filters only (they are associative); a projection
/// restores the original column order.
fn rotate(node: &LogicalPlan) -> datafusion::error::Result<Option<LogicalPlan>> {
    let LogicalPlan::Join(top) = node else {
        return Ok(None);
    };
    if top.join_type != JoinType::Inner || top.filter.is_some() {
        return Ok(None);
    }
    let lower = match top.left.as_ref() {
        LogicalPlan::Projection(p) if p.expr.iter().all(|e| matches!(e, Expr::Column(_))) => {
            p.input.as_ref()
        }
        other => other,
    };
    let LogicalPlan::Join(j2) = lower else {
        return Ok(None);
    };
    if j2.join_type != JoinType::Inner || j2.filter.is_some() {
        return Ok(None);
    }
    let c = top.right.as_ref();
    let (x, y) = (j2.left.as_ref(), j2.right.as_ref());
    let mut comp = Compiler { next_alias: 0 };
    // Already pushable as it is, or nothing to gain.
    if comp.compile(lower).is_some() {
        return Ok(None);
    }
    let only_in = |side: &LogicalPlan| {
        top.on.iter().all(|(l, _)| {
            l.column_refs()
                .iter()
                .all(|col| side.schema().has_column(col))
        })
    };
    let colocated = |side: &LogicalPlan, comp: &mut Compiler| -> bool {
        let (Some(a), Some(b)) = (comp.compile(side), comp.compile(c)) else {
            return false;
        };
        let pairs: Vec<(usize, usize)> = top
            .on
            .iter()
            .filter_map(|(l, r)| match (l, r) {
                (Expr::Column(l), Expr::Column(r)) => Some((
                    side.schema().index_of_column(l).ok()?,
                    c.schema().index_of_column(r).ok()?,
                )),
                _ => None,
            })
            .collect();
        colocate(&a, &b, &pairs, false).is_some()
    };
    let (left_keys, right_keys): (Vec<Expr>, Vec<Expr>) = top.on.iter().cloned().unzip();
    let (l2, r2): (Vec<Expr>, Vec<Expr>) = j2.on.iter().cloned().unzip();
    let joined = if only_in(y) && colocated(y, &mut comp) {
        // X JOIN (Y JOIN C)
        let yc = LogicalPlanBuilder::from(y.clone())
            .join_with_expr_keys(c.clone(), JoinType::Inner, (left_keys, right_keys), None)?
            .build()?;
        LogicalPlanBuilder::from(x.clone())
            .join_with_expr_keys(yc, JoinType::Inner, (l2, r2), None)?
            .build()?
    } else if only_in(x) && colocated(x, &mut comp) {
        // (X JOIN C) JOIN Y
        let xc = LogicalPlanBuilder::from(x.clone())
            .join_with_expr_keys(c.clone(), JoinType::Inner, (left_keys, right_keys), None)?
            .build()?;
        LogicalPlanBuilder::from(xc)
            .join_with_expr_keys(y.clone(), JoinType::Inner, (l2, r2), None)?
            .build()?
    } else {
        return Ok(None);
    };
    let cols: Vec<Expr> = node
        .schema()
        .columns()
        .into_iter()
        .map(Expr::Column)
        .collect();
    LogicalPlanBuilder::from(joined)
        .project(cols)?
        .build()
        .map(Some)
}

/// Where a fragment's rows live.
#[derive(Clone, Debug)]
enum Dist {
    /// Only mirror tables: any one shard holds all rows.
    Mirror,
    /// Partition `p` of every hash table in the fragment lives on
    /// `shards[p]`; `parts` are the partitions the filters leave.
    /// `keys[k]` lists the output columns holding partition key column k.
    Hash {
        shards: Vec<ShardId>,
        parts: BTreeSet<u32>,
        keys: Option<Vec<(SqlType, Vec<usize>)>>,
    },
}

/// FROM items and conditions of a fragment; EXISTS subqueries nest.
#[derive(Clone, Debug, Default)]
struct Body {
    tables: Vec<(String, FromItem)>,
    conds: Vec<String>,
    exists: Vec<(bool, Body)>,
}

/// A FROM item: a table's partition, or a derived table (an aggregate each
/// shard computes completely, because its groups never span partitions).
#[derive(Clone, Debug)]
enum FromItem {
    Table(Arc<TableDef>),
    Derived {
        select: Vec<String>,
        body: Box<Body>,
        group_by: String,
    },
}

impl Body {
    fn tables_sql(&self, p: u32) -> String {
        self.tables
            .iter()
            .map(|(alias, item)| match item {
                FromItem::Table(t) => {
                    let part = if matches!(t.distribution, Distribution::Hash { .. }) {
                        p
                    } else {
                        0
                    };
                    format!(
                        "{} AS {}",
                        physical_object(&t.schema, &t.physical_name(part)),
                        quote_ident(alias)
                    )
                }
                FromItem::Derived {
                    select,
                    body,
                    group_by,
                } => format!(
                    "(SELECT {} FROM {}{}{group_by}) AS {}",
                    select.join(", "),
                    body.tables_sql(p),
                    body.conditions_sql(p),
                    quote_ident(alias)
                ),
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn conditions_sql(&self, p: u32) -> String {
        let mut conds = self.conds.clone();
        for (negated, sub) in &self.exists {
            let w = sub.conditions_sql(p);
            conds.push(format!(
                "{}EXISTS (SELECT 1 FROM {}{})",
                if *negated { "NOT " } else { "" },
                sub.tables_sql(p),
                w
            ));
        }
        if conds.is_empty() {
            String::new()
        } else {
            format!(" WHERE {}", conds.join(" AND "))
        }
    }
}

/// A subtree every shard can evaluate over its own partitions.
struct Frag {
    /// SQL of each output column, by position in the subtree's schema.
    cols: Vec<String>,
    body: Body,
    dist: Dist,
    /// Mirror tables only: the shard to read them on.
    mirror_shard: Option<ShardId>,
    router: Arc<Router>,
    access: SharedAccess,
    log: ScanLog,
}

impl Frag {
    /// (shard, partition) pairs the fragment's query runs on.
    fn targets(&self) -> Vec<(ShardId, u32)> {
        match &self.dist {
            Dist::Mirror => self.mirror_shard.map(|s| (s, 0)).into_iter().collect(),
            Dist::Hash { shards, parts, .. } => parts
                .iter()
                .filter_map(|p| shards.get(*p as usize).map(|s| (*s, *p)))
                .collect(),
        }
    }

    /// The whole fragment is a single table scan (already pushed by the
    /// table provider itself).
    fn is_single_table(&self) -> bool {
        self.body.tables.len() == 1
            && self.body.exists.is_empty()
            && matches!(self.body.tables[0].1, FromItem::Table(_))
    }
}

struct Compiler {
    next_alias: usize,
}

fn push(node: &LogicalPlan) -> datafusion::error::Result<Option<LogicalPlan>> {
    let mut c = Compiler { next_alias: 0 };
    match node {
        LogicalPlan::Aggregate(a) => {
            // Groups within partitions: the whole aggregate runs in the shards.
            if let Some(f) = c.compile(node) {
                return whole(node, f).map(Some);
            }
            let Some(f) = c.compile(&a.input) else {
                return Ok(None);
            };
            push_aggregate(a, f)
        }
        LogicalPlan::Sort(s) if s.fetch.is_some() => {
            let Some(f) = c.compile(&s.input) else {
                return Ok(None);
            };
            push_top_n(s, f)
        }
        _ => {
            let Some(f) = c.compile(node) else {
                return Ok(None);
            };
            if f.is_single_table() {
                return Ok(None);
            }
            whole(node, f).map(Some)
        }
    }
}

/// `node` (compiled to `f`) replaced by a scan of its shard queries.
fn whole(node: &LogicalPlan, f: Frag) -> datafusion::error::Result<LogicalPlan> {
    let select: Vec<String> = f
        .cols
        .iter()
        .enumerate()
        .map(|(i, s)| format!("{s} AS {}", quote_ident(&format!("c{i}"))))
        .collect();
    let fields: Vec<(Option<TableReference>, Arc<Field>)> = node
        .schema()
        .iter()
        .map(|(q, f)| (q.cloned(), f.clone()))
        .collect();
    scan_plan(&f, &select, "", "", &fields)
}

/// A scan of `f` with this SELECT list (and GROUP BY / ORDER BY tails),
/// projected back to `fields`, the schema of the subtree it replaces.
fn scan_plan(
    f: &Frag,
    select: &[String],
    group_by: &str,
    tail: &str,
    fields: &[(Option<TableReference>, Arc<Field>)],
) -> datafusion::error::Result<LogicalPlan> {
    let Some(types) = fields
        .iter()
        .map(|(_, fl)| sql_type_of(fl.data_type()))
        .collect::<Option<Vec<_>>>()
    else {
        return Err(DataFusionError::Plan("pushdown: unsupported type".into()));
    };
    let schema = Arc::new(Schema::new(
        types
            .iter()
            .zip(fields)
            .enumerate()
            .map(|(i, (t, (_, fl)))| Field::new(format!("c{i}"), arrow_type(t), fl.is_nullable()))
            .collect::<Vec<_>>(),
    ));
    let queries: Vec<(ShardId, String)> = f
        .targets()
        .into_iter()
        .map(|(shard, p)| {
            (
                shard,
                format!(
                    "SELECT {} FROM {}{}{group_by}{tail}",
                    select.join(", "),
                    f.body.tables_sql(p),
                    f.body.conditions_sql(p)
                ),
            )
        })
        .collect();
    let provider = ShardQueryProvider {
        schema: schema.clone(),
        types,
        queries,
        router: f.router.clone(),
        access: f.access.clone(),
        log: f.log.clone(),
    };
    let name = TableReference::bare("shard_query");
    let scan =
        LogicalPlanBuilder::scan(name.clone(), provider_as_source(Arc::new(provider)), None)?
            .build()?;
    let exprs: Vec<Expr> = fields
        .iter()
        .enumerate()
        .map(|(i, (q, fl))| {
            let c = Expr::Column(Column::new(Some(name.clone()), format!("c{i}")));
            let c = if schema.field(i).data_type() == fl.data_type() {
                c
            } else {
                cast(c, fl.data_type().clone())
            };
            c.alias_qualified(q.clone(), fl.name())
        })
        .collect();
    LogicalPlanBuilder::from(scan).project(exprs)?.build()
}

fn push_top_n(s: &Sort, f: Frag) -> datafusion::error::Result<Option<LogicalPlan>> {
    let (Some(n), Dist::Hash { .. }) = (s.fetch, &f.dist) else {
        return Ok(None);
    };
    let input = s.input.schema();
    let mut order = vec![];
    for e in &s.expr {
        let Some(x) = render(&e.expr, input, &f.cols) else {
            return Ok(None);
        };
        // MariaDB puts NULLs first ascending, last descending; spell the
        // requested placement out.
        order.push(format!(
            "({x} IS NULL) {}",
            if e.nulls_first { "DESC" } else { "ASC" }
        ));
        order.push(format!("{x} {}", if e.asc { "ASC" } else { "DESC" }));
    }
    let select: Vec<String> = f
        .cols
        .iter()
        .enumerate()
        .map(|(i, s)| format!("{s} AS {}", quote_ident(&format!("c{i}"))))
        .collect();
    let fields: Vec<(Option<TableReference>, Arc<Field>)> =
        input.iter().map(|(q, f)| (q.cloned(), f.clone())).collect();
    let tail = format!(" ORDER BY {} LIMIT {n}", order.join(", "));
    let scan = scan_plan(&f, &select, "", &tail, &fields)?;
    Ok(Some(LogicalPlan::Sort(Sort {
        expr: s.expr.clone(),
        input: Arc::new(scan),
        fetch: s.fetch,
    })))
}

/// How one aggregate is computed: partial columns on the shards, the final
/// expression over them in DataFusion.
fn push_aggregate(a: &Aggregate, f: Frag) -> datafusion::error::Result<Option<LogicalPlan>> {
    let input = a.input.schema();
    let mut select = vec![];
    let mut fields: Vec<(Option<TableReference>, Arc<Field>)> = vec![];
    let mut group_cols = vec![];
    for (i, g) in a.group_expr.iter().enumerate() {
        let Some(sql) = render(g, input, &f.cols) else {
            return Ok(None);
        };
        let (q, fl) = a.schema.qualified_field(i);
        select.push(sql);
        fields.push((q.cloned(), fl.clone()));
        group_cols.push(fields.len() - 1);
    }
    // (final expression builder input: partial column positions)
    enum Final {
        Sum(usize),
        Count(usize),
        Min(usize),
        Max(usize),
        AvgFloat(usize, usize),
        AvgDecimal(usize, usize, u8, i8, u8, i8),
    }
    let mut finals = vec![];
    for e in &a.aggr_expr {
        let e = match e {
            Expr::Alias(al) => al.expr.as_ref(),
            e => e,
        };
        let Expr::AggregateFunction(AggregateFunction { func, params }) = e else {
            return Ok(None);
        };
        if params.distinct
            || params.filter.is_some()
            || !params.order_by.is_empty()
            || params.args.len() != 1
        {
            return Ok(None);
        }
        let arg = &params.args[0];
        let Ok(arg_type) = arg.get_type(input) else {
            return Ok(None);
        };
        let name = func.name().to_ascii_lowercase();
        let arg_sql = if name == "count" && matches!(arg, Expr::Literal(v, _) if !v.is_null()) {
            "*".to_string()
        } else {
            match render(arg, input, &f.cols) {
                Some(s) => s,
                None => return Ok(None),
            }
        };
        let mut partial = |sql: String, ty: DataType| {
            select.push(sql);
            fields.push((None, Arc::new(Field::new("p", ty, true))));
            fields.len() - 1
        };
        let sum_type = match &arg_type {
            t if t.is_integer() => Some(DataType::Int64),
            DataType::Float32 | DataType::Float64 => Some(DataType::Float64),
            DataType::Decimal128(_, s) => Some(DataType::Decimal128(38, *s)),
            _ => None,
        };
        finals.push(match name.as_str() {
            "sum" => match sum_type {
                Some(t) => Final::Sum(partial(format!("SUM({arg_sql})"), t)),
                None => return Ok(None),
            },
            "count" => Final::Count(partial(format!("COUNT({arg_sql})"), DataType::Int64)),
            "min" | "max" => {
                if sql_type_of(&arg_type).is_none() || arg_type.is_floating() {
                    return Ok(None);
                }
                let p = partial(format!("{}({arg_sql})", name.to_uppercase()), arg_type);
                if name == "min" {
                    Final::Min(p)
                } else {
                    Final::Max(p)
                }
            }
            "avg" => match (&arg_type, sum_type) {
                (DataType::Decimal128(p, s), Some(t)) => {
                    let sp = partial(format!("SUM({arg_sql})"), t);
                    let cp = partial(format!("COUNT({arg_sql})"), DataType::Int64);
                    Final::AvgDecimal(sp, cp, 38, *s, (*p + 4).min(38), (*s + 4).min(38))
                }
                (_, Some(t)) => {
                    let sp = partial(format!("SUM({arg_sql})"), t);
                    let cp = partial(format!("COUNT({arg_sql})"), DataType::Int64);
                    Final::AvgFloat(sp, cp)
                }
                _ => return Ok(None),
            },
            _ => return Ok(None),
        });
    }
    let select: Vec<String> = select
        .iter()
        .enumerate()
        .map(|(i, s)| format!("{s} AS {}", quote_ident(&format!("c{i}"))))
        .collect();
    let group_by = if group_cols.is_empty() {
        String::new()
    } else {
        format!(
            " GROUP BY {}",
            (1..=group_cols.len())
                .map(|i| i.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    // The shard query's columns: groups keep their names, partials get
    // fresh ones (the projection in scan_plan renames them).
    let named: Vec<(Option<TableReference>, Arc<Field>)> = fields
        .iter()
        .enumerate()
        .map(|(i, (q, fl))| {
            if i < group_cols.len() {
                (q.clone(), fl.clone())
            } else {
                (
                    None,
                    Arc::new(Field::new(format!("__p{i}"), fl.data_type().clone(), true)),
                )
            }
        })
        .collect();
    let scan = scan_plan(&f, &select, &group_by, "", &named)?;
    use datafusion::functions::expr_fn::coalesce;
    use datafusion::functions_aggregate::expr_fn::{max, min, sum};
    let pcol = |i: usize| {
        let (q, fl) = &named[i];
        Expr::Column(Column::new(q.clone(), fl.name()))
    };
    let mut aggs = vec![];
    for fin in &finals {
        aggs.push(match fin {
            Final::Sum(p) => sum(pcol(*p)),
            Final::Count(p) | Final::AvgFloat(_, p) | Final::AvgDecimal(_, p, ..) => sum(pcol(*p)),
            Final::Min(p) => min(pcol(*p)),
            Final::Max(p) => max(pcol(*p)),
        });
        if let Final::AvgFloat(s, _) | Final::AvgDecimal(s, ..) = fin {
            aggs.push(sum(pcol(*s)));
        }
    }
    let aggs: Vec<Expr> = aggs
        .into_iter()
        .enumerate()
        .map(|(i, e)| e.alias(format!("__a{i}")))
        .collect();
    let groups: Vec<Expr> = group_cols.iter().map(|i| pcol(*i)).collect();
    let agg = LogicalPlanBuilder::from(scan)
        .aggregate(groups.clone(), aggs)?
        .build()?;
    let acol = |i: usize| Expr::Column(Column::new_unqualified(format!("__a{i}")));
    let mut out: Vec<Expr> = groups
        .iter()
        .zip(&fields)
        .map(|(g, (q, fl))| g.clone().alias_qualified(q.clone(), fl.name()))
        .collect();
    let mut ai = 0;
    for (k, fin) in finals.iter().enumerate() {
        let (q, fl) = a.schema.qualified_field(group_cols.len() + k);
        let e = match fin {
            Final::Sum(_) | Final::Min(_) | Final::Max(_) => {
                ai += 1;
                acol(ai - 1)
            }
            Final::Count(_) => {
                ai += 1;
                coalesce(vec![
                    acol(ai - 1),
                    Expr::Literal(ScalarValue::Int64(Some(0)), None),
                ])
            }
            Final::AvgFloat(..) => {
                ai += 2;
                Expr::BinaryExpr(datafusion::logical_expr::BinaryExpr::new(
                    Box::new(cast(acol(ai - 1), DataType::Float64)),
                    Operator::Divide,
                    Box::new(cast(acol(ai - 2), DataType::Float64)),
                ))
            }
            Final::AvgDecimal(_, _, sp, ss, tp, ts) => {
                ai += 2;
                let udf = avg_final_udf(*sp, *ss, *tp, *ts);
                Expr::ScalarFunction(ScalarFunction::new_udf(
                    Arc::new(udf),
                    vec![acol(ai - 1), acol(ai - 2)],
                ))
            }
        };
        out.push(cast(e, fl.data_type().clone()).alias_qualified(q.cloned(), fl.name()));
    }
    LogicalPlanBuilder::from(agg)
        .project(out)?
        .build()
        .map(Some)
}

/// DataFusion's decimal AVG from a merged sum and count: the sum scaled to
/// the result scale, divided by the count, truncated (as its accumulator).
fn avg_final_udf(sp: u8, ss: i8, tp: u8, ts: i8) -> datafusion::logical_expr::ScalarUDF {
    let f = Arc::new(
        move |args: &[ColumnarValue]| -> datafusion::error::Result<ColumnarValue> {
            let arrays = ColumnarValue::values_to_arrays(args)?;
            let (Some(sums), Some(counts)) = (
                arrays[0].as_any().downcast_ref::<Decimal128Array>(),
                arrays[1].as_any().downcast_ref::<Int64Array>(),
            ) else {
                return Err(DataFusionError::Internal(
                    "avg_final: argument types".into(),
                ));
            };
            let mul = 10i128.pow((ts - ss).max(0) as u32);
            let mut b = Decimal128Builder::with_capacity(sums.len());
            for i in 0..sums.len() {
                if sums.is_null(i) || counts.is_null(i) || counts.value(i) == 0 {
                    b.append_null();
                    continue;
                }
                let v = sums
                    .value(i)
                    .checked_mul(mul)
                    .ok_or_else(|| DataFusionError::Execution("numeric overflow in avg".into()))?;
                b.append_value(v / counts.value(i) as i128);
            }
            let a: ArrayRef = Arc::new(
                b.finish()
                    .with_precision_and_scale(tp, ts)
                    .map_err(|e| DataFusionError::ArrowError(Box::new(e), None))?,
            );
            Ok(ColumnarValue::Array(a))
        },
    );
    create_udf(
        "tessera_avg_final",
        vec![DataType::Decimal128(sp, ss), DataType::Int64],
        DataType::Decimal128(tp, ts),
        Volatility::Immutable,
        f,
    )
}

impl Compiler {
    fn alias(&mut self) -> String {
        self.next_alias += 1;
        format!("t{}", self.next_alias)
    }

    /// An aggregate whose GROUP BY includes the whole partition key (so no
    /// group spans partitions), with aggregates MariaDB computes exactly as
    /// DataFusion (SUM of exact numbers, COUNT, MIN, MAX): a derived table.
    fn compile_local_aggregate(&mut self, a: &Aggregate) -> Option<Frag> {
        let inner = self.compile(&a.input)?;
        let input = a.input.schema();
        let Dist::Hash {
            shards,
            parts,
            keys,
        } = &inner.dist
        else {
            return None;
        };
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
            let keys = keys.as_ref()?;
            let mut out = vec![];
            for (ty, at) in keys {
                let at: Vec<usize> = group_sources
                    .iter()
                    .enumerate()
                    .filter(|(_, s)| s.is_some_and(|s| at.contains(&s)))
                    .map(|(j, _)| j)
                    .collect();
                if at.is_empty() {
                    return None;
                }
                out.push((*ty, at));
            }
            Some(out)
        };
        if a.group_expr.is_empty() {
            return None;
        }
        let mut select = vec![];
        for g in &a.group_expr {
            select.push(render(g, input, &inner.cols)?);
        }
        for e in &a.aggr_expr {
            let e = match e {
                Expr::Alias(al) => al.expr.as_ref(),
                e => e,
            };
            let Expr::AggregateFunction(AggregateFunction { func, params }) = e else {
                return None;
            };
            if params.distinct
                || params.filter.is_some()
                || !params.order_by.is_empty()
                || params.args.len() != 1
            {
                return None;
            }
            let arg = &params.args[0];
            let t = arg.get_type(input).ok()?;
            let name = func.name().to_ascii_lowercase();
            let sql = match name.as_str() {
                "count" if matches!(arg, Expr::Literal(v, _) if !v.is_null()) => {
                    "COUNT(*)".to_string()
                }
                "count" => format!("COUNT({})", render(arg, input, &inner.cols)?),
                "sum" if is_exact_numeric(&t) => {
                    format!("SUM({})", render(arg, input, &inner.cols)?)
                }
                "min" | "max" if !t.is_floating() && sql_type_of(&t).is_some() => format!(
                    "{}({})",
                    name.to_uppercase(),
                    render(arg, input, &inner.cols)?
                ),
                _ => return None,
            };
            select.push(sql);
        }
        let alias = self.alias();
        let cols = (0..select.len())
            .map(|i| format!("{}.{}", quote_ident(&alias), quote_ident(&format!("c{i}"))))
            .collect();
        let select = select
            .into_iter()
            .enumerate()
            .map(|(i, s)| format!("{s} AS {}", quote_ident(&format!("c{i}"))))
            .collect();
        let group_by = format!(
            " GROUP BY {}",
            (1..=a.group_expr.len())
                .map(|i| i.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
        Some(Frag {
            cols,
            body: Body {
                tables: vec![(
                    alias,
                    FromItem::Derived {
                        select,
                        body: Box::new(inner.body),
                        group_by,
                    },
                )],
                conds: vec![],
                exists: vec![],
            },
            dist: Dist::Hash {
                shards: shards.clone(),
                parts: parts.clone(),
                keys: new_keys,
            },
            mirror_shard: inner.mirror_shard,
            router: inner.router,
            access: inner.access,
            log: inner.log,
        })
    }

    fn compile(&mut self, plan: &LogicalPlan) -> Option<Frag> {
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
                let all: Vec<String> = t
                    .columns
                    .iter()
                    .map(|c| format!("{}.{}", quote_ident(&alias), quote_ident(&c.name)))
                    .collect();
                let indices: Vec<usize> = match &ts.projection {
                    Some(p) => p.clone(),
                    None => (0..t.columns.len()).collect(),
                };
                let full =
                    DFSchema::try_from_qualified_schema(ts.table_name.clone(), &p.schema).ok()?;
                let conds: Vec<String> = ts
                    .filters
                    .iter()
                    .filter_map(|e| render(e, &full, &all))
                    .collect();
                let (dist, mirror_shard) = match &t.distribution {
                    Distribution::Mirror => (
                        Dist::Mirror,
                        p.partitions(&[])
                            .first()
                            .and_then(|i| t.partition_shards.get(*i as usize).copied()),
                    ),
                    Distribution::Single => (
                        Dist::Hash {
                            shards: t.partition_shards.clone(),
                            parts: [0].into(),
                            keys: None,
                        },
                        None,
                    ),
                    Distribution::Hash { .. } => {
                        let keys = t
                            .key_indexes()
                            .into_iter()
                            .map(|k| {
                                let at = indices
                                    .iter()
                                    .enumerate()
                                    .filter(|(_, i)| **i == k)
                                    .map(|(pos, _)| pos)
                                    .collect();
                                (t.columns[k].ty, at)
                            })
                            .collect();
                        (
                            Dist::Hash {
                                shards: t.partition_shards.clone(),
                                parts: p.partitions(&ts.filters).into_iter().collect(),
                                keys: Some(keys),
                            },
                            None,
                        )
                    }
                };
                Some(Frag {
                    cols: indices.iter().map(|i| all[*i].clone()).collect(),
                    body: Body {
                        tables: vec![(alias, FromItem::Table(t))],
                        conds,
                        exists: vec![],
                    },
                    dist,
                    mirror_shard,
                    router: p.router.clone(),
                    access: p.access.clone(),
                    log: p.log.clone(),
                })
            }
            LogicalPlan::SubqueryAlias(s) => self.compile(&s.input),
            LogicalPlan::Aggregate(a) => self.compile_local_aggregate(a),
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
                let cols: Option<Vec<String>> =
                    pr.expr.iter().map(|e| render(e, input, &f.cols)).collect();
                // Partition keys survive as plain column references.
                let sources: Vec<Option<usize>> = pr
                    .expr
                    .iter()
                    .map(|e| match e.clone().unalias() {
                        Expr::Column(c) => input.index_of_column(&c).ok(),
                        _ => None,
                    })
                    .collect();
                if let Dist::Hash {
                    keys: Some(keys), ..
                } = &mut f.dist
                {
                    for (_, at) in keys.iter_mut() {
                        *at = sources
                            .iter()
                            .enumerate()
                            .filter(|(_, s)| s.is_some_and(|s| at.contains(&s)))
                            .map(|(j, _)| j)
                            .collect();
                    }
                }
                f.cols = cols?;
                Some(f)
            }
            LogicalPlan::Join(j) => {
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
                for (a, b) in &j.on {
                    conds.push(format!(
                        "({} = {})",
                        render(a, ls, &l.cols)?,
                        render(b, rs, &r.cols)?
                    ));
                    if let (Expr::Column(a), Expr::Column(b)) = (a, b) {
                        if let (Ok(x), Ok(y)) = (ls.index_of_column(a), rs.index_of_column(b)) {
                            pairs.push((x, y));
                        }
                    }
                }
                let both = ls.join(rs).ok()?;
                let all_cols: Vec<String> = l.cols.iter().chain(&r.cols).cloned().collect();
                if let Some(fe) = &j.filter {
                    conds.push(render(fe, &both, &all_cols)?);
                }
                let (dist, mirror_shard) = colocate(&l, &r, &pairs, semi.is_some())?;
                let mut body = l.body;
                match semi {
                    None => {
                        body.tables.extend(r.body.tables);
                        body.conds.extend(r.body.conds);
                        body.exists.extend(r.body.exists);
                        body.conds.extend(conds);
                    }
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
                    mirror_shard: l.mirror_shard.or(r.mirror_shard),
                    router: l.router,
                    access: l.access,
                    log: l.log,
                })
                .map(|mut f| {
                    f.mirror_shard = f.mirror_shard.or(mirror_shard);
                    f
                })
            }
            _ => None,
        }
    }
}

/// Whether a join of `l` and `r` (on these left/right column position
/// pairs) can run inside each shard, and the resulting distribution.
fn colocate(
    l: &Frag,
    r: &Frag,
    pairs: &[(usize, usize)],
    semi: bool,
) -> Option<(Dist, Option<ShardId>)> {
    let shift = l.cols.len();
    match (&l.dist, &r.dist) {
        (Dist::Mirror, Dist::Mirror) => Some((Dist::Mirror, l.mirror_shard.or(r.mirror_shard))),
        (Dist::Hash { .. }, Dist::Mirror) => Some((l.dist.clone(), None)),
        // A mirror row must not meet only one partition's rows in EXISTS.
        (Dist::Mirror, Dist::Hash { .. }) if semi => None,
        (
            Dist::Mirror,
            Dist::Hash {
                shards,
                parts,
                keys,
            },
        ) => Some((
            Dist::Hash {
                shards: shards.clone(),
                parts: parts.clone(),
                keys: keys.as_ref().map(|k| {
                    k.iter()
                        .map(|(t, at)| (*t, at.iter().map(|i| i + shift).collect()))
                        .collect()
                }),
            },
            None,
        )),
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
            Some((
                Dist::Hash {
                    shards: s1.clone(),
                    parts: p1.intersection(p2).copied().collect(),
                    keys,
                },
                None,
            ))
        }
    }
}

/// The column type a shard result column is decoded as.
fn sql_type_of(t: &DataType) -> Option<SqlType> {
    Some(match t {
        DataType::Int8 | DataType::Int16 => SqlType::SmallInt,
        DataType::Int32 => SqlType::Integer,
        DataType::Int64 => SqlType::BigInt,
        DataType::Float32 => SqlType::Real,
        DataType::Float64 => SqlType::Double,
        DataType::Decimal128(p, s) if *s >= 0 => SqlType::Numeric {
            precision: *p,
            scale: *s as u8,
        },
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => SqlType::Text,
        DataType::Boolean => SqlType::Boolean,
        DataType::Date32 => SqlType::Date,
        DataType::Timestamp(TimeUnit::Microsecond, None) => SqlType::Timestamp,
        DataType::Binary => SqlType::Bytea,
        _ => return None,
    })
}

fn is_exact_numeric(t: &DataType) -> bool {
    t.is_integer() || matches!(t, DataType::Decimal128(..))
}

/// Renders `e` (over `input`, whose columns are `cols` in SQL) as MariaDB
/// SQL, or None when MariaDB could evaluate it differently from PostgreSQL
/// (and DataFusion).
fn render(e: &Expr, input: &DFSchema, cols: &[String]) -> Option<String> {
    let r = |x: &Expr| render(x, input, cols);
    let ty = |x: &Expr| x.get_type(input).ok();
    Some(match e {
        Expr::Column(c) => cols.get(input.index_of_column(c).ok()?)?.clone(),
        Expr::Literal(v, _) => literal_sql(v)?,
        Expr::Alias(a) => r(&a.expr)?,
        Expr::BinaryExpr(b) => {
            let op = match b.op {
                Operator::Eq => "=",
                Operator::NotEq => "<>",
                Operator::Lt => "<",
                Operator::LtEq => "<=",
                Operator::Gt => ">",
                Operator::GtEq => ">=",
                Operator::And => "AND",
                Operator::Or => "OR",
                // Exact arithmetic only: MariaDB's decimal +, -, * are exact
                // with PostgreSQL's result scale; division and floats are not.
                Operator::Plus | Operator::Minus | Operator::Multiply
                    if is_exact_numeric(&ty(&b.left)?) && is_exact_numeric(&ty(&b.right)?) =>
                {
                    match b.op {
                        Operator::Plus => "+",
                        Operator::Minus => "-",
                        _ => "*",
                    }
                }
                _ => return None,
            };
            format!("({} {op} {})", r(&b.left)?, r(&b.right)?)
        }
        Expr::Not(x) => format!("(NOT {})", r(x)?),
        Expr::IsNull(x) => format!("({} IS NULL)", r(x)?),
        Expr::IsNotNull(x) => format!("({} IS NOT NULL)", r(x)?),
        Expr::Negative(x) if is_exact_numeric(&ty(x)?) => format!("(-{})", r(x)?),
        Expr::InList(l) => {
            let items: Option<Vec<String>> = l.list.iter().map(r).collect();
            format!(
                "({} {}IN ({}))",
                r(&l.expr)?,
                if l.negated { "NOT " } else { "" },
                items?.join(", ")
            )
        }
        Expr::Between(b) => format!(
            "({} {}BETWEEN {} AND {})",
            r(&b.expr)?,
            if b.negated { "NOT " } else { "" },
            r(&b.low)?,
            r(&b.high)?
        ),
        Expr::Like(l) => {
            // No escapes in the pattern: MariaDB's and PostgreSQL's default
            // escape handling then cannot differ.
            let Expr::Literal(
                ScalarValue::Utf8(Some(p))
                | ScalarValue::Utf8View(Some(p))
                | ScalarValue::LargeUtf8(Some(p)),
                _,
            ) = l.pattern.as_ref()
            else {
                return None;
            };
            if l.case_insensitive || l.escape_char.is_some() || p.contains('\\') {
                return None;
            }
            format!(
                "({} {}LIKE {})",
                r(&l.expr)?,
                if l.negated { "NOT " } else { "" },
                r(&l.pattern)?
            )
        }
        Expr::Case(c) => {
            let mut s = "(CASE".to_string();
            if let Some(x) = &c.expr {
                s.push(' ');
                s.push_str(&r(x)?);
            }
            for (w, t) in &c.when_then_expr {
                s.push_str(&format!(" WHEN {} THEN {}", r(w)?, r(t)?));
            }
            if let Some(x) = &c.else_expr {
                s.push_str(&format!(" ELSE {}", r(x)?));
            }
            s.push_str(" END)");
            s
        }
        Expr::Cast(c) => {
            let from = ty(&c.expr)?;
            let same = match (&from, c.field.data_type()) {
                (f, t) if f == t => true,
                (f, t) if f.is_integer() && t.is_integer() => {
                    int_width(f)? <= int_width(t)? && f.is_signed_integer()
                }
                (f, &DataType::Decimal128(p, s)) if f.is_integer() => (p as i32 - s as i32) >= 19,
                (&DataType::Decimal128(p1, s1), &DataType::Decimal128(p2, s2)) => {
                    s2 >= s1 && (p2 as i32 - s2 as i32) >= (p1 as i32 - s1 as i32)
                }
                (
                    DataType::Utf8 | DataType::Utf8View | DataType::LargeUtf8,
                    DataType::Utf8 | DataType::Utf8View | DataType::LargeUtf8,
                ) => true,
                _ => false,
            };
            if !same {
                return None;
            }
            r(&c.expr)?
        }
        Expr::ScalarFunction(f) => {
            let name = f.func.name().to_ascii_lowercase();
            match (name.as_str(), f.args.as_slice()) {
                ("date_part", [Expr::Literal(part, _), x])
                    if matches!(ty(x)?, DataType::Date32) =>
                {
                    let unit = match part.to_string().to_ascii_lowercase().as_str() {
                        "year" => "YEAR",
                        "month" => "MONTH",
                        "day" => "DAY",
                        _ => return None,
                    };
                    format!("EXTRACT({unit} FROM {})", r(x)?)
                }
                ("substr" | "substring", [x, Expr::Literal(start, _), Expr::Literal(len, _)])
                    if matches!(ty(x)?, DataType::Utf8 | DataType::Utf8View) =>
                {
                    let (s, n) = (int_literal(start)?, int_literal(len)?);
                    if s < 1 || n < 0 {
                        return None;
                    }
                    format!("SUBSTRING({}, {s}, {n})", r(x)?)
                }
                _ => return None,
            }
        }
        _ => return None,
    })
}

fn int_width(t: &DataType) -> Option<u8> {
    Some(match t {
        DataType::Int8 => 8,
        DataType::Int16 => 16,
        DataType::Int32 => 32,
        DataType::Int64 => 64,
        _ => return None,
    })
}

fn int_literal(v: &ScalarValue) -> Option<i64> {
    match v {
        ScalarValue::Int64(Some(i)) => Some(*i),
        ScalarValue::Int32(Some(i)) => Some(*i as i64),
        _ => None,
    }
}

/// The per-partition queries of a pushed fragment, as a table.
pub struct ShardQueryProvider {
    schema: SchemaRef,
    types: Vec<SqlType>,
    queries: Vec<(ShardId, String)>,
    router: Arc<Router>,
    access: SharedAccess,
    log: ScanLog,
}

impl fmt::Debug for ShardQueryProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ShardQuery({} partitions)", self.queries.len())
    }
}

#[async_trait]
impl TableProvider for ShardQueryProvider {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
    fn table_type(&self) -> TableType {
        TableType::Temporary
    }
    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> Result<Vec<TableProviderFilterPushDown>, DataFusionError> {
        Ok(vec![
            TableProviderFilterPushDown::Unsupported;
            filters.len()
        ])
    }
    async fn scan(
        &self,
        _state: &dyn Session,
        projection: Option<&Vec<usize>>,
        _filters: &[Expr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>, DataFusionError> {
        let streams = shard_streams(
            &self.router,
            &self.access,
            &self.log,
            &self.schema,
            &self.types,
            self.queries.clone(),
        );
        Ok(Arc::new(StreamingTableExec::try_new(
            self.schema.clone(),
            streams,
            projection,
            vec![],
            false,
            limit,
        )?))
    }
}
