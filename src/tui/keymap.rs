//! One table of key bindings, (context, keys → actions, help), from which both [`keymap`] and
//! the help screen ([`help_lines`]) are made, so the two cannot disagree.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use super::message::{Action, PaletteKey, Tab};

/// Where a binding applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Context {
    /// In every mode, before anything else.
    Always,
    /// A yes/no question is open.
    Question,
    /// A text prompt is open (other characters are typed into it).
    Prompt,
    /// The help screen is open.
    Help,
    /// The message log is open.
    Messages,
    /// No popup: in every tab.
    Global,
    /// No popup: in this tab.
    Tab(Tab),
}

/// A key: its code, and whether Ctrl is held (without Ctrl, modifiers are not looked at).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Key {
    pub code: KeyCode,
    pub ctrl: bool,
}

const fn key(code: KeyCode) -> Key {
    Key { code, ctrl: false }
}

const fn ch(c: char) -> Key {
    key(KeyCode::Char(c))
}

const fn ctrl(c: char) -> Key {
    Key {
        code: KeyCode::Char(c),
        ctrl: true,
    }
}

/// One line of the help screen: the keys it shows and the action of each.
#[derive(Debug)]
pub struct Binding {
    pub context: Context,
    pub keys: &'static [(Key, Action)],
    /// How the keys are shown.
    pub label: &'static str,
    pub help: &'static str,
}

/// A binding row; the key list stays a literal so that it lives as long as the table.
macro_rules! bind {
    ($context:expr, $label:expr, $help:expr, $keys:expr $(,)?) => {
        Binding {
            context: $context,
            keys: $keys,
            label: $label,
            help: $help,
        }
    };
}

use Context::{Always, Global, Help, Messages, Prompt, Question};

const CURVES: Context = Context::Tab(Tab::Curves);
const CONNECTOR: Context = Context::Tab(Tab::Connector);
const HYSTERESIS: Context = Context::Tab(Tab::Hysteresis);
const FIT: Context = Context::Tab(Tab::Fit);
const CLOTH: Context = Context::Tab(Tab::Cloth);
const EXPORT: Context = Context::Tab(Tab::Export);
const UP_DOWN: &[(Key, Action)] = &[
    (key(KeyCode::Up), Action::Up),
    (key(KeyCode::Down), Action::Down),
];

