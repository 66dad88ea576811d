//! diesel (sqlite, its r2d2 pool): the query DSL (whose statements diesel caches) under
//! `spawn_blocking`, for the lookup, bulk_insert, crud_overhead (crud.rs) and key_value (kv.rs).

pub(super) mod crud;
pub(super) mod kv;

use std::collections::BTreeMap;
use std::path::Path;

use crate::dataset::BenchRow;
use crate::error::BenchError;
use crate::measure::drive::LookupPath;
use crate::measure::statements::StatementCounter;
use crate::measure::trace::PhaseTotals;
use crate::settings::{self, SqliteSettings};
use std::sync::Arc;

mod schema {
    diesel::table! {
        test (id) {
            id -> BigInt,
            name -> Text,
            score -> Double,
            active -> Bool,
        }
    }
}

#[derive(diesel::Queryable)]
struct DieselRow {
    id: i64,
    name: String,
    score: f64,
    active: bool,
}

type DieselManager = diesel::r2d2::ConnectionManager<diesel::SqliteConnection>;
type DieselPool = diesel::r2d2::Pool<DieselManager>;
type DieselConn = diesel::r2d2::PooledConnection<DieselManager>;

/// Applies the run's pragmas to each connection diesel's pool opens, then counts its
/// statement cache's work into the pool's counter.
#[derive(Debug)]
struct DieselSettings(SqliteSettings, Arc<StatementCounter>);

/// Who reports diesel's statement cache counts.
const COUNTED_BY: &str = "diesel's Instrumentation events";

