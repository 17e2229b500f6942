//! A scalar subquery's value as PostgreSQL defines it: the one row's value,
//! NULL when there is no row, an error (21000) when there are more. As the
//! aggregate `pg_one_row`, wrapped around the select item of a subquery
//! that does not aggregate (`plan::pgsyntax`), so DataFusion decorrelates
//! `(SELECT w FROM b WHERE b.k = a.k)`, which it refuses unaggregated
//! ("Correlated scalar subquery must be aggregated").

use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray};
use datafusion::arrow::datatypes::{DataType, Field, FieldRef, UInt64Type};
use datafusion::common::ScalarValue;
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::{Accumulator, AggregateUDFImpl, Signature, Volatility};

/// The aggregate's name.
pub const NAME: &str = "pg_one_row";

#[derive(Debug, PartialEq, Eq, Hash)]
pub struct OneRow {
    signature: Signature,
}

impl Default for OneRow {
    fn default() -> Self {
        OneRow {
            signature: Signature::any(1, Volatility::Immutable),
        }
    }
}

fn too_many() -> DataFusionError {
    DataFusionError::External(Box::new(common::Error::Sql {
        state: common::SqlState("21000"),
        message: "more than one row returned by a subquery used as an expression".into(),
    }))
}

impl AggregateUDFImpl for OneRow {
    fn name(&self) -> &str {
        NAME
    }
    fn signature(&self) -> &Signature {
        &self.signature
    }
    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        Ok(arg_types.first().cloned().unwrap_or(DataType::Null))
    }
    /// The value's field, metadata (a char(n) width) included.
    fn return_field(&self, arg_fields: &[FieldRef]) -> Result<FieldRef> {
        match arg_fields.first() {
            Some(f) => Ok(Arc::new(
                Field::new(NAME, f.data_type().clone(), true).with_metadata(f.metadata().clone()),
            )),
            None => Ok(Arc::new(Field::new(NAME, DataType::Null, true))),
        }
    }
    fn accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        Ok(Box::new(Acc {
            value: ScalarValue::try_from(args.return_field.data_type())?,
            rows: 0,
        }))
    }
    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        Ok(vec![
            Arc::new(Field::new(
                "value",
                args.return_field.data_type().clone(),
                true,
            )),
            Arc::new(Field::new("rows", DataType::UInt64, true)),
        ])
    }
}

#[derive(Debug)]
struct Acc {
    value: ScalarValue,
    rows: u64,
}

impl Accumulator for Acc {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        let Some(v) = values.first() else {
            return Ok(());
        };
        for i in 0..v.len() {
            self.rows += 1;
            if self.rows > 1 {
                return Err(too_many());
            }
            self.value = ScalarValue::try_from_array(v, i)?;
        }
        Ok(())
    }
    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        let [values, rows] = states else {
            return Err(DataFusionError::Internal("pg_one_row state".into()));
        };
        let rows = rows.as_primitive::<UInt64Type>();
        for i in 0..rows.len() {
            let n = if rows.is_null(i) { 0 } else { rows.value(i) };
            if n == 0 {
                continue;
            }
            self.rows += n;
            if self.rows > 1 {
                return Err(too_many());
            }
            self.value = ScalarValue::try_from_array(values, i)?;
        }
        Ok(())
    }
    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        Ok(vec![
            self.value.clone(),
            ScalarValue::UInt64(Some(self.rows)),
        ])
    }
    fn evaluate(&mut self) -> Result<ScalarValue> {
        Ok(self.value.clone())
    }
    fn size(&self) -> usize {
        std::mem::size_of_val(self) + self.value.size()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{Int32Array, UInt64Array};

    #[test]
    fn one_row_or_null_or_an_error() {
        let mut a = Acc {
            value: ScalarValue::Int32(None),
            rows: 0,
        };
        assert_eq!(a.evaluate().unwrap(), ScalarValue::Int32(None));
        a.update_batch(&[Arc::new(Int32Array::from(vec![7]))])
            .unwrap();
        assert_eq!(a.evaluate().unwrap(), ScalarValue::Int32(Some(7)));
        let e = a
            .update_batch(&[Arc::new(Int32Array::from(vec![8]))])
            .unwrap_err();
        assert!(e.to_string().contains("more than one row"));
        let mut b = Acc {
            value: ScalarValue::Int32(None),
            rows: 0,
        };
        let states: Vec<ArrayRef> = vec![
            Arc::new(Int32Array::from(vec![None, Some(3)])),
            Arc::new(UInt64Array::from(vec![0, 1])),
        ];
        b.merge_batch(&states).unwrap();
        assert_eq!(b.evaluate().unwrap(), ScalarValue::Int32(Some(3)));
    }
}
