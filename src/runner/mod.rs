//! The runner layer: one child process per run, its stdout parsed line by line into events
//! sent on a channel. Behind a trait so that front ends can be tested without processes.

mod child;
pub mod guard;
pub mod harnesses;
pub mod machine;
mod paced;
mod process;
mod rounds;

use bench_core::catalog::Harness;
use bench_core::profile::Profile;
use bench_core::protocol::{self, Event};
use tokio::sync::mpsc;

use crate::messages::{Outcome, RunEvent, RunRequest};
pub use process::Program;
use process::send_event;

/// Starts runs. `ProcessRunner` spawns real children; tests use a fake.
pub trait Runner {
    fn start(
        &self,
        request: RunRequest,
        events: mpsc::UnboundedSender<RunEvent>,
    ) -> std::io::Result<RunHandle>;
}

/// Kills the child when dropped or cancelled.
pub struct RunHandle {
    kill: Option<tokio::sync::oneshot::Sender<()>>,
}

impl RunHandle {
    #[cfg(test)]
    pub fn detached() -> Self {
        RunHandle { kill: None }
    }

    pub fn cancel(&mut self) {
        if let Some(k) = self.kill.take() {
            let _ = k.send(());
        }
    }
}

impl Drop for RunHandle {
    fn drop(&mut self) {
        self.cancel();
    }
}

/// Starts each run as child processes: bench-core's runner (this executable's hidden `runner`
/// subcommand) for the core benches, then each harness crate (harness-sqlx, harness-async-sqlite)
/// for its benches, one after the other, presented as one stream (one `done`, one exit).
pub struct ProcessRunner {
    pub core: Program,
    /// The harness crates, in [`harnesses::EXTERNAL`]'s order.
    pub externals: Vec<harnesses::Locator>,
    /// bench-core's runner with turso ([`harnesses::TURSO_RUNNER`]), for a run's core benches
    /// when some are turso's and this build has no turso; None when it has.
    pub turso: Option<harnesses::Locator>,
    /// Start the core benches while a harness crate still builds (the explorer: a first sqlx
    /// run does not sit idle for minutes) instead of building first (headless: nothing is
    /// measured beside a compiler).
    pub overlap_build: bool,
    /// How many steps below this process's priority runners (and harness builds) run:
    /// 0 (headless: the same as the front end), or [`front_end_nice`] in the explorer.
    pub nice: i32,
    /// Keep idle CPUs polling while runs measure ([`machine::keep_cpus_awake`]).
    pub keep_cpus_awake: bool,
    /// Confine runners to these CPUs ([`machine::confine`]).
    pub cpus: Option<machine::CpuSet>,
}

/// The explorer's runners and harness builds run at the lowest priority `nice` gives (19
/// steps below it) and in a session of their own, so that a key is answered at once even
/// while a run keeps both cores busy with hundreds of threads (the explorer itself uses under
/// 1% of a core). Every thread of a run is lowered alike, so a run that has the machine to
/// itself is measured as it would be at the front end's priority: nice only weighs its
/// threads against other processes'. `BENCHSCOPE_RUNNER_NICE` (0 to 19) sets another step;
/// 0 runs them as the explorer, in its session.
pub const FRONT_END_FIRST: i32 = 19;

/// The explorer's step: `BENCHSCOPE_RUNNER_NICE` when set, else [`FRONT_END_FIRST`].
pub fn front_end_nice() -> Result<i32, String> {
    nice_from(&bench_core::vars::process_env)
}

/// A step of nice as BENCHSCOPE_RUNNER_NICE gives it (0 to 19), or [`FRONT_END_FIRST`] when it
/// is not set; anything else is refused by the variable's one parser, with what is allowed.
fn nice_from(env: &dyn Fn(&str) -> Option<String>) -> Result<i32, String> {
    bench_core::vars::RUNNER_NICE
        .resolve(None, env)
        .map(|n| n.unwrap_or(FRONT_END_FIRST))
        .map_err(|e| e.to_string())
}

