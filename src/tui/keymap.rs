//! Keys → named actions, per tab and per mode (prompt, question, help). Also the help text.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use super::app::{Action, App, Tab};

/// The key bindings shown by `?`: (keys, what they do), global first, then the tab's own.
pub fn help_lines(tab: Tab) -> Vec<(&'static str, &'static str)> {
    let mut lines = vec![
        ("Tab / Shift-Tab", "next / previous tab"),
        ("1-6", "go to tab"),
        ("o", "open KES file(s): a path, or a folder of CSVs"),
        ("?", "this help (Esc closes)"),
        (
            "in a prompt",
            "Tab completes a path, Ctrl-U clears, Esc cancels",
        ),
        ("q", "quit (asks if fits are unsaved)"),
    ];
    lines.extend(match tab {
        Tab::Curves => vec![("Up / Down", "select curve")],
        Tab::Connector => vec![
            ("Up / Down", "select parameter"),
            ("l", "law: traction / bending / shear"),
            ("f", "friction: Dahl / second-order Bliman-Sorine"),
            ("m", "load-dependent level mu on / off"),
            ("+ / -", "parameter +1 % / -1 %"),
            ("] / [", "parameter +10 % / -10 %"),
            ("Enter", "type a value"),
        ],
        Tab::Hysteresis => vec![
            (
                "p",
                "driving path: full cycles / decaying / partial reversals",
            ),
            ("+ / -", "amplitude x1.25 / /1.25"),
            ("Up / Down", "select curve (sets the law)"),
        ],
        Tab::Fit => vec![
            ("Up / Down", "select curve"),
            ("m", "model: auto / dahl / bs2 / dahl-alpha"),
            ("Enter", "run the fit (worker thread)"),
            ("a", "accept the fitted law into the Connector tab"),
            ("s", "save the fabric's parameter set"),
        ],
        Tab::Cloth => vec![
            ("Up / Down", "select a scene (scenes/*.toml)"),
            ("Enter", "load the scene (paused)"),
            ("Space", "run / pause (worker thread)"),
            ("n", "one step"),
            ("Left / Right", "turn the view"),
            ("PgUp / PgDn", "tilt the view"),
            (
                "palette keys",
                "reduced model (.krd): apply an impulse (Alt+key when taken)",
            ),
        ],
        Tab::Export => vec![
            ("Up / Down", "choose what to export"),
            ("Enter", "write the PNG or the frames (asks for a path)"),
        ],
    });
    lines
}

/// A palette key may be used bare: it is none of the global keys nor the Cloth tab's.
pub fn palette_key_free(c: char) -> bool {
    !matches!(c, '1'..='6' | '?' | 'q' | 'o' | 'k' | 'j' | 'n' | ' ')
}

/// How palette key `c` is typed: `c` when free, else `Alt-c`.
pub fn palette_key_label(c: char) -> String {
    if palette_key_free(c) {
        c.to_string()
    } else {
        format!("Alt-{c}")
    }
}

/// In the Cloth tab with a reduced model loaded: its palette keys (bare when free, always
/// with Alt) apply impulses.
fn palette_action(app: &App, key: KeyEvent) -> Option<Action> {
    if app.tab != Tab::Cloth || app.cloth.loaded.is_none() || app.cloth.palette.is_empty() {
        return None;
    }
    let KeyCode::Char(c) = key.code else {
        return None;
    };
    let alt = key.modifiers.contains(KeyModifiers::ALT);
    if key.modifiers.contains(KeyModifiers::CONTROL) || !(alt || palette_key_free(c)) {
        return None;
    }
    app.cloth
        .palette
        .iter()
        .position(|p| p.key == c)
        .map(Action::ClothImpulse)
}

