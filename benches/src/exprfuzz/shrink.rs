//! Minimizing a finding: while the expression still differs the same way
//! (same form, same row, same class of answer on each side), replace one
//! node by one of its children or by a simple literal of its type, keeping
//! each replacement that makes the text shorter. Greedy, with a budget of
//! evaluations, so a finding costs seconds, not minutes.

use super::check::{Outcome, Sides, Verdict};
use super::expr::{Expr, Node};
use super::gen::LEN_GUARD;
use super::table::Row;
use super::types::Ty;

/// Evaluations one finding may spend.
const BUDGET: usize = 60;

/// Replacements for the node `e`, shorter ones first.
fn candidates(e: &Expr) -> Vec<Expr> {
    if matches!(&e.node, Node::Apply(t, _) if t == LEN_GUARD) {
        return vec![Expr::lit(Ty::Int, "1")];
    }
    let mut out: Vec<Expr> = e.children().to_vec();
    let edges = e.ty.edges();
    for lit in [e.ty.simple()]
        .iter()
        .chain(edges.iter().take(2))
        .chain(edges.last())
    {
        out.push(Expr::lit(e.ty, *lit));
    }
    let len = e.sql().len();
    out.retain(|c| c.sql().len() < len);
    out.sort_by_key(|c| c.sql().len());
    out
}

/// The smallest expression found that differs as `found` does, with its
/// outcome.
pub async fn shrink(sides: &mut Sides, expr: &Expr, row: &Row, found: &Outcome) -> (Expr, Outcome) {
    let want = found.signature();
    let mut best = expr.clone();
    let mut best_outcome = found.clone();
    let mut spent = 0;
    'outer: while spent < BUDGET {
        for path in best.paths() {
            let Some(node) = best.at(&path) else { continue };
            for c in candidates(node) {
                if spent >= BUDGET {
                    break 'outer;
                }
                let trial = best.replaced(&path, &c);
                spent += 1;
                let o = sides.evaluate(found.form, &trial.sql(), row).await;
                if o.verdict == Verdict::Differ && o.signature() == want {
                    best = trial;
                    best_outcome = o;
                    continue 'outer;
                }
            }
        }
        break;
    }
    (best, best_outcome)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates_are_shorter_children_and_literals() {
        let e = Expr::apply(Ty::Int, "abs({})", vec![Expr::col(Ty::Int, "c_int")]);
        let c: Vec<String> = candidates(&e).iter().map(Expr::sql).collect();
        assert_eq!(c[0], "1".to_string());
        assert!(c.contains(&"c_int".to_string()));
        assert!(c.iter().all(|s| s.len() < "abs(c_int)".len()));
        let guard = Expr::apply(Ty::Int, LEN_GUARD, vec![Expr::col(Ty::Int, "c_int")]);
        assert_eq!(candidates(&guard), vec![Expr::lit(Ty::Int, "1")]);
    }
}
