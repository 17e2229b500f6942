//! Display scales of numeric quotients: an analyzer rule (after
//! DataFusion's type coercion) that makes numeric division and numeric
//! `avg` PostgreSQL's ([`crate::numeric`]) and carries the scale each
//! value is printed with beside it, as a hidden companion column.
//!
//! * every decimal `a / b` becomes `pg_numeric_div(a, b, scale_a,
//!   scale_b)`, where a scale is the operand's type scale or, for a
//!   quotient, its companion;
//! * every numeric `avg(x)` becomes `sum(x)` and `count(x)` (which the
//!   shards compute, like any sum and count) and, in a projection above,
//!   their quotient;
//! * a projection whose output holds a quotient gets a companion column
//!   `__pg_dscale_<n>` computed by `pg_numeric_div_scale`; filters, sorts,
//!   limits, joins, aliases and windows pass companions up;
//!   `+ - % ` take the larger scale, `*` the sum, `round`, casts and
//!   comparisons a fixed one;
//! * the root gets `__pg_out_scale_<k>` for each output column `k` with a
//!   companion: the execution prints those columns with them and drops
//!   them.
//!
//! DISTINCT and scalar subqueries in a select list carry them too
//! ([`lift`]). Where a quotient's scale would have to cross something not
//! modelled here (a quotient grouped by, cast to text, given to most
//! functions), the statement is refused with 0A000: PostgreSQL's answer or
//! none.

use std::sync::Arc;

use datafusion::arrow::datatypes::DataType;
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::common::{Column, DFSchema};
use datafusion::error::{DataFusionError, Result};
use datafusion::functions_aggregate::expr_fn::{count, sum};
use datafusion::logical_expr::expr::{
    AggregateFunction, AggregateFunctionParams, ScalarFunction, WindowFunction,
    WindowFunctionParams,
};
use datafusion::logical_expr::{
    cast, lit, Aggregate, Distinct, Expr, ExprSchemable, LogicalPlan, Projection, SubqueryAlias,
    Window, WindowFunctionDefinition,
};
use datafusion::optimizer::AnalyzerRule;

mod exprs;
mod lift;
mod union;
mod variance;

pub(crate) use exprs::decimal_scale;
pub(crate) use variance::{Statistic, STATISTICS};

use crate::numeric::{div_scale_udf, div_udf, numeric_avg};
use exprs::{divisions, dynamic, node_divisions, output_columns, refuse, scale_of, Companions};

/// The prefix of the root's companion columns; `_<k>` names the output
/// column whose scale it holds.
pub const OUTPUT_SCALE: &str = "__pg_out_scale_";
const COMPANION: &str = "__pg_dscale_";

/// The rule; see the module documentation.
#[derive(Debug, Default)]
pub struct PgNumeric;
struct Pass {
    next: usize,
    /// Subqueries whose result is a quotient: its scale leaves them only
    /// into a select list ([`lift::lift_subqueries`]).
    quotient_subqueries: Vec<lift::QuotientSubquery>,
}

/// An avg to rewrite: the position of its output column, the argument's
/// scale, and the names of its sum and count.
struct AvgSplit {
    at: usize,
    scale: i8,
    sum: String,
    count: String,
    /// A variance or standard deviation instead: the name of its sum of
    /// squares, and which statistic.
    var: Option<(String, variance::Statistic)>,
}

impl Pass {
    fn companion_name(&mut self) -> String {
        self.next += 1;
        format!("{COMPANION}{}", self.next)
    }

    /// `sum` and `count` for a numeric avg over `arg` of type `t`.
    fn split_avg(&mut self, arg: &Expr, t: &DataType) -> (Expr, Expr, i8, String, String) {
        self.next += 1;
        let n = self.next;
        let scale = decimal_scale(t).unwrap_or(0);
        let arg = if t.is_integer() {
            cast(arg.clone(), DataType::Int64)
        } else {
            arg.clone()
        };
        (
            sum(arg.clone()),
            count(arg),
            scale,
            format!("__pg_avg_sum_{n}"),
            format!("__pg_avg_count_{n}"),
        )
    }

