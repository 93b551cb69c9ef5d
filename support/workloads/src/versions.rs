//! The comparison every example makes: its code as written against the
//! same code under `#[batch_alloc]`, timed in alternating runs (and, for
//! the demonstration's other allocators, in rotation).

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
    /// Allocations batch-alloc served in one run: from batch scopes
    /// (`scoped_allocations`: the annotated boxes and, with capture, every
    /// other small allocation) and from batches (`batched_boxes`).
    pub from_batches: u64,
}

/// Allocations batch-alloc has served in this process so far.
pub fn served() -> u64 {
    let now = stats();
    now.scoped_allocations + now.batched_boxes
}

/// Runs `run` and counts what batch-alloc served meanwhile. A scope or
/// batch settles its count when it ends, which is before the code that
/// made it returns.
pub fn counted<R, E>(run: impl FnOnce() -> Result<R, E>) -> Result<(R, u64), E> {
    let before = served();
    let result = run()?;
    Ok((result, served() - before))
}

/// Makes `reps` timed runs of each version with `run`, alternating which
/// goes first so that neither always runs on the other's leftovers;
/// `progress` hears the times of each pair.
pub fn alternate<const PHASES: usize, E>(
    reps: usize,
    mut run: impl FnMut(Variant) -> Result<Run<PHASES>, E>,
    progress: impl FnMut(&str),
) -> Result<[Version<PHASES>; 2], E> {
    let variants = [Variant::Plain, Variant::Batched];
    let names = variants.map(Variant::name);
    let versions = rotate(reps, &names, |i| counted(|| run(variants[i])), progress)?;
    let [plain, batched] = <[_; 2]>::try_from(versions).expect("two versions");
    Ok([plain, batched])
}

/// Makes `reps` timed runs of each of the versions `names` lists with
/// `run(i)`, which returns the run and what batch-alloc served in it: each
/// repetition runs every version once, in turn, starting one version later
/// than the repetition before (for two, they alternate), so that versions
/// compared with each other run moments apart and none always runs on
/// another's leftovers. `progress` hears the times of each repetition.
pub fn rotate<const PHASES: usize, E>(
    reps: usize,
    names: &[&str],
    mut run: impl FnMut(usize) -> Result<(Run<PHASES>, u64), E>,
    mut progress: impl FnMut(&str),
) -> Result<Vec<Version<PHASES>>, E> {
    let n = names.len();
    let mut versions = vec![Version::default(); n];
    for rep in 0..reps {
        let mut line = format!("run {}/{reps}:", rep + 1);
        for i in (0..n).map(|k| (k + rep) % n) {
            let (Run { times, boxes }, served) = run(i)?;
            let version = &mut versions[i];
            version.from_batches = served;
            version.boxes = boxes;
            version.times.push(times);
            let times: Vec<String> = times.into_iter().map(millis).collect();
            line += &format!("  {} {}", names[i], times.join(" + "));
        }
        progress(&line);
    }
    Ok(versions)
}
