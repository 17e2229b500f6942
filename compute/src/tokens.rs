//! Token rewrites applied before sqlparser reads a statement, where
//! PostgreSQL accepts spellings sqlparser does not (COPY's boolean options,
//! sequence options in any order). Each moves or respells tokens only;
//! the statement means what the client wrote.

use datafusion::sql::sqlparser::keywords::Keyword;

/// Sequence options (CREATE SEQUENCE, `AS IDENTITY (...)`) come in any
/// order in PostgreSQL (pg_dump writes `START WITH 1 INCREMENT BY 1 ...`);
/// sqlparser reads them only as AS, INCREMENT, MINVALUE, MAXVALUE, START,
/// CACHE, CYCLE. Each option's tokens are moved into that order (stably;
/// a repeated option stays repeated, for the planner's 42601).
pub(crate) fn sequence_options_in_order(
    tokens: &mut Vec<datafusion::sql::sqlparser::tokenizer::TokenWithSpan>,
) {
    use datafusion::sql::sqlparser::tokenizer::Token;
    let kw = |t: &Token| match t {
        Token::Word(w) if w.quote_style.is_none() => Some(w.keyword),
        _ => None,
    };
    let significant: Vec<usize> = (0..tokens.len())
        .filter(|&i| !matches!(tokens[i].token, Token::Whitespace(_)))
        .collect();
    let at = |k: usize| significant.get(k).map(|&i| &tokens[i].token);
    // Regions (token index ranges) holding options only.
    let mut regions: Vec<(usize, usize)> = vec![];
    for k in 0..significant.len() {
        let region_start = if kw(at(k).unwrap_or(&Token::EOF)) == Some(Keyword::SEQUENCE)
            && k > 0
            && matches!(
                at(k - 1).and_then(kw),
                Some(Keyword::CREATE | Keyword::TEMP | Keyword::TEMPORARY)
            ) {
            // Past IF NOT EXISTS and the name.
            let mut j = k + 1;
            if at(j).and_then(kw) == Some(Keyword::IF) {
                j += 3;
            }
            j += 1;
            while matches!(at(j), Some(Token::Period)) {
                j += 2;
            }
            Some((j, false))
        } else if at(k).and_then(kw) == Some(Keyword::IDENTITY)
            && matches!(at(k + 1), Some(Token::LParen))
        {
            Some((k + 2, true))
        } else {
            None
        };
        let Some((mut j, in_parens)) = region_start else {
            continue;
        };
        let first = j;
        while let Some(t) = at(j) {
            let ends = match t {
                Token::SemiColon | Token::EOF => true,
                Token::RParen => in_parens,
                Token::LParen => true,
                t => kw(t) == Some(Keyword::OWNED),
            };
            if ends {
                break;
            }
            j += 1;
        }
        if j > first {
            let start = significant[first];
            let end = significant.get(j).copied().unwrap_or(tokens.len());
            // Whitespace before the first option stays where it is.
            regions.push((start, end));
        }
    }
    for (start, end) in regions.into_iter().rev() {
        let rank = |i: usize, next: Option<&Token>| -> Option<u8> {
            match kw(&tokens[i].token)? {
                Keyword::AS => Some(0),
                Keyword::INCREMENT => Some(1),
                Keyword::MINVALUE => Some(2),
                Keyword::MAXVALUE => Some(3),
                Keyword::START => Some(4),
                Keyword::CACHE => Some(5),
                Keyword::CYCLE => Some(6),
                Keyword::NO => match next.and_then(kw) {
                    Some(Keyword::MINVALUE) => Some(2),
                    Some(Keyword::MAXVALUE) => Some(3),
                    Some(Keyword::CYCLE) => Some(6),
                    _ => None,
                },
                _ => None,
            }
        };
        let mut groups: Vec<(
            u8,
            Vec<datafusion::sql::sqlparser::tokenizer::TokenWithSpan>,
        )> = vec![];
        let mut i = start;
        let mut pending_ws = vec![];
        let mut after_no = false;
        while i < end {
            let t = &tokens[i];
            if matches!(t.token, Token::Whitespace(_)) {
                pending_ws.push(t.clone());
                i += 1;
                continue;
            }
            let next = tokens[i + 1..end]
                .iter()
                .map(|t| &t.token)
                .find(|t| !matches!(t, Token::Whitespace(_)));
            match rank(i, next).filter(|_| !after_no) {
                Some(r) => {
                    let mut g = std::mem::take(&mut pending_ws);
                    g.push(t.clone());
                    groups.push((r, g));
                }
                None => match groups.last_mut() {
                    Some((_, g)) => {
                        g.append(&mut pending_ws);
                        g.push(t.clone());
                    }
                    // Not options after all: leave the region alone.
                    None => {
                        groups.clear();
                        break;
                    }
                },
            }
            after_no = kw(&t.token) == Some(Keyword::NO);
            i += 1;
        }
        if groups.is_empty() {
            continue;
        }
        if let Some((_, g)) = groups.last_mut() {
            g.append(&mut pending_ws);
        }
        groups.sort_by_key(|(r, _)| *r);
        // Every group starts with whitespace (or is first).
        let mut out = vec![];
        for (n, (_, g)) in groups.into_iter().enumerate() {
            if n > 0 && !matches!(g.first().map(|t| &t.token), Some(Token::Whitespace(_))) {
                out.push(datafusion::sql::sqlparser::tokenizer::TokenWithSpan::wrap(
                    Token::Whitespace(datafusion::sql::sqlparser::tokenizer::Whitespace::Space),
                ));
            }
            out.extend(g);
        }
        tokens.splice(start..end, out);
    }
}

