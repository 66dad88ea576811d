//! sql-middleware's turso pool as shipped (bb8 over turso connections, checked on checkout,
//! statement cache on), every connection given the run's settings turso has; a held
//! connection for crud_overhead and key_value; the lookup path.

use std::collections::BTreeMap;
use std::path::Path;

use bench_core::BenchError;
use bench_core::dataset::BenchRow;
use bench_core::measure::drive::LookupPath;
use bench_core::measure::trace::PhaseTotals;
use bench_core::settings::SqliteSettings;
use sql_middleware::{ConfigAndPool, MiddlewarePoolConnection, RowValues as V};

use crate::on_sql_middleware::{Held, MiddlewareConn};

pub fn err(e: impl std::fmt::Display) -> BenchError {
    BenchError::driver(e)
}

/// bb8's default pool size, which sql-middleware 0.9 does not let one change.
pub const POOL: usize = 10;

/// sql-middleware's pool on one turso database (a file, or `:memory:` shared by the pool).
pub struct TursoPool {
    pub cap: ConfigAndPool,
}

impl TursoPool {
    /// The pool on `path`, each of its connections given the run's settings turso has
    /// (synchronous and the page cache; turso keeps its files in WAL mode and locks them
    /// exclusively); and what a connection reads back.
    pub async fn open(
        path: &Path,
        s: &SqliteSettings,
    ) -> Result<(TursoPool, BTreeMap<String, String>), BenchError> {
        let cap = ConfigAndPool::turso_path_builder(path.to_path_buf())
            .build()
            .await
            .map_err(err)?;
        // Every connection the pool will hold, checked out at once, each given the settings.
        let mut held = Vec::new();
        for _ in 0..POOL {
            let mut c = cap.get_connection().await.map_err(err)?;
            for (name, value) in s.pragmas() {
                if matches!(name, "synchronous" | "cache_size") {
                    c.execute_batch(&format!("PRAGMA {name} = {value}"))
                        .await
                        .map_err(err)?;
                }
            }
            held.push(c);
        }
        let read_back = read_back(&mut held[0]).await;
        drop(held);
        Ok((TursoPool { cap }, read_back))
    }

    pub async fn checkout(&self) -> Result<MiddlewarePoolConnection, BenchError> {
        self.cap.get_connection().await.map_err(err)
    }

    /// One of its connections, held for a bench.
    pub async fn hold(&self) -> Result<Held, BenchError> {
        Ok(Held {
            conn: self.checkout().await?,
        })
    }
}

/// The settings a connection runs with, read back through the query builder.
async fn read_back(c: &mut MiddlewarePoolConnection) -> BTreeMap<String, String> {
    use bench_core::settings::{NAMES, NOT_APPLICABLE, UNSUPPORTED, normalize};
    let mut out = BTreeMap::new();
    for name in NAMES {
        let value = if name == "mutex" {
            NOT_APPLICABLE.to_string()
        } else {
            let rs = c.query(&format!("PRAGMA {name}")).select().await.ok();
            match rs
                .as_ref()
                .and_then(|rs| rs.results.first()?.get_by_index(0))
            {
                Some(V::Int(i)) => normalize(name, &i.to_string()),
                Some(V::Text(t)) => normalize(name, t),
                _ => UNSUPPORTED.to_string(),
            }
        };
        out.insert(name.to_string(), value);
    }
    out
}

impl LookupPath for TursoPool {
    type Conn = MiddlewarePoolConnection;
    async fn checkout(&self) -> Result<Self::Conn, BenchError> {
        TursoPool::checkout(self).await
    }
    async fn lookup<const TRACE: bool>(
        &self,
        conn: &mut Self::Conn,
        id: i64,
        _phases: &mut PhaseTotals,
    ) -> Result<BenchRow, BenchError> {
        crate::on_sql_middleware::lookup(conn, id).await
    }
}

/// On turso, SQL text runs as it is (`execute_batch`: no transaction of its own).
impl MiddlewareConn for Held {
    const BOOL_AS_INT: bool = true;

    async fn batch(&mut self, sql: &str) -> Result<(), BenchError> {
        self.conn.execute_batch(sql).await.map_err(err)
    }
    async fn begin(&mut self) -> Result<(), BenchError> {
        self.batch("BEGIN").await
    }
    async fn commit(&mut self) -> Result<(), BenchError> {
        self.batch("COMMIT").await
    }
    async fn dml(&mut self, sql: &str, p: &[V]) -> Result<u64, BenchError> {
        Held::dml(self, sql, p).await
    }
    async fn rows(&mut self, sql: &str, p: &[V]) -> Result<sql_middleware::ResultSet, BenchError> {
        Held::rows(self, sql, p).await
    }
    async fn rows_uncached(&mut self, sql: &str) -> Result<sql_middleware::ResultSet, BenchError> {
        Held::rows_uncached(self, sql).await
    }
}

/// Where turso opens a bench's database: its scratch file, or `:memory:` (one database the
/// pool's connections share; turso reads no memdb URI).
pub fn turso_path(place: &bench_core::workloads::bulk_insert::rows::Place) -> &Path {
    use bench_core::workloads::bulk_insert::rows::Place;
    match place {
        Place::File(s) => &s.0,
        Place::Memory(_) => Path::new(":memory:"),
    }
}
