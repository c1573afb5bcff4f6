//! The one-line text prompt at the bottom of the screen and the modal yes/no question.

use super::message::{ExportKind, PendingWrite};

/// What a text prompt is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromptPurpose {
    /// Open KES curve files: a path (a folder opens every CSV in it, a folder of fabric
    /// folders each of them) or a glob pattern.
    Open,
    /// A value for the selected Connector parameter.
    ParameterValue,
    /// Where to save the fabric's parameter set.
    SaveParams,
    /// Where to write a PNG.
    ExportPng(ExportKind),
}

/// A one-line text prompt.
#[derive(Debug, Clone, PartialEq)]
pub struct Prompt {
    pub purpose: PromptPurpose,
    pub label: String,
    pub text: String,
    /// The entries the last Tab found when it matched several (shown above the prompt until
    /// the text changes).
    pub candidates: Vec<String>,
    /// What the prompt acts on, listed above it while it is open (the laws a save writes):
    /// the prompt's own line stays short.
    pub notes: Vec<String>,
}

impl Prompt {
    pub(crate) fn new(purpose: PromptPurpose, label: &str, text: String) -> Self {
        Self {
            purpose,
            label: label.to_string(),
            text,
            candidates: Vec::new(),
            notes: Vec::new(),
        }
    }
}

/// A modal question.
#[derive(Debug, Clone, PartialEq)]
pub enum Confirm {
    /// Quit although results are unsaved.
    Quit,
    /// Overwrite an existing file.
    Overwrite(PendingWrite),
    /// `c` after fits or laws not saved: save the card again first (yes), or send it as
    /// saved (no).
    SaveFirst,
}