    /// The projection over `input` (a rewritten aggregate or window) that
    /// puts the avgs back as quotients, with companions.
    fn unsplit(
        &mut self,
        original: &DFSchema,
        input: LogicalPlan,
        splits: &[AvgSplit],
        mut comps: Companions,
    ) -> Result<(LogicalPlan, Companions)> {
        // Companions of `input` not among `original`'s fields (a window's
        // input companions are; an aggregate's own sums' are not).
        let carried: Vec<Expr> = comps
            .values()
            .filter(|c| matches!(c, Expr::Column(k) if !original.has_column(k)))
            .cloned()
            .collect();
        let mut exprs = vec![];
        let mut extra = vec![];
        for (i, (q, f)) in original.iter().enumerate() {
            let Some(s) = splits.iter().find(|s| s.at == i) else {
                exprs.push(Expr::Column(Column::new(q.cloned(), f.name())));
                continue;
            };
            if let Some((squares, stat)) = &s.var {
                let col = |n: &str| Expr::Column(Column::new_unqualified(n));
                let (value, scale) =
                    variance::finish(col(&s.count), col(&s.sum), col(squares), s.scale, *stat)?;
                exprs.push(value.alias_qualified(q.cloned(), f.name()));
                let name = self.companion_name();
                extra.push(scale.alias(&name));
                comps.insert(
                    Column::new(q.cloned(), f.name()),
                    Expr::Column(Column::new_unqualified(name)),
                );
                continue;
            }
            let args = vec![
                cast(
                    Expr::Column(Column::new_unqualified(&s.sum)),
                    DataType::Decimal128(38, s.scale),
                ),
                cast(
                    Expr::Column(Column::new_unqualified(&s.count)),
                    DataType::Decimal128(38, 0),
                ),
                lit(s.scale as i32),
                lit(0i32),
            ];
            exprs.push(
                Expr::ScalarFunction(ScalarFunction::new_udf(div_udf(), args.clone()))
                    .alias_qualified(q.cloned(), f.name()),
            );
            let name = self.companion_name();
            extra.push(
                Expr::ScalarFunction(ScalarFunction::new_udf(div_scale_udf(), args)).alias(&name),
            );
            comps.insert(
                Column::new(q.cloned(), f.name()),
                Expr::Column(Column::new_unqualified(name)),
            );
        }
        exprs.extend(carried);
        exprs.extend(extra);
        let p = Projection::try_new(exprs, Arc::new(input))?;
        Ok((LogicalPlan::Projection(p), comps))
    }

