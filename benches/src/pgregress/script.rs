//! A regression file split into what psql would send: statements ended
//! by `;` outside quotes, dollar quotes, comments, parentheses and
//! `BEGIN ATOMIC ... END` bodies; `COPY ... FROM stdin` with the data lines
//! up to `\.`; psql variables (`\set`, `\getenv`) substituted where psql
//! substitutes them (`:name`, `:'name'`, `:"name"` outside quotes, only when
//! set). A `COPY t FROM 'file'` is turned into `COPY t FROM STDIN` with the
//! file's bytes read here, so both servers receive the rows from the
//! client (the files are on this machine, not necessarily on a server's).
//! Other meta-commands (`\d`, `\pset`, ...) are kept as items to be
//! counted and skipped. The splitter is written after psql's documented
//! behaviour, not its source; comments are dropped from the statement
//! text so that its whitespace-normalized form is one line.

use std::collections::HashMap;
use std::path::Path;

/// One thing the file asks psql to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    /// A statement, sent as is; `line` is where it starts.
    Sql { text: String, line: usize },
    /// `COPY ... FROM STDIN` and the data to send.
    Copy {
        text: String,
        data: Vec<u8>,
        line: usize,
    },
    /// A meta-command the harness does not run.
    Meta { command: String, line: usize },
}

impl Item {
    pub fn line(&self) -> usize {
        match self {
            Item::Sql { line, .. } | Item::Copy { line, .. } | Item::Meta { line, .. } => *line,
        }
    }
}

/// What `\getenv` reads: pg_regress's environment for the files
/// (`PG_ABS_SRCDIR` and the like), given by the harness.
pub type Env = HashMap<String, String>;

#[derive(Debug, Clone, PartialEq, Eq)]
enum State {
    Normal,
    /// In a string literal; `true` for `E'...'` (backslash escapes).
    Quote(bool),
    Ident,
    Dollar(String),
    Comment(u32),
}

struct Splitter<'a> {
    env: &'a Env,
    srcdir: &'a Path,
    vars: HashMap<String, String>,
    buf: String,
    start: usize,
    state: State,
    parens: u32,
    /// psql's heuristic for `CREATE FUNCTION ... BEGIN ATOMIC ... END`:
    /// the first letters of the statement's leading keywords and the
    /// depth of BEGIN/CASE ... END inside such a statement.
    words: Vec<char>,
    word_count: usize,
    begin_depth: u32,
    /// `standard_conforming_strings`, as psql follows it: when off,
    /// every string literal takes backslash escapes.
    standard_strings: bool,
    /// A `COPY ... FROM STDIN` waiting for its data lines.
    copy: Option<(String, usize, Vec<u8>)>,
    items: Vec<Item>,
}

fn ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$' || !c.is_ascii()
}

fn var_name_len(chars: &[char]) -> usize {
    chars
        .iter()
        .take_while(|c| c.is_ascii_alphanumeric() || **c == '_')
        .count()
}

/// The statements, COPY data blocks and meta-commands of `text`.
/// `srcdir` replaces `@abs_srcdir@` and is where `COPY ... FROM 'file'`
/// paths are read.
pub fn split(text: &str, env: &Env, srcdir: &Path) -> Result<Vec<Item>, String> {
    let text = text.replace("@abs_srcdir@", &srcdir.to_string_lossy());
    let mut s = Splitter {
        env,
        srcdir,
        vars: HashMap::new(),
        buf: String::new(),
        start: 0,
        state: State::Normal,
        parens: 0,
        words: vec![],
        word_count: 0,
        begin_depth: 0,
        standard_strings: true,
        copy: None,
        items: vec![],
    };
    for (n, line) in text.lines().enumerate() {
        s.line(line, n + 1)?;
    }
    if let Some((text, line, data)) = s.copy.take() {
        s.items.push(Item::Copy { text, data, line });
    }
    s.flush()?;
    Ok(s.items)
}

