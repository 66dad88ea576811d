//! The results store: every finished run, headless or in the explorer, recorded with where it
//! ran (machine and fingerprint) and what it measured (commit or label, knobs), in an embedded
//! SQLite database in the data folder or in a PostgreSQL database many machines write to.
//! The schema is versioned and kept by migrations (refinery); each run is written in one
//! transaction, so a store holds whole runs or nothing of them.
//!
//! Nothing here renders: `history` reads `points` and the change points are bench-core's.

pub mod background;
pub mod command;
pub mod error;
pub use error::StoreError;
pub mod origin;
mod postgres;
mod rows;
mod short_text;
mod sqlite;

use std::path::{Path, PathBuf};

use bench_core::protocol::results::RunRecord;
use bench_core::secret::PgUrl;

pub use origin::{Code, Fingerprint, MachineId};
pub use rows::*;
pub(crate) use short_text::short_text;

/// Where the store is.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct Location {
    /// The results store: a SQLite file, or a PostgreSQL server many machines share, as a
    /// postgres:// URL or libpq's key=value string (default: results.sqlite in the data
    /// folder). BENCHSCOPE_STORE names it when the flag is not given.
    #[arg(long, value_name = "PATH|URL", hide_env_values = true)]
    pub store: Option<String>,
}

/// The variable that names the store when `--store` is not given.
pub const STORE_VAR: &str = "BENCHSCOPE_STORE";

impl Location {
    /// The store `--store` names, else BENCHSCOPE_STORE, else the data folder's.
    pub fn target(&self) -> Target {
        // A variable that is not UTF-8 names a file by its bytes (a path may be any bytes; a
        // URL is text), never a path read lossily.
        if self.store.is_none()
            && let Some(os) = std::env::var_os(STORE_VAR)
            && os.to_str().is_none()
        {
            return Target::Sqlite(PathBuf::from(os));
        }
        let given = self
            .store
            .clone()
            .or_else(|| bench_core::vars::process_env(STORE_VAR));
        match given.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
            // Any URL (`POSTGRES://...`, `postgresql+psycopg://...`), or libpq's key=value
            // form with any of its keys (`sslrootcert=x password=y`): a server, never a file
            // named after the text.
            Some(u) if bench_core::secret::names_a_server(u) => Target::Postgres(PgUrl::parse(u)),
            Some(p) => Target::Sqlite(PathBuf::from(p)),
            None => Target::Sqlite(crate::journal::data_dir().join("results.sqlite")),
        }
    }
}

/// Whether a store's path is a URL's text (`mysql://...`): never a file to make.
fn is_url_like(p: &Path) -> bool {
    p.as_os_str().to_string_lossy().contains("://")
}

/// How a run front end records its runs.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct StoreArgs {
    #[command(flatten)]
    pub location: Location,
    /// Record nothing in the results store. BENCHSCOPE_NO_STORE (1, true, yes, on; 0, false,
    /// no, off) asks the same when neither this nor --store is given.
    #[arg(long, conflicts_with = "store")]
    pub no_store: bool,
    /// The commit the runs measure (default: the git commit of the working directory, with
    /// whether tracked files have changes).
    #[arg(long, value_name = "SHA", value_parser = short_text)]
    pub commit: Option<String>,
    /// A label for the runs (a change being tried, say): history names and orders points by it.
    #[arg(long, value_name = "TEXT", value_parser = short_text)]
    pub label: Option<String>,
}

impl StoreArgs {
    /// Whether nothing is recorded: `--no-store`; else, unless `--store` names a store,
    /// BENCHSCOPE_NO_STORE (one parser; a value it refuses is refused by the variable's name).
    pub fn no_store(&self) -> Result<bool, StoreError> {
        if self.location.store.is_some() {
            return Ok(false);
        }
        bench_core::vars::NO_STORE
            .resolve(self.no_store.then_some("1"), &bench_core::vars::process_env)
            .map(|v| v.unwrap_or(false))
            .map_err(|e| StoreError::Setting(e.to_string()))
    }