impl ProcessRunner {
    pub fn new() -> std::io::Result<Self> {
        Ok(ProcessRunner {
            core: Program {
                program: std::env::current_exe()?,
                prefix_args: vec!["runner".into()],
            },
            externals: harnesses::EXTERNAL
                .into_iter()
                .map(harnesses::Locator::new)
                .collect(),
            turso: (!bench_core::TURSO).then(|| harnesses::Locator::new(harnesses::TURSO_RUNNER)),
            overlap_build: false,
            nice: 0,
            keep_cpus_awake: false,
            cpus: None,
        })
    }
}

impl ProcessRunner {
    /// Every runner that may be built: the turso runner first (its benches are core benches),
    /// then the harness crates.
    pub fn locators(&self) -> impl Iterator<Item = &harnesses::Locator> {
        self.turso.iter().chain(&self.externals)
    }

    /// The same, to set how they build.
    pub fn locators_mut(&mut self) -> impl Iterator<Item = &mut harnesses::Locator> {
        self.turso.iter_mut().chain(&mut self.externals)
    }
}

impl Runner for ProcessRunner {
    fn start(
        &self,
        request: RunRequest,
        events: mpsc::UnboundedSender<RunEvent>,
    ) -> std::io::Result<RunHandle> {
        let (kill_tx, kill_rx) = tokio::sync::oneshot::channel::<()>();
        let runners = Runners {
            core: self.core.clone(),
            externals: self.externals.clone(),
            turso: self.turso.clone(),
            overlap_build: self.overlap_build,
        };
        let keep_cpus_awake = self.keep_cpus_awake;
        let mut run = RunCtx {
            run_id: request.run_id.clone(),
            events,
            kill_rx,
            nice: self.nice,
            cpus: self.cpus.clone(),
        };
        tokio::spawn(async move {
            // Find (or build) every harness first, so a build never lands between benches and
            // a harness that cannot be had is known before anything is measured; or, when
            // overlapping, let a harness crate build on while the core benches run.
            let Some(children) = runners.children(&request, &mut run).await else {
                return run.exit(Outcome::Cancelled);
            };
            // One measurement at a time on this machine: wait for any other benchscope's.
            let asked = std::time::Instant::now();
            let Some(_lock) = run.machine_lock().await else {
                return run.exit(Outcome::Cancelled);
            };
            let waited = asked.elapsed();
            // Idle CPUs poll while this run measures when asked: a hand-off to another thread
            // then wakes no sleeping CPU.
            let (awake, cpu_idle) = machine::keep_cpus_awake(keep_cpus_awake);
            let before = machine::snapshot();
            let (errors, cancelled) = run.measure(&request, children).await;
            let machine = machine::between(&before, &machine::snapshot(), waited, cpu_idle);
            drop(awake);
            run.send(Event::Machine { machine });
            let outcome = if cancelled {
                Outcome::Cancelled
            } else if errors.is_empty() {
                run.send(Event::Done);
                Outcome::Completed
            } else {
                Outcome::Failed(errors.join("; "))
            };
            run.exit(outcome);
        });
        Ok(RunHandle {
            kill: Some(kill_tx),
        })
    }
}

/// The runners a run may start, as the [`ProcessRunner`] knows them.
struct Runners {
    core: Program,
    externals: Vec<harnesses::Locator>,
    turso: Option<harnesses::Locator>,
    overlap_build: bool,
}

/// A harness's benches and the program that runs them (found, or still building).
type Child = (Harness, Vec<String>, Pending);