impl Splitter<'_> {
    fn line(&mut self, line: &str, n: usize) -> Result<(), String> {
        if let Some((_, _, data)) = &mut self.copy {
            if line == "\\." {
                if let Some((text, line, data)) = self.copy.take() {
                    self.items.push(Item::Copy { text, data, line });
                }
            } else {
                data.extend_from_slice(line.as_bytes());
                data.push(b'\n');
            }
            return Ok(());
        }
        let chars: Vec<char> = line.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            i = match self.state.clone() {
                State::Normal => match self.normal(&chars, i, n)? {
                    Some(next) => next,
                    None => break,
                },
                State::Quote(escapes) => self.quoted(&chars, i, escapes),
                State::Ident => {
                    self.buf.push(chars[i]);
                    if chars[i] == '"' {
                        self.state = State::Normal;
                    }
                    i + 1
                }
                State::Dollar(tag) => {
                    if chars[i..].starts_with(&tag.chars().collect::<Vec<_>>()) {
                        self.buf.push_str(&tag);
                        self.state = State::Normal;
                        i + tag.chars().count()
                    } else {
                        self.buf.push(chars[i]);
                        i + 1
                    }
                }
                State::Comment(depth) => self.comment(&chars, i, depth),
            };
        }
        if !self.buf.is_empty() {
            self.buf.push('\n');
        }
        Ok(())
    }

    fn quoted(&mut self, chars: &[char], i: usize, escapes: bool) -> usize {
        let c = chars[i];
        self.buf.push(c);
        if escapes && c == '\\' {
            if let Some(&next) = chars.get(i + 1) {
                self.buf.push(next);
                return i + 2;
            }
        } else if c == '\'' {
            if chars.get(i + 1) == Some(&'\'') {
                self.buf.push('\'');
                return i + 2;
            }
            self.state = State::Normal;
        }
        i + 1
    }

    fn comment(&mut self, chars: &[char], i: usize, depth: u32) -> usize {
        if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
            self.state = State::Comment(depth + 1);
            return i + 2;
        }
        if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
            self.state = if depth > 1 {
                State::Comment(depth - 1)
            } else {
                State::Normal
            };
            if !self.buf.is_empty() {
                self.buf.push(' ');
            }
            return i + 2;
        }
        i + 1
    }

    fn push_start(&mut self, s: &str, n: usize) {
        if self.buf.is_empty() {
            self.start = n;
        }
        self.buf.push_str(s);
    }

    /// One token outside quotes; the index after it, or None when the rest
    /// of the line was consumed (a comment or a meta-command).
    fn normal(&mut self, chars: &[char], i: usize, n: usize) -> Result<Option<usize>, String> {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        let prev = self.buf.chars().last();
        match c {
            _ if c.is_whitespace() => {
                if !self.buf.is_empty() {
                    self.buf.push(c);
                }
            }
            '-' if next == Some('-') => return Ok(None),
            '/' if next == Some('*') => {
                self.state = State::Comment(1);
                return Ok(Some(i + 2));
            }
            '\'' => {
                let before = self.buf.chars().rev().nth(1);
                let escapes = !self.standard_strings
                    || (matches!(prev, Some('E' | 'e')) && !before.is_some_and(ident_char));
                self.state = State::Quote(escapes);
                self.push_start("'", n);
            }
            '"' => {
                self.state = State::Ident;
                self.push_start("\"", n);
            }
            '$' if !prev.is_some_and(ident_char) => {
                let tag_len = chars[i + 1..]
                    .iter()
                    .take_while(|c| c.is_alphanumeric() || **c == '_' || !c.is_ascii())
                    .count();
                let starts_ok = chars.get(i + 1).is_some_and(|c| !c.is_ascii_digit());
                if starts_ok && chars.get(i + 1 + tag_len) == Some(&'$') {
                    let tag: String = chars[i..i + 2 + tag_len].iter().collect();
                    self.push_start(&tag, n);
                    self.state = State::Dollar(tag);
                    return Ok(Some(i + 2 + tag_len));
                }
                self.push_start("$", n);
            }
            '(' => {
                self.parens += 1;
                self.push_start("(", n);
            }
            ')' => {
                self.parens = self.parens.saturating_sub(1);
                self.push_start(")", n);
            }
            ';' if self.parens == 0 && self.begin_depth == 0 => self.flush()?,
            ':' => return Ok(Some(self.variable(chars, i, n))),
            '\\' => {
                let rest: String = chars[i..].iter().collect();
                self.meta(&rest, n)?;
                return Ok(None);
            }
            _ if c.is_alphabetic() || c == '_' => {
                let len = chars[i..].iter().take_while(|c| ident_char(**c)).count();
                let word: String = chars[i..i + len].iter().collect();
                self.keyword(&word);
                self.push_start(&word, n);
                return Ok(Some(i + len));
            }
            _ if c.is_ascii_digit() => {
                let len = chars[i..]
                    .iter()
                    .take_while(|c| c.is_ascii_alphanumeric() || **c == '_')
                    .count();
                let num: String = chars[i..i + len].iter().collect();
                self.push_start(&num, n);
                return Ok(Some(i + len));
            }
            _ => self.push_start(&c.to_string(), n),
        }
        Ok(Some(i + 1))
    }

    /// psql's BEGIN ATOMIC tracking: only in `CREATE [OR REPLACE]
    /// FUNCTION|PROCEDURE` statements, outside parentheses.
    fn keyword(&mut self, word: &str) {
        let w = word.to_ascii_lowercase();
        if self.word_count < 4
            && matches!(
                w.as_str(),
                "create" | "function" | "procedure" | "or" | "replace"
            )
        {
            self.words.push(w.chars().next().unwrap_or(' '));
        } else if self.word_count < 4 {
            self.words.push(' ');
        }
        self.word_count += 1;
        let k = |i: usize| self.words.get(i).copied().unwrap_or(' ');
        let routine = k(0) == 'c'
            && (k(1) == 'f'
                || k(1) == 'p'
                || (k(1) == 'o' && k(2) == 'r' && (k(3) == 'f' || k(3) == 'p')));
        if routine && self.parens == 0 {
            match w.as_str() {
                "begin" => self.begin_depth += 1,
                "case" if self.begin_depth > 0 => self.begin_depth += 1,
                "end" if self.begin_depth > 0 => self.begin_depth -= 1,
                _ => {}
            }
        }
    }

    /// `::` (a cast), or `:name` / `:'name'` / `:"name"` substituted when
    /// the variable is set; anything else is kept.
    fn variable(&mut self, chars: &[char], i: usize, n: usize) -> usize {
        if chars.get(i + 1) == Some(&':') {
            self.push_start("::", n);
            return i + 2;
        }
        let quote = chars
            .get(i + 1)
            .copied()
            .filter(|c| *c == '\'' || *c == '"');
        let from = i + 1 + usize::from(quote.is_some());
        let len = var_name_len(&chars[from.min(chars.len())..]);
        let name: String = chars[from..from + len].iter().collect();
        let closed = quote.is_none() || chars.get(from + len).copied() == quote;
        match (self.vars.get(&name).cloned(), quote) {
            (Some(v), None) if len > 0 => {
                self.push_start(&v, n);
                from + len
            }
            (Some(v), Some(q)) if len > 0 && closed => {
                let d = q.to_string();
                let quoted = format!("{q}{}{q}", v.replace(q, &format!("{d}{d}")));
                self.push_start(&quoted, n);
                from + len + 1
            }
            _ => {
                self.push_start(":", n);
                i + 1
            }
        }
    }

    /// A backslash command: `\set`, `\unset` and `\getenv` change the
    /// variables, `\g` sends the buffer, all others are recorded.
    fn meta(&mut self, rest: &str, n: usize) -> Result<(), String> {
        let mut parts = rest[1..].splitn(2, char::is_whitespace);
        let name = parts.next().unwrap_or_default().to_string();
        let args = meta_args(parts.next().unwrap_or_default(), &self.vars);
        match name.as_str() {
            // psql's own variables (VERBOSITY, ...) change how psql
            // shows results, which is not reproduced: counted as skipped.
            "set" if !args.is_empty() && args[0] != args[0].to_ascii_uppercase() => {
                self.vars.insert(args[0].clone(), args[1..].concat());
            }
            "unset" if !args.is_empty() => {
                self.vars.remove(&args[0]);
            }
            "getenv" if args.len() == 2 => {
                if let Some(v) = self.env.get(&args[1]) {
                    self.vars.insert(args[0].clone(), v.clone());
                }
            }
            "g" => self.flush()?,
            _ => {
                if name.starts_with('g') {
                    self.flush()?;
                }
                self.items.push(Item::Meta {
                    command: rest.trim().to_string(),
                    line: n,
                });
            }
        }
        Ok(())
    }

    /// Ends the statement in the buffer.
    fn flush(&mut self) -> Result<(), String> {
        let text = self.buf.trim().to_string();
        self.buf.clear();
        self.parens = 0;
        self.begin_depth = 0;
        self.words.clear();
        self.word_count = 0;
        if text.is_empty() {
            return Ok(());
        }
        let line = self.start;
        let words: Vec<String> = text
            .split_whitespace()
            .map(|w| w.to_ascii_lowercase())
            .collect();
        let setting = words
            .iter()
            .position(|w| w == "standard_conforming_strings");
        match (words.first().map(String::as_str), setting) {
            (Some("set"), Some(i)) => {
                let value = words[i + 1..]
                    .iter()
                    .find(|w| !matches!(w.as_str(), "=" | "to"));
                self.standard_strings =
                    !value.is_some_and(|v| matches!(v.trim_matches('\''), "off" | "false" | "0"));
            }
            (Some("reset"), Some(_)) => self.standard_strings = true,
            _ => {}
        }
        let is_copy = words.first().is_some_and(|w| w == "copy");
        if is_copy && words.windows(2).any(|w| w[0] == "from" && w[1] == "stdin") {
            self.copy = Some((text, line, vec![]));
        } else if let Some((rewritten, path)) = is_copy.then(|| copy_from_file(&text)).flatten() {
            let file = if Path::new(&path).is_absolute() {
                path.into()
            } else {
                self.srcdir.join(&path)
            };
            let data = std::fs::read(&file).map_err(|e| format!("{}: {e}", file.display()))?;
            self.items.push(Item::Copy {
                text: rewritten,
                data,
                line,
            });
        } else {
            self.items.push(Item::Sql { text, line });
        }
        Ok(())
    }
}

