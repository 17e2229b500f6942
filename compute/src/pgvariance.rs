//! PostgreSQL's `var_pop`, `var_samp`, `stddev_pop` and `stddev_samp`
//! (and `variance` / `stddev`, spelled as the sample forms): numeric for
//! integer and numeric input, rewritten by `dscale::variance` into sums
//! the shards compute before they run; double precision for floats,
//! computed here with PostgreSQL's own algorithm (`float8_accum`,
//! `float8_combine`: the Youngs-Cramer sums N, Sx and Sxx), so an
//! infinity or NaN among the values makes the answer NaN (DataFusion
//! answered 0 for one such value) and the digits are PostgreSQL's where
//! the values meet in the same order.

use std::sync::Arc;

use common::Error;
use datafusion::arrow::array::{Array, ArrayRef, AsArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Field, FieldRef, Float64Type};
use datafusion::common::types::{logical_float64, NativeType};
use datafusion::common::ScalarValue;
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::{
    Accumulator, AggregateUDF, AggregateUDFImpl, Coercion, Signature, TypeSignature,
    TypeSignatureClass, Volatility,
};
use datafusion::prelude::SessionContext;

use crate::dscale::{Statistic, STATISTICS};
use crate::numeric::{numeric_avg, STORED_SCALE};

/// Registers the four aggregates in `ctx`, replacing DataFusion's.
pub fn register(ctx: &SessionContext) {
    for (name, stat) in STATISTICS {
        ctx.register_udaf(AggregateUDF::new_from_impl(PgVariance {
            name,
            stat,
            signature: signature(),
        }));
    }
}

fn signature() -> Signature {
    Signature::one_of(
        vec![
            TypeSignature::Coercible(vec![Coercion::new_exact(TypeSignatureClass::Decimal)]),
            TypeSignature::Coercible(vec![Coercion::new_exact(TypeSignatureClass::Integer)]),
            TypeSignature::Coercible(vec![Coercion::new_implicit(
                TypeSignatureClass::Native(logical_float64()),
                vec![TypeSignatureClass::Float],
                NativeType::Float64,
            )]),
        ],
        Volatility::Immutable,
    )
}

/// One of the four aggregates.
#[derive(Debug, PartialEq, Eq, Hash)]
struct PgVariance {
    name: &'static str,
    stat: Statistic,
    signature: Signature,
}

fn rewritten(name: &str) -> DataFusionError {
    DataFusionError::Internal(format!(
        "numeric {name} is rewritten into sums before it runs"
    ))
}

impl AggregateUDFImpl for PgVariance {
    fn name(&self) -> &str {
        self.name
    }
    fn signature(&self) -> &Signature {
        &self.signature
    }
    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        Ok(match arg_types.first() {
            Some(t) if numeric_avg(t) => DataType::Decimal128(38, STORED_SCALE),
            _ => DataType::Float64,
        })
    }
    fn accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        if numeric_avg(args.expr_fields[0].data_type()) {
            return Err(rewritten(self.name));
        }
        Ok(Box::new(YoungsCramer {
            n: 0.0,
            sx: 0.0,
            sxx: 0.0,
            stat: self.stat,
        }))
    }
    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        if numeric_avg(args.input_fields[0].data_type()) {
            return Err(rewritten(self.name));
        }
        Ok(["n", "sx", "sxx"]
            .iter()
            .map(|f| {
                Arc::new(Field::new(
                    format!("{}_{f}", args.name),
                    DataType::Float64,
                    true,
                ))
            })
            .collect())
    }
}

/// PostgreSQL's float8 transition state: N, Sx, Sxx.
#[derive(Debug)]
struct YoungsCramer {
    n: f64,
    sx: f64,
    sxx: f64,
    stat: Statistic,
}

fn overflow() -> DataFusionError {
    DataFusionError::External(Box::new(Error::NumericOutOfRange {
        message: "value out of range: overflow".into(),
    }))
}