impl Runners {
    /// Each harness's benches with its program; the core's may be two children (the turso
    /// runner's and this build's own). `None` when the run is cancelled meanwhile.
    async fn children(&self, request: &RunRequest, run: &mut RunCtx) -> Option<Vec<Child>> {
        let groups = request.by_harness();
        let has_core = groups.iter().any(|(h, _)| *h == Harness::Core);
        let mut children = Vec::new();
        for (harness, mut benches) in groups {
            let program = if harness == Harness::Core {
                // This build has no turso and the run has turso benches: bench-core's
                // runner with turso takes them all (paired with each other as ever)...
                let turso = self
                    .turso
                    .as_ref()
                    .filter(|_| benches.iter().any(|b| request.needs_turso(b)));
                match turso {
                    None => Pending::Ready(Ok(self.core.clone())),
                    // ...or, in the explorer while it still builds, the turso benches alone,
                    // and the rest now in this build's own runner.
                    Some(l) if self.overlap_build && !l.is_ready() && l.builds() => {
                        let (with, without) = split_turso(request, benches);
                        run.note(format!(
                            "{} run once bench-core's runner with turso is built (this build has no turso); the other core benches run now, in a process of their own: no turso bench is paired with them",
                            with.join(", ")
                        ));
                        if !without.is_empty() {
                            children.push((
                                harness,
                                without,
                                Pending::Ready(Ok(self.core.clone())),
                            ));
                        }
                        benches = with;
                        Pending::build(l)
                    }
                    Some(l) => run.program(l).await?,
                }
            } else {
                let l = self
                    .externals
                    .iter()
                    .find(|l| l.external.harness == harness);
                match l {
                    None => Pending::Ready(Ok(self.core.clone())),
                    Some(l) if self.overlap_build && has_core && !l.is_ready() && l.builds() => {
                        run.note(format!("core benches run while the {} harness builds: cargo shares their CPU (the machine line says how much)", harness.name()));
                        Pending::build(l)
                    }
                    Some(l) => run.program(l).await?,
                }
            };
            // The runner with turso cannot be had: the other core benches still run here,
            // and only the turso ones fail, with the reason.
            if harness == Harness::Core
                && let Pending::Ready(Err(e)) = &program
            {
                let (with, without) = split_turso(request, benches);
                if !without.is_empty() {
                    run.note(format!(
                        "{} not run: {e}; the other core benches run in this build's own runner",
                        with.join(", ")
                    ));
                    children.push((harness, without, Pending::Ready(Ok(self.core.clone()))));
                }
                benches = with;
            }
            children.push((harness, benches, program));
        }
        Some(children)
    }
}

/// A request's benches that need the runner with turso, and the others.
fn split_turso(request: &RunRequest, benches: Vec<String>) -> (Vec<String>, Vec<String>) {
    benches.into_iter().partition(|b| request.needs_turso(b))
}

/// What one run's steps share: its id, where its events go, its cancel, and how its runner
/// processes start.
struct RunCtx {
    run_id: String,
    events: mpsc::UnboundedSender<RunEvent>,
    kill_rx: tokio::sync::oneshot::Receiver<()>,
    nice: i32,
    cpus: Option<machine::CpuSet>,
}

impl RunCtx {
    fn note(&self, text: String) {
        let _ = self.events.send(RunEvent::Note {
            run_id: self.run_id.clone(),
            text,
        });
    }

    fn send(&self, event: Event) {
        send_event(&self.events, &self.run_id, event);
    }

    fn exit(self, outcome: Outcome) {
        let _ = self.events.send(RunEvent::Exited {
            run_id: self.run_id,
            outcome,
        });
    }

    /// A harness's program, found or built now (its build's notes said); `None` when the run
    /// is cancelled meanwhile.
    async fn program(&mut self, l: &harnesses::Locator) -> Option<Pending> {
        let (events, run_id) = (&self.events, &self.run_id);
        let note = |text: String| {
            let _ = events.send(RunEvent::Note {
                run_id: run_id.clone(),
                text,
            });
        };
        tokio::select! {
            p = l.program(&note) => Some(Pending::Ready(p)),
            _ = &mut self.kill_rx => None,
        }
    }

    /// The machine's measurement lock, once no other benchscope holds it (said once); inside
    /// `Some`, `None` when it cannot be had at all (a read-only temp folder: the run does not
    /// wait, and says so). `None` when the run is cancelled meanwhile.
    async fn machine_lock(&mut self) -> Option<Option<machine::MeasureLock>> {
        let mut said = false;
        loop {
            match machine::try_lock() {
                Ok(Some(lock)) => return Some(Some(lock)),
                Ok(None) => {
                    if !said {
                        said = true;
                        self.note(format!(
                            "waiting: another benchscope measurement is running on this machine ({} is taken); this run starts when it ends",
                            machine::lock_path().display()
                        ));
                    }
                    tokio::select! {
                        _ = tokio::time::sleep(machine::RETRY) => {}
                        _ = &mut self.kill_rx => return None,
                    }
                }
                Err(e) => {
                    self.note(format!(
                        "{e}: this run does not wait for other measurements"
                    ));
                    return Some(None);
                }
            }
        }
    }

