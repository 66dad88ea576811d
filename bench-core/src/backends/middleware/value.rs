//! What an async SQL middleware passes around: caller values in a generic enum, rows
//! materialised into a generic result set, then decoded into the caller's struct.

use rusqlite::types::{ToSqlOutput, ValueRef};

use crate::dataset::BenchRow;

#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Integer(i64),
    Real(f64),
    Text(String),
    Blob(Vec<u8>),
}

/// Column names plus typed values per row.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ResultSet {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Value>>,
}

/// Caller values into driver parameters (borrowed: no copy of text or blobs).
#[inline]
pub fn to_params(values: &[Value]) -> Vec<ToSqlOutput<'_>> {
    values
        .iter()
        .map(|v| {
            ToSqlOutput::Borrowed(match v {
                Value::Null => ValueRef::Null,
                Value::Integer(i) => ValueRef::Integer(*i),
                Value::Real(f) => ValueRef::Real(*f),
                Value::Text(s) => ValueRef::Text(s.as_bytes()),
                Value::Blob(b) => ValueRef::Blob(b),
            })
        })
        .collect()
}

/// Binds converted parameters to a prepared statement (1-based positions).
#[inline]
pub fn bind(
    stmt: &mut rusqlite::Statement<'_>,
    params: &[ToSqlOutput<'_>],
) -> rusqlite::Result<()> {
    for (i, p) in params.iter().enumerate() {
        stmt.raw_bind_parameter(i + 1, p)?;
    }
    Ok(())
}

impl Value {
    fn from_ref(v: ValueRef<'_>) -> Value {
        match v {
            ValueRef::Null => Value::Null,
            ValueRef::Integer(i) => Value::Integer(i),
            ValueRef::Real(f) => Value::Real(f),
            ValueRef::Text(t) => Value::Text(String::from_utf8_lossy(t).into_owned()),
            ValueRef::Blob(b) => Value::Blob(b.to_vec()),
        }
    }
}

/// Steps a bound statement to the end and materialises every row.
#[inline]
pub fn marshal(stmt: &mut rusqlite::Statement<'_>) -> rusqlite::Result<ResultSet> {
    let columns: Vec<String> = stmt.column_names().into_iter().map(str::to_owned).collect();
    let n = columns.len();
    let mut rows_out = Vec::new();
    let mut rows = stmt.raw_query();
    while let Some(row) = rows.next()? {
        let mut values = Vec::with_capacity(n);
        for i in 0..n {
            values.push(Value::from_ref(row.get_ref(i)?));
        }
        rows_out.push(values);
    }
    Ok(ResultSet {
        columns,
        rows: rows_out,
    })
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DecodeError {
    #[error("no row returned")]
    NoRow,
    #[error("column {0:?} missing from the result set")]
    MissingColumn(&'static str),
    #[error("column {column:?} holds {found}, expected {expected}")]
    Type {
        column: &'static str,
        found: &'static str,
        expected: &'static str,
    },
}

impl ResultSet {
    fn column(&self, name: &'static str) -> Result<usize, DecodeError> {
        self.columns
            .iter()
            .position(|c| c == name)
            .ok_or(DecodeError::MissingColumn(name))
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Integer(_) => "integer",
        Value::Real(_) => "real",
        Value::Text(_) => "text",
        Value::Blob(_) => "blob",
    }
}

/// Decodes the first row of a result set into `BenchRow`, by column name.
#[inline]
pub fn decode_bench_row(rs: &ResultSet) -> Result<BenchRow, DecodeError> {
    let row = rs.rows.first().ok_or(DecodeError::NoRow)?;
    let (id, name, score, active) = (
        rs.column("id")?,
        rs.column("name")?,
        rs.column("score")?,
        rs.column("active")?,
    );
    let wrong = |column, v: &Value, expected| DecodeError::Type {
        column,
        found: kind(v),
        expected,
    };
    Ok(BenchRow {
        id: match &row[id] {
            Value::Integer(i) => *i,
            v => return Err(wrong("id", v, "integer")),
        },
        name: match &row[name] {
            Value::Text(s) => s.clone(),
            v => return Err(wrong("name", v, "text")),
        },
        score: match &row[score] {
            Value::Real(f) => *f,
            Value::Integer(i) => *i as f64,
            v => return Err(wrong("score", v, "real")),
        },
        active: match &row[active] {
            Value::Integer(i) => *i != 0,
            v => return Err(wrong("active", v, "integer")),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::{SELECT_BY_ID, row};

    fn db() -> rusqlite::Connection {
        let c = rusqlite::Connection::open_in_memory().unwrap();
        c.execute_batch(&format!(
            "{}; INSERT INTO test VALUES (4, 'name-4', 2.0, 1);",
            crate::dataset::CREATE_TABLE
        ))
        .unwrap();
        c
    }

    #[test]
    fn convert_bind_marshal_decode() {
        let c = db();
        let mut stmt = c.prepare(SELECT_BY_ID).unwrap();
        let values = [Value::Integer(4)];
        bind(&mut stmt, &to_params(&values)).unwrap();
        let rs = marshal(&mut stmt).unwrap();
        assert_eq!(rs.columns, ["id", "name", "score", "active"]);
        assert_eq!(
            rs.rows,
            vec![vec![
                Value::Integer(4),
                Value::Text("name-4".into()),
                Value::Real(2.0),
                Value::Integer(1)
            ]]
        );
        assert_eq!(decode_bench_row(&rs).unwrap(), row(4));
    }

    #[test]
    fn decode_errors_are_specific() {
        assert_eq!(
            decode_bench_row(&ResultSet::default()),
            Err(DecodeError::NoRow)
        );
        let rs = ResultSet {
            columns: vec!["id".into()],
            rows: vec![vec![Value::Integer(1)]],
        };
        assert_eq!(
            decode_bench_row(&rs),
            Err(DecodeError::MissingColumn("name"))
        );
        let rs = ResultSet {
            columns: ["id", "name", "score", "active"].map(String::from).to_vec(),
            rows: vec![vec![
                Value::Text("x".into()),
                Value::Null,
                Value::Null,
                Value::Null,
            ]],
        };
        assert_eq!(
            decode_bench_row(&rs).unwrap_err().to_string(),
            "column \"id\" holds text, expected integer"
        );
    }

    #[test]
    fn text_and_blob_params_round_trip() {
        let c = rusqlite::Connection::open_in_memory().unwrap();
        let mut stmt = c.prepare("SELECT ?1, ?2, ?3, ?4").unwrap();
        let values = [
            Value::Text("héllo".into()),
            Value::Blob(vec![0, 1]),
            Value::Null,
            Value::Real(1.5),
        ];
        bind(&mut stmt, &to_params(&values)).unwrap();
        let rs = marshal(&mut stmt).unwrap();
        assert_eq!(rs.rows[0], values.to_vec());
    }
}