/// COPY's boolean options take any of PostgreSQL's boolean spellings
/// (`FREEZE ON`, `HEADER 1`: pgbench sends `WITH (freeze on)`); sqlparser
/// reads only TRUE and FALSE, so the others are spelled so first.
pub(crate) fn copy_booleans(tokens: &mut [datafusion::sql::sqlparser::tokenizer::TokenWithSpan]) {
    use datafusion::sql::sqlparser::tokenizer::{Token, Word};
    let mut prev_option = false;
    for t in tokens.iter_mut() {
        if matches!(t.token, Token::Whitespace(_)) {
            continue;
        }
        if prev_option {
            let value = match &t.token {
                Token::Word(w) if w.quote_style.is_none() => {
                    match w.value.to_ascii_lowercase().as_str() {
                        "on" | "yes" => Some(true),
                        "off" | "no" => Some(false),
                        _ => None,
                    }
                }
                Token::Number(n, _) if n == "1" => Some(true),
                Token::Number(n, _) if n == "0" => Some(false),
                _ => None,
            };
            if let Some(v) = value {
                let (text, keyword) = if v {
                    ("TRUE", Keyword::TRUE)
                } else {
                    ("FALSE", Keyword::FALSE)
                };
                t.token = Token::Word(Word {
                    value: text.into(),
                    quote_style: None,
                    keyword,
                });
            }
        }
        prev_option = matches!(
            &t.token,
            Token::Word(w) if matches!(w.keyword, Keyword::FREEZE | Keyword::HEADER)
        );
    }
}

/// `FORCE_QUOTE *`, as [`copy_force_quote_all`] spells it: a name no
/// column can have (PostgreSQL names cannot hold NUL).
pub const ALL_COLUMNS: &str = "\0*";

/// `FORCE_QUOTE *` (and the older `FORCE QUOTE *`) in a COPY quotes every
/// column; sqlparser reads only a list of names, so the `*` is spelled
/// `("\0*")` (`"\0*"`), the list naming [`ALL_COLUMNS`]
/// (no column's name can hold NUL).
pub(crate) fn copy_force_quote_all(
    tokens: &mut Vec<datafusion::sql::sqlparser::tokenizer::TokenWithSpan>,
) {
    use datafusion::sql::sqlparser::tokenizer::{Token, TokenWithSpan, Word};
    let mut i = 0;
    let mut prev: Option<Keyword> = None;
    while i < tokens.len() {
        let kw = match &tokens[i].token {
            Token::Whitespace(_) => {
                i += 1;
                continue;
            }
            Token::Word(w) if w.quote_style.is_none() => Some(w.keyword),
            _ => None,
        };
        // `FORCE_QUOTE (...)` takes a parenthesized list, the older
        // `FORCE QUOTE a, b` a bare one.
        let parenthesized = matches!(prev, Some(Keyword::FORCE_QUOTE));
        let bare = matches!(prev, Some(Keyword::QUOTE)) && forced(tokens, i);
        if (parenthesized || bare) && tokens[i].token == Token::Mul {
            let span = tokens[i].span;
            let at = |token| TokenWithSpan { token, span };
            let all = at(Token::Word(Word {
                value: ALL_COLUMNS.into(),
                quote_style: Some('"'),
                keyword: Keyword::NoKeyword,
            }));
            let n = if parenthesized {
                tokens.splice(i..=i, [at(Token::LParen), all, at(Token::RParen)]);
                3
            } else {
                tokens[i] = all;
                1
            };
            i += n;
            prev = None;
            continue;
        }
        prev = kw;
        i += 1;
    }
}

/// Whether the QUOTE keyword before token `i` follows FORCE (`FORCE QUOTE
/// *`).
fn forced(tokens: &[datafusion::sql::sqlparser::tokenizer::TokenWithSpan], i: usize) -> bool {
    use datafusion::sql::sqlparser::tokenizer::Token;
    let mut words = tokens[..i]
        .iter()
        .rev()
        .filter(|t| !matches!(t.token, Token::Whitespace(_)));
    let _quote = words.next();
    matches!(words.next().map(|t| &t.token), Some(Token::Word(w)) if w.keyword == Keyword::FORCE)
}