    /// Every process of the run, each running every child one after another; what the
    /// processes say is folded into one stream (`rounds`). The harnesses' errors, and whether
    /// the run was cancelled.
    async fn measure(&mut self, request: &RunRequest, children: Vec<Child>) -> (Vec<String>, bool) {
        let mut errors = Vec::new();
        // Profiled, every bench is its own child under perf: one recording per bench.
        let Some(mut children) = self.one_per_bench_if_profiled(request, children).await else {
            return (errors, true);
        };
        let processes = request.processes();
        let mut rounds = rounds::Rounds::new(processes);
        // The children (by place: the core's benches may be two) that failed.
        let mut failed: Vec<usize> = Vec::new();
        for process in 0..processes {
            // Where every bench's processes so far agreed within their own intervals, one
            // process would have done: the rest are not spent.
            if process >= 2 && request.settings.processes_may_stop && rounds.agreed() {
                self.note(format!(
                    "runner processes {}-{processes} not run: every bench's {process} processes agreed within their own intervals",
                    process + 1
                ));
                break;
            }
            if process > 0 {
                rounds.next_process();
            }
            if processes > 1 {
                self.note(format!("runner process {} of {processes}", process + 1));
            }
            for (place, (harness, benches, program)) in children.iter_mut().enumerate() {
                if failed.contains(&place) {
                    continue;
                }
                let Some(program) = program.ready(&mut self.kill_rx).await else {
                    return (errors, true);
                };
                match self.part(&mut rounds, request, benches, program).await {
                    Ok(()) => {}
                    Err(child::ChildEnd::Cancelled) => return (errors, true),
                    // One harness failing does not stop the others (nor is it started again).
                    Err(child::ChildEnd::Failed(e)) => {
                        failed.push(place);
                        errors.push(format!("{} harness: {e}", harness.name()))
                    }
                }
            }
        }
        (errors, false)
    }

    /// The children as they are, or, when the run is profiled, one child per bench (their
    /// programs found first). `None` when the run is cancelled meanwhile.
    async fn one_per_bench_if_profiled(
        &mut self,
        request: &RunRequest,
        children: Vec<Child>,
    ) -> Option<Vec<Child>> {
        if request.profile.is_none() {
            return Some(children);
        }
        let mut split = Vec::new();
        for (h, benches, p) in children {
            let p = p.wait(&mut self.kill_rx).await?;
            split.extend(
                benches
                    .into_iter()
                    .map(|b| (h, vec![b], Pending::Ready(p.clone()))),
            );
        }
        Some(split)
    }

    /// One runner process of one child's benches (under perf, its flamegraph made after,
    /// when the run is profiled).
    async fn part(
        &mut self,
        rounds: &mut rounds::Rounds,
        request: &RunRequest,
        benches: &[String],
        program: Result<Program, String>,
    ) -> Result<(), child::ChildEnd> {
        let stem = request
            .profile
            .as_ref()
            .map(|dir| crate::profile::stem(dir, &request.target, &benches[0], &self.run_id));
        let part = RunRequest {
            benches: benches.to_vec(),
            ..request.one_process()
        };
        let program = match (&stem, program) {
            (Some(stem), Ok(p)) => Ok(under_perf(&p, stem)),
            (_, p) => p,
        };
        let result = match program {
            Ok(p) => through(rounds, &p, &part, self).await,
            Err(e) => Err(child::ChildEnd::Failed(e)),
        };
        if let Some(stem) = stem {
            let bench = benches[0].clone();
            let profile = match &result {
                Ok(()) => {
                    let title = format!("{} {bench}", request.target);
                    tokio::task::spawn_blocking(move || crate::profile::finish(&stem, &title))
                        .await
                        .unwrap_or_else(|e| Profile::failed(format!("profiling: {e}")))
                }
                Err(_) => {
                    let _ = std::fs::remove_file(stem.with_extension("perf.data"));
                    Profile::failed("the bench did not finish under the profiler")
                }
            };
            self.send(Event::Profile { bench, profile });
        }
        result
    }
}

