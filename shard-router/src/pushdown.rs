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
//! (see [`crate::expr_sql::render`]); anything else leaves the subtree to DataFusion, so
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

use crate::expr_sql::{is_exact_numeric, render};
use crate::render::physical_object;
use crate::scan::{arrow_type, shard_streams, ScanContext, ShardTableProvider};
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
#[derive(Clone)]
struct Frag {
    /// SQL of each output column, by position in the subtree's schema.
    cols: Vec<String>,
    body: Body,
    dist: Dist,
    router: Arc<Router>,
}

impl Frag {
    /// (shard, partition) pairs the fragment's query runs on.
    fn targets(&self) -> Vec<(ShardId, u32)> {
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
            let Some(f) = c.compile(&a.input) else {
                return Ok(None);
            };
            // Groups within partitions: the whole aggregate runs in the shards.
            match c.local_aggregate(a, f.clone()) {
                Some(whole_agg) => whole(node, whole_agg).map(Some),
                None => push_aggregate(a, f),
            }
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
    scan_plan(&f, &aliased(&f.cols), "", "", &fields_of(node.schema()))
}

/// A SELECT list naming its items `c0`, `c1`, ... (the scan's columns).
fn aliased(items: &[String]) -> Vec<String> {
    items
        .iter()
        .enumerate()
        .map(|(i, s)| format!("{s} AS {}", quote_ident(&format!("c{i}"))))
        .collect()
}

type QualifiedFields = Vec<(Option<TableReference>, Arc<Field>)>;

fn fields_of(schema: &DFSchema) -> QualifiedFields {
    schema
        .iter()
        .map(|(q, f)| (q.cloned(), f.clone()))
        .collect()
}

/// ` GROUP BY 1, 2, ..., n` (empty for n = 0).
fn group_by_ordinals(n: usize) -> String {
    if n == 0 {
        return String::new();
    }
    let ordinals: Vec<String> = (1..=n).map(|i| i.to_string()).collect();
    format!(" GROUP BY {}", ordinals.join(", "))
}

/// The function name and argument of a plain one-argument aggregate (no
/// DISTINCT, FILTER or ORDER BY).
fn simple_aggregate(e: &Expr) -> Option<(String, &Expr)> {
    let Expr::AggregateFunction(AggregateFunction { func, params }) = unaliased(e) else {
        return None;
    };
    if params.distinct
        || params.filter.is_some()
        || !params.order_by.is_empty()
        || params.args.len() != 1
    {
        return None;
    }
    Some((func.name().to_ascii_lowercase(), &params.args[0]))
}

/// The SQL argument of an aggregate: `*` for COUNT of a constant.
fn aggregate_arg_sql(name: &str, arg: &Expr, input: &DFSchema, cols: &[String]) -> Option<String> {
    if name == "count" && matches!(arg, Expr::Literal(v, _) if !v.is_null()) {
        Some("*".to_string())
    } else {
        render(arg, input, cols)
    }
}

fn unaliased(e: &Expr) -> &Expr {
    match e {
        Expr::Alias(a) => unaliased(&a.expr),
        e => e,
    }
}

/// Positions (in a new output) whose source column is one of `at`.
fn surviving(at: &[usize], sources: &[Option<usize>]) -> Vec<usize> {
    sources
        .iter()
        .enumerate()
        .filter(|(_, s)| s.is_some_and(|s| at.contains(&s)))
        .map(|(j, _)| j)
        .collect()
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
    let tail = format!(" ORDER BY {} LIMIT {n}", order.join(", "));
    let scan = scan_plan(&f, &aliased(&f.cols), "", &tail, &fields_of(input))?;
    Ok(Some(LogicalPlan::Sort(Sort {
        expr: s.expr.clone(),
        input: Arc::new(scan),
        fetch: s.fetch,
    })))
}

/// An aggregate split in two: partial aggregates per group in the shards,
/// merged by a final aggregate in DataFusion that reproduces the original
/// output (names, qualifiers and types).
fn push_aggregate(a: &Aggregate, f: Frag) -> datafusion::error::Result<Option<LogicalPlan>> {
    use datafusion::functions::expr_fn::coalesce;
    use datafusion::functions_aggregate::expr_fn::{max, min, sum};
    let input = a.input.schema();
    let out_fields = fields_of(&a.schema);
    // The shard query: group columns keep their output names, partial
    // aggregates are named __p<i>.
    let mut select = vec![];
    let mut fields: QualifiedFields = vec![];
    let mut groups = vec![];
    for (g, (q, fl)) in a.group_expr.iter().zip(&out_fields) {
        let Some(sql) = render(g, input, &f.cols) else {
            return Ok(None);
        };
        select.push(sql);
        fields.push((q.clone(), fl.clone()));
        groups.push(Expr::Column(Column::new(q.clone(), fl.name())));
    }
    let mut out: Vec<Expr> = groups
        .iter()
        .zip(&out_fields)
        .map(|(g, (q, fl))| g.clone().alias_qualified(q.clone(), fl.name()))
        .collect();
    // The final aggregates, named __a<i>.
    let mut finals: Vec<Expr> = vec![];
    for (e, (q, fl)) in a.aggr_expr.iter().zip(&out_fields[groups.len()..]) {
        let Some((name, arg)) = simple_aggregate(e) else {
            return Ok(None);
        };
        let Ok(arg_type) = arg.get_type(input) else {
            return Ok(None);
        };
        let Some(arg_sql) = aggregate_arg_sql(&name, arg, input, &f.cols) else {
            return Ok(None);
        };
        let mut partial = |sql: String, ty: DataType| {
            let name = format!("__p{}", select.len());
            select.push(sql);
            fields.push((None, Arc::new(Field::new(&name, ty, true))));
            Expr::Column(Column::new_unqualified(name))
        };
        let mut merged = |e: Expr| {
            let name = format!("__a{}", finals.len());
            finals.push(e.alias(&name));
            Expr::Column(Column::new_unqualified(name))
        };
        let sum_type = match &arg_type {
            t if t.is_integer() => Some(DataType::Int64),
            DataType::Float32 | DataType::Float64 => Some(DataType::Float64),
            DataType::Decimal128(_, s) => Some(DataType::Decimal128(38, *s)),
            _ => None,
        };
        let result = match (name.as_str(), sum_type) {
            ("sum", Some(t)) => merged(sum(partial(format!("SUM({arg_sql})"), t))),
            ("count", _) => coalesce(vec![
                merged(sum(partial(format!("COUNT({arg_sql})"), DataType::Int64))),
                Expr::Literal(ScalarValue::Int64(Some(0)), None),
            ]),
            ("min" | "max", _) if sql_type_of(&arg_type).is_some() && !arg_type.is_floating() => {
                let p = partial(format!("{}({arg_sql})", name.to_uppercase()), arg_type);
                merged(if name == "min" { min(p) } else { max(p) })
            }
            ("avg", Some(t)) => {
                let s = merged(sum(partial(format!("SUM({arg_sql})"), t)));
                let c = merged(sum(partial(format!("COUNT({arg_sql})"), DataType::Int64)));
                match arg_type {
                    DataType::Decimal128(p, sc) => Expr::ScalarFunction(ScalarFunction::new_udf(
                        Arc::new(avg_final_udf(sc, (p + 4).min(38), (sc + 4).min(38))),
                        vec![s, c],
                    )),
                    _ => Expr::BinaryExpr(datafusion::logical_expr::BinaryExpr::new(
                        Box::new(cast(s, DataType::Float64)),
                        Operator::Divide,
                        Box::new(cast(c, DataType::Float64)),
                    )),
                }
            }
            _ => return Ok(None),
        };
        out.push(cast(result, fl.data_type().clone()).alias_qualified(q.clone(), fl.name()));
    }
    let scan = scan_plan(
        &f,
        &aliased(&select),
        &group_by_ordinals(groups.len()),
        "",
        &fields,
    )?;
    LogicalPlanBuilder::from(scan)
        .aggregate(groups, finals)?
        .project(out)?
        .build()
        .map(Some)
}

/// DataFusion's decimal AVG from a merged sum (`Decimal128(38, ss)`) and
/// count: the sum scaled to the result scale, divided by the count,
/// truncated (as its accumulator does).
fn avg_final_udf(ss: i8, tp: u8, ts: i8) -> datafusion::logical_expr::ScalarUDF {
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
        vec![DataType::Decimal128(38, ss), DataType::Int64],
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
    fn local_aggregate(&mut self, a: &Aggregate, inner: Frag) -> Option<Frag> {
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
            let exact = match name.as_str() {
                "count" => true,
                "sum" => is_exact_numeric(&t),
                "min" | "max" => !t.is_floating() && sql_type_of(&t).is_some(),
                _ => false,
            };
            if !exact {
                return None;
            }
            let arg_sql = aggregate_arg_sql(&name, arg, input, &inner.cols)?;
            select.push(format!("{}({arg_sql})", name.to_uppercase()));
        }
        let alias = self.alias();
        let cols = (0..select.len())
            .map(|i| format!("{}.{}", quote_ident(&alias), quote_ident(&format!("c{i}"))))
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
            },
            dist: Dist::Hash {
                shards: shards.clone(),
                parts: parts.clone(),
                keys: new_keys,
            },
            router: inner.router,
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
                let dist = match &t.distribution {
                    Distribution::Mirror => Dist::Mirror {
                        shard: p
                            .partitions(&[])
                            .first()
                            .and_then(|i| t.partition_shards.get(*i as usize).copied()),
                    },
                    Distribution::Single => Dist::Hash {
                        shards: t.partition_shards.clone(),
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
                            shards: t.partition_shards.clone(),
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
                let cols: Option<Vec<String>> =
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
                let dist = colocate(&l, &r, &pairs, semi.is_some())?;
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
                    router: l.router,
                })
            }
            _ => None,
        }
    }
}

/// Whether a join of `l` and `r` (on these left/right column position
/// pairs) can run inside each shard, and the resulting distribution.
fn colocate(l: &Frag, r: &Frag, pairs: &[(usize, usize)], semi: bool) -> Option<Dist> {
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

/// The per-partition queries of a pushed fragment, as a table.
pub struct ShardQueryProvider {
    schema: SchemaRef,
    types: Vec<SqlType>,
    queries: Vec<(ShardId, String)>,
    router: Arc<Router>,
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
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        _filters: &[Expr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>, DataFusionError> {
        let cx = ScanContext::of(state);
        let streams = shard_streams(
            &self.router,
            &cx.access,
            &cx.log,
            &self.schema,
            &self.types,
            self.queries.clone(),
            // Locking scans are never pushed down (see `compile`).
            false,
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
