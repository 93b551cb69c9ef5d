//! Mail sent to holder threads and not yet dealt with.
//!
//! The thread-churn tests bound span memory by what the holders keep; a
//! holder slowed down (as every cross-thread free is under the race
//! amplifier) would otherwise keep a backlog in its inbox as well, and the
//! bound would measure how far behind it is.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;

#[derive(Clone, Default)]
pub struct Backlog(Arc<Counts>);

#[derive(Default)]
struct Counts {
    sent: AtomicUsize,
    taken: AtomicUsize,
}

impl Backlog {
    /// Called before a mail is sent.
    pub fn sent(&self) {
        self.0.sent.fetch_add(1, Ordering::Relaxed);
    }

    /// Called once a mail has been dealt with.
    pub fn taken(&self) {
        self.0.taken.fetch_add(1, Ordering::Release);
    }

    /// Waits until every mail sent so far has been dealt with; every
    /// sender's `sent` calls happen before this call (the senders were
    /// joined).
    pub fn wait_until_dealt_with(&self) {
        let sent = self.0.sent.load(Ordering::Relaxed);
        while self.0.taken.load(Ordering::Acquire) < sent {
            thread::yield_now();
        }
    }
}
