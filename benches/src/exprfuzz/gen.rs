//! The generator: a random expression of a chosen type, built top-down
//! from `super::grammar` and the constructs that fit every type (CASE,
//! COALESCE, NULLIF, GREATEST/LEAST, casts) or yield booleans of any
//! (comparisons, IS NULL, IS DISTINCT FROM, BETWEEN, IN). Leaves are the
//! `fz` table's columns, edge values (`Ty::edges`) and ordinary literals.
//! Everything random comes from one seeded generator, so a seed and a
//! count give the same expressions on every machine.

use rand::prelude::IndexedRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::expr::Expr;
use super::grammar::{comparable_types, productions, A};
use super::table::COLUMNS;
use super::types::{castable, Ty, ALL, CAST_TARGETS};

/// The template that bounds a length argument (lpad, rpad, repeat): the
/// shrinker keeps it, so a minimized finding never asks a server for a
/// string of two billion characters.
pub const LEN_GUARD: &str = "({} % 20)";

pub struct Gen {
    rng: ChaCha8Rng,
    /// Deepest nesting of operators.
    pub max_depth: u32,
}

/// One drawn expression and the row its point query reads.
pub struct Case {
    pub expr: Expr,
    pub row: usize,
}

impl Gen {
    pub fn new(seed: u64) -> Gen {
        Gen {
            rng: ChaCha8Rng::seed_from_u64(seed),
            max_depth: 4,
        }
    }

    /// The next expression, of a random type, reading at least one column
    /// most of the time.
    pub fn next_case(&mut self, rows: usize) -> Case {
        let ty = *ALL.choose(&mut self.rng).unwrap_or(&Ty::Int);
        let expr = self.gen(ty, 0);
        let row = self.rng.random_range(1..=rows.max(1));
        Case { expr, row }
    }

    fn pick<T: Copy>(&mut self, xs: &[T]) -> Option<T> {
        xs.choose(&mut self.rng).copied()
    }

    fn chance(&mut self, p: f64) -> bool {
        self.rng.random_bool(p)
    }

    pub fn gen(&mut self, ty: Ty, depth: u32) -> Expr {
        if depth >= self.max_depth || self.chance(0.2 + 0.15 * depth as f64) {
            return self.leaf(ty);
        }
        let specific = productions(ty);
        let roll = self.rng.random_range(0..100);
        if ty == Ty::Bool && roll < 45 {
            return self.predicate(depth);
        }
        if roll < 25 || specific.is_empty() {
            return self.generic(ty, depth);
        }
        match self.pick(specific) {
            Some((template, args)) => {
                let args = args.iter().map(|a| self.arg(*a, depth + 1)).collect();
                Expr::apply(ty, template, args)
            }
            None => self.leaf(ty),
        }
    }

    fn arg(&mut self, a: A, depth: u32) -> Expr {
        match a {
            A::T(ty) => self.gen(ty, depth),
            A::OneOf(tys) => {
                let ty = self.pick(tys).unwrap_or(Ty::Int);
                self.gen(ty, depth)
            }
            A::Len => {
                let inner = if self.chance(0.6) {
                    let n = self.pick(&["0", "1", "3", "5", "-1", "10"]).unwrap_or("1");
                    Expr::lit(Ty::Int, n)
                } else {
                    self.gen(Ty::Int, depth)
                };
                Expr::apply(Ty::Int, LEN_GUARD, vec![inner])
            }
            A::Word(words) => Expr::lit(Ty::Text, self.pick(words).unwrap_or("'x'")),
        }
    }

    /// A column (most often), an edge value, or an ordinary literal.
    fn leaf(&mut self, ty: Ty) -> Expr {
        let cols: Vec<&'static str> = COLUMNS
            .iter()
            .filter(|c| c.ty == ty)
            .map(|c| c.name)
            .collect();
        let roll = self.rng.random_range(0..100);
        if roll < 45 && !cols.is_empty() {
            return Expr::col(ty, self.pick(&cols).unwrap_or("c_int"));
        }
        if roll < 85 {
            return Expr::lit(ty, self.pick(ty.edges()).unwrap_or("NULL"));
        }
        Expr::lit(ty, self.ordinary(ty))
    }