/// Every key binding, in the order the help screen shows them.
#[rustfmt::skip]
pub static BINDINGS: &[Binding] = &[
    bind!(Global, "Tab / Shift-Tab", "next / previous tab",
        &[(key(KeyCode::Tab), Action::NextTab), (key(KeyCode::BackTab), Action::PrevTab)]),
    bind!(Global, "1-6", "go to tab", &[
        (ch('1'), Action::GoTab(Tab::Curves)),
        (ch('2'), Action::GoTab(Tab::Connector)),
        (ch('3'), Action::GoTab(Tab::Hysteresis)),
        (ch('4'), Action::GoTab(Tab::Fit)),
        (ch('5'), Action::GoTab(Tab::Cloth)),
        (ch('6'), Action::GoTab(Tab::Export)),
    ]),
    bind!(Global, "o", "open: a KES CSV, a fabric folder, kes_data/, a glob", &[(ch('o'), Action::OpenPrompt)]),
    bind!(Global, "?", "this help (Esc closes)", &[(ch('?'), Action::ToggleHelp)]),
    bind!(Global, "e", "messages: every status and error in full (Esc closes)",
        &[(ch('e'), Action::ToggleMessages)]),
    bind!(Global, "q", "quit (asks if fits are unsaved)", &[(ch('q'), Action::Quit)]),
    bind!(Global, "k / j", "as Up / Down", &[(ch('k'), Action::Up), (ch('j'), Action::Down)]),
    bind!(Always, "Ctrl-C", "quit", &[(ctrl('c'), Action::Quit)]),
    bind!(Question, "y / n", "answer the question, Esc cancels", &[
        (ch('y'), Action::Answer(true)),
        (ch('Y'), Action::Answer(true)),
        (ch('n'), Action::Answer(false)),
        (ch('N'), Action::Answer(false)),
        (key(KeyCode::Esc), Action::Cancel),
    ]),
    bind!(Prompt, "in a prompt", "Tab completes a path, Ctrl-U clears, Esc cancels", &[
        (key(KeyCode::Enter), Action::PromptSubmit),
        (key(KeyCode::Esc), Action::Cancel),
        (key(KeyCode::Backspace), Action::PromptBackspace),
        (key(KeyCode::Tab), Action::PromptComplete),
        (ctrl('u'), Action::PromptClear),
    ]),
    bind!(Help, "? / Esc", "close this help",
        &[(key(KeyCode::Esc), Action::ToggleHelp), (ch('?'), Action::ToggleHelp)]),
    bind!(Help, "Up / Down", "scroll this help (also k / j, PgUp / PgDn)", &[
        (key(KeyCode::Up), Action::Up),
        (key(KeyCode::Down), Action::Down),
        (ch('k'), Action::Up),
        (ch('j'), Action::Down),
        (key(KeyCode::PageUp), Action::ScrollResult(-8)),
        (key(KeyCode::PageDown), Action::ScrollResult(8)),
    ]),
    bind!(Help, "q", "quit", &[(ch('q'), Action::Quit)]),
    bind!(Messages, "e / Esc", "close the messages",
        &[(key(KeyCode::Esc), Action::ToggleMessages), (ch('e'), Action::ToggleMessages)]),
    bind!(Messages, "Up / Down", "scroll the messages", UP_DOWN),
    bind!(Messages, "q", "quit", &[(ch('q'), Action::Quit)]),
    bind!(CURVES, "Up / Down", "select curve", UP_DOWN),
    bind!(CURVES, "s / c", "save the fabric's card / send it to the Cloth tab",
        &[(ch('s'), Action::SaveParams), (ch('c'), Action::SendCard)]),
    bind!(CONNECTOR, "Up / Down", "select parameter", UP_DOWN),
    bind!(CONNECTOR, "l / d", "law: traction / bending / shear; direction: warp / weft",
        &[(ch('l'), Action::CycleLaw), (ch('d'), Action::ToggleDirection)]),
    bind!(CONNECTOR, "f / t", "friction: Dahl / Bliman-Sorine 2; toe: quadratic / power",
        &[(ch('f'), Action::ToggleFrictionModel), (ch('t'), Action::ToggleToe)]),
    bind!(CONNECTOR, "m", "load-dependent level mu on / off", &[(ch('m'), Action::ToggleMu)]),
    bind!(CONNECTOR, "+ - ] [", "parameter +1 % / -1 % / +10 % / -10 % (= as +)", &[
        (ch('+'), Action::Nudge(0.01)),
        (ch('='), Action::Nudge(0.01)),
        (ch('-'), Action::Nudge(-0.01)),
        (ch(']'), Action::Nudge(0.1)),
        (ch('['), Action::Nudge(-0.1)),
    ]),
    bind!(CONNECTOR, "Enter", "type a value (KES units)", &[(key(KeyCode::Enter), Action::EditValue)]),
    bind!(CONNECTOR, "a / s", "accept: make it the fabric's law / save the parameter file",
        &[(ch('a'), Action::AcceptLaw), (ch('s'), Action::SaveParams)]),
    bind!(HYSTERESIS, "p", "driving path: full cycles / decaying / partial reversals",
        &[(ch('p'), Action::CyclePath)]),
    bind!(HYSTERESIS, "+ (=) / -", "amplitude x1.25 / /1.25", &[
        (ch('+'), Action::ScaleAmplitude(1.25)),
        (ch('='), Action::ScaleAmplitude(1.25)),
        (ch('-'), Action::ScaleAmplitude(0.8)),
    ]),
    bind!(HYSTERESIS, "Up / Down", "select curve (sets the law)", UP_DOWN),
    bind!(FIT, "Up / Down", "select curve", UP_DOWN),
    bind!(FIT, "PgUp / PgDn", "scroll the result (its first line / all lines in the title)", &[
        (key(KeyCode::PageUp), Action::ScrollResult(-4)),
        (key(KeyCode::PageDown), Action::ScrollResult(4)),
    ]),
    bind!(FIT, "m", "model: auto / dahl / bs2 / dahl-alpha", &[(ch('m'), Action::CycleModel)]),
    bind!(FIT, "Enter", "run the fit (worker thread)", &[(key(KeyCode::Enter), Action::RunFit)]),
    bind!(FIT, "a", "accept: the fitted law becomes the fabric's law",
        &[(ch('a'), Action::AcceptFit)]),
    bind!(FIT, "s", "save the fabric's accepted and fitted laws (parameter file)",
        &[(ch('s'), Action::SaveParams)]),
    bind!(FIT, "F", "fit every curve of the fabric, one after the other",
        &[(ch('F'), Action::RunFitAll)]),
    bind!(FIT, "c", "send the saved card to the Cloth tab: hang, drape, cantilever",
        &[(ch('c'), Action::SendCard)]),
    bind!(CLOTH, "Up / Down", "select a card test, scene or model", UP_DOWN),
    bind!(CLOTH, "Enter", "load the scene (paused) or run the card's test",
        &[(key(KeyCode::Enter), Action::ClothLoad)]),
    bind!(CLOTH, "Esc", "stop the drape or cantilever test running",
        &[(key(KeyCode::Esc), Action::ClothStop)]),
    bind!(CLOTH, "Space", "run / pause (worker thread)", &[(ch(' '), Action::ClothRunPause)]),
    bind!(CLOTH, "n", "one step", &[(ch('n'), Action::ClothStep)]),
    bind!(CLOTH, "Left / Right", "turn the view", &[
        (key(KeyCode::Left), Action::Rotate(-0.15, 0.0)),
        (key(KeyCode::Right), Action::Rotate(0.15, 0.0)),
    ]),
    bind!(CLOTH, "PgUp / PgDn", "tilt the view", &[
        (key(KeyCode::PageUp), Action::Rotate(0.0, 0.1)),
        (key(KeyCode::PageDown), Action::Rotate(0.0, -0.1)),
    ]),
    bind!(CLOTH, "l / L", "turn the sky of a model's transfer shading (+30 / -30 deg)",
        &[(ch('l'), Action::ClothSky(30)), (ch('L'), Action::ClothSky(-30))]),
    // the palette keys are the model's own: matched in `keymap`, listed here for the help
    bind!(CLOTH, "palette keys", "reduced model (.krd): apply an impulse (Alt+key when taken)", &[]),
    bind!(EXPORT, "Up / Down", "choose what to export", UP_DOWN),
    bind!(EXPORT, "Enter", "write the PNG or the frames (asks for a path)",
        &[(key(KeyCode::Enter), Action::Export)]),
];

