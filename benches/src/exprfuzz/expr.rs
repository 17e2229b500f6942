//! A generated expression: a tree whose every node knows its result type,
//! rendered to SQL from per-node templates. The tree is what the shrinker
//! works on (a node replaced by one of its children or by a literal).

use super::types::Ty;

/// One node. `Apply`'s template holds one `{}` per argument, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Node {
    Lit(String),
    /// A column of the `fz` table.
    Col(&'static str),
    Apply(String, Vec<Expr>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expr {
    pub ty: Ty,
    pub node: Node,
}

impl Expr {
    pub fn lit(ty: Ty, text: impl Into<String>) -> Expr {
        Expr {
            ty,
            node: Node::Lit(text.into()),
        }
    }

    pub fn col(ty: Ty, name: &'static str) -> Expr {
        Expr {
            ty,
            node: Node::Col(name),
        }
    }

    pub fn apply(ty: Ty, template: impl Into<String>, args: Vec<Expr>) -> Expr {
        Expr {
            ty,
            node: Node::Apply(template.into(), args),
        }
    }

    /// The SQL text.
    pub fn sql(&self) -> String {
        let mut out = String::new();
        self.write(&mut out);
        out
    }

    fn write(&self, out: &mut String) {
        match &self.node {
            Node::Lit(s) => out.push_str(s),
            Node::Col(c) => out.push_str(c),
            Node::Apply(t, args) => {
                let mut pieces = t.split("{}");
                if let Some(first) = pieces.next() {
                    out.push_str(first);
                }
                for (piece, arg) in pieces.zip(args) {
                    arg.write(out);
                    out.push_str(piece);
                }
            }
        }
    }

    /// The outermost operator with its arguments' types, e.g.
    /// `round(numeric, integer)`: the key findings are grouped by.
    pub fn shape(&self) -> String {
        match &self.node {
            Node::Lit(_) => format!("literal {}", self.ty.sql()),
            Node::Col(_) => format!("column {}", self.ty.sql()),
            Node::Apply(t, args) => {
                let types: Vec<Expr> = args.iter().map(|a| Expr::lit(a.ty, a.ty.sql())).collect();
                normalize_words(&Expr::apply(self.ty, t.clone(), types).sql())
            }
        }
    }

    pub fn children(&self) -> &[Expr] {
        match &self.node {
            Node::Apply(_, args) => args,
            _ => &[],
        }
    }

    /// Whether a column occurs anywhere below.
    pub fn has_column(&self) -> bool {
        matches!(self.node, Node::Col(_)) || self.children().iter().any(Expr::has_column)
    }

    /// Paths to every node, parents before children (the root is `[]`).
    pub fn paths(&self) -> Vec<Vec<usize>> {
        let mut out = vec![vec![]];
        for (i, c) in self.children().iter().enumerate() {
            for mut p in c.paths() {
                p.insert(0, i);
                out.push(p);
            }
        }
        out
    }

    pub fn at(&self, path: &[usize]) -> Option<&Expr> {
        match path.split_first() {
            None => Some(self),
            Some((i, rest)) => self.children().get(*i)?.at(rest),
        }
    }

    /// A copy with the node at `path` replaced by `new`.
    pub fn replaced(&self, path: &[usize], new: &Expr) -> Expr {
        match (path.split_first(), &self.node) {
            (None, _) => new.clone(),
            (Some((i, rest)), Node::Apply(t, args)) => {
                let mut args = args.clone();
                if let Some(a) = args.get_mut(*i) {
                    *a = a.replaced(rest, new);
                }
                Expr::apply(self.ty, t.clone(), args)
            }
            _ => self.clone(),
        }
    }
}

fn normalize_words(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Expr {
        Expr::apply(
            Ty::Int,
            "({} + {})",
            vec![
                Expr::col(Ty::Int, "c_int"),
                Expr::apply(Ty::Int, "abs({})", vec![Expr::lit(Ty::Int, "-1")]),
            ],
        )
    }

    #[test]
    fn renders_templates_in_order() {
        assert_eq!(sample().sql(), "(c_int + abs(-1))");
    }

    #[test]
    fn paths_reach_every_node_and_replace_one() {
        let e = sample();
        assert_eq!(e.paths(), vec![vec![], vec![0], vec![1], vec![1, 0]]);
        let r = e.replaced(&[1], &Expr::lit(Ty::Int, "7"));
        assert_eq!(r.sql(), "(c_int + 7)");
        assert_eq!(e.at(&[1, 0]).map(Expr::sql), Some("-1".to_string()));
        assert_eq!(e.shape(), "(integer + integer)");
    }
}
