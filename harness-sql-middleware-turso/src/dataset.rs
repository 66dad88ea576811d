//! The shared dataset, built and checked through sql-middleware on turso (same file, same
//! keys, same rows as bench-core's). turso keeps its files in WAL mode: a run asking for
//! another journal mode skips this harness's benches before its dataset is needed.

use std::collections::HashMap;
use std::path::Path;

use bench_core::BenchError;
use bench_core::dataset::{
    CONTENT_SELECT, CREATE_TABLE, Content, DatasetKey, DatasetReady, INSERT_ROW, META_INSERT,
    META_SELECT, META_TABLE, RANGE_SELECT, SELECT_BY_ID, check, ensure_with, meta, spot_ids,
};
use sql_middleware::{ConfigAndPool, MiddlewarePoolConnection, ResultSet, RowValues as V};

use crate::on_sql_middleware::lookup_row;
use crate::pool::err;

async fn connect(path: &Path) -> Result<MiddlewarePoolConnection, BenchError> {
    let cap = ConfigAndPool::turso_path_builder(path.to_path_buf())
        .build()
        .await
        .map_err(err)?;
    cap.get_connection().await.map_err(err)
}

async fn select(
    c: &mut MiddlewarePoolConnection,
    sql: &str,
    p: &[V],
) -> Result<ResultSet, BenchError> {
    c.query(sql).params(p).select().await.map_err(err)
}

/// The value at `col` of the first row, as an integer or a text.
fn first(rs: &ResultSet, col: usize) -> Option<&V> {
    rs.results.first()?.get_by_index(col)
}

fn int(v: Option<&V>) -> Option<i64> {
    match v {
        Some(V::Int(i)) => Some(*i),
        _ => None,
    }
}

/// Checks a cached file through turso, by the same rules as bench-core's rusqlite check.
pub async fn validate(path: &Path, key: &DatasetKey) -> Result<(), BenchError> {
    let mut c = connect(path).await?;
    let mut metas = HashMap::new();
    for (k, _) in meta(key) {
        let v = select(&mut c, META_SELECT, &[V::Text(k.into())])
            .await
            .and_then(|rs| match first(&rs, 0) {
                Some(V::Text(t)) => Ok(t.clone()),
                other => Err(BenchError::Other(format!("meta {k} holds {other:?}"))),
            });
        metas.insert(k, v);
    }
    let range = select(&mut c, RANGE_SELECT, &[]).await?;
    let (min, max) = (int(first(&range, 0)), int(first(&range, 1)));
    let sums = select(&mut c, CONTENT_SELECT, &[]).await?;
    let real = |v: Option<&V>| match v {
        Some(V::Float(f)) => *f,
        Some(V::Int(i)) => *i as f64,
        _ => f64::NAN,
    };
    let count = int(first(&sums, 0)).unwrap_or(-1);
    let content: Content = (
        int(first(&sums, 1)).unwrap_or(-1),
        int(first(&sums, 2)).unwrap_or(-1),
        real(first(&sums, 3)),
        int(first(&sums, 4)).unwrap_or(-1),
    );
    let journal = match first(&select(&mut c, "PRAGMA journal_mode", &[]).await?, 0) {
        Some(V::Text(t)) => t.clone(),
        other => format!("{other:?}"),
    };
    let mut spots = HashMap::new();
    for id in spot_ids(key.rows) {
        let row = select(&mut c, SELECT_BY_ID, &[V::Int(id)])
            .await
            .and_then(|rs| lookup_row(&rs));
        spots.insert(id, row);
    }
    let not_read = || BenchError::Other("not read".into());
    check(
        key,
        &mut |k| metas.remove(k).unwrap_or_else(|| Err(not_read())),
        (count, min, max),
        content,
        &journal,
        &mut |id| spots.remove(&id).unwrap_or_else(|| Err(not_read())),
    )
}

/// Writes the dataset into `path` through sql-middleware on turso, in one transaction.
pub async fn write(path: &Path, key: &DatasetKey) -> Result<(), BenchError> {
    if !key.wal {
        return Err(BenchError::Invalid(
            "turso keeps its files in WAL mode: it cannot write a rollback-journal dataset".into(),
        ));
    }
    let mut c = connect(path).await?;
    c.execute_batch(&format!("BEGIN; {CREATE_TABLE}; {META_TABLE};"))
        .await
        .map_err(err)?;
    for id in 1..=key.rows as i64 {
        let row = bench_core::dataset::row(id);
        c.query(INSERT_ROW)
            .params(&[
                V::Int(row.id),
                V::Text(row.name),
                V::Float(row.score),
                V::Int(row.active as i64),
            ])
            .dml()
            .await
            .map_err(err)?;
    }
    for (k, v) in meta(key) {
        c.query(META_INSERT)
            .params(&[V::Text(k.into()), V::Text(v)])
            .dml()
            .await
            .map_err(err)?;
    }
    c.execute_batch("COMMIT").await.map_err(err)?;
    // Everything into the main file: the file is renamed into place without its WAL.
    select(&mut c, "PRAGMA wal_checkpoint(TRUNCATE)", &[])
        .await
        .map(drop)
}

/// The dataset file for `key` in `dir`, built through turso when absent or invalid.
pub fn ensure(
    rt: &tokio::runtime::Runtime,
    dir: &Path,
    key: &DatasetKey,
    on_build: &mut dyn FnMut(&Path),
) -> Result<DatasetReady, BenchError> {
    ensure_with(
        dir,
        key,
        on_build,
        &|p| rt.block_on(validate(p, key)),
        &|p| rt.block_on(write(p, key)),
    )
}