/// The action for a key in the app's current mode, if any.
pub fn keymap(app: &App, key: KeyEvent) -> Option<Action> {
    if key.kind == KeyEventKind::Release {
        return None;
    }
    if key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c') {
        return Some(Action::Quit);
    }
    if app.confirm.is_some() {
        return match key.code {
            KeyCode::Char('y') | KeyCode::Char('Y') => Some(Action::Answer(true)),
            KeyCode::Char('n') | KeyCode::Char('N') => Some(Action::Answer(false)),
            KeyCode::Esc => Some(Action::Cancel),
            _ => None,
        };
    }
    if app.prompt.is_some() {
        if key.modifiers.contains(KeyModifiers::CONTROL) {
            return match key.code {
                KeyCode::Char('u') => Some(Action::PromptClear),
                _ => None,
            };
        }
        return match key.code {
            KeyCode::Enter => Some(Action::PromptSubmit),
            KeyCode::Esc => Some(Action::Cancel),
            KeyCode::Backspace => Some(Action::PromptBackspace),
            KeyCode::Tab => Some(Action::PromptComplete),
            KeyCode::Char(c) => Some(Action::PromptInput(c)),
            _ => None,
        };
    }
    if app.help {
        return match key.code {
            KeyCode::Esc | KeyCode::Char('?') => Some(Action::ToggleHelp),
            KeyCode::Char('q') => Some(Action::Quit),
            _ => None,
        };
    }
    if let Some(a) = palette_action(app, key) {
        return Some(a);
    }
    let global = match key.code {
        KeyCode::Tab => Some(Action::NextTab),
        KeyCode::BackTab => Some(Action::PrevTab),
        KeyCode::Char(c @ '1'..='6') => Some(Action::GoTab(Tab::ALL[(c as u8 - b'1') as usize])),
        KeyCode::Char('?') => Some(Action::ToggleHelp),
        KeyCode::Char('q') => Some(Action::Quit),
        KeyCode::Esc => Some(Action::Cancel),
        KeyCode::Char('o') => Some(Action::OpenPrompt),
        KeyCode::Up | KeyCode::Char('k') => Some(Action::Up),
        KeyCode::Down | KeyCode::Char('j') => Some(Action::Down),
        _ => None,
    };
    if global.is_some() {
        return global;
    }
    match (app.tab, key.code) {
        (Tab::Connector, KeyCode::Char('l')) => Some(Action::CycleLaw),
        (Tab::Connector, KeyCode::Char('f')) => Some(Action::ToggleFrictionModel),
        (Tab::Connector, KeyCode::Char('m')) => Some(Action::ToggleMu),
        (Tab::Connector, KeyCode::Char('+') | KeyCode::Char('=')) => Some(Action::Nudge(0.01)),
        (Tab::Connector, KeyCode::Char('-')) => Some(Action::Nudge(-0.01)),
        (Tab::Connector, KeyCode::Char(']')) => Some(Action::Nudge(0.1)),
        (Tab::Connector, KeyCode::Char('[')) => Some(Action::Nudge(-0.1)),
        (Tab::Connector, KeyCode::Enter) => Some(Action::EditValue),
        (Tab::Hysteresis, KeyCode::Char('p')) => Some(Action::CyclePath),
        (Tab::Hysteresis, KeyCode::Char('+') | KeyCode::Char('=')) => {
            Some(Action::ScaleAmplitude(1.25))
        }
        (Tab::Hysteresis, KeyCode::Char('-')) => Some(Action::ScaleAmplitude(0.8)),
        (Tab::Fit, KeyCode::Char('m')) => Some(Action::CycleModel),
        (Tab::Fit, KeyCode::Enter) => Some(Action::RunFit),
        (Tab::Fit, KeyCode::Char('a')) => Some(Action::AcceptFit),
        (Tab::Fit, KeyCode::Char('s')) => Some(Action::SaveParams),
        (Tab::Export, KeyCode::Enter) => Some(Action::Export),
        (Tab::Cloth, KeyCode::Enter) => Some(Action::ClothLoad),
        (Tab::Cloth, KeyCode::Char(' ')) => Some(Action::ClothRunPause),
        (Tab::Cloth, KeyCode::Char('n')) => Some(Action::ClothStep),
        (Tab::Cloth, KeyCode::Left) => Some(Action::Rotate(-0.15, 0.0)),
        (Tab::Cloth, KeyCode::Right) => Some(Action::Rotate(0.15, 0.0)),
        (Tab::Cloth, KeyCode::PageUp) => Some(Action::Rotate(0.0, 0.1)),
        (Tab::Cloth, KeyCode::PageDown) => Some(Action::Rotate(0.0, -0.1)),
        _ => None,
    }
}
