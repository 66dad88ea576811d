//! The script target in a harness crate (sqlx's, async-sqlite's, sql-middleware/turso's): the
//! same replay as the core runner's, on a copy of the user's database. The user's file is
//! copied as bytes (never opened by SQLite, see [`crate::script::original`]); the harness's
//! own SQLite binding settles that copy into a base, SQLite judges the scripts on the base
//! (each harness compiles `script/judge.rs` against its own rusqlite), and each bench runs on
//! a fresh copy of the base. A harness writes only its [`ScriptBinding`].

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::catalog::{BenchSpec, CatalogError, Subject, Target};
use crate::error::BenchError;
use crate::measure::Bench;
use crate::protocol::{DatasetStatus, Event};
use crate::script::replay::{AsyncPath, Replay};
use crate::settings::SqliteSettings;
use crate::workload::{RunContext, Session, Workload};

/// What a harness's SQLite binding does for the script target.
pub trait ScriptBinding: Sync {
    type Path: AsyncPath;
    /// The bench's subject this harness runs.
    const SUBJECT: Subject;
    /// Runs `sql` (the `--init` file) on a new database at `path`.
    fn init(&self, rt: &tokio::runtime::Runtime, path: &Path, sql: &str) -> Result<(), BenchError>;
    /// Copies the database at `original` (a file of this run's own: the byte copy of the
    /// user's file with its -wal or -journal, or the base made from it) to `to`, in the same
    /// folder, a plain database in `journal_mode` with nothing beside it: `judge::copy`
    /// compiled against the harness's rusqlite (SQLite jailed in that folder).
    fn copy(&self, original: &Path, to: &Path, journal_mode: &str) -> Result<(), BenchError>;
    /// SQLite's verdict on every statement of `mix`, taken on the database at `path` (opened
    /// read-only): `judge::judge` compiled against the harness's rusqlite.
    fn judge(&self, path: &Path, mix: &mut crate::script::Mix) -> Result<(), BenchError>;
    /// The path the clients run on over the database at `path`, with `clients`
    /// connections, and the settings a connection reads back.
    fn open(
        &self,
        rt: &tokio::runtime::Runtime,
        path: &Path,
        settings: &SqliteSettings,
        clients: usize,
    ) -> Result<(Self::Path, BTreeMap<String, String>), BenchError>;
}

/// The script target as a harness registers it.
pub struct ScriptHarness<B>(pub B);

impl<B: ScriptBinding> Workload for ScriptHarness<B> {
    fn spec(&self) -> &'static Target {
        super::spec()
    }

    fn open<'a>(
        &'a self,
        run: &'a RunContext<'a>,
        emit: &mut dyn FnMut(Event),
    ) -> Result<Box<dyn Session + 'a>, BenchError> {
        let mut mix = super::check_inputs(&run.script)?;
        let db = run.script.db.clone().expect("checked");
        let rt = crate::measure::drive::runtime(None)?;
        if super::needs_init(&db)? {
            let init = run.script.init.as_ref().expect("checked");
            emit(Event::Dataset {
                status: DatasetStatus::Building,
                rows: 0,
                path: db.display().to_string(),
                build_ms: None,
            });
            build(&self.0, &rt, &db, init, &run.cache_dir)?;
        }
        let dir = run.scratch_dir()?;
        let raw = dir.join(format!("script-raw-{}.sqlite", std::process::id()));
        let base = dir.join(format!("script-base-{}.sqlite", std::process::id()));
        let jail = crate::scratch::jail_of(&dir)?;
        let refused = jail.refusals().len();
        let sha256 = crate::script::original::copy_stable(&db, &raw);
        let made = sha256.and_then(|sum| {
            crate::dataset::remove_db_files(&base);
            let copied = self.0.copy(&raw, &base, &run.sqlite.journal_mode);
            // The copy's own journal may name a file outside the run's folder: the jail
            // refuses it, and the copy with it.
            if let Some(r) = jail.refusals().get(refused) {
                return Err(BenchError::Invalid(format!(
                    "--db {}: SQLite cannot read its copy: {}",
                    db.display(),
                    crate::scratch::refusal_words(r)
                )));
            }
            copied.map_err(|e| {
                BenchError::Invalid(format!(
                    "--db {}: SQLite cannot read its copy: {e}",
                    db.display()
                ))
            })?;
            self.0.judge(&base, &mut mix)?;
            Ok(sum)
        });
        crate::script::original::remove_copy(&raw);
        let sha256 = made.inspect_err(|_| crate::dataset::remove_db_files(&base))?;
        let mut settings = run.sqlite.clone();
        // In exclusive locking mode a read-only connection cannot read a WAL file: each bench
        // has its own copy anyway, opened read-write there.
        settings.read_only = mix.read_only() && settings.locking_mode != "exclusive";
        Ok(Box::new(HarnessSession {
            binding: &self.0,
            replay: super::replay_for(run, mix)?,
            sha256,
            original: db,
            dir,
            settings,
            rt,
            working: RefCell::new(vec![base.clone()]),
            base,
        }))
    }
}

