//! The pieces of the rewrite DataFusion plans: char(n) result columns,
//! SIMILAR TO patterns, USING columns in WHERE, scalar subqueries that do
//! not aggregate, and the AST helpers the rewrite builds with.

use std::ops::ControlFlow;

use datafusion::sql::sqlparser::ast::{
    BinaryOperator, CastKind, CharacterLength, DataType, Expr, FunctionArg, FunctionArgExpr,
    FunctionArguments, Ident, JoinConstraint, JoinOperator, ObjectName, ObjectNamePart, Query,
    Select, SetExpr, Statement, TableFactor, Value, VisitMut, VisitorMut,
};

/// The unnamed arguments of a call, if all of them are plain expressions.
pub(super) fn plain_args(args: &FunctionArguments) -> Option<Vec<Expr>> {
    let FunctionArguments::List(list) = args else {
        return None;
    };
    if list.duplicate_treatment.is_some() || !list.clauses.is_empty() {
        return None;
    }
    list.args
        .iter()
        .map(|a| match a {
            FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => Some(e.clone()),
            _ => None,
        })
        .collect()
}

/// A result column that is a cast to char(n) shows its blanks
/// (`'abc'::char(5)` is `abc  `): `rpad` to n. Casts elsewhere become
/// the text without trailing blanks, which compares as bpchar does.
pub(super) fn pad_root_chars(stmt: &mut Statement) -> bool {
    let Statement::Query(q) = stmt else {
        return false;
    };
    let SetExpr::Select(sel) = q.body.as_mut() else {
        return false;
    };
    let mut changed = false;
    for item in sel.projection.iter_mut() {
        let e = match item {
            datafusion::sql::sqlparser::ast::SelectItem::UnnamedExpr(e) => e,
            datafusion::sql::sqlparser::ast::SelectItem::ExprWithAlias { expr, .. } => expr,
            _ => continue,
        };
        let Expr::Cast {
            kind: CastKind::Cast | CastKind::DoubleColon,
            expr,
            data_type: DataType::Char(l) | DataType::Character(l),
            array: false,
            format: None,
        } = e
        else {
            continue;
        };
        let n = match l {
            Some(CharacterLength::IntegerLength { length, .. }) => *length,
            None => 1,
            Some(CharacterLength::Max) => continue,
        };
        let text = as_text(expr);
        *e = call(
            "rpad",
            vec![text, Expr::value(Value::Number(n.to_string(), false))],
        );
        changed = true;
    }
    changed
}