    fn plan(&mut self, plan: LogicalPlan) -> Result<(LogicalPlan, Companions)> {
        if matches!(plan, LogicalPlan::Explain(_) | LogicalPlan::Analyze(_)) {
            return Ok((plan, Companions::new()));
        }
        let mut below: Vec<Companions> = vec![];
        let plan = plan
            .map_children(|c| {
                let (p, m) = self.plan(c)?;
                below.push(m);
                Ok(Transformed::yes(p))
            })?
            .data;
        // A union is rebuilt from its inputs below (one of which may have
        // grown a companion).
        let plan = if below.is_empty() || matches!(plan, LogicalPlan::Union(_)) {
            plan
        } else {
            plan.recompute_schema()?
        };
        // Subqueries: their values are PostgreSQL's; their scales do not
        // leave them (a scalar subquery's is refused as a result column).
        let plan = plan
            .map_subqueries(|s| {
                let LogicalPlan::Subquery(mut sq) = s else {
                    return Ok(Transformed::no(s));
                };
                let inner = Arc::unwrap_or_clone(sq.subquery);
                let columns = output_columns(inner.schema());
                let (inner, comps) = self.plan(inner)?;
                // Companions are dropped: a subquery's columns are its own
                // (a scalar one's scale is lifted where a select list
                // prints it).
                sq.subquery = if comps.is_empty() {
                    Arc::new(inner)
                } else {
                    let inner = Arc::new(inner);
                    let p = Arc::new(LogicalPlan::Projection(Projection::try_new(
                        columns.clone(),
                        inner.clone(),
                    )?));
                    if let [Expr::Column(c)] = columns.as_slice() {
                        if let Some(scale) = comps.get(c) {
                            self.quotient_subqueries.push(lift::QuotientSubquery {
                                plain: p.clone(),
                                inner,
                                value: Expr::Column(c.clone()),
                                scale: scale.clone(),
                            });
                        }
                    }
                    p
                };
                Ok(Transformed::yes(LogicalPlan::Subquery(sq)))
            })?
            .data;
        let merged: Companions = below.iter().flat_map(|m| m.clone()).collect();
        match plan {
            LogicalPlan::Projection(p) => self.projection(p, merged),
            LogicalPlan::Filter(_) | LogicalPlan::Sort(_) | LogicalPlan::Limit(_) => {
                Ok((node_divisions(plan, &merged)?, merged))
            }
            LogicalPlan::Repartition(_) => Ok((plan, merged)),
            LogicalPlan::Join(_) => Ok((node_divisions(plan, &merged)?, merged)),
            LogicalPlan::SubqueryAlias(a) => {
                let alias = a.alias.clone();
                let comps = merged
                    .into_iter()
                    .map(|(c, e)| {
                        let e = match e {
                            Expr::Column(k) => {
                                Expr::Column(Column::new(Some(alias.clone()), k.name))
                            }
                            e => e,
                        };
                        (Column::new(Some(alias.clone()), c.name), e)
                    })
                    .collect();
                Ok((
                    LogicalPlan::SubqueryAlias(SubqueryAlias::try_new(a.input, alias)?),
                    comps,
                ))
            }
            LogicalPlan::Union(u) => {
                let mut name = || self.companion_name();
                union::union(u, &below, &mut name)
            }
            LogicalPlan::Values(v) => {
                let mut name = || self.companion_name();
                lift::values(v, &mut name)
            }
            LogicalPlan::Distinct(Distinct::All(input)) if !merged.is_empty() => {
                lift::distinct(input, merged)
            }
            LogicalPlan::Aggregate(a) => self.aggregate(a, &merged),
            LogicalPlan::Window(w) => self.window(w, merged),
            other => {
                if !merged.is_empty() {
                    return Err(refuse(&format!("{}", other.display())));
                }
                let node = node_divisions(other, &merged)?;
                let mut found = false;
                let _ = node.apply_expressions(|e| {
                    found |= dynamic(e, node.schema(), &Companions::new());
                    Ok(TreeNodeRecursion::Continue)
                });
                if found {
                    return Err(refuse(&format!("{}", node.display())));
                }
                Ok((node, Companions::new()))
            }
        }
    }

    /// A projection: its quotient subqueries lifted, its divisions made
    /// PostgreSQL's, and a companion for each output with a per-row scale.
    fn projection(
        &mut self,
        mut p: Projection,
        mut merged: Companions,
    ) -> Result<(LogicalPlan, Companions)> {
        let found = &self.quotient_subqueries;
        if p.expr.iter().try_fold(false, |a, e| {
            Ok::<_, DataFusionError>(a || lift::reads_quotient_subquery(e, found)?)
        })? {
            let found = std::mem::take(&mut self.quotient_subqueries);
            let mut name = || self.companion_name();
            p = lift::lift_subqueries(p, &found, &mut name, &mut merged)?;
            self.quotient_subqueries = found;
        }
        let schema = p.input.schema().clone();
        let node = node_divisions(LogicalPlan::Projection(p), &merged)?;
        let LogicalPlan::Projection(p) = node else {
            return Err(DataFusionError::Internal("projection expected".into()));
        };
        let mut comps = Companions::new();
        let mut extra = vec![];
        let over_union = matches!(p.input.as_ref(), LogicalPlan::Union(_))
            || lift::is_companion_distinct(&p.input);
        for (i, e) in p.expr.iter().enumerate() {
            let kept = match over_union {
                true => lift::coerced_companion(e, &schema, &merged),
                false => None,
            };
            if let Some(s) = kept
                .map(Ok)
                .or_else(|| scale_of(e, &schema, &merged).transpose())
            {
                let s = s?;
                let name = self.companion_name();
                extra.push(s.alias(&name));
                let (q, f) = p.schema.qualified_field(i);
                comps.insert(
                    Column::new(q.cloned(), f.name()),
                    Expr::Column(Column::new_unqualified(name)),
                );
            }
        }
        if extra.is_empty() {
            return Ok((LogicalPlan::Projection(p), comps));
        }
        let mut exprs = p.expr;
        exprs.extend(extra);
        Ok((
            LogicalPlan::Projection(Projection::try_new(exprs, p.input)?),
            comps,
        ))
    }