/// A harness's program: known, or still being built in a task of its own.
enum Pending {
    Ready(Result<Program, String>),
    Building(tokio::task::JoinHandle<Result<Program, String>>),
}

impl Pending {
    /// The harness `l` built in a task of its own, while the run goes on.
    fn build(l: &harnesses::Locator) -> Pending {
        let l = l.clone();
        Pending::Building(tokio::spawn(async move { l.program(&|_| {}).await }))
    }

    /// The program once it is there, kept for the next process; `None` when the run is
    /// cancelled meanwhile.
    async fn ready(
        &mut self,
        kill_rx: &mut tokio::sync::oneshot::Receiver<()>,
    ) -> Option<Result<Program, String>> {
        let taken = std::mem::replace(self, Pending::Ready(Err("taken".into())));
        let p = taken.wait(kill_rx).await?;
        *self = Pending::Ready(p.clone());
        Some(p)
    }

    /// The program once it is there; `None` when the run is cancelled meanwhile.
    async fn wait(
        self,
        kill_rx: &mut tokio::sync::oneshot::Receiver<()>,
    ) -> Option<Result<Program, String>> {
        match self {
            Pending::Ready(p) => Some(p),
            Pending::Building(task) => tokio::select! {
                p = task => Some(p.unwrap_or_else(|e| Err(format!("building a harness crate: {e}")))),
                _ = kill_rx => None,
            },
        }
    }
}

/// One runner process of a run, its events passed through `rounds` on their way: the
/// run's figures across its processes so far replace each process's own.
async fn through(
    rounds: &mut rounds::Rounds,
    program: &Program,
    request: &RunRequest,
    run: &mut RunCtx,
) -> Result<(), child::ChildEnd> {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let events = &run.events;
    let child = async {
        let to = child::To {
            run_id: &run.run_id,
            events: &tx,
            kill_rx: &mut run.kill_rx,
            nice: run.nice,
            cpus: run.cpus.as_ref(),
        };
        let result = child::run_child(program, request, to).await;
        drop(tx);
        result
    };
    let forward = async {
        while let Some(e) = rx.recv().await {
            match e {
                RunEvent::Event {
                    run_id,
                    event,
                    line,
                } => {
                    // Only a start and the figures across processes are rewritten; every
                    // other event (samples above all) keeps the runner's own line.
                    let rewritten = matches!(
                        event,
                        Event::Start(_) | Event::Summary { .. } | Event::Paired { .. }
                    );
                    if let Some(event) = rounds.pass(event) {
                        let line = if rewritten {
                            protocol::encode(&event)
                        } else {
                            line
                        };
                        let _ = events.send(RunEvent::Event {
                            run_id,
                            event,
                            line,
                        });
                    }
                }
                other => {
                    let _ = events.send(other);
                }
            }
        }
    };
    let (result, ()) = tokio::join!(child, forward);
    result
}

/// The same runner, started by perf recording into `<stem>.perf.data`.
fn under_perf(p: &Program, stem: &std::path::Path) -> Program {
    let mut prefix_args = crate::profile::record_args(&stem.with_extension("perf.data"));
    prefix_args.push(p.program.display().to_string());
    prefix_args.extend(p.prefix_args.iter().cloned());
    // The runner keeps its allocations' stacks beside perf's recording.
    prefix_args.push(format!(
        "--alloc-stacks={}",
        crate::profile::alloc_stacks_path(stem).display()
    ));
    Program {
        program: crate::profile::perf(),
        prefix_args,
    }
}

