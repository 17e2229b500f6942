//! `CatalogFn`: a catalog function evaluated row by row on scalar
//! arguments against the statement's snapshot, and the value conversions
//! the functions share.

use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType, Field};
use datafusion::common::ScalarValue;
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::{ColumnarValue, ScalarFunctionArgs, ScalarUDFImpl, Signature};

use super::Snapshot;

pub(super) type Body = Arc<dyn Fn(&Snapshot, &[ScalarValue]) -> Result<ScalarValue> + Send + Sync>;

/// A catalog function: evaluated row by row on scalar arguments.
pub(super) struct CatalogFn {
    pub(super) name: &'static str,
    pub(super) ret: DataType,
    pub(super) signature: Signature,
    pub(super) snapshot: Arc<Snapshot>,
    pub(super) body: Body,
    /// The result type and body when the first argument is text (`'t'::regclass`
    /// is an OID, `oid::regclass` a name).
    pub(super) text_arg: Option<(DataType, Body)>,
}

fn is_text_type(t: &DataType) -> bool {
    matches!(t, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View)
}

impl std::fmt::Debug for CatalogFn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CatalogFn({})", self.name)
    }
}
impl PartialEq for CatalogFn {
    fn eq(&self, o: &Self) -> bool {
        self.name == o.name && Arc::ptr_eq(&self.snapshot, &o.snapshot)
    }
}
impl Eq for CatalogFn {}
impl std::hash::Hash for CatalogFn {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.name.hash(h)
    }
}

impl ScalarUDFImpl for CatalogFn {
    fn name(&self) -> &str {
        self.name
    }
    fn signature(&self) -> &Signature {
        &self.signature
    }
    fn return_type(&self, args: &[DataType]) -> Result<DataType> {
        Ok(match (&self.text_arg, args.first()) {
            (Some((t, _)), Some(a)) if is_text_type(a) => t.clone(),
            _ => self.ret.clone(),
        })
    }
    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let (ret, body) = match (&self.text_arg, args.args.first()) {
            (Some((t, b)), Some(a)) if is_text_type(&a.data_type()) => (t, b),
            _ => (&self.ret, &self.body),
        };
        let scalar = args
            .args
            .iter()
            .all(|a| matches!(a, ColumnarValue::Scalar(_)));
        let n = args.number_rows;
        let arrays = ColumnarValue::values_to_arrays(&args.args)?;
        let rows = if scalar { 1 } else { n };
        let mut out = Vec::with_capacity(rows);
        for i in 0..rows {
            let vals = arrays
                .iter()
                .map(|a| ScalarValue::try_from_array(a, i))
                .collect::<Result<Vec<_>>>()?;
            let v = body(&self.snapshot, &vals)?;
            out.push(if v.is_null() {
                ScalarValue::try_from(ret)?
            } else {
                v
            });
        }
        if scalar {
            Ok(ColumnarValue::Scalar(
                out.pop().unwrap_or(ScalarValue::try_from(ret)?),
            ))
        } else if out.is_empty() {
            Ok(ColumnarValue::Array(
                datafusion::arrow::array::new_empty_array(ret),
            ))
        } else {
            Ok(ColumnarValue::Array(ScalarValue::iter_to_array(out)?))
        }
    }
}

pub(super) fn int(v: Option<&ScalarValue>) -> Option<i64> {
    let v = v?;
    if v.is_null() {
        return None;
    }
    match v {
        ScalarValue::Utf8(Some(s))
        | ScalarValue::LargeUtf8(Some(s))
        | ScalarValue::Utf8View(Some(s)) => s.trim().parse().ok(),
        other => other.cast_to(&DataType::Int64).ok().and_then(|x| match x {
            ScalarValue::Int64(i) => i,
            _ => None,
        }),
    }
}

pub(super) fn text(v: Option<&ScalarValue>) -> Option<String> {
    let v = v?;
    if v.is_null() {
        return None;
    }
    match v {
        ScalarValue::Utf8(Some(s))
        | ScalarValue::LargeUtf8(Some(s))
        | ScalarValue::Utf8View(Some(s)) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

/// The number of elements of a one-row list value.
pub(super) fn list_len(v: Option<&ScalarValue>) -> Option<usize> {
    use datafusion::arrow::array::Array;
    match v? {
        ScalarValue::List(l) if !l.is_null(0) => Some(l.value(0).len()),
        ScalarValue::LargeList(l) if !l.is_null(0) => Some(l.value(0).len()),
        _ => None,
    }
}

/// The element type of `tessera_expandarray`: `(x bigint, n integer)`.
pub(super) fn expanded_type() -> DataType {
    DataType::Struct(
        vec![
            Field::new("x", DataType::Int64, true),
            Field::new("n", DataType::Int32, true),
        ]
        .into(),
    )
}

/// `_pg_expandarray(a)` as a list of `(x, n)` structs.
pub(super) fn expand_array(v: Option<&ScalarValue>) -> ScalarValue {
    use datafusion::arrow::array::{Array, Int32Array, Int64Array, ListArray, StructArray};
    use datafusion::arrow::buffer::OffsetBuffer;
    let items: Vec<Option<i64>> = match v {
        Some(ScalarValue::List(l)) if !l.is_null(0) => {
            let values = l.value(0);
            (0..values.len())
                .map(|i| int(ScalarValue::try_from_array(&values, i).ok().as_ref()))
                .collect()
        }
        _ => vec![],
    };
    let DataType::Struct(fields) = expanded_type() else {
        return ScalarValue::Null;
    };
    let n = items.len();
    let structs = StructArray::new(
        fields,
        vec![
            Arc::new(Int64Array::from(items)),
            Arc::new(Int32Array::from((1..=n as i32).collect::<Vec<_>>())),
        ],
        None,
    );
    let list = ListArray::new(
        Arc::new(Field::new("item", expanded_type(), true)),
        OffsetBuffer::from_lengths([n]),
        Arc::new(structs),
        None,
    );
    ScalarValue::List(Arc::new(list))
}

/// A JSON string literal.
pub(super) fn json_string(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

/// A value as `json_build_object` writes it.
pub(super) fn json_value(v: &ScalarValue) -> String {
    if v.is_null() {
        return "null".into();
    }
    match v {
        ScalarValue::Boolean(Some(b)) => b.to_string(),
        ScalarValue::Int8(_)
        | ScalarValue::Int16(_)
        | ScalarValue::Int32(_)
        | ScalarValue::Int64(_)
        | ScalarValue::UInt8(_)
        | ScalarValue::UInt16(_)
        | ScalarValue::UInt32(_)
        | ScalarValue::UInt64(_)
        | ScalarValue::Float32(_)
        | ScalarValue::Float64(_)
        | ScalarValue::Decimal128(..) => v.to_string(),
        other => json_string(&text(Some(other)).unwrap_or_default()),
    }
}

pub(super) fn flag(v: Option<&ScalarValue>) -> bool {
    matches!(v, Some(ScalarValue::Boolean(Some(true))))
}

pub(super) fn s(v: Option<String>) -> ScalarValue {
    ScalarValue::Utf8(v)
}

pub(super) fn undefined(kind: &str, name: &str) -> DataFusionError {
    let (state, what) = if kind == "type" {
        ("42704", "type")
    } else {
        ("42P01", "relation")
    };
    DataFusionError::External(Box::new(common::Error::Sql {
        state: common::SqlState(state),
        message: format!("{what} \"{name}\" does not exist"),
    }))
}
