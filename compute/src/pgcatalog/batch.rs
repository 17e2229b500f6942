//! Catalog tables as Arrow batches: a column list with PostgreSQL's
//! column types mapped to Arrow, and rows of loosely typed values.

use std::sync::Arc;

use datafusion::arrow::array::{
    ArrayRef, BooleanBuilder, Float32Builder, Int16Builder, Int32Builder, Int64Builder,
    ListBuilder, StringBuilder,
};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::arrow::record_batch::RecordBatch;

/// A catalog column's type. `oid`, `regproc` and `xid` columns are
/// `bigint` on the wire (their text is the same number); `name` and
/// `"char"` are text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Col {
    Oid,
    Text,
    Bool,
    I16,
    I32,
    I64,
    F32,
    TextArr,
    I16Arr,
    OidArr,
    /// `int2vector` and `oidvector` (`pg_index.indkey`, `indclass`): lists
    /// whose text is `1 2`, marked by [`VECTOR_TYPE`] for the wire.
    I16Vec,
    OidVec,
    /// timestamptz (microseconds since the epoch, [`V::I`]).
    Ts,
}

impl Col {
    fn data_type(self) -> DataType {
        let item = |t| DataType::List(Arc::new(Field::new("item", t, true)));
        match self {
            Col::Oid | Col::I64 => DataType::Int64,
            Col::Text => DataType::Utf8,
            Col::Bool => DataType::Boolean,
            Col::I16 => DataType::Int16,
            Col::I32 => DataType::Int32,
            Col::F32 => DataType::Float32,
            Col::TextArr => item(DataType::Utf8),
            Col::I16Arr | Col::I16Vec => item(DataType::Int16),
            Col::OidArr | Col::OidVec => item(DataType::Int64),
            Col::Ts => DataType::Timestamp(
                datafusion::arrow::datatypes::TimeUnit::Microsecond,
                Some("+00:00".into()),
            ),
        }
    }
}

/// A catalog table's columns: names and types, in order.
pub type Cols = &'static [(&'static str, Col)];

/// A catalog table's columns and rows.
pub type Table = (Cols, Vec<Vec<V>>);

/// One value of a catalog row.
#[derive(Debug, Clone, PartialEq)]
pub enum V {
    I(i64),
    F(f64),
    S(String),
    B(bool),
    N,
    A(Vec<String>),
    IA(Vec<i64>),
}

impl From<&str> for V {
    fn from(s: &str) -> V {
        V::S(s.to_string())
    }
}
impl From<String> for V {
    fn from(s: String) -> V {
        V::S(s)
    }
}
impl From<bool> for V {
    fn from(b: bool) -> V {
        V::B(b)
    }
}
impl From<i64> for V {
    fn from(i: i64) -> V {
        V::I(i)
    }
}
impl From<u32> for V {
    fn from(i: u32) -> V {
        V::I(i as i64)
    }
}
impl From<i32> for V {
    fn from(i: i32) -> V {
        V::I(i as i64)
    }
}
impl<T: Into<V>> From<Option<T>> for V {
    fn from(o: Option<T>) -> V {
        o.map(Into::into).unwrap_or(V::N)
    }
}

/// The field metadata key naming a vector type (`int2vector`,
/// `oidvector`): the column's wire type, whose text is space-separated.
pub const VECTOR_TYPE: &str = "tessera.vector";

/// The Arrow schema of a column list.
pub fn schema(cols: &[(&str, Col)]) -> SchemaRef {
    Arc::new(Schema::new(
        cols.iter()
            .map(|(n, c)| {
                let f = Field::new(*n, c.data_type(), true);
                let vector = match c {
                    Col::I16Vec => "int2vector",
                    Col::OidVec => "oidvector",
                    _ => return f,
                };
                f.with_metadata([(VECTOR_TYPE.to_string(), vector.to_string())].into())
            })
            .collect::<Vec<_>>(),
    ))
}

