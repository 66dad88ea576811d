//! Keys and commands. Each panel has a keymap; the hint bar and the help overlay are generated
//! from the same tables that `update` dispatches on.

use super::panels::Focus;

/// A key press, independent of the terminal library.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    Char(char),
    Enter,
    Esc,
    Tab,
    BackTab,
    Up,
    Down,
    Left,
    Right,
    Backspace,
    CtrlC,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cmd {
    Up,
    Down,
    Left,
    Right,
    Mark,
    MarkGroup,
    Filter,
    ClearFilter,
    Fold,
    FoldAll,
    Matrix,
    ClearMarks,
    Run,
    Increase,
    Decrease,
    Edit,
    Cancel,
    ClearQueue,
    Scaling,
    SaveBaseline,
    OpenFile,
    Histogram,
    History,
    ToggleTrace,
    TogglePaired,
    BaselineBench,
    BaselineRun,
    Sweep,
    Profile,
    Export,
    Help,
    NextFocus,
    PrevFocus,
    Quit,
}

pub struct Binding {
    pub keys: &'static [Key],
    /// How the keys are shown in the help overlay.
    pub label: &'static str,
    pub help: &'static str,
    pub cmd: Cmd,
    /// The short form in the hint bar (`None`: shown with its neighbour or only in the help).
    pub hint: Option<(&'static str, &'static str)>,
    /// Listed in the help overlay (a pair like up/down is listed once).
    pub in_help: bool,
}

const fn b(keys: &'static [Key], label: &'static str, help: &'static str, cmd: Cmd) -> Binding {
    Binding {
        keys,
        label,
        help,
        cmd,
        hint: None,
        in_help: true,
    }
}

impl Binding {
    const fn hint(mut self, keys: &'static str, what: &'static str) -> Binding {
        self.hint = Some((keys, what));
        self
    }

    const fn in_help(mut self, shown: bool) -> Binding {
        self.in_help = shown;
        self
    }
}

const UP: &[Key] = &[Key::Up, Key::Char('k')];
const DOWN: &[Key] = &[Key::Down, Key::Char('j')];

pub const CATALOG: &[Binding] = &[
    b(UP, "↑↓/kj", "move between benches", Cmd::Up).hint("↑↓", "move"),
    b(DOWN, "↓/j", "next bench", Cmd::Down).in_help(false),
    b(
        &[Key::Char('/')],
        "/",
        "filter benches and rows by name, backend, strategy, phase, or a name pattern (esc clears)",
        Cmd::Filter,
    )
    .hint("/", "filter"),
    b(&[Key::Esc], "esc", "clear the filter", Cmd::ClearFilter).in_help(false),
    b(
        &[Key::Char('z')],
        "z/Z",
        "fold / unfold the bench's group into one row (Z: every group)",
        Cmd::Fold,
    ),
    b(
        &[Key::Char('Z')],
        "Z",
        "fold / unfold every group",
        Cmd::FoldAll,
    )
    .in_help(false),
    b(
        &[Key::Char(' ')],
        "space",
        "mark / unmark bench, cursor to the next",
        Cmd::Mark,
    )
    .hint("space", "mark"),
    b(
        &[Key::Char('a')],
        "a",
        "mark / unmark the bench's group (every insert/...)",
        Cmd::MarkGroup,
    ),
    b(
        &[Key::Char('A')],
        "A",
        "unmark every bench",
        Cmd::ClearMarks,
    ),
    b(&[Key::Enter], "enter", "run marked (or cursor)", Cmd::Run).hint("enter", "run"),
    b(
        &[Key::Char('s')],
        "s",
        "sweep concurrency 1,2,4,8,16 (any knob: s in Knobs)",
        Cmd::Sweep,
    )
    .hint("s", "sweep"),
    b(
        &[Key::Char('f')],
        "f",
        "profile this bench (perf)",
        Cmd::Profile,
    ),
    b(
        &[Key::Left, Key::Char('h')],
        "←→/hl",
        "switch target",
        Cmd::Left,
    )
    .hint("←→", "target"),
    b(
        &[Key::Right, Key::Char('l')],
        "→/l",
        "next target",
        Cmd::Right,
    )
    .in_help(false),
];

pub const KNOBS: &[Binding] = &[
    b(UP, "↑↓/kj", "move between knobs", Cmd::Up).hint("↑↓", "move"),
    b(DOWN, "↓/j", "next knob", Cmd::Down).in_help(false),
    b(
        &[Key::Char('+'), Key::Char('='), Key::Char('l'), Key::Right],
        "+-/→←",
        "step up / down (x2)",
        Cmd::Increase,
    )
    .hint("+-/→←", "step"),
    b(
        &[Key::Char('-'), Key::Char('h'), Key::Left],
        "-/←",
        "step down",
        Cmd::Decrease,
    )
    .in_help(false),
    b(&[Key::Enter], "enter", "type a value", Cmd::Edit).hint("enter", "type value"),
    b(
        &[Key::Char('s')],
        "s",
        "sweep this knob: type values",
        Cmd::Sweep,
    )
    .hint("s", "sweep"),
];

