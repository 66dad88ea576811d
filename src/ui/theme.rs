//! Styles. Only the terminal's named colours, so the palette follows light and dark themes;
//! with NO_COLOR set, only bold / reversed / dim are used.

use ratatui::style::{Color, Modifier, Style};

#[derive(Debug, Clone, Copy)]
pub struct Theme {
    pub color: bool,
}

impl Theme {
    fn fg(&self, c: Color) -> Style {
        if self.color {
            Style::default().fg(c)
        } else {
            Style::default()
        }
    }

    pub fn title(&self) -> Style {
        self.fg(Color::Cyan).add_modifier(Modifier::BOLD)
    }
    pub fn border(&self, focused: bool) -> Style {
        if focused {
            self.fg(Color::Cyan).add_modifier(Modifier::BOLD)
        } else {
            self.fg(Color::DarkGray)
        }
    }
    pub fn selected(&self) -> Style {
        Style::default().add_modifier(Modifier::REVERSED)
    }
    pub fn dim(&self) -> Style {
        if self.color {
            Style::default().fg(Color::DarkGray)
        } else {
            Style::default().add_modifier(Modifier::DIM)
        }
    }
    pub fn error(&self) -> Style {
        self.fg(Color::Red).add_modifier(Modifier::BOLD)
    }
    pub fn good(&self) -> Style {
        self.fg(Color::Green)
    }
    pub fn accent(&self) -> Style {
        self.fg(Color::Yellow)
    }
    /// An overhead against rusqlite: under 2x green, under 5x yellow, above red; without
    /// colour, the heavier bands bold (and the worst also underlined).
    pub fn band(&self, band: bench_core::compare::Band) -> Style {
        use bench_core::compare::Band;
        match (band, self.color) {
            (Band::Baseline, _) => self.dim(),
            (Band::Light, true) => self.fg(Color::Green),
            (Band::Heavy, true) => self.fg(Color::Yellow),
            (Band::Severe, true) => self.fg(Color::Red),
            (Band::Light, false) => Style::default(),
            (Band::Heavy, false) => Style::default().add_modifier(Modifier::BOLD),
            (Band::Severe, false) => Style::default()
                .add_modifier(Modifier::BOLD)
                .add_modifier(Modifier::UNDERLINED),
        }
    }
    pub fn key(&self) -> Style {
        self.fg(Color::Cyan).add_modifier(Modifier::BOLD)
    }
    /// One colour per phase, in `Phase::ALL` order; without colour, distinct fill glyphs.
    pub fn phase(&self, i: usize) -> Style {
        const C: [Color; 6] = [
            Color::Magenta,
            Color::Blue,
            Color::Cyan,
            Color::Red,
            Color::Green,
            Color::Yellow,
        ];
        self.fg(C[i % C.len()])
    }
    pub fn phase_glyph(&self, i: usize) -> char {
        if self.color {
            '█'
        } else {
            ['█', '▓', '▒', '░', '#', '='][i % 6]
        }
    }
}