/// Rows (each as long as `cols`) as one batch; a value of the wrong kind
/// for its column is NULL.
pub fn batch(cols: &[(&str, Col)], rows: &[Vec<V>]) -> datafusion::error::Result<RecordBatch> {
    let mut arrays: Vec<ArrayRef> = Vec::with_capacity(cols.len());
    for (i, (_, c)) in cols.iter().enumerate() {
        let vals = rows.iter().map(|r| r.get(i).unwrap_or(&V::N));
        let a: ArrayRef = match c {
            Col::Oid | Col::I64 => {
                let mut b = Int64Builder::new();
                vals.for_each(|v| b.append_option(int(v)));
                Arc::new(b.finish())
            }
            Col::Ts => {
                let mut b = datafusion::arrow::array::TimestampMicrosecondBuilder::new()
                    .with_timezone("+00:00");
                vals.for_each(|v| b.append_option(int(v)));
                Arc::new(b.finish())
            }
            Col::I32 => {
                let mut b = Int32Builder::new();
                vals.for_each(|v| b.append_option(int(v).map(|x| x as i32)));
                Arc::new(b.finish())
            }
            Col::I16 => {
                let mut b = Int16Builder::new();
                vals.for_each(|v| b.append_option(int(v).map(|x| x as i16)));
                Arc::new(b.finish())
            }
            Col::F32 => {
                let mut b = Float32Builder::new();
                vals.for_each(|v| {
                    b.append_option(match v {
                        V::F(f) => Some(*f as f32),
                        V::I(i) => Some(*i as f32),
                        _ => None,
                    })
                });
                Arc::new(b.finish())
            }
            Col::Bool => {
                let mut b = BooleanBuilder::new();
                vals.for_each(|v| {
                    b.append_option(match v {
                        V::B(x) => Some(*x),
                        _ => None,
                    })
                });
                Arc::new(b.finish())
            }
            Col::Text => {
                let mut b = StringBuilder::new();
                vals.for_each(|v| {
                    b.append_option(match v {
                        V::S(s) => Some(s.as_str()),
                        _ => None,
                    })
                });
                Arc::new(b.finish())
            }
            Col::TextArr => {
                let mut b = ListBuilder::new(StringBuilder::new());
                for v in vals {
                    match v {
                        V::A(items) => {
                            for s in items {
                                b.values().append_value(s);
                            }
                            b.append(true);
                        }
                        _ => b.append(false),
                    }
                }
                Arc::new(b.finish())
            }
            Col::I16Arr | Col::I16Vec => {
                let mut b = ListBuilder::new(Int16Builder::new());
                for v in vals {
                    match v {
                        V::IA(items) => {
                            for x in items {
                                b.values().append_value(*x as i16);
                            }
                            b.append(true);
                        }
                        _ => b.append(false),
                    }
                }
                Arc::new(b.finish())
            }
            Col::OidArr | Col::OidVec => {
                let mut b = ListBuilder::new(Int64Builder::new());
                for v in vals {
                    match v {
                        V::IA(items) => {
                            for x in items {
                                b.values().append_value(*x);
                            }
                            b.append(true);
                        }
                        _ => b.append(false),
                    }
                }
                Arc::new(b.finish())
            }
        };
        arrays.push(a);
    }
    Ok(RecordBatch::try_new(schema(cols), arrays)?)
}

fn int(v: &V) -> Option<i64> {
    match v {
        V::I(i) => Some(*i),
        V::B(b) => Some(*b as i64),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_become_columns() {
        let cols = [
            ("oid", Col::Oid),
            ("name", Col::Text),
            ("opts", Col::TextArr),
        ];
        let b = batch(
            &cols,
            &[
                vec![1i64.into(), "a".into(), V::A(vec!["x=1".into()])],
                vec![V::N, V::N, V::N],
            ],
        )
        .unwrap();
        assert_eq!(b.num_rows(), 2);
        assert_eq!(b.num_columns(), 3);
        assert_eq!(b.column(1).null_count(), 1);
    }
}
