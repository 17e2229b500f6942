//! The psql-like splitter's tests (`script.rs`).
use super::*;

fn sql(items: &[Item]) -> Vec<String> {
    items
        .iter()
        .map(|i| match i {
            Item::Sql { text, .. } => text.clone(),
            Item::Copy { text, data, .. } => {
                format!("{text} <{}>", String::from_utf8_lossy(data))
            }
            Item::Meta { command, .. } => format!("META {command}"),
        })
        .collect()
}

fn split_str(text: &str) -> Vec<String> {
    sql(&split(text, &Env::new(), Path::new("/nowhere")).unwrap())
}

#[test]
fn semicolons_in_quotes_comments_and_parens_do_not_split() {
    let got = split_str(
        "-- head\nSELECT 'a;b', \"x;\" -- c; d\n FROM t; /* x; */ SELECT E'\\';' ;\nSELECT $f$ ; $f$, $1;",
    );
    assert_eq!(
        got,
        vec![
            "SELECT 'a;b', \"x;\" \n FROM t",
            "SELECT E'\\';'",
            "SELECT $f$ ; $f$, $1"
        ]
    );
}

#[test]
fn begin_atomic_bodies_and_dollar_bodies_stay_whole() {
    let got = split_str(
        "CREATE FUNCTION f() RETURNS int LANGUAGE SQL\nBEGIN ATOMIC\n  SELECT CASE WHEN true THEN 1 END;\nEND;\nSELECT 1;",
    );
    assert_eq!(got.len(), 2, "{got:?}");
    assert!(got[0].ends_with("END;\nEND"));
    let got = split_str("BEGIN; SELECT 1; END;");
    assert_eq!(got, vec!["BEGIN", "SELECT 1", "END"]);
}

#[test]
fn copy_data_and_meta_commands() {
    let got = split_str("COPY t FROM stdin;\n1\t2\n\\.\n\\pset null x\nSELECT 1::int;\n");
    assert_eq!(
        got,
        vec![
            "COPY t FROM stdin <1\t2\n>",
            "META \\pset null x",
            "SELECT 1::int"
        ]
    );
}

#[test]
fn variables_are_substituted_only_when_set() {
    let env: Env = [("PG_ABS_SRCDIR".to_string(), "/src".to_string())].into();
    let items = split(
        "\\getenv dir PG_ABS_SRCDIR\n\\set f :dir '/x.data'\nSELECT :'f', :\"f\", :f, :unset, a::text;",
        &env,
        Path::new("/nowhere"),
    )
    .unwrap();
    assert_eq!(
        sql(&items),
        vec!["SELECT '/src/x.data', \"/src/x.data\", /src/x.data, :unset, a::text"]
    );
}

#[test]
fn backslashes_escape_quotes_while_standard_conforming_strings_is_off() {
    let got = split_str(
        "set standard_conforming_strings = off;\nselect 'a\\';' ;\nreset standard_conforming_strings;\nselect 'a\\';",
    );
    assert_eq!(
        got,
        vec![
            "set standard_conforming_strings = off",
            "select 'a\\';'",
            "reset standard_conforming_strings",
            "select 'a\\'"
        ]
    );
}

#[test]
fn copy_from_a_file_becomes_copy_from_stdin() {
    assert_eq!(
        copy_from_file("COPY onek FROM '/a/b''c' WITH (FORMAT text)"),
        Some((
            "COPY onek FROM STDIN WITH (FORMAT text)".to_string(),
            "/a/b'c".to_string()
        ))
    );
    assert_eq!(copy_from_file("COPY t FROM STDIN"), None);
}