    /// A literal away from the edges.
    fn ordinary(&mut self, ty: Ty) -> String {
        let r = &mut self.rng;
        match ty {
            Ty::SmallInt => format!("CAST({} AS smallint)", r.random_range(-300..300)),
            Ty::Int => r.random_range(-1000..1000).to_string(),
            Ty::BigInt => format!("CAST({} AS bigint)", r.random_range(-1i64 << 40..1 << 40)),
            Ty::Numeric => {
                let places = r.random_range(0..6usize);
                let v: i64 = r.random_range(-10_000_000..10_000_000);
                let s = format!("{:0>7}", v.abs());
                let (a, b) = s.split_at(s.len() - places);
                let sign = if v < 0 { "-" } else { "" };
                let a = a.trim_start_matches('0');
                let a = if a.is_empty() { "0" } else { a };
                match places {
                    0 => format!("{sign}{a}.0"),
                    _ => format!("{sign}{a}.{b}"),
                }
            }
            Ty::Real => format!("CAST({:.3} AS real)", r.random_range(-1000.0..1000.0)),
            Ty::Double => format!("CAST({:.4} AS double precision)", r.random_range(-1e6..1e6)),
            Ty::Text | Ty::Char => {
                let n = r.random_range(0..6);
                let s: String = (0..n)
                    .map(|_| {
                        *['a', 'b', 'C', ' ', '-', 'é', '1']
                            .choose(r)
                            .unwrap_or(&'a')
                    })
                    .collect();
                match ty {
                    Ty::Char => format!("CAST('{s}' AS char(4))"),
                    _ => format!("'{s}'"),
                }
            }
            Ty::Bool => "true".into(),
            Ty::Date => format!(
                "DATE '{}-{:02}-{:02}'",
                r.random_range(1900..2100),
                r.random_range(1..13),
                r.random_range(1..29)
            ),
            Ty::Timestamp | Ty::Timestamptz => format!(
                "{} '{}-{:02}-{:02} {:02}:{:02}:{:02}.{:03}'",
                if ty == Ty::Timestamp {
                    "TIMESTAMP"
                } else {
                    "TIMESTAMPTZ"
                },
                r.random_range(1900..2100),
                r.random_range(1..13),
                r.random_range(1..29),
                r.random_range(0..24),
                r.random_range(0..60),
                r.random_range(0..60),
                r.random_range(0..1000)
            ),
            Ty::Interval => format!(
                "INTERVAL '{} days {} hours {} minutes'",
                r.random_range(-400..400),
                r.random_range(-30..30),
                r.random_range(0..90)
            ),
        }
    }

    /// Constructs that fit every type.
    fn generic(&mut self, ty: Ty, depth: u32) -> Expr {
        let d = depth + 1;
        match self.rng.random_range(0..8) {
            0 => {
                let args = vec![self.gen(Ty::Bool, d), self.gen(ty, d), self.gen(ty, d)];
                Expr::apply(ty, "CASE WHEN {} THEN {} ELSE {} END", args)
            }
            1 => {
                let k = *ALL.choose(&mut self.rng).unwrap_or(&Ty::Int);
                let args = vec![self.gen(k, d), self.gen(k, d), self.gen(ty, d)];
                Expr::apply(ty, "CASE {} WHEN {} THEN {} END", args)
            }
            2 => {
                let args = vec![self.gen(ty, d), self.gen(ty, d)];
                Expr::apply(ty, "COALESCE({}, {})", args)
            }
            3 => {
                let args = vec![self.gen(ty, d), self.gen(ty, d)];
                Expr::apply(ty, "NULLIF({}, {})", args)
            }
            4 => {
                let f = if self.chance(0.5) {
                    "GREATEST"
                } else {
                    "LEAST"
                };
                let args = vec![self.gen(ty, d), self.gen(ty, d), self.gen(ty, d)];
                Expr::apply(ty, format!("{f}({{}}, {{}}, {{}})"), args)
            }
            _ => self.cast(ty, d),
        }
    }

