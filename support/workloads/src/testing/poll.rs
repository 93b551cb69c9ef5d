//! Polling a future on the test's own thread, without an executor: the
//! futures of the attribute's tests wake themselves or are polled in a
//! loop.

use std::future::Future;
use std::pin::{pin, Pin};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

/// A waker that does nothing.
pub fn noop_waker() -> Waker {
    struct NoWake;
    impl Wake for NoWake {
        fn wake(self: Arc<Self>) {}
    }
    Waker::from(Arc::new(NoWake))
}

/// Polls `future` until it is ready, and leaves it where it is: what a
/// future still holds after its body has ended drops only when the caller
/// drops it.
pub fn finish<F: Future>(mut future: Pin<&mut F>) -> F::Output {
    let waker = noop_waker();
    let mut cx = Context::from_waker(&waker);
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
    }
}

/// Polls `future` until it is ready, on this thread.
pub fn block_on<F: Future>(future: F) -> F::Output {
    finish(pin!(future))
}
