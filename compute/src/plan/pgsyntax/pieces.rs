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
/// with that side (not in subqueries, which have their own scope).
pub(super) fn qualify_using_columns(sel: &mut Select) -> bool {
    let [twj] = sel.from.as_slice() else {
        return false;
    };
    let [join] = twj.joins.as_slice() else {
        return false;
    };
    let (cols, left) = match &join.join_operator {
        JoinOperator::Join(JoinConstraint::Using(c))
        | JoinOperator::Inner(JoinConstraint::Using(c))
        | JoinOperator::Left(JoinConstraint::Using(c))
        | JoinOperator::LeftOuter(JoinConstraint::Using(c)) => (c, true),
        JoinOperator::Right(JoinConstraint::Using(c))
        | JoinOperator::RightOuter(JoinConstraint::Using(c)) => (c, false),
        _ => return false,
    };
    let side = if left {
        relation_name(&twj.relation)
    } else {
        relation_name(&join.relation)
    };
    let (Some(side), Some(selection)) = (side, sel.selection.as_mut()) else {
        return false;
    };
    let names: Vec<String> = cols
        .iter()
        .filter_map(|c| crate::plan::object_parts(c).last().cloned())
        .collect();
    struct Q<'a> {
        side: &'a Ident,
        names: &'a [String],
        depth: usize,
        changed: bool,
    }
    impl VisitorMut for Q<'_> {
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
                        *e = Expr::CompoundIdentifier(vec![self.side.clone(), i.clone()]);
                        self.changed = true;
                    }
                }
            }
            ControlFlow::Continue(())
        }
    }
    let mut q = Q {
        side: &side,
        names: &names,
        depth: 0,
        changed: false,
    };
    let _ = VisitMut::visit(selection, &mut q);
    q.changed
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