/// A runner that replays scripted events, for tests of the front ends.
#[cfg(test)]
pub struct FakeRunner {
    pub script: Vec<Event>,
    pub outcome: Outcome,
}

#[cfg(test)]
impl Runner for FakeRunner {
    fn start(
        &self,
        request: RunRequest,
        events: mpsc::UnboundedSender<RunEvent>,
    ) -> std::io::Result<RunHandle> {
        for event in &self.script {
            let line = protocol::encode(event);
            let _ = events.send(RunEvent::Event {
                run_id: request.run_id.clone(),
                event: event.clone(),
                line,
            });
        }
        let _ = events.send(RunEvent::Exited {
            run_id: request.run_id,
            outcome: self.outcome.clone(),
        });
        Ok(RunHandle::detached())
    }
}

#[cfg(test)]
mod tests {
    use super::process::own_group;
    use super::*;
    use std::path::PathBuf;

    /// The arguments each runner of a run of `benches` was started with (a fake core runner
    /// and a fake turso runner, each writing its name and arguments to a log), and the run's
    /// notes.
    async fn routed(
        benches: &[&str],
        overlap_build: bool,
        ready: bool,
    ) -> (Vec<String>, Vec<String>) {
        routed_to(benches, overlap_build, |fake| {
            harnesses::Locator::built(harnesses::TURSO_RUNNER, fake, ready)
        })
        .await
    }

