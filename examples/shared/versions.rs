//! The comparison every example makes: its code as written against the
//! same code under `#[batch_alloc]`, timed in alternating runs.

use std::time::Duration;

use batch_alloc::stats;

use super::timing::{millis, Runs};

/// Which copy of an example's code runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// As written.
    Plain,
    /// Under `#[batch_alloc]`.
    Batched,
}

impl Variant {
    pub fn name(self) -> &'static str {
        match self {
            Variant::Plain => "plain",
            Variant::Batched => "batched",
        }
    }
}

/// One timed run of one version.
pub struct Run<const PHASES: usize> {
    /// A time for each phase.
    pub times: [Duration; PHASES],
    /// Boxes in what the run built.
    pub boxes: u64,
}

/// What one version did over all its timed runs.
#[derive(Debug, Default, Clone)]
pub struct Version<const PHASES: usize> {
    pub times: Runs<PHASES>,
    /// Boxes in what one run built.
    pub boxes: u64,
    /// Of those, how many batches served.
    pub from_batches: u64,
}

/// Makes `reps` timed runs of each version with `run`, alternating which
/// goes first so that neither always runs on the other's leftovers;
/// `progress` hears the times of each pair. Boxes from batches are counted
/// around each run: a batch settles its count when it ends, which is
/// before the code that made it returns.
pub fn alternate<const PHASES: usize, E>(
    reps: usize,
    mut run: impl FnMut(Variant) -> Result<Run<PHASES>, E>,
    mut progress: impl FnMut(&str),
) -> Result<[Version<PHASES>; 2], E> {
    let mut versions = [Version::default(), Version::default()];
    for rep in 0..reps {
        let order = match rep % 2 {
            0 => [Variant::Plain, Variant::Batched],
            _ => [Variant::Batched, Variant::Plain],
        };
        let mut line = format!("run {}/{reps}:", rep + 1);
        for variant in order {
            let before = stats().batched_boxes + stats().scoped_allocations;
            let Run { times, boxes } = run(variant)?;
            let version = &mut versions[variant as usize];
            version.from_batches = stats().batched_boxes + stats().scoped_allocations - before;
            version.boxes = boxes;
            version.times.push(times);
            let times: Vec<String> = times.into_iter().map(millis).collect();
            line += &format!("  {} {}", variant.name(), times.join(" + "));
        }
        progress(&line);
    }
    Ok(versions)
}