    fn aggregate(&mut self, a: Aggregate, below: &Companions) -> Result<(LogicalPlan, Companions)> {
        let input_schema = a.input.schema().clone();
        let original = a.schema.clone();
        let keep_name = |e: Expr, i: usize| -> Result<Expr> {
            let t = divisions(e, &input_schema, below)?;
            Ok(if t.transformed {
                let (q, f) = original.qualified_field(i);
                t.data.alias_qualified(q.cloned(), f.name())
            } else {
                t.data
            })
        };
        let group_expr = a
            .group_expr
            .iter()
            .enumerate()
            .map(|(i, g)| keep_name(g.clone(), i))
            .collect::<Result<Vec<_>>>()?;
        if group_expr.iter().any(|g| dynamic(g, &input_schema, below)) {
            return Err(refuse("GROUP BY"));
        }
        let n_groups = original.fields().len() - a.aggr_expr.len();
        let mut aggr = vec![];
        let mut splits = vec![];
        let mut carried = Companions::new();
        for (j, e) in a.aggr_expr.iter().enumerate() {
            let e = keep_name(e.clone(), n_groups + j)?;
            let inner = match &e {
                Expr::Alias(al) => al.expr.as_ref(),
                e => e,
            };
            if let Expr::AggregateFunction(AggregateFunction { func, params }) = inner {
                let name = func.name();
                if let Some(m) = lift::companion_aggregate(name, params, &input_schema, below)? {
                    let cname = self.companion_name();
                    let (q, f) = original.qualified_field(n_groups + j);
                    carried.insert(
                        Column::new(q.cloned(), f.name()),
                        Expr::Column(Column::new_unqualified(&cname)),
                    );
                    aggr.push(e.clone());
                    aggr.push(m.alias(cname));
                    continue;
                }
                if name != "count" && params.args.iter().any(|x| dynamic(x, &input_schema, below)) {
                    return Err(refuse(&format!("the aggregate {name}")));
                }
                let t = params
                    .args
                    .first()
                    .map(|x| x.get_type(&input_schema))
                    .transpose()?;
                let stat = variance::statistic(func.name());
                if (func.name() == "avg" || stat.is_some()) && t.as_ref().is_some_and(numeric_avg) {
                    let t = t.unwrap_or(DataType::Int64);
                    let (s, c, scale, sn, cn) = self.split_avg(&params.args[0], &t);
                    let with = |x: Expr| -> Expr {
                        match x {
                            Expr::AggregateFunction(mut f) => {
                                f.params.distinct = params.distinct;
                                f.params.filter = params.filter.clone();
                                Expr::AggregateFunction(f)
                            }
                            x => x,
                        }
                    };
                    aggr.push(with(s).alias(&sn));
                    aggr.push(with(c).alias(&cn));
                    let var = stat.map(|stat| {
                        let name = format!("{sn}_squares");
                        aggr.push(with(variance::sum_of_squares(&params.args[0], &t)).alias(&name));
                        (name, stat)
                    });
                    splits.push(AvgSplit {
                        at: n_groups + j,
                        scale,
                        sum: sn,
                        count: cn,
                        var,
                    });
                    continue;
                }
            }
            aggr.push(e);
        }
        if splits.is_empty() {
            let node = Aggregate::try_new(a.input, group_expr, aggr)?;
            return Ok((LogicalPlan::Aggregate(node), carried));
        }
        let node = LogicalPlan::Aggregate(Aggregate::try_new(a.input, group_expr, aggr)?);
        self.unsplit(&original, node, &splits, carried)
    }