    /// Whether a store can be made where runs would be recorded, checked before a run measures:
    /// a SQLite store's folder must be a folder, or a path where one can be made.
    pub fn check_location(&self) -> Result<(), StoreError> {
        let Some(rec) = self.recorder()? else {
            return Ok(());
        };
        if let Target::Sqlite(p) = &rec.target
            && let Some(dir) = p.parent().filter(|d| !d.as_os_str().is_empty())
        {
            let mut up = Some(dir);
            while let Some(d) = up {
                if let Ok(m) = std::fs::metadata(d) {
                    if !m.is_dir() {
                        return Err(StoreError::NotAFolder {
                            store: bench_core::text::terminal_str(&p.display().to_string()),
                            dir: bench_core::text::terminal_str(&d.display().to_string()),
                        });
                    }
                    break;
                }
                up = d.parent();
            }
        }
        Ok(())
    }

    /// Where to record, with what the runs are recorded as; `None` with --no-store.
    pub fn recorder(&self) -> Result<Option<Recorder>, StoreError> {
        Ok((!self.no_store()?).then(|| Recorder {
            target: self.location.target(),
            code: origin::code(self.commit.as_deref(), self.label.as_deref()),
            data: crate::journal::data_dir(),
        }))
    }
}

/// A store's place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    Sqlite(PathBuf),
    /// Its Display and Debug never show the password.
    Postgres(PgUrl),
}

impl std::fmt::Display for Target {
    /// Passwords never shown; a path's control characters escaped.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Target::Sqlite(p) => f.write_str(&bench_core::text::terminal_str(
                &bench_core::redact::redact(&p.display().to_string()),
            )),
            Target::Postgres(u) => write!(f, "{u}"),
        }
    }
}

/// An open store.
pub enum Store {
    Sqlite(Box<sqlite::Sqlite>),
    Postgres(Box<postgres::Postgres>),
}

impl Store {
    /// Opens the store to record runs in, making it and bringing its schema up to date on
    /// first use.
    pub fn open(target: &Target) -> Result<Store, StoreError> {
        Store::open_as(target, sqlite::Access::Write)
    }

    /// Opens a store that runs have been recorded in, to read: it must exist and be a
    /// benchscope store of this benchscope's schema; nothing is made, migrated or written.
    pub fn read(target: &Target) -> Result<Store, StoreError> {
        if let Target::Sqlite(p) = target
            && !is_url_like(p)
            && std::fs::symlink_metadata(p).is_err()
        {
            return Err(StoreError::Missing(target.to_string()));
        }
        Store::open_as(target, sqlite::Access::Read)
    }

    fn open_as(target: &Target, access: sqlite::Access) -> Result<Store, StoreError> {
        match target {
            // A URL of another kind is not a file name to make folders of.
            Target::Sqlite(p) if is_url_like(p) => Err(
                "not a file path, and not a PostgreSQL URL (allowed: a SQLite file, or postgres://... or postgresql://... in any case)".to_string(),
            ),
            Target::Sqlite(p) => {
                sqlite::Sqlite::open(p, access).map(|s| Store::Sqlite(Box::new(s)))
            }
            Target::Postgres(u) => postgres::Postgres::open(u, access == sqlite::Access::Write)
                .map(|p| Store::Postgres(Box::new(p))),
        }
        .map_err(|why| StoreError::Open {
            store: target.to_string(),
            why,
        })
    }