/// `COPY t FROM 'path' rest` as `COPY t FROM STDIN rest` and the path.
fn copy_from_file(text: &str) -> Option<(String, String)> {
    let lower = text.to_ascii_lowercase();
    let mut at = 0;
    while let Some(off) = lower[at..].find("from") {
        let from = at + off;
        let after = text[from + 4..].trim_start();
        if let Some(quoted) = after.strip_prefix('\'') {
            let mut path = String::new();
            let mut chars = quoted.char_indices().peekable();
            while let Some((j, c)) = chars.next() {
                if c == '\'' {
                    if chars.peek().map(|p| p.1) == Some('\'') {
                        chars.next();
                        path.push('\'');
                        continue;
                    }
                    let rest = &quoted[j + 1..];
                    return Some((format!("{}FROM STDIN{rest}", &text[..from]), path));
                }
                path.push(c);
            }
            return None;
        }
        at = from + 4;
    }
    None
}

/// A meta-command's arguments as psql reads them: split on whitespace,
/// `'...'` unquoted (`''` and backslash escapes), `:name` substituted.
fn meta_args(text: &str, vars: &HashMap<String, String>) -> Vec<String> {
    let mut out = vec![];
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    let mut cur: Option<String> = None;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            out.extend(cur.take());
            i += 1;
            continue;
        }
        let arg = cur.get_or_insert_with(String::new);
        if c == '\'' {
            i += 1;
            while i < chars.len() {
                match chars[i] {
                    '\'' if chars.get(i + 1) == Some(&'\'') => {
                        arg.push('\'');
                        i += 1;
                    }
                    '\'' => break,
                    '\\' if i + 1 < chars.len() => {
                        i += 1;
                        arg.push(match chars[i] {
                            'n' => '\n',
                            't' => '\t',
                            other => other,
                        });
                    }
                    other => arg.push(other),
                }
                i += 1;
            }
            i += 1;
        } else if c == ':' {
            let len = var_name_len(&chars[i + 1..]);
            let name: String = chars[i + 1..i + 1 + len].iter().collect();
            match vars.get(&name) {
                Some(v) if len > 0 => arg.push_str(v),
                _ => arg.push_str(&format!(":{name}")),
            }
            i += 1 + len;
        } else {
            arg.push(c);
            i += 1;
        }
    }
    out.extend(cur);
    out
}

/// The statement's text on one line: whitespace runs as one space (the
/// form `known-differences.txt` lists).
pub fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
#[path = "script_tests.rs"]
mod tests;