impl YoungsCramer {
    /// `float8_accum`.
    fn add(&mut self, x: f64) -> Result<()> {
        let old_n = self.n;
        let old_sx = self.sx;
        self.n += 1.0;
        self.sx += x;
        if old_n > 0.0 {
            let tmp = x * self.n - self.sx;
            self.sxx += tmp * tmp / (self.n * old_n);
            if self.sx.is_infinite() || self.sxx.is_infinite() {
                if !old_sx.is_infinite() && !x.is_infinite() {
                    return Err(overflow());
                }
                self.sxx = f64::NAN;
            }
        } else if !x.is_finite() {
            self.sxx = f64::NAN;
        }
        Ok(())
    }

    /// `float8_combine`.
    fn combine(&mut self, n2: f64, sx2: f64, sxx2: f64) -> Result<()> {
        if n2 == 0.0 {
            return Ok(());
        }
        if self.n == 0.0 {
            (self.n, self.sx, self.sxx) = (n2, sx2, sxx2);
            return Ok(());
        }
        let (n1, sx1, sxx1) = (self.n, self.sx, self.sxx);
        self.n = n1 + n2;
        self.sx = sx1 + sx2;
        if self.sx.is_infinite() && !sx1.is_infinite() && !sx2.is_infinite() {
            return Err(overflow());
        }
        let tmp = sx1 / n1 - sx2 / n2;
        self.sxx = sxx1 + sxx2 + n1 * n2 * tmp * tmp / self.n;
        if self.sxx.is_infinite() && !sxx1.is_infinite() && !sxx2.is_infinite() {
            return Err(overflow());
        }
        Ok(())
    }
}

fn floats(a: &ArrayRef) -> Result<ArrayRef> {
    Ok(cast(a, &DataType::Float64)?)
}

impl Accumulator for YoungsCramer {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        let v = floats(&values[0])?;
        for x in v.as_primitive::<Float64Type>().iter().flatten() {
            self.add(x)?;
        }
        Ok(())
    }
    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        let (n, sx, sxx) = (
            states[0].as_primitive::<Float64Type>(),
            states[1].as_primitive::<Float64Type>(),
            states[2].as_primitive::<Float64Type>(),
        );
        for i in 0..n.len() {
            if n.is_null(i) {
                continue;
            }
            self.combine(n.value(i), sx.value(i), sxx.value(i))?;
        }
        Ok(())
    }
    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        Ok(vec![
            ScalarValue::Float64(Some(self.n)),
            ScalarValue::Float64(Some(self.sx)),
            ScalarValue::Float64(Some(self.sxx)),
        ])
    }
    fn evaluate(&mut self) -> Result<ScalarValue> {
        let d = if self.stat.sample {
            self.n - 1.0
        } else {
            self.n
        };
        if d <= 0.0 {
            return Ok(ScalarValue::Float64(None));
        }
        let v = self.sxx / d;
        Ok(ScalarValue::Float64(Some(if self.stat.sqrt {
            v.sqrt()
        } else {
            v
        })))
    }
    fn size(&self) -> usize {
        std::mem::size_of_val(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(values: &[f64], sample: bool, sqrt: bool) -> Option<f64> {
        let mut a = YoungsCramer {
            n: 0.0,
            sx: 0.0,
            sxx: 0.0,
            stat: Statistic { sample, sqrt },
        };
        for v in values {
            a.add(*v).unwrap();
        }
        match a.evaluate().unwrap() {
            ScalarValue::Float64(v) => v,
            _ => None,
        }
    }

    #[test]
    fn answers_are_postgres() {
        // PostgreSQL 15: var_pop(x::float8) over 1, 2, 4.
        assert_eq!(
            run(&[1.0, 2.0, 4.0], false, false),
            Some(1.5555555555555556)
        );
        assert_eq!(run(&[1.0, 2.0, 4.0], true, true), Some(1.5275252316519468));
        assert!(run(&[f64::INFINITY], false, false).unwrap().is_nan());
        assert!(run(&[f64::NAN], false, true).unwrap().is_nan());
        assert_eq!(run(&[f64::INFINITY], true, false), None);
        assert_eq!(run(&[3.0], false, false), Some(0.0));
        assert_eq!(run(&[], false, false), None);
        assert!(run(&[1.0, f64::INFINITY], true, false).unwrap().is_nan());
    }
}