    /// A cast to a target of type `ty`, from a type PostgreSQL can cast
    /// from (nine times in ten) or from any type.
    fn cast(&mut self, ty: Ty, depth: u32) -> Expr {
        let targets: Vec<&str> = CAST_TARGETS
            .iter()
            .filter(|(_, t)| *t == ty)
            .map(|(n, _)| *n)
            .collect();
        let target = self.pick(&targets).unwrap_or(ty.sql());
        let valid = self.chance(0.9);
        let from: Vec<Ty> = ALL
            .iter()
            .copied()
            .filter(|f| !valid || castable(*f, ty))
            .collect();
        let from = self.pick(&from).unwrap_or(ty);
        let inner = self.gen(from, depth);
        let template = if self.chance(0.8) {
            format!("CAST({{}} AS {target})")
        } else {
            format!("({{}})::{target}")
        };
        Expr::apply(ty, template, vec![inner])
    }

    /// A boolean from values of any type: comparisons, IS [NOT] NULL,
    /// IS [NOT] DISTINCT FROM, BETWEEN, IN.
    fn predicate(&mut self, depth: u32) -> Expr {
        let d = depth + 1;
        let a = *ALL.choose(&mut self.rng).unwrap_or(&Ty::Int);
        let b = self.pick(comparable_types(a)).unwrap_or(a);
        let b = if a == Ty::Bool || b == Ty::Bool { a } else { b };
        let cmp = ["=", "<>", "<", "<=", ">", ">="];
        match self.rng.random_range(0..7) {
            0..=2 => {
                let op = self.pick(&cmp).unwrap_or("=");
                let args = vec![self.gen(a, d), self.gen(b, d)];
                Expr::apply(Ty::Bool, format!("({{}} {op} {{}})"), args)
            }
            3 => {
                let t = if self.chance(0.5) {
                    "IS NULL"
                } else {
                    "IS NOT NULL"
                };
                Expr::apply(Ty::Bool, format!("({{}} {t})"), vec![self.gen(a, d)])
            }
            4 => {
                let t = if self.chance(0.5) {
                    "IS DISTINCT FROM"
                } else {
                    "IS NOT DISTINCT FROM"
                };
                let args = vec![self.gen(a, d), self.gen(b, d)];
                Expr::apply(Ty::Bool, format!("({{}} {t} {{}})"), args)
            }
            5 => {
                let t = if self.chance(0.7) {
                    "BETWEEN"
                } else {
                    "NOT BETWEEN"
                };
                let args = vec![self.gen(a, d), self.gen(b, d), self.gen(b, d)];
                Expr::apply(Ty::Bool, format!("({{}} {t} {{}} AND {{}})"), args)
            }
            _ => {
                let t = if self.chance(0.7) { "IN" } else { "NOT IN" };
                let n = self.rng.random_range(1..4);
                let mut args = vec![self.gen(a, d)];
                for _ in 0..n {
                    args.push(self.gen(b, d));
                }
                let list = vec!["{}"; n].join(", ");
                Expr::apply(Ty::Bool, format!("({{}} {t} ({list}))"), args)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_gives_the_same_expressions() {
        let draw = |seed| {
            let mut g = Gen::new(seed);
            (0..50)
                .map(|_| g.next_case(14).expr.sql())
                .collect::<Vec<_>>()
        };
        assert_eq!(draw(7), draw(7));
        assert_ne!(draw(7), draw(8));
    }

    #[test]
    fn templates_have_one_placeholder_per_argument() {
        let mut g = Gen::new(1);
        for _ in 0..2000 {
            let e = g.next_case(14).expr;
            for p in e.paths() {
                if let Some(n) = e.at(&p) {
                    if let super::super::expr::Node::Apply(t, args) = &n.node {
                        assert_eq!(t.matches("{}").count(), args.len(), "{t}");
                    }
                }
            }
        }
    }
}