pub const LIVE: &[Binding] = &[
    b(UP, "↑↓/kj", "move between benches", Cmd::Up).hint("↑↓", "move"),
    b(DOWN, "↓/j", "next bench", Cmd::Down).in_help(false),
    b(
        &[Key::Char('c'), Key::Esc],
        "c/esc",
        "cancel run (keeps results)",
        Cmd::Cancel,
    )
    .hint("c", "cancel run"),
    b(
        &[Key::Char('d')],
        "d",
        "histogram of the bench",
        Cmd::Histogram,
    )
    .hint("d", "histogram"),
];

pub const COMPARE: &[Binding] = &[
    b(UP, "↑↓/kj", "move between benches", Cmd::Up).hint("↑↓", "move"),
    b(DOWN, "↓/j", "next bench", Cmd::Down).in_help(false),
    b(
        &[Key::Left, Key::Char('h')],
        "←→/hl",
        "move between runs",
        Cmd::Left,
    )
    .hint("←→", "run"),
    b(&[Key::Right, Key::Char('l')], "→/l", "next run", Cmd::Right).in_help(false),
    b(
        &[Key::Char('b')],
        "b",
        "baseline bench = this row",
        Cmd::BaselineBench,
    )
    .hint("b", "base row"),
    b(
        &[Key::Char('B')],
        "B",
        "baseline run = this column",
        Cmd::BaselineRun,
    )
    .hint("B", "base run"),
    b(
        &[Key::Char('g')],
        "g",
        "scaling table and chart of these runs (a sweep)",
        Cmd::Scaling,
    )
    .hint("g", "scaling"),
    b(
        &[Key::Char('m')],
        "m",
        "the run as a matrix: cases x backends (where a target has both)",
        Cmd::Matrix,
    )
    .hint("m", "matrix"),
    b(
        &[Key::Char('S')],
        "S",
        "save these runs as a baseline",
        Cmd::SaveBaseline,
    )
    .hint("S", "save"),
    b(
        &[Key::Char('d')],
        "d",
        "histogram of the cell",
        Cmd::Histogram,
    )
    .hint("d", "histogram"),
    b(
        &[Key::Char('H')],
        "H",
        "history of the bench (results store)",
        Cmd::History,
    )
    .hint("H", "history"),
];

pub const GLOBAL: &[Binding] = &[
    b(
        &[Key::Tab],
        "tab/S-tab",
        "next / previous panel",
        Cmd::NextFocus,
    )
    .hint("tab", "panel"),
    b(&[Key::BackTab], "S-tab", "previous panel", Cmd::PrevFocus).in_help(false),
    b(
        &[Key::Char('t')],
        "t",
        "trace on/off (phases)",
        Cmd::ToggleTrace,
    )
    .hint("t", "trace"),
    b(
        &[Key::Char('P')],
        "P",
        "paired rounds on/off",
        Cmd::TogglePaired,
    ),
    b(
        &[Key::Char('c')],
        "c",
        "cancel the running run (keeps results)",
        Cmd::Cancel,
    ),
    b(
        &[Key::Char('C')],
        "C",
        "clear the queue (runs not started)",
        Cmd::ClearQueue,
    ),
    b(&[Key::Char('e')], "e", "export .md + .json", Cmd::Export).hint("e", "export"),
    b(
        &[Key::Char('o')],
        "o",
        "open saved results (a path)",
        Cmd::OpenFile,
    ),
    b(&[Key::Char('?')], "?", "help", Cmd::Help),
    b(&[Key::Char('q'), Key::CtrlC], "q", "quit", Cmd::Quit).hint("q", "quit"),
];

pub fn keymap(focus: Focus) -> &'static [Binding] {
    match focus {
        Focus::Catalog => CATALOG,
        Focus::Knobs => KNOBS,
        Focus::Live => LIVE,
        Focus::Compare => COMPARE,
    }
}

/// The command a key maps to in a panel: the panel's keymap first, then the global one.
pub fn lookup(focus: Focus, key: Key) -> Option<Cmd> {
    keymap(focus)
        .iter()
        .chain(GLOBAL)
        .find(|b| b.keys.contains(&key))
        .map(|b| b.cmd)
}

/// What the hint bar shows for a panel, in order: the panel's keys, then the global ones.
pub fn hints(focus: Focus) -> Vec<(&'static str, &'static str)> {
    keymap(focus)
        .iter()
        .chain(GLOBAL)
        .filter_map(|b| b.hint)
        .collect()
}