/// What the keys depend on: the tab, the popup open, the palette of a model being played.
#[derive(Debug, Clone, Copy)]
pub struct Mode<'a> {
    pub tab: Tab,
    pub question: bool,
    pub prompt: bool,
    pub help: bool,
    /// The message log is open.
    pub messages: bool,
    /// The palette of the reduced model loaded in the Cloth tab (empty otherwise).
    pub palette: &'a [PaletteKey],
}

/// Whatever the keys are looked up in (the app): its mode now.
pub trait Modal {
    fn mode(&self) -> Mode<'_>;
}

impl Modal for Mode<'_> {
    fn mode(&self) -> Mode<'_> {
        *self
    }
}

fn lookup(context: Context, key: KeyEvent) -> Option<Action> {
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    BINDINGS
        .iter()
        .filter(|b| b.context == context)
        .flat_map(|b| b.keys)
        .find(|(k, _)| k.code == key.code && (!k.ctrl || ctrl))
        .map(|(_, a)| a.clone())
}

/// A palette key may be used bare: no global key nor Cloth key is the same character.
pub(crate) fn palette_key_free(c: char) -> bool {
    !BINDINGS
        .iter()
        .filter(|b| matches!(b.context, Global | Context::Tab(Tab::Cloth)))
        .flat_map(|b| b.keys)
        .any(|(k, _)| k.code == KeyCode::Char(c))
}

/// How palette key `c` is typed: `c` when free, else `Alt-c`.
pub(crate) fn palette_key_label(c: char) -> String {
    if palette_key_free(c) {
        c.to_string()
    } else {
        format!("Alt-{c}")
    }
}

/// In the Cloth tab with a reduced model loaded: its palette keys (bare when free, always
/// with Alt) apply impulses.
fn palette_action(mode: &Mode, key: KeyEvent) -> Option<Action> {
    if mode.tab != Tab::Cloth || mode.palette.is_empty() {
        return None;
    }
    let KeyCode::Char(c) = key.code else {
        return None;
    };
    let alt = key.modifiers.contains(KeyModifiers::ALT);
    if key.modifiers.contains(KeyModifiers::CONTROL) || !(alt || palette_key_free(c)) {
        return None;
    }
    mode.palette
        .iter()
        .position(|p| p.key == c)
        .map(Action::ClothImpulse)
}

/// The action for a key in the current mode, if any.
pub fn keymap(modal: &impl Modal, key: KeyEvent) -> Option<Action> {
    let mode = modal.mode();
    if key.kind == KeyEventKind::Release {
        return None;
    }
    if let Some(a) = lookup(Always, key) {
        return Some(a);
    }
    if mode.question {
        return lookup(Question, key);
    }
    if mode.prompt {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        return lookup(Prompt, key)
            .filter(|_| !ctrl || matches!(key.code, KeyCode::Char(_)))
            .or(match key.code {
                KeyCode::Char(c) if !ctrl => Some(Action::PromptInput(c)),
                _ => None,
            });
    }
    if mode.help {
        return lookup(Help, key);
    }
    if mode.messages {
        return lookup(Messages, key);
    }
    palette_action(&mode, key)
        .or_else(|| lookup(Global, key))
        .or_else(|| lookup(Context::Tab(mode.tab), key))
}

/// The key bindings shown by `?`: (keys, what they do); every mode's, then the tab's own.
pub fn help_lines(tab: Tab) -> Vec<(&'static str, &'static str)> {
    BINDINGS
        .iter()
        .filter(|b| match b.context {
            Context::Tab(t) => t == tab,
            Help | Messages => false,
            _ => true,
        })
        .map(|b| (b.label, b.help))
        .collect()
}