thread_local! {
    /// Set while this thread runs SQL as text through diesel (a batch, BEGIN, COMMIT): the
    /// statements it starts then are not ones its cache could hold.
    static AS_TEXT: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f`, whose statements are SQL run as text, so counted as such.
fn as_text<T>(f: impl FnOnce() -> T) -> T {
    AS_TEXT.with(|t| t.set(true));
    let out = f();
    AS_TEXT.with(|t| t.set(false));
    out
}

/// diesel's events counted: each statement as it starts (`StartQuery`), each statement it
/// prepares into its cache (`CacheQuery`, a miss). A statement it takes from its cache reports
/// only the first; one it runs as text, only the first too. Its transaction manager says
/// `BeginTransaction`, `CommitTransaction` or `RollbackTransaction` just before it runs that
/// statement as text (its own transactions, a batch insert's included); this crate's other text
/// paths say so themselves ([`as_text`]).
struct CountStatements {
    counter: Arc<StatementCounter>,
    /// The next statement is a transaction's edge, run as text.
    edge: bool,
}

impl diesel::connection::Instrumentation for CountStatements {
    fn on_connection_event(&mut self, event: diesel::connection::InstrumentationEvent<'_>) {
        use diesel::connection::InstrumentationEvent as E;
        match event {
            E::BeginTransaction { .. }
            | E::CommitTransaction { .. }
            | E::RollbackTransaction { .. } => self.edge = true,
            E::StartQuery { .. } => {
                let text = std::mem::take(&mut self.edge) || AS_TEXT.with(|t| t.get());
                self.counter.started(text);
            }
            E::CacheQuery { .. } => self.counter.prepared(),
            _ => {}
        }
    }
}

impl diesel::r2d2::CustomizeConnection<diesel::SqliteConnection, diesel::r2d2::Error>
    for DieselSettings
{
    fn on_acquire(&self, c: &mut diesel::SqliteConnection) -> Result<(), diesel::r2d2::Error> {
        use diesel::connection::SimpleConnection;
        let sql: String = self
            .0
            .pragmas()
            .iter()
            .map(|(name, value)| format!("PRAGMA {name} = {value};"))
            .collect();
        c.batch_execute(&sql)
            .map_err(diesel::r2d2::Error::QueryError)?;
        diesel::Connection::set_instrumentation(
            c,
            CountStatements {
                counter: self.1.clone(),
                edge: false,
            },
        );
        Ok(())
    }
}

/// diesel's r2d2 pool of `n` SQLite connections, reached with `spawn_blocking`.
pub struct Diesel {
    pool: DieselPool,
    /// What its connections' statement caches did, counted from diesel's events.
    statements: Arc<StatementCounter>,
}

macro_rules! pragma_rows {
    ($($name:ident: $ty:ty),*) => {
        $(
            #[derive(diesel::QueryableByName)]
            #[allow(non_camel_case_types)]
            struct $name {
                #[diesel(sql_type = $ty)]
                $name: String,
            }
        )*
    };
}

pragma_rows!(
    journal_mode: diesel::sql_types::Text,
    locking_mode: diesel::sql_types::Text,
    synchronous: diesel::sql_types::Text,
    cache_size: diesel::sql_types::Text,
    mmap_size: diesel::sql_types::Text
);

impl Diesel {
    pub fn open(path: &Path, s: &SqliteSettings, n: usize) -> Result<Self, BenchError> {
        let url = path
            .to_str()
            .ok_or_else(|| BenchError::Other(format!("{} is not UTF-8", path.display())))?;
        let statements = Arc::new(StatementCounter::new(COUNTED_BY));
        let pool = diesel::r2d2::Pool::builder()
            .max_size(n.max(1) as u32)
            .connection_customizer(Box::new(DieselSettings(s.clone(), statements.clone())))
            .build(DieselManager::new(url))
            .map_err(BenchError::driver)?;
        Ok(Diesel { pool, statements })
    }

    /// The counts of its connections' statement caches, for a bench to report.
    pub fn statements(&self) -> Arc<StatementCounter> {
        self.statements.clone()
    }

    /// The pragmas read back through diesel; the mutex cannot be (diesel keeps its handle to
    /// itself), so it reads as unsupported.
    pub fn read_back(&self) -> Result<BTreeMap<String, String>, BenchError> {
        use diesel::RunQueryDsl;
        let mut c = self.pool.get().map_err(BenchError::driver)?;
        let mut out = BTreeMap::new();
        macro_rules! read {
            ($name:ident) => {{
                let v = diesel::sql_query(concat!("PRAGMA ", stringify!($name)))
                    .get_result::<$name>(&mut c)
                    .map(|r| r.$name)
                    .unwrap_or_else(|e| format!("error: {e}"));
                out.insert(
                    stringify!($name).to_string(),
                    settings::normalize(stringify!($name), &v),
                );
            }};
        }
        read!(journal_mode);
        read!(locking_mode);
        read!(synchronous);
        read!(cache_size);
        read!(mmap_size);
        out.insert("mutex".into(), settings::UNSUPPORTED.into());
        Ok(out)
    }

    pub async fn checkout_and_return(&self) -> Result<(), BenchError> {
        let pool = self.pool.clone();
        tokio::task::spawn_blocking(move || pool.get().map(drop))
            .await
            .map_err(BenchError::joined)?
            .map_err(BenchError::driver)
    }
}

/// One connection of diesel's pool held for a bench (crud_overhead's, key_value's), each
/// operation a `spawn_blocking` closure on it.
pub struct DieselHeld {
    conn: Option<DieselConn>,
}

impl Diesel {
    /// One connection of the pool, held until the bench ends.
    pub fn hold(&self) -> Result<DieselHeld, BenchError> {
        Ok(DieselHeld {
            conn: Some(self.pool.get().map_err(BenchError::driver)?),
        })
    }
}

impl DieselHeld {
    /// Runs `f` on the held connection in `spawn_blocking` and takes the connection back.
    async fn on<T: Send + 'static>(
        &mut self,
        f: impl FnOnce(&mut diesel::SqliteConnection) -> diesel::QueryResult<T> + Send + 'static,
    ) -> Result<T, BenchError> {
        let mut c = self
            .conn
            .take()
            .ok_or_else(|| BenchError::Other("connection lost by an earlier failed hop".into()))?;
        let (c, out) = tokio::task::spawn_blocking(move || {
            let out = f(&mut c);
            (c, out)
        })
        .await
        .map_err(BenchError::joined)?;
        self.conn = Some(c);
        out.map_err(BenchError::driver)
    }

    /// BEGIN through diesel's transaction manager (which then knows a transaction is open).
    async fn tx_begin(&mut self) -> Result<(), BenchError> {
        use diesel::connection::{Connection, TransactionManager};
        self.on(|c| {
            <diesel::SqliteConnection as Connection>::TransactionManager::begin_transaction(c)
        })
        .await
    }

    /// COMMIT through diesel's transaction manager.
    async fn tx_commit(&mut self) -> Result<(), BenchError> {
        use diesel::connection::{Connection, TransactionManager};
        self.on(|c| {
            <diesel::SqliteConnection as Connection>::TransactionManager::commit_transaction(c)
        })
        .await
    }

    /// SQL text run as is (several statements, no rows): a schema made or dropped.
    async fn run_batch(&mut self, sql: String) -> Result<(), BenchError> {
        use diesel::connection::SimpleConnection;
        self.on(move |c| as_text(|| c.batch_execute(&sql))).await
    }
}

pub struct DieselLease {
    pool: DieselPool,
    conn: Option<DieselConn>,
}

fn diesel_lookup(c: &mut DieselConn, id: i64) -> Result<BenchRow, BenchError> {
    use diesel::{QueryDsl, RunQueryDsl};
    let r: DieselRow = schema::test::table
        .find(id)
        .get_result(c)
        .map_err(BenchError::driver)?;
    Ok(BenchRow {
        id: r.id,
        name: r.name,
        score: r.score,
        active: r.active,
    })
}

impl LookupPath for Diesel {
    type Conn = DieselLease;
    fn statements(&self) -> Option<Arc<StatementCounter>> {
        Some(self.statements.clone())
    }
    async fn checkout(&self) -> Result<Self::Conn, BenchError> {
        Ok(DieselLease {
            pool: self.pool.clone(),
            conn: None,
        })
    }
    async fn lookup<const TRACE: bool>(
        &self,
        lease: &mut Self::Conn,
        id: i64,
        _phases: &mut PhaseTotals,
    ) -> Result<BenchRow, BenchError> {
        let pool = lease.pool.clone();
        let held = lease.conn.take();
        let (conn, row) = tokio::task::spawn_blocking(move || {
            let mut conn = match held {
                Some(c) => c,
                None => pool.get().map_err(BenchError::driver)?,
            };
            let row = diesel_lookup(&mut conn, id);
            Ok::<_, BenchError>((conn, row))
        })
        .await
        .map_err(BenchError::joined)??;
        lease.conn = Some(conn);
        row
    }
}

// ---------------------------------------------------------------------------------------------
// bulk_insert through diesel

mod bulk_schema {
    diesel::table! {
        benchscope_bulk_insert (id) {
            id -> BigInt,
            title -> Text,
            created_at -> Text,
            amount -> Double,
            flag -> Bool,
            payload -> Binary,
            meta -> Text,
            c1 -> Text,
            c2 -> Text,
            c3 -> Text,
            c4 -> Text,
            c5 -> Text,
            c6 -> Text,
            c7 -> Text,
            c8 -> Text,
            c9 -> Text,
        }
    }
}

/// One row as diesel inserts it (borrowing the generated row).
#[derive(diesel::Insertable)]
#[diesel(table_name = bulk_schema::benchscope_bulk_insert)]
struct NewBulk<'a> {
    id: i64,
    title: &'a str,
    created_at: &'a str,
    amount: f64,
    flag: bool,
    payload: &'a [u8],
    meta: &'a str,
    c1: &'a str,
    c2: &'a str,
    c3: &'a str,
    c4: &'a str,
    c5: &'a str,
    c6: &'a str,
    c7: &'a str,
    c8: &'a str,
    c9: &'a str,
}

impl<'a> From<&'a crate::workloads::bulk_insert::rows::BulkRow> for NewBulk<'a> {
    fn from(r: &'a crate::workloads::bulk_insert::rows::BulkRow) -> Self {
        let t = &r.texts;
        NewBulk {
            id: r.id,
            title: &r.title,
            created_at: &r.created_at,
            amount: r.amount,
            flag: r.flag,
            payload: &r.payload,
            meta: &r.meta,
            c1: &t[0],
            c2: &t[1],
            c3: &t[2],
            c4: &t[3],
            c5: &t[4],
            c6: &t[5],
            c7: &t[6],
            c8: &t[7],
            c9: &t[8],
        }
    }
}

impl Diesel {
    /// Runs `f` on a pooled connection in `spawn_blocking` (checkout, `f`, return).
    pub async fn run<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut diesel::SqliteConnection) -> Result<T, BenchError> + Send + 'static,
    ) -> Result<T, BenchError> {
        let pool = self.pool.clone();
        tokio::task::spawn_blocking(move || {
            let mut c = pool.get().map_err(BenchError::driver)?;
            f(&mut c)
        })
        .await
        .map_err(BenchError::joined)?
    }
}

/// Runs SQL text through diesel (several statements, rows ignored): the fresh table.
pub fn diesel_batch(c: &mut diesel::SqliteConnection, sql: &str) -> Result<(), BenchError> {
    use diesel::connection::SimpleConnection;
    as_text(|| c.batch_execute(sql)).map_err(BenchError::driver)
}

/// bulk_insert `method=batch_text`: the rows' INSERT text through diesel's `batch_execute`,
/// in one diesel transaction.
pub fn diesel_batch_all(c: &mut diesel::SqliteConnection, text: &str) -> Result<(), BenchError> {
    use diesel::Connection;
    use diesel::connection::SimpleConnection;
    c.transaction::<(), diesel::result::Error, _>(|c| as_text(|| c.batch_execute(text)))
        .map_err(BenchError::driver)
}

/// The rows the bulk table holds, through diesel's query DSL.
pub fn diesel_bulk_count(c: &mut diesel::SqliteConnection) -> Result<u64, BenchError> {
    use diesel::{QueryDsl, RunQueryDsl};
    bulk_schema::benchscope_bulk_insert::table
        .count()
        .get_result::<i64>(c)
        .map(|n| n as u64)
        .map_err(BenchError::driver)
}

/// The rows inserted one statement each (diesel caches it) in one diesel transaction.
pub fn diesel_insert_all(
    c: &mut diesel::SqliteConnection,
    rows: &[crate::workloads::bulk_insert::rows::BulkRow],
) -> Result<u64, BenchError> {
    use diesel::{Connection, RunQueryDsl};
    c.transaction::<u64, diesel::result::Error, _>(|c| {
        let mut changed = 0u64;
        for r in rows {
            changed += diesel::insert_into(bulk_schema::benchscope_bulk_insert::table)
                .values(NewBulk::from(r))
                .execute(c)? as u64;
        }
        Ok(changed)
    })
    .map_err(BenchError::driver)
}
