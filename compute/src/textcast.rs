//! Casts to text that print a value as the wire encoder does
//! (`pgtypes::arrow_text`): a float as `float8out` / `float4out` print it
//! (`3`, not `3.0`; `1e+300`), an array as `array_out` does (`{1,2}`, not
//! Arrow's `[1, 2]`). `pgcasts` rewrites `CAST(x AS text)` of those types
//! to [`udf_for`]'s function.

use std::sync::{Arc, LazyLock};

use datafusion::arrow::array::{ArrayRef, StringBuilder};
use datafusion::arrow::datatypes::DataType;
use datafusion::error::Result;
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};

/// The function that casts a `from` value to PostgreSQL's text, when
/// DataFusion's own cast prints it otherwise.
pub fn udf_for(from: &DataType) -> Option<Arc<ScalarUDF>> {
    match from {
        DataType::Float64 => Some(FLOAT8_TEXT.clone()),
        DataType::Float32 => Some(FLOAT4_TEXT.clone()),
        DataType::List(_) | DataType::LargeList(_) | DataType::FixedSizeList(..) => {
            Some(ARRAY_TEXT.clone())
        }
        _ => None,
    }
}

static FLOAT8_TEXT: LazyLock<Arc<ScalarUDF>> =
    LazyLock::new(|| Arc::new(ScalarUDF::new_from_impl(WireText::new("pg_float8_text"))));
static FLOAT4_TEXT: LazyLock<Arc<ScalarUDF>> =
    LazyLock::new(|| Arc::new(ScalarUDF::new_from_impl(WireText::new("pg_float4_text"))));
static ARRAY_TEXT: LazyLock<Arc<ScalarUDF>> =
    LazyLock::new(|| Arc::new(ScalarUDF::new_from_impl(WireText::new("pg_array_text"))));

/// One value's wire text as a function (`pg_float8_text(x)`, ...).
#[derive(Debug, PartialEq, Eq, Hash)]
struct WireText {
    name: &'static str,
    signature: Signature,
}

impl WireText {
    fn new(name: &'static str) -> Self {
        WireText {
            name,
            signature: Signature::any(1, Volatility::Immutable),
        }
    }
}

impl ScalarUDFImpl for WireText {
    fn name(&self) -> &str {
        self.name
    }
    fn signature(&self) -> &Signature {
        &self.signature
    }
    fn return_type(&self, _args: &[DataType]) -> Result<DataType> {
        Ok(DataType::Utf8)
    }
    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let arrays: Vec<ArrayRef> = ColumnarValue::values_to_arrays(&args.args)?;
        let Some(col) = arrays.first() else {
            return Ok(ColumnarValue::Scalar(
                datafusion::common::ScalarValue::Utf8(None),
            ));
        };
        let mut out = StringBuilder::with_capacity(col.len(), col.len() * 12);
        for i in 0..col.len() {
            // `arrow_text` answers None for a NULL.
            out.append_option(crate::pgtypes::arrow_text(col, i));
        }
        Ok(ColumnarValue::Array(Arc::new(out.finish())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{Array, AsArray, Float64Array, Int32Array, ListArray};
    use datafusion::arrow::datatypes::Int32Type;

    fn run(udf: Arc<ScalarUDF>, col: ArrayRef) -> Vec<Option<String>> {
        let n = col.len();
        let field = Arc::new(datafusion::arrow::datatypes::Field::new(
            "x",
            col.data_type().clone(),
            true,
        ));
        let args = ScalarFunctionArgs {
            args: vec![ColumnarValue::Array(col)],
            arg_fields: vec![field],
            number_rows: n,
            return_field: Arc::new(datafusion::arrow::datatypes::Field::new(
                "t",
                DataType::Utf8,
                true,
            )),
            config_options: Arc::new(Default::default()),
        };
        let out = udf.invoke_with_args(args).unwrap().to_array(n).unwrap();
        let s = out.as_string::<i32>();
        (0..n)
            .map(|i| s.is_valid(i).then(|| s.value(i).to_string()))
            .collect()
    }

    #[test]
    fn floats_and_arrays_cast_to_postgresql_s_text() {
        let f: ArrayRef = Arc::new(Float64Array::from(vec![Some(3.0), Some(1e300), None]));
        assert_eq!(
            run(udf_for(&DataType::Float64).unwrap(), f),
            vec![Some("3".into()), Some("1e+300".into()), None]
        );
        let l: ArrayRef = Arc::new(ListArray::from_iter_primitive::<Int32Type, _, _>(vec![
            Some(vec![Some(1), Some(2)]),
            Some(vec![Some(3), None]),
            None,
        ]));
        assert_eq!(
            run(udf_for(l.data_type()).unwrap(), l),
            vec![Some("{1,2}".into()), Some("{3,NULL}".into()), None]
        );
        let i: ArrayRef = Arc::new(Int32Array::from(vec![1]));
        assert!(udf_for(i.data_type()).is_none());
    }
}