    /// The same with the turso runner's locator made from the fake turso runner's path.
    async fn routed_to(
        benches: &[&str],
        overlap_build: bool,
        turso: impl FnOnce(PathBuf) -> harnesses::Locator,
    ) -> (Vec<String>, Vec<String>) {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("log");
        let fake = |name: &str| {
            let p = dir.path().join(name);
            std::fs::write(
                &p,
                format!(
                    "#!/bin/sh\nrequest=$(cat)\necho {name} \"$@\" \"$request\" >> '{}'\n",
                    log.display()
                ),
            )
            .unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
            p
        };
        let runner = ProcessRunner {
            core: Program {
                program: fake("core"),
                prefix_args: vec![],
            },
            externals: vec![],
            turso: Some(turso(fake("turso"))),
            overlap_build,
            nice: 0,
            keep_cpus_awake: false,
            cpus: None,
        };
        let request = RunRequest::new(
            "r".into(),
            "single_row_lookup",
            benches.iter().map(|b| b.to_string()).collect(),
            Default::default(),
            false,
            &Default::default(),
        );
        let (tx, mut rx) = mpsc::unbounded_channel();
        let _handle = runner.start(request, tx).unwrap();
        let mut notes = Vec::new();
        while let Some(e) = rx.recv().await {
            match e {
                RunEvent::Note { text, .. } => notes.push(text),
                RunEvent::Exited { .. } => break,
                _ => {}
            }
        }
        // Each runner's name and the benches its request gave it, as "name a,b".
        let started = std::fs::read_to_string(&log)
            .unwrap_or_default()
            .lines()
            .map(|l| {
                let (name, rest) = l.split_once(' ').unwrap();
                // Told to read the run from its stdin, and given it there.
                let json = rest.strip_prefix("--request - ").unwrap();
                let asked =
                    bench_core::service::request::RunnerRequest::read(json.as_bytes()).unwrap();
                format!("{name} {}", asked.benches.join(","))
            })
            .collect();
        (started, notes)
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn turso_benches_go_to_the_runner_with_turso_where_this_build_has_none() {
        // Headless: every core bench of a run with a turso bench goes to the runner with
        // turso, in one process (paired with each other as ever).
        let (started, _) =
            routed(&["rusqlite", "turso_raw", "middleware/turso"], false, true).await;
        assert_eq!(started, ["turso rusqlite,turso_raw,middleware/turso"]);
        // A run without turso benches stays in this build's runner.
        let (started, _) = routed(&["rusqlite", "sqlite3_c"], false, true).await;
        assert_eq!(started, ["core rusqlite,sqlite3_c"]);
        // Built already, the explorer does the same.
        let (started, _) = routed(&["rusqlite", "turso_raw"], true, true).await;
        assert_eq!(started, ["turso rusqlite,turso_raw"]);
        // In the explorer while it builds: the other core benches now, the turso ones after,
        // and a note says they are not paired.
        let (started, notes) = routed(&["rusqlite", "turso_raw", "sqlite3_c"], true, false).await;
        assert_eq!(started, ["core rusqlite,sqlite3_c", "turso turso_raw"]);
        assert!(
            notes.iter().any(|n| n
                .starts_with("turso_raw run once bench-core's runner with turso is built")
                && n.contains("no turso bench is paired")),
            "{notes:?}"
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_turso_runner_that_cannot_be_had_fails_the_turso_benches_alone() {
        // Neither built nor its sources there.
        let missing = harnesses::External {
            crate_name: "no-such-runner",
            env: "BENCHSCOPE_NO_SUCH_RUNNER_FOR_THIS_TEST",
            workspace_bin: None,
            ..harnesses::TURSO_RUNNER
        };
        let (started, notes) = routed_to(&["rusqlite", "turso_raw"], false, |_| {
            harnesses::Locator::new(missing)
        })
        .await;
        assert_eq!(started, ["core rusqlite"]);
        assert!(
            notes.iter().any(|n| n.starts_with("turso_raw not run: ")
                && n.contains("no-such-runner")
                && n.ends_with("the other core benches run in this build's own runner")),
            "{notes:?}"
        );
    }

    #[test]
    fn the_runners_step_of_nice_is_checked() {
        let with = |v: Option<&'static str>| {
            nice_from(&move |k: &str| {
                (k == "BENCHSCOPE_RUNNER_NICE")
                    .then(|| v.map(String::from))
                    .flatten()
            })
        };
        assert_eq!(with(None), Ok(FRONT_END_FIRST));
        assert_eq!(with(Some("0")), Ok(0));
        assert_eq!(with(Some(" 7 ")), Ok(7));
        for bad in ["20", "-1", "high", ""] {
            let e = with(Some(bad)).unwrap_err();
            assert!(
                e.contains(&format!("{bad:?}"))
                    && e.contains("BENCHSCOPE_RUNNER_NICE")
                    && e.contains("0 to 19"),
                "{e}"
            );
        }
    }

    /// Fields of /proc/PID/stat from the state on (the command name, in parentheses, may hold
    /// spaces): pid, then field 3 onwards.
    fn stat_fields(stat: &str) -> (i64, Vec<i64>) {
        let pid = stat.split_whitespace().next().unwrap().parse().unwrap();
        let after = &stat[stat
            .rfind(')')
            .expect("stat has the command in parentheses")
            + 2..];
        // The state is a letter: the numbers after it.
        let nums = after
            .split_whitespace()
            .skip(1)
            .map(|f| f.parse().unwrap_or(0))
            .collect();
        (pid, nums)
    }

    /// Parent pid, process group, session and nice value of a process's stat line.
    fn ids(stat: &str) -> (i64, i64, i64, i64) {
        let (pid, f) = stat_fields(stat);
        // After the state: ppid, pgrp, session, ... nice is the 16th.
        let _ = f[0];
        (pid, f[1], f[2], f[15])
    }

    #[tokio::test]
    async fn a_lowered_child_runs_that_many_steps_below_its_parent_in_a_group_of_its_own() {
        let (_, _, own_session, own_nice) =
            ids(&std::fs::read_to_string("/proc/self/stat").unwrap());
        for step in [0, 5] {
            let mut command = tokio::process::Command::new("cat");
            command.arg("/proc/self/stat");
            own_group(&mut command, step);
            let out = command.output().await.expect("cat runs");
            let (pid, pgrp, session, nice) = ids(&String::from_utf8_lossy(&out.stdout));
            assert_eq!(nice, (own_nice + step as i64).min(19), "step {step}");
            assert_eq!(pgrp, pid, "step {step}: a process group of its own");
            if step > 0 {
                assert_eq!(session, pid, "lowered: a session of its own");
            } else {
                assert_eq!(session, own_session, "not lowered: the caller's session");
            }
        }
    }
}