    fn window(&mut self, w: Window, below: Companions) -> Result<(LogicalPlan, Companions)> {
        let input_schema = w.input.schema().clone();
        let original = w.schema.clone();
        let n_input = input_schema.fields().len();
        let mut exprs = vec![];
        let mut splits = vec![];
        let mut leads = vec![];
        for (j, e) in w.window_expr.iter().enumerate() {
            // A rewritten window expression keeps its column's name: the
            // nodes above (a sort by `rank() OVER (ORDER BY a / b)`)
            // name it so.
            let t = divisions(e.clone(), &input_schema, &below)?;
            let e = if t.transformed && !matches!(t.data, Expr::Alias(_)) {
                let (q, f) = original.qualified_field(n_input + j);
                t.data.alias_qualified(q.cloned(), f.name())
            } else {
                t.data
            };
            let inner = match &e {
                Expr::Alias(al) => al.expr.as_ref(),
                e => e,
            };
            if let Expr::WindowFunction(wf) = inner {
                let WindowFunctionParams { args, .. } = &wf.params;
                if args.iter().any(|x| dynamic(x, &input_schema, &below)) {
                    return Err(refuse(&format!("the window function {}", wf.fun)));
                }
                let (q, f) = original.qualified_field(n_input + j);
                let column = Column::new(q.cloned(), f.name());
                leads.extend(lift::lead_default(wf, column, &input_schema)?);
                let t = args
                    .first()
                    .map(|x| x.get_type(&input_schema))
                    .transpose()?;
                if let (WindowFunctionDefinition::AggregateUDF(f), Some(t)) = (&wf.fun, &t) {
                    let stat = variance::statistic(f.name());
                    if (f.name() == "avg" || stat.is_some()) && numeric_avg(t) {
                        let (s, c, scale, sn, cn) = self.split_avg(&args[0], t);
                        let over = |agg: Expr| -> Result<Expr> {
                            let Expr::AggregateFunction(AggregateFunction {
                                func,
                                params: AggregateFunctionParams { args, .. },
                            }) = agg
                            else {
                                return Err(DataFusionError::Internal("aggregate expected".into()));
                            };
                            let mut p = wf.params.clone();
                            p.args = args;
                            Ok(Expr::WindowFunction(Box::new(WindowFunction {
                                fun: WindowFunctionDefinition::AggregateUDF(func),
                                params: p,
                            })))
                        };
                        exprs.push(over(s)?.alias(&sn));
                        exprs.push(over(c)?.alias(&cn));
                        let var = match stat {
                            Some(stat) => {
                                let name = format!("{sn}_squares");
                                let q = variance::sum_of_squares(&args[0], t);
                                exprs.push(over(q)?.alias(&name));
                                Some((name, stat))
                            }
                            None => None,
                        };
                        splits.push(AvgSplit {
                            at: n_input + j,
                            scale,
                            sum: sn,
                            count: cn,
                            var,
                        });
                        continue;
                    }
                }
            }
            exprs.push(e);
        }
        let markers: Vec<String> = leads.iter().map(|_| self.companion_name()).collect();
        for (l, m) in leads.iter().zip(&markers) {
            exprs.push(l.marker.clone().alias(m));
        }
        let mut node = LogicalPlan::Window(Window::try_new(exprs, w.input)?);
        let mut below = below;
        if !leads.is_empty() {
            let mut name = || self.companion_name();
            node = lift::lead_companions(node, &leads, &markers, &mut name, &mut below)?;
        }
        if splits.is_empty() {
            return Ok((node, below));
        }
        self.unsplit(&original, node, &splits, below)
    }
}

impl AnalyzerRule for PgNumeric {
    fn name(&self) -> &str {
        "tessera_pg_numeric"
    }

    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> Result<LogicalPlan> {
        let original = plan.schema().clone();
        let (plan, comps) = Pass {
            next: 0,
            quotient_subqueries: vec![],
        }
        .plan(plan)?;
        let exprs = output_columns(&original);
        let mut extra = vec![];
        for (k, (q, f)) in original.iter().enumerate() {
            if let Some(s) = comps.get(&Column::new(q.cloned(), f.name())) {
                extra.push(s.clone().alias(format!("{OUTPUT_SCALE}{k}")));
            }
        }
        let mut exprs = exprs;
        if extra.is_empty() {
            return Ok(plan);
        }
        exprs.extend(extra);
        Ok(LogicalPlan::Projection(Projection::try_new(
            exprs,
            Arc::new(plan),
        )?))
    }
}
