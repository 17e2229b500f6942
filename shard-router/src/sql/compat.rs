//! The one MariaDB-compatibility policy for expressions: which operators
//! MariaDB, in Tessera's shard `sql_mode`, evaluates exactly as
//! PostgreSQL does, and how they are spelled. Both front-ends of the one
//! shard SQL renderer (`shard_sql::ShardSql`) ask here: the fast path's
//! check and statement front-end (`render::is_safe_expr`, `stmt_sql`, on
//! sqlparser trees) and the DataFusion front-end (`expr_sql`, on DataFusion
//! expressions, for scans and pushdown).

use datafusion::logical_expr::Operator;
use datafusion::sql::sqlparser::ast::BinaryOperator;

/// A binary operator that can reach a shard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Eq,
    NotEq,
    Lt,
    LtEq,
    Gt,
    GtEq,
    And,
    Or,
    Plus,
    Minus,
    Multiply,
}

impl Op {
    /// The MariaDB spelling.
    pub fn sql(self) -> &'static str {
        match self {
            Op::Eq => "=",
            Op::NotEq => "<>",
            Op::Lt => "<",
            Op::LtEq => "<=",
            Op::Gt => ">",
            Op::GtEq => ">=",
            Op::And => "AND",
            Op::Or => "OR",
            Op::Plus => "+",
            Op::Minus => "-",
            Op::Multiply => "*",
        }
    }

    /// Arithmetic: exact on MariaDB only for exact numerics (integers
    /// and decimals, whose `+ - *` give PostgreSQL's value and scale);
    /// float arithmetic and every division stay on the compute node.
    pub fn is_arithmetic(self) -> bool {
        matches!(self, Op::Plus | Op::Minus | Op::Multiply)
    }

    /// The operator of a client statement, if it can reach a shard.
    pub fn of_sql(op: &BinaryOperator) -> Option<Op> {
        Some(match op {
            BinaryOperator::Eq => Op::Eq,
            BinaryOperator::NotEq => Op::NotEq,
            BinaryOperator::Lt => Op::Lt,
            BinaryOperator::LtEq => Op::LtEq,
            BinaryOperator::Gt => Op::Gt,
            BinaryOperator::GtEq => Op::GtEq,
            BinaryOperator::And => Op::And,
            BinaryOperator::Or => Op::Or,
            BinaryOperator::Plus => Op::Plus,
            BinaryOperator::Minus => Op::Minus,
            BinaryOperator::Multiply => Op::Multiply,
            _ => return None,
        })
    }

    /// The operator of a DataFusion expression, if it can reach a shard.
    pub fn of_datafusion(op: &Operator) -> Option<Op> {
        Some(match op {
            Operator::Eq => Op::Eq,
            Operator::NotEq => Op::NotEq,
            Operator::Lt => Op::Lt,
            Operator::LtEq => Op::LtEq,
            Operator::Gt => Op::Gt,
            Operator::GtEq => Op::GtEq,
            Operator::And => Op::And,
            Operator::Or => Op::Or,
            Operator::Plus => Op::Plus,
            Operator::Minus => Op::Minus,
            Operator::Multiply => Op::Multiply,
            _ => return None,
        })
    }
}

/// A comparison of two values of one type (`=`, `<>`, `<`, `<=`, `>`,
/// `>=`, `IS [NOT] DISTINCT FROM`): its operands are compared, not
/// computed with.
pub fn is_comparison(op: &Operator) -> bool {
    matches!(
        op,
        Operator::Eq
            | Operator::NotEq
            | Operator::Lt
            | Operator::LtEq
            | Operator::Gt
            | Operator::GtEq
            | Operator::IsDistinctFrom
            | Operator::IsNotDistinctFrom
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_trees_agree_on_the_operators_that_reach_a_shard() {
        let pairs = [
            (BinaryOperator::Eq, Operator::Eq),
            (BinaryOperator::NotEq, Operator::NotEq),
            (BinaryOperator::Lt, Operator::Lt),
            (BinaryOperator::LtEq, Operator::LtEq),
            (BinaryOperator::Gt, Operator::Gt),
            (BinaryOperator::GtEq, Operator::GtEq),
            (BinaryOperator::And, Operator::And),
            (BinaryOperator::Or, Operator::Or),
            (BinaryOperator::Plus, Operator::Plus),
            (BinaryOperator::Minus, Operator::Minus),
            (BinaryOperator::Multiply, Operator::Multiply),
            (BinaryOperator::Divide, Operator::Divide),
            (BinaryOperator::Modulo, Operator::Modulo),
            (BinaryOperator::StringConcat, Operator::StringConcat),
        ];
        for (s, d) in pairs {
            assert_eq!(Op::of_sql(&s), Op::of_datafusion(&d), "{s:?} / {d:?}");
        }
        assert_eq!(Op::of_sql(&BinaryOperator::Divide), None);
        assert!(Op::Multiply.is_arithmetic() && !Op::Lt.is_arithmetic());
    }
}
