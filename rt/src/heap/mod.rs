//! A thread's heap: which one this thread's is, its refills and runs, its
//! frees, the outbox, the remote free's protocol, its class queues, and its
//! life from first use to thread exit.

pub(crate) mod free;
pub(crate) mod outbox;
pub(crate) mod queues;
pub(crate) mod remote;
pub(crate) mod reserve;
pub(crate) mod runs;
pub(crate) mod sweep;
pub(crate) mod this_thread;
pub(crate) mod thread;