    /// Writes runs, each in a transaction of its own; how many were new (a key already there
    /// is left as it is).
    pub fn record(&mut self, runs: &[NewRun<'_>]) -> Result<usize, StoreError> {
        let mut new = 0;
        for r in runs {
            let added = match self {
                Store::Sqlite(s) => s.record(r),
                Store::Postgres(p) => {
                    let said = p.record(r);
                    said.map_err(|e| p.scrub(&e))
                }
            }
            .map_err(|why| StoreError::Record {
                key: r.key.clone(),
                why,
            })?;
            new += usize::from(added);
        }
        Ok(new)
    }

    /// The finished benches of runs not profiled, oldest first; rows that do not read, or
    /// whose figures cannot be times, left out and named.
    pub fn points(&mut self, f: &Filter) -> Result<Read<Point>, StoreError> {
        let rows = match self {
            Store::Sqlite(s) => s.points(f),
            Store::Postgres(p) => {
                let said = p.points(f);
                said.map_err(|e| p.scrub(&e))
            }
        }
        .map_err(StoreError::Read)?;
        Ok(Read::of(
            rows.into_iter().map(|r| r.and_then(Point::checked)),
        ))
    }

    /// The newest run of each target on each machine that reads, oldest first; newer
    /// records that do not read, or whose figures cannot be times, left out and named.
    pub fn latest(&mut self, f: &Filter) -> Result<Read<RunRecord>, StoreError> {
        let rows = match self {
            Store::Sqlite(s) => s.latest(f),
            Store::Postgres(p) => {
                let said = p.latest(f);
                said.map_err(|e| p.scrub(&e))
            }
        }
        .map_err(StoreError::Read)?;
        let mut seen = std::collections::BTreeSet::new();
        let mut read = Read {
            rows: Vec::new(),
            skipped: Vec::new(),
        };
        for row in rows {
            let row = match row {
                Ok(r) => r,
                Err(e) => {
                    read.skipped.push(e);
                    continue;
                }
            };
            if seen.contains(&(row.target.clone(), row.machine.clone())) {
                continue;
            }
            match record_of(row.id, &row.record) {
                Ok(r) => {
                    seen.insert((row.target, row.machine));
                    read.rows.push(r);
                }
                Err(e) => read.skipped.push(e),
            }
        }
        read.rows.reverse();
        Ok(read)
    }

    pub fn info(&mut self) -> Result<Info, StoreError> {
        match self {
            Store::Sqlite(s) => s.info(),
            Store::Postgres(p) => {
                let said = p.info();
                said.map_err(|e| p.scrub(&e))
            }
        }
        .map_err(StoreError::Read)
    }
}

/// Records runs of this machine (finished ones: the runner said done) where `Recorder` says.
#[derive(Debug, Clone)]
pub struct Recorder {
    pub target: Target,
    pub code: Code,
    /// The data folder, whose machine identity the runs carry.
    pub data: PathBuf,
}

impl Recorder {
    /// Records what finished of `records`; a line saying what was recorded where, or why not.
    /// The run's own outputs are written before, whatever happens here.
    pub fn record(&self, records: &[&RunRecord]) -> Result<String, StoreError> {
        let done: Vec<&RunRecord> = records
            .iter()
            .copied()
            .filter(|r| r.done && r.source.is_none() && !r.from_criterion())
            .collect();
        if done.is_empty() {
            return Ok(String::new());
        }
        let machine = origin::machine(&self.data).map_err(|why| StoreError::NoMachine {
            store: self.target.to_string(),
            why,
        })?;
        let fingerprint = Fingerprint::here();
        let at = crate::format::now_rfc3339();
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let runs: Vec<NewRun> = done
            .iter()
            .enumerate()
            .map(|(i, r)| NewRun {
                key: format!("{}-{stamp:x}-{}-{i}", machine.id, std::process::id()),
                recorded_at: at.clone(),
                machine: &machine,
                fingerprint: &fingerprint,
                code: &self.code,
                record: r,
                source: None,
            })
            .collect();
        let n = Store::open(&self.target)
            .and_then(|mut s| s.record(&runs))
            .map_err(|e| StoreError::OutputsKept(Box::new(e)))?;
        Ok(format!(
            "recorded {n} run{} in the results store {} (machine {}{})",
            if n == 1 { "" } else { "s" },
            self.target,
            machine.name,
            match (&self.code.label, &self.code.commit) {
                (Some(l), _) => format!(", label {l}"),
                (None, Some(c)) => format!(
                    ", commit {}{}",
                    bench_core::format::prefix(c, 12),
                    if self.code.dirty == Some(true) {
                        " with changes"
                    } else {
                        ""
                    }
                ),
                (None, None) => String::new(),
            }
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A point of bench `b` with these figures.
    fn point_of(median: f64, ci: [f64; 2], allocs: Option<f64>) -> Point {
        Point {
            run: 1,
            recorded_at: String::new(),
            machine_id: String::new(),
            machine_name: String::new(),
            cpu: String::new(),
            cores: 2,
            kernel: String::new(),
            commit: None,
            dirty: None,
            label: None,
            target: "t".into(),
            knobs: "{}".into(),
            build_profile: "release".into(),
            cpu_idle: None,
            cpus: None,
            bench: "b".into(),
            median,
            ci,
            allocs,
        }
    }

    fn record_text() -> &'static str {
        static TEXT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
        TEXT.get_or_init(|| {
            let r = crate::testing::finished_record(
                "single_row_lookup",
                &[("rusqlite", 1400.0), ("middleware/spin", 4300.0)],
            );
            serde_json::to_string(&r).unwrap()
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(crate::testing::proptest_cases(128)))]
        /// A run's record in a shared store, edited any way: it reads with figures that can
        /// be times, or is named and left out; never a panic.
        #[test]
        fn a_stored_record_edited_any_way_reads_or_is_left_out(
            text in crate::testing::mutated(record_text()),
        ) {
            match record_of(7, &text) {
                Ok(r) => prop_assert!(r.check_figures().is_ok()),
                Err(e) => prop_assert!(e.starts_with("run 7: "), "{}", e),
            }
        }

        /// A point's figures, whatever a store holds: kept only when they can be times (and its
        /// allocations, where it has them, a count).
        #[test]
        fn a_point_is_kept_only_with_figures_that_can_be_times(
            median in proptest::num::f64::ANY,
            lo in proptest::num::f64::ANY,
            hi in proptest::num::f64::ANY,
            allocs in proptest::option::of(proptest::num::f64::ANY),
            bench in any::<String>(),
        ) {
            let mut p = point_of(median, [lo, hi], allocs);
            p.commit = Some(bench.clone());
            p.bench = bench;
            let ok = bench_core::protocol::results::plausible_ns(median)
                && [lo, hi].iter().all(|v| v.is_nan() || bench_core::protocol::results::plausible_ns(*v))
                && allocs.is_none_or(|a| a.is_finite() && a >= 0.0);
            prop_assert_eq!(p.checked().is_ok(), ok);
        }
    }

    fn location(store: Option<&str>) -> Location {
        Location {
            store: store.map(str::to_string),
        }
    }

    /// A PostgreSQL URL in any case of its scheme is a server; anything else a file; nothing
    /// (or blanks) the default file.
    #[test]
    fn a_store_is_a_server_by_its_scheme_else_a_file() {
        for u in [
            "postgres://h/db",
            "POSTGRESQL://h/db",
            "  postgresql://h/db ",
        ] {
            assert_eq!(
                location(Some(u)).target(),
                Target::Postgres(PgUrl::parse(u.trim())),
                "{u}"
            );
        }
        assert_eq!(
            location(Some("runs/results.sqlite")).target(),
            Target::Sqlite("runs/results.sqlite".into())
        );
        let default = Target::Sqlite(crate::journal::data_dir().join("results.sqlite"));
        assert_eq!(location(None).target(), default);
        assert_eq!(location(Some("  ")).target(), default);
        // Another scheme is a file name by its form, and refused as one.
        let mysql = location(Some("mysql://h/db")).target();
        assert_eq!(mysql, Target::Sqlite("mysql://h/db".into()));
        let e = Store::open(&mysql).err().unwrap();
        assert!(matches!(&e, StoreError::Open { store, .. } if *store == mysql.to_string()));
        assert!(
            e.to_string().starts_with(
                "results store mysql://h/db: not a file path, and not a PostgreSQL URL"
            ),
            "{e}"
        );
        // A store's name never shows its password.
        let shown = Target::Postgres(PgUrl::parse(
            "postgres://bench:s3cret-pw@db.example/results",
        ))
        .to_string();
        assert!(
            !shown.contains("s3cret-pw") && shown.contains("db.example/results"),
            "{shown}"
        );
        assert_eq!(
            Target::Sqlite("a/b.sqlite".into()).to_string(),
            "a/b.sqlite"
        );
        // --no-store records nothing; otherwise runs go where --store says.
        let args = StoreArgs {
            location: location(Some("x.sqlite")),
            ..Default::default()
        };
        assert_eq!(
            args.recorder().unwrap().unwrap().target,
            Target::Sqlite("x.sqlite".into())
        );
        let off = StoreArgs {
            no_store: true,
            location: location(None),
            ..args
        };
        assert!(off.recorder().unwrap().is_none());
        // libpq's key=value form is a server too, never a file named by its text.
        for u in [
            "host=127.0.0.1 port=1 user=u password='p w'",
            "dbname = bench",
        ] {
            assert!(
                matches!(location(Some(u)).target(), Target::Postgres(_)),
                "{u}"
            );
        }
        for p in ["hostname.sqlite", "host", "my host=1.sqlite"] {
            assert!(
                matches!(location(Some(p)).target(), Target::Sqlite(_)),
                "{p}"
            );
        }
    }

    #[test]
    fn a_newer_schema_is_refused_and_an_older_or_equal_one_read() {
        assert_eq!(check_schema(None, 2), Ok(()));
        assert_eq!(check_schema(Some(1), 2), Ok(()));
        assert_eq!(check_schema(Some(2), 2), Ok(()));
        let e = check_schema(Some(3), 2).unwrap_err();
        assert!(
            e.starts_with(
                "written by a newer benchscope (schema version 3; this one reads up to 2)"
            ),
            "{e}"
        );
    }

    /// Each filter is a condition with its values in placeholders numbered in turn, never in
    /// the SQL's text.
    #[test]
    fn filters_become_numbered_placeholders_in_order() {
        let f = Filter {
            target: Some("single_row_lookup".into()),
            benches: vec!["rusqlite".into(), "x' OR 1=1 --".into()],
            machine: Some("vm-1".into()),
            since: Some("2026-11-01T00:00:00Z".into()),
        };
        let ph = |i: usize| format!("${i}");
        let (sql, args) = conditions(&f, true, &ph);
        assert_eq!(
            sql,
            " AND r.target = $1 AND (r.machine_name = $2 OR r.machine_id = $3) \
             AND r.recorded_at >= $4 AND b.bench IN ($5, $6)"
        );
        assert_eq!(
            args,
            [
                "single_row_lookup",
                "vm-1",
                "vm-1",
                "2026-11-01T00:00:00Z",
                "rusqlite",
                "x' OR 1=1 --"
            ]
        );
        let (sql, args) = conditions(&f, false, &ph);
        assert!(!sql.contains("b.bench") && args.len() == 4, "{sql}");
        assert_eq!(
            conditions(&Filter::default(), true, &ph),
            (String::new(), vec![])
        );
        let (sql, args) = latest_query(&f, |_| "?".into());
        assert!(
            sql.ends_with(
                "WHERE NOT r.profiled AND r.target = ? AND (r.machine_name = ? OR r.machine_id = ?) \
                 AND r.recorded_at >= ? ORDER BY r.id DESC"
            ),
            "{sql}"
        );
        assert_eq!(args.len(), 4);
    }

    #[test]
    fn what_did_not_read_is_said_in_one_line() {
        let read = |n: usize| Read::<i64> {
            rows: vec![1],
            skipped: (1..=n).map(|i| format!("run {i}: bad")).collect(),
        };
        assert_eq!(read(0).note(), None);
        assert_eq!(
            read(1).note().unwrap(),
            "1 row of the results store did not read and was left out: run 1: bad"
        );
        assert_eq!(
            read(3).note().unwrap(),
            "3 rows of the results store did not read and were left out: run 1: bad; run 2: bad; run 3: bad"
        );
        assert_eq!(
            read(4).note().unwrap(),
            "4 rows of the results store did not read and were left out: run 1: bad; run 2: bad; run 3: bad; ..."
        );
    }

    #[test]
    fn allocations_per_operation_are_a_count_or_the_point_is_left_out() {
        let p = |allocs: Option<f64>| point_of(1000.0, [990.0, 1010.0], allocs);
        for ok in [None, Some(0.0), Some(2.5)] {
            assert!(p(ok).checked().is_ok(), "{ok:?}");
        }
        for bad in [-1.0, f64::INFINITY, f64::NAN] {
            let e = p(Some(bad)).checked().unwrap_err();
            assert!(
                e.contains(&format!("allocations per operation {bad}")),
                "{e}"
            );
        }
    }

    /// A run written to a real SQLite store reads back column by column.
    #[test]
    fn a_recorded_run_reads_back_as_written() {
        let d = tempfile::tempdir().unwrap();
        let target = Target::Sqlite(d.path().join("results.sqlite"));
        let e = Store::read(&target).err().unwrap();
        assert!(matches!(&e, StoreError::Missing(t) if *t == target.to_string()));
        assert!(e.to_string().starts_with("no results store at "), "{e}");
        reads_back_as_written(&target);
        assert!(Store::read(&target).is_ok());
        // A store's folders are made on first use.
        let deep = Target::Sqlite(d.path().join("a/b/results.sqlite"));
        assert_eq!(Store::open(&deep).unwrap().info().unwrap().runs, 0);
    }

    /// The same on a PostgreSQL store: a database of the test's own on the server of
    /// BENCHSCOPE_POSTGRES_URL, dropped at the end.
    #[test]
    fn a_recorded_run_reads_back_as_written_on_postgres() {
        let Some(admin) = std::env::var("BENCHSCOPE_POSTGRES_URL")
            .ok()
            .filter(|u| !u.is_empty())
        else {
            bench_core::testing::skip(
                "a_recorded_run_reads_back_as_written_on_postgres",
                "BENCHSCOPE_POSTGRES_URL is not set (.ci/postgres.sh starts a throwaway server)",
            );
            return;
        };
        let name = "benchscope_unit_round_trip";
        let sql = |sql: String| {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async {
                let (client, conn) = tokio_postgres::connect(&admin, tokio_postgres::NoTls)
                    .await
                    .unwrap();
                tokio::spawn(conn);
                client.batch_execute(&sql).await.unwrap();
            });
        };
        sql(format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"));
        sql(format!("CREATE DATABASE {name}"));
        let (base, _) = admin.rsplit_once('/').expect("a URL with a database part");
        reads_back_as_written(&Target::Postgres(PgUrl::parse(&format!("{base}/{name}"))));
        sql(format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"));
    }

    /// Records three runs in the empty store `target` and reads them back: what history groups
    /// and notes by, and the newest record of each target and machine; a profiled run is kept
    /// but read by neither.
    fn reads_back_as_written(target: &Target) {
        let mut store = Store::open(target).unwrap();
        let mut r = crate::testing::finished_record("single_row_lookup", &[("rusqlite", 1400.0)]);
        {
            let s = r.start.as_mut().unwrap();
            s.knobs
                .0
                .insert("rows".into(), bench_core::knobs::KnobValue::Count(1234));
            s.env.cpus = Some(vec![0, 1, 3]);
            s.env.profile = "release".into();
        }
        r.machine = Some(bench_core::protocol::Machine {
            cores: 2,
            load_start: 0.0,
            load_end: 0.0,
            others_cores: None,
            steal: None,
            waited_s: 0.0,
            cpu_idle: Some(bench_core::protocol::CpuIdle::Held),
        });
        let mut profiled = r.clone();
        profiled.profiled = true;
        let mut other = crate::testing::finished_record("bulk_insert", &[("rusqlite", 9000.0)]);
        other.start.as_mut().unwrap().env.profile = "dev".into();
        let machine = MachineId {
            id: "m-1".into(),
            name: "vm-1".into(),
        };
        let fp = Fingerprint {
            cpu: "AMD EPYC".into(),
            cores: 2,
            kernel: "Linux 6.1".into(),
        };
        let code = Code {
            commit: Some("abc".into()),
            dirty: Some(true),
            label: None,
        };
        let (r, profiled, other) = (&r, &profiled, &other);
        let run = |key: &str, record| NewRun {
            key: key.into(),
            recorded_at: format!("2026-11-28T10:00:0{}Z", key.len() % 10),
            machine: &machine,
            fingerprint: &fp,
            code: &code,
            record,
            source: None,
        };
        assert_eq!(
            store
                .record(&[run("a", r), run("bb", profiled), run("ccc", other)])
                .unwrap(),
            3
        );
        assert_eq!(
            store.record(&[run("a", r)]).unwrap(),
            0,
            "a key is kept once"
        );
        let points = store.points(&Filter::default()).unwrap();
        assert!(points.skipped.is_empty(), "{:?}", points.skipped);
        assert_eq!(points.rows.len(), 2, "the profiled run is left out");
        let p = &points.rows[0];
        assert_eq!(
            (
                p.target.as_str(),
                p.bench.as_str(),
                p.build_profile.as_str()
            ),
            ("single_row_lookup", "rusqlite", "release")
        );
        assert_eq!(p.cpus.as_deref(), Some("0-1,3"));
        assert_eq!(p.cpu_idle.as_deref(), Some("held"));
        assert!(p.knobs.contains(r#""rows":1234"#), "{}", p.knobs);
        assert_eq!(
            (p.machine_name.as_str(), p.cpu.as_str()),
            ("vm-1", "AMD EPYC")
        );
        assert_eq!((p.commit.as_deref(), p.dirty), (Some("abc"), Some(true)));
        let q = &points.rows[1];
        assert_eq!(
            (q.target.as_str(), q.build_profile.as_str()),
            ("bulk_insert", "dev")
        );
        assert_eq!((q.cpus.as_deref(), q.cpu_idle.as_deref()), (None, None));
        // The newest record of each target, as written.
        let latest = store.latest(&Filter::default()).unwrap();
        assert!(latest.skipped.is_empty());
        assert_eq!(latest.rows.len(), 2);
        // (serde_json reads a double back within a unit in its last place: compared as read.)
        for (read, written) in latest.rows.iter().zip([r, other]) {
            assert_eq!(read.start, written.start);
            assert_eq!(read.machine, written.machine);
            assert_eq!(read.benches[0].samples, written.benches[0].samples);
        }
        let only = store
            .latest(&Filter {
                target: Some("bulk_insert".into()),
                ..Default::default()
            })
            .unwrap();
        assert_eq!(only.rows.len(), 1);
        assert_eq!(store.info().unwrap().runs, 3);
    }

    /// Only a finished run measured here is recorded: not one that stopped early, not one
    /// imported from a file, not a Criterion folder's.
    #[test]
    fn a_recorder_records_finished_runs_measured_here_alone() {
        let d = tempfile::tempdir().unwrap();
        let recorder = Recorder {
            target: Target::Sqlite(d.path().join("results.sqlite")),
            code: Code::default(),
            data: d.path().to_path_buf(),
        };
        let done = crate::testing::finished_record("single_row_lookup", &[("rusqlite", 1400.0)]);
        let mut unfinished = done.clone();
        unfinished.done = false;
        let mut imported = done.clone();
        imported.source = Some("report.json".into());
        let criterion = crate::import::criterion(
            &std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/criterion"),
        )
        .unwrap()
        .remove(0);
        let mut criterion_unsourced = criterion.clone();
        criterion_unsourced.source = None;
        for r in [&unfinished, &imported, &criterion, &criterion_unsourced] {
            assert_eq!(recorder.record(&[r]).unwrap(), "");
        }
        assert!(!d.path().join("results.sqlite").exists());
        let said = recorder.record(&[&done]).unwrap();
        assert!(
            said.starts_with("recorded 1 run in the results store "),
            "{said}"
        );
    }
}
