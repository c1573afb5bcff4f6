//! One module per tab, each with its state, the handling of its actions and events, and its
//! drawing; `App` holds one state per tab and routes actions to them.

pub mod cloth;
pub mod connector;
pub mod curves;
pub mod export;
pub mod fit;
pub mod hysteresis;

use super::message::Job;
use super::prompt::{Prompt, PromptPurpose};

/// What a tab's update asks of the app besides its own state: a status line, messages for the
/// log only, jobs, a prompt.
#[derive(Debug, Default)]
pub(crate) struct Effects {
    pub status: Option<String>,
    /// Logged before the status (`e` shows them): what a later status line would hide.
    pub log: Vec<String>,
    pub jobs: Vec<Job>,
    pub prompt: Option<Prompt>,
}

impl Effects {
    pub(crate) fn status(&mut self, text: impl Into<String>) {
        self.status = Some(text.into());
    }

    pub(crate) fn log(&mut self, text: impl Into<String>) {
        self.log.push(text.into());
    }

    pub(crate) fn job(&mut self, job: Job) {
        self.jobs.push(job);
    }

    pub(crate) fn prompt(&mut self, purpose: PromptPurpose, label: &str, text: String) {
        self.prompt = Some(Prompt::new(purpose, label, text));
    }
}

/// Index `s` moved one up or down in a ring of `n` (at least one).
pub(crate) fn ring_step(s: usize, n: usize, up: bool) -> usize {
    let n = n.max(1);
    if up {
        (s + n - 1) % n
    } else {
        (s + 1) % n
    }
}