/// PostgreSQL's translation of a SIMILAR TO pattern to a regular
/// expression (`similar_escape`): anchored, `%` is `.*`, `_` is `.`, `\`
/// escapes the next character, `.`, `^` and `$` are literal; bracket
/// expressions, `|`, `*`, `+`, `?`, `{}` and `()` keep their meaning.
pub fn similar_to_regex(p: &str) -> String {
    let mut out = String::from("^(?:");
    let mut chars = p.chars();
    let mut in_bracket = false;
    while let Some(c) = chars.next() {
        if in_bracket {
            out.push(c);
            in_bracket = c != ']';
            continue;
        }
        match c {
            '\\' => match chars.next() {
                Some(n) if n.is_alphanumeric() => out.push(n),
                Some(n) => {
                    out.push('\\');
                    out.push(n);
                }
                None => out.push_str("\\\\"),
            },
            '%' => out.push_str(".*"),
            '_' => out.push('.'),
            '.' | '^' | '$' => {
                out.push('\\');
                out.push(c);
            }
            '[' => {
                in_bracket = true;
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out.push_str(")$");
    out
}

/// The name a FROM item is referred to by (its alias, or its table's).
fn relation_name(f: &TableFactor) -> Option<Ident> {
    match f {
        TableFactor::Table { alias: Some(a), .. } | TableFactor::Derived { alias: Some(a), .. } => {
            Some(a.name.clone())
        }
        TableFactor::Table { name, .. } => match name.0.last()? {
            ObjectNamePart::Identifier(i) => Some(i.clone()),
            _ => None,
        },
        _ => None,
    }
}

/// `WHERE id < 10` over `a JOIN b USING (id)`: DataFusion finds the
/// unqualified `id` ambiguous in WHERE (it knows the USING columns only
/// in the select list), where PostgreSQL reads the merged column. The
/// merged column is the left side's in an inner or left join and the
/// right side's in a right join, so such names in WHERE are qualified
/// with that side (not in subqueries, which have their own scope). In a
/// FULL join it is `COALESCE(left.id, right.id)`, in the select list
/// (named `id`) and WHERE alike (DataFusion would take one side's).
pub(super) fn qualify_using_columns(sel: &mut Select) -> bool {
    let [twj] = sel.from.as_slice() else {
        return false;
    };
    let [join] = twj.joins.as_slice() else {
        return false;
    };
    let (cols, side) = match &join.join_operator {
        JoinOperator::Join(JoinConstraint::Using(c))
        | JoinOperator::Inner(JoinConstraint::Using(c))
        | JoinOperator::Left(JoinConstraint::Using(c))
        | JoinOperator::LeftOuter(JoinConstraint::Using(c)) => (c, Merged::Left),
        JoinOperator::Right(JoinConstraint::Using(c))
        | JoinOperator::RightOuter(JoinConstraint::Using(c)) => (c, Merged::Right),
        JoinOperator::FullOuter(JoinConstraint::Using(c)) => (c, Merged::Both),
        _ => return false,
    };
    let (Some(left), Some(right)) = (relation_name(&twj.relation), relation_name(&join.relation))
    else {
        return false;
    };
    let names: Vec<String> = cols
        .iter()
        .filter_map(|c| crate::plan::object_parts(c).last().cloned())
        .collect();
    let mut q = MergedColumns {
        left: &left,
        right: &right,
        side,
        names: &names,
        depth: 0,
        changed: false,
    };
    if let Some(selection) = sel.selection.as_mut() {
        let _ = VisitMut::visit(selection, &mut q);
    }
    if side == Merged::Both {
        for item in &mut sel.projection {
            q.merge_item(item);
        }
    }
    q.changed
}

/// Which side's column a USING column's unqualified name reads.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Merged {
    Left,
    Right,
    Both,
}

/// Rewrites the unqualified USING names of an expression (not inside its
/// subqueries) to the merged column.
struct MergedColumns<'a> {
    left: &'a Ident,
    right: &'a Ident,
    side: Merged,
    names: &'a [String],
    depth: usize,
    changed: bool,
}

impl MergedColumns<'_> {
    fn merged(&self, i: &Ident) -> Expr {
        let col = |side: &Ident| Expr::CompoundIdentifier(vec![side.clone(), i.clone()]);
        match self.side {
            Merged::Left => col(self.left),
            Merged::Right => col(self.right),
            Merged::Both => call("coalesce", vec![col(self.left), col(self.right)]),
        }
    }

    /// A select item: `id` becomes `COALESCE(a.id, b.id) AS id`.
    fn merge_item(&mut self, item: &mut datafusion::sql::sqlparser::ast::SelectItem) {
        use datafusion::sql::sqlparser::ast::SelectItem;
        match item {
            SelectItem::UnnamedExpr(Expr::Identifier(i))
                if self.names.contains(&shard_router::sql::normalize_ident(i)) =>
            {
                *item = SelectItem::ExprWithAlias {
                    expr: self.merged(i),
                    alias: i.clone(),
                };
                self.changed = true;
            }
            SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => {
                let _ = VisitMut::visit(e, self);
            }
            _ => {}
        }
    }
}

impl VisitorMut for MergedColumns<'_> {
    type Break = ();
    fn pre_visit_query(&mut self, _: &mut Query) -> ControlFlow<()> {
        self.depth += 1;
        ControlFlow::Continue(())
    }
    fn post_visit_query(&mut self, _: &mut Query) -> ControlFlow<()> {
        self.depth -= 1;
        ControlFlow::Continue(())
    }
    fn post_visit_expr(&mut self, e: &mut Expr) -> ControlFlow<()> {
        if self.depth == 0 {
            if let Expr::Identifier(i) = e {
                if self.names.contains(&shard_router::sql::normalize_ident(i)) {
                    *e = self.merged(i);
                    self.changed = true;
                }
            }
        }
        ControlFlow::Continue(())
    }
}

/// Aggregates a select item may call (a subquery calling one already
/// returns one row).
const AGGREGATES: &[&str] = &[
    "count",
    "sum",
    "avg",
    "min",
    "max",
    "array_agg",
    "string_agg",
    "bool_and",
    "bool_or",
    "every",
    "stddev",
    "stddev_pop",
    "stddev_samp",
    "variance",
    "var_pop",
    "var_samp",
    "corr",
    "covar_pop",
    "covar_samp",
    "bit_and",
    "bit_or",
    "bit_xor",
    "percentile_cont",
    "percentile_disc",
    "mode",
    "median",
    "approx_distinct",
    "first_value",
    "last_value",
];