/// Builds the database at `path` from `init` in a folder of this process's in the cache (the
/// binding's SQLite jailed there), moved in place when it is whole: a failed or interrupted init
/// leaves nothing beside `path`.
fn build<B: ScriptBinding>(
    b: &B,
    rt: &tokio::runtime::Runtime,
    path: &Path,
    init: &Path,
    cache_dir: &Path,
) -> Result<(), BenchError> {
    let sql = crate::script::original::read_text(init, "--init")?;
    let scratch = crate::scratch::Scratch::new(cache_dir, "init-build")?;
    let tmp = scratch.path().join(crate::scratch::SNAPSHOT);
    b.init(rt, &tmp, &sql)
        .map_err(|e| BenchError::Invalid(format!("--init {}: {e}", init.display())))?;
    crate::scratch::place(&tmp, path)
}

struct HarnessSession<'a, B: ScriptBinding> {
    binding: &'a B,
    replay: Replay,
    original: PathBuf,
    sha256: String,
    dir: PathBuf,
    /// The user's database settled into a plain file: what SQLite judged the scripts on and
    /// what every bench's copy is made from.
    base: PathBuf,
    settings: SqliteSettings,
    rt: tokio::runtime::Runtime,
    /// The copies made for this run's benches, removed when it ends.
    working: RefCell<Vec<PathBuf>>,
}

impl<B: ScriptBinding> Drop for HarnessSession<'_, B> {
    fn drop(&mut self) {
        for p in self.working.borrow().iter() {
            crate::dataset::remove_db_files(p);
        }
    }
}

impl<B: ScriptBinding> Session for HarnessSession<'_, B> {
    fn ops(&self) -> u64 {
        self.replay.per_pass
    }

    fn skip(&self, bench: &BenchSpec) -> Option<String> {
        crate::settings::skip_reason(bench.subject, self.replay.clients, &self.settings)
    }

    fn bench(&self, spec: &BenchSpec) -> Result<Bench<'_>, BenchError> {
        if spec.subject != B::SUBJECT {
            return Err(CatalogError::no_implementation(
                super::spec(),
                spec,
                "not a bench of this harness",
            )
            .into());
        }
        // A fresh copy per bench, whether the scripts write or not.
        let path = self.dir.join(format!(
            "script-{}-work-{}.sqlite",
            spec.name.replace('/', "-"),
            std::process::id()
        ));
        crate::dataset::remove_db_files(&path);
        self.working.borrow_mut().push(path.clone());
        self.binding
            .copy(&self.base, &path, &self.settings.journal_mode)
            .map_err(|e| {
                BenchError::Invalid(format!("copying {}: {e}", self.original.display()))
            })?;
        let (p, settings) =
            self.binding
                .open(&self.rt, &path, &self.settings, self.replay.clients)?;
        self.replay.async_bench(&self.rt, spec.name, p, settings)
    }

    fn report(&self, spec: &BenchSpec) -> Vec<Event> {
        self.replay.report(spec.name, &self.original, &self.sha256)
    }
}
