//! `exp` and `power` (which `^` is) with PostgreSQL's errors: a result
//! past float8's range is 22003 `value out of range: overflow`, where
//! DataFusion answers Infinity (PostgreSQL's `dexp` and `dpow`); `0 ^ -1`
//! and `(-8) ^ 0.5` are 2201F, where DataFusion answers Infinity and NaN.

use std::sync::Arc;

use common::{Error, SqlState};
use datafusion::arrow::array::{Array, ArrayRef, AsArray, Float64Array};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Float64Type};
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::context::SessionContext;
use datafusion::logical_expr::{ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl};

/// Registers the checked `exp` and `power` in `ctx`, over DataFusion's.
pub fn register(ctx: &SessionContext) {
    use datafusion::functions::math;
    for (inner, power) in [(math::exp(), false), (math::power(), true)] {
        ctx.register_udf(ScalarUDF::new_from_impl(RangeChecked { inner, power }));
    }
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct RangeChecked {
    inner: Arc<ScalarUDF>,
    /// `power(x, y)`; else `exp(x)`.
    power: bool,
}

fn error(state: &'static str, message: &str) -> DataFusionError {
    DataFusionError::External(Box::new(Error::Sql {
        state: SqlState(state),
        message: message.to_string(),
    }))
}

/// The arrays as float8, or `None` when one is not a number.
fn floats(arrays: &[ArrayRef]) -> Result<Option<Vec<ArrayRef>>> {
    if !arrays.iter().all(|a| a.data_type().is_numeric()) {
        return Ok(None);
    }
    let out = arrays
        .iter()
        .map(|a| cast(a, &DataType::Float64))
        .collect::<std::result::Result<Vec<_>, _>>()?;
    Ok(Some(out))
}

/// `x ^ y` outside power's domain (PostgreSQL's `dpow`, `power_var`); a
/// NaN operand is not (`power(-1, 'NaN')` is NaN).
fn power_domain(x: f64, y: f64) -> Result<()> {
    if x.is_nan() || y.is_nan() {
        return Ok(());
    }
    if x == 0.0 && y < 0.0 {
        return Err(error(
            "2201F",
            "zero raised to a negative power is undefined",
        ));
    }
    if x < 0.0 && y.floor() != y {
        return Err(error(
            "2201F",
            "a negative number raised to a non-integer power yields a complex result",
        ));
    }
    Ok(())
}

/// A float8 result `r` of finite arguments that overflowed. (A result
/// that underflows to 0 is left as 0: the function cannot tell float8
/// arguments, for which PostgreSQL raises 22003, from numeric ones the
/// planner has already cast to float8, whose results round to 0.)
fn in_range(r: f64) -> Result<()> {
    if r.is_infinite() {
        return Err(error("22003", "value out of range: overflow"));
    }
    Ok(())
}

impl ScalarUDFImpl for RangeChecked {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn aliases(&self) -> &[String] {
        self.inner.aliases()
    }
    fn signature(&self) -> &datafusion::logical_expr::Signature {
        self.inner.signature()
    }
    fn coerce_types(&self, args: &[DataType]) -> Result<Vec<DataType>> {
        self.inner.coerce_types(args)
    }
    fn return_type(&self, args: &[DataType]) -> Result<DataType> {
        self.inner.return_type(args)
    }
    fn return_field_from_args(
        &self,
        args: datafusion::logical_expr::ReturnFieldArgs,
    ) -> Result<datafusion::arrow::datatypes::FieldRef> {
        self.inner.return_field_from_args(args)
    }
    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let n = args.number_rows;
        let arrays = ColumnarValue::values_to_arrays(&args.args)?;
        let inputs = floats(&arrays)?;
        if let (true, Some([x, y])) = (self.power, inputs.as_deref()) {
            let (x, y) = (
                x.as_primitive::<Float64Type>(),
                y.as_primitive::<Float64Type>(),
            );
            for (x, y) in x.iter().zip(y.iter()) {
                if let (Some(x), Some(y)) = (x, y) {
                    power_domain(x, y)?;
                }
            }
        }
        let out = self.inner.invoke_with_args(args)?;
        let (Some(inputs), DataType::Float64) = (inputs, out.data_type()) else {
            return Ok(out);
        };
        let result = out.to_array(n)?;
        let result = result.as_primitive::<Float64Type>();
        let args: Vec<_> = inputs
            .iter()
            .map(|a| a.as_primitive::<Float64Type>())
            .collect();
        for i in 0..result.len() {
            // All inputs have one length; all scalars have length 1.
            let finite = |a: &&Float64Array| {
                let j = if a.len() == 1 { 0 } else { i };
                a.is_valid(j) && a.value(j).is_finite()
            };
            if result.is_valid(i) && args.iter().all(finite) {
                in_range(result.value(i))?;
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn power_domain_and_range_are_postgresql_s() {
        assert!(power_domain(0.0, -1.0).is_err());
        assert!(power_domain(-8.0, 0.5).is_err());
        assert!(power_domain(-8.0, 3.0).is_ok());
        assert!(power_domain(0.0, 0.0).is_ok());
        assert!(power_domain(-1.0, f64::NAN).is_ok());
        assert!(in_range(f64::INFINITY).is_err());
        assert!(in_range(0.0).is_ok());
        assert!(in_range(1e-300).is_ok());
    }
}