/// The select item of a scalar subquery that returns its rows unaggregated
/// (one plain SELECT with FROM, one item, no GROUP BY, HAVING, DISTINCT,
/// ORDER BY, LIMIT, window or aggregate call): where `pg_one_row` goes.
pub(super) fn unaggregated_item(q: &mut Query) -> Option<&mut Expr> {
    if q.with.is_some() || q.order_by.is_some() || q.limit_clause.is_some() || q.fetch.is_some() {
        return None;
    }
    let SetExpr::Select(sel) = q.body.as_mut() else {
        return None;
    };
    let grouped = !matches!(&sel.group_by, datafusion::sql::sqlparser::ast::GroupByExpr::Expressions(g, _) if g.is_empty());
    if sel.from.is_empty()
        || grouped
        || sel.having.is_some()
        || sel.distinct.is_some()
        || sel.projection.len() != 1
        || !sel.named_window.is_empty()
        || sel.qualify.is_some()
    {
        return None;
    }
    let item = match &mut sel.projection[0] {
        datafusion::sql::sqlparser::ast::SelectItem::UnnamedExpr(e) => e,
        datafusion::sql::sqlparser::ast::SelectItem::ExprWithAlias { expr, .. } => expr,
        _ => return None,
    };
    let aggregates = datafusion::sql::sqlparser::ast::visit_expressions(&*item, |x| match x {
        Expr::Function(f) => {
            let name = crate::plan::object_parts(&f.name);
            let agg = f.over.is_some()
                || name
                    .last()
                    .is_some_and(|n| AGGREGATES.contains(&n.as_str()) || n == crate::onerow::NAME);
            if agg {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        }
        Expr::Subquery(_) | Expr::Exists { .. } | Expr::InSubquery { .. } => {
            ControlFlow::Continue(())
        }
        _ => ControlFlow::Continue(()),
    });
    (!aggregates.is_break()).then_some(item)
}

/// `expr`, taken out of its place (NULL is left), cast to text.
pub(super) fn as_text(expr: &mut Box<Expr>) -> Expr {
    let x = std::mem::replace(expr.as_mut(), Expr::value(Value::Null));
    Expr::Cast {
        kind: CastKind::Cast,
        expr: Box::new(x),
        data_type: DataType::Text,
        array: false,
        format: None,
    }
}

/// An expression written as text in Tessera's dialect (a rewrite built
/// from text); `None` if it does not parse.
pub(super) fn parse_expr(sql: &str) -> Option<Expr> {
    datafusion::sql::sqlparser::parser::Parser::new(&crate::dialect::TesseraDialect)
        .try_with_sql(sql)
        .ok()?
        .parse_expr()
        .ok()
}

pub(super) fn call(name: &str, args: Vec<Expr>) -> Expr {
    use datafusion::sql::sqlparser::ast::{Function, FunctionArgumentList};
    Expr::Function(Function {
        name: ObjectName(vec![ObjectNamePart::Identifier(Ident::new(name))]),
        uses_odbc_syntax: false,
        parameters: FunctionArguments::None,
        args: FunctionArguments::List(FunctionArgumentList {
            duplicate_treatment: None,
            args: args
                .into_iter()
                .map(|a| FunctionArg::Unnamed(FunctionArgExpr::Expr(a)))
                .collect(),
            clauses: vec![],
        }),
        filter: None,
        null_treatment: None,
        over: None,
        within_group: vec![],
    })
}

pub(super) fn binary(left: Expr, op: BinaryOperator, right: Expr) -> Expr {
    Expr::Nested(Box::new(Expr::BinaryOp {
        left: Box::new(Expr::Nested(Box::new(left))),
        op,
        right: Box::new(Expr::Nested(Box::new(right))),
    }))
}

/// `generate_series(...)` as an item of a SELECT list is a set-returning
/// function in PostgreSQL (one row per value, `SELECT generate_series(1,
/// 3)` is three rows); DataFusion's `generate_series` is a scalar function
/// answering an array. The item becomes `unnest(generate_series(...))`,
/// named as PostgreSQL names it (`generate_series`, or its alias). Several
/// such items run in lockstep, shorter ones padded with NULLs, in both.
pub(super) fn set_returning_items(sel: &mut Select) -> bool {
    use datafusion::sql::sqlparser::ast::SelectItem;
    let mut changed = false;
    for item in &mut sel.projection {
        let (expr, alias) = match item {
            SelectItem::UnnamedExpr(e) => (e, None),
            SelectItem::ExprWithAlias { expr, alias } => (expr, Some(alias.clone())),
            _ => continue,
        };
        let is_series = matches!(expr, Expr::Function(f)
            if crate::plan::object_parts(&f.name).last().map(String::as_str) == Some("generate_series"));
        if !is_series {
            continue;
        }
        let series = std::mem::replace(expr, Expr::value(Value::Null));
        *item = SelectItem::ExprWithAlias {
            expr: call("unnest", vec![series]),
            alias: alias.unwrap_or_else(|| Ident::new("generate_series")),
        };
        changed = true;
    }
    changed
}

/// `expr`, taken out of its place (NULL is left).
pub(super) fn take(expr: &mut Expr) -> Expr {
    std::mem::replace(expr, Expr::value(Value::Null))
}

/// `CAST(x AS t)`.
pub(super) fn cast(x: Expr, t: DataType) -> Expr {
    Expr::Cast {
        kind: CastKind::Cast,
        expr: Box::new(x),
        data_type: t,
        array: false,
        format: None,
    }
}
