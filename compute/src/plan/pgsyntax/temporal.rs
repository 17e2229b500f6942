//! Datetime spellings: `AT TIME ZONE`, `EXTRACT` and interval literals as
//! PostgreSQL reads them (called by `spellings::rewrite`).

use datafusion::sql::sqlparser::ast::{DataType, Expr, Value};

use super::pieces::{call, cast, take};

/// `ts AT TIME ZONE z` is `pg_at_time_zone(ts, z)` (`crate::pgzone`):
/// PostgreSQL's operator turns a timestamptz into the local timestamp in
/// `z` and a timestamp into the timestamptz it is in `z`, where DataFusion
/// casts either to a timestamptz. A string constant is a timestamptz, as
/// PostgreSQL resolves it.
pub(super) fn at_time_zone(e: &mut Expr) -> bool {
    let Expr::AtTimeZone {
        timestamp,
        time_zone,
    } = e
    else {
        return false;
    };
    let mut ts = take(timestamp);
    if matches!(&ts, Expr::Value(v) if matches!(v.value, Value::SingleQuotedString(_))) {
        ts = cast(
            ts,
            DataType::Timestamp(
                None,
                datafusion::sql::sqlparser::ast::TimezoneInfo::WithTimeZone,
            ),
        );
    }
    let zone = take(time_zone);
    *e = call("pg_at_time_zone", vec![ts, zone]);
    true
}

/// `EXTRACT(unit FROM x)` is `pg_extract('unit', x)` (`crate::pgextract`:
/// numeric at the unit's scale, PostgreSQL's units and errors).
pub(super) fn extract(e: &mut Expr) -> bool {
    use datafusion::sql::sqlparser::ast::DateTimeField;
    let Expr::Extract { field, expr, .. } = e else {
        return false;
    };
    let unit = match field {
        DateTimeField::Custom(ident) => ident.value.clone(),
        other => other.to_string(),
    };
    let x = take(expr);
    *e = call(
        crate::pgextract::NAME,
        vec![Expr::value(Value::SingleQuotedString(unit)), x],
    );
    true
}

/// `INTERVAL 'text'` is `CAST('text' AS interval)`, which reads the text
/// as PostgreSQL does (`crate::pginterval::interval_in`: `1 day 04:05`,
/// `04:05:06.7`), where DataFusion's parser refuses it; with fields
/// (`INTERVAL '1' DAY`) it is `pg_interval_in('1', 'DAY')`.
pub(super) fn interval_literal(e: &mut Expr) -> bool {
    let Expr::Interval(i) = e else {
        return false;
    };
    let text_only = i.leading_precision.is_none()
        && i.fractional_seconds_precision.is_none()
        && matches!(i.value.as_ref(), Expr::Value(v) if matches!(v.value, Value::SingleQuotedString(_)));
    if !text_only {
        return false;
    }
    if let Some(lead) = &i.leading_field {
        // `INTERVAL '1:30' MINUTE TO SECOND`: PostgreSQL's input with the
        // fields, a call the planner folds.
        let fields = match &i.last_field {
            Some(last) => format!("{lead} to {last}"),
            None => lead.to_string(),
        };
        if crate::pginterval::udf::fields_named(&fields).is_none() {
            return false;
        }
        let text = take(i.value.as_mut());
        *e = call(
            crate::pginterval::udf::NAME,
            vec![text, Expr::value(Value::SingleQuotedString(fields))],
        );
        return true;
    }
    let text = take(i.value.as_mut());
    *e = cast(
        text,
        DataType::Interval {
            fields: None,
            precision: None,
        },
    );
    true
}
