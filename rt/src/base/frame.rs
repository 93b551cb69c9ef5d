//! Which frame of the region: a type of its own, so that a frame index
//! cannot be passed where an offset inside a frame or a count of slots or
//! frames is meant (those stay bare `u32`s). Low in the layers so that
//! every module that names a frame, the index stack's included, may use it.
//! Where a frame goes into an atomic word or a list link, it goes through a
//! method named for that packing.

/// The index of one frame of the region, counted from its first frame.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Frame(u32);

impl Frame {
    /// The region's first frame.
    pub(crate) const FIRST: Frame = Frame(0);

    /// Frame number `index`.
    #[inline(always)]
    pub(crate) const fn new(index: u32) -> Frame {
        Frame(index)
    }

    /// The frame's number, for an atomic word that stores the frame as is
    /// (a shared cursor's).
    #[inline(always)]
    pub(crate) const fn index(self) -> u32 {
        self.0
    }

    /// The frame's number, for indexing and address arithmetic.
    #[inline(always)]
    pub(crate) const fn as_usize(self) -> usize {
        self.0 as usize
    }

    /// The frame `frames` frames on: one of contiguous frames that start
    /// here, or the one just past them. They lie inside the region, so this
    /// never wraps.
    #[inline(always)]
    pub(crate) const fn plus(self, frames: u32) -> Frame {
        Frame(self.0.wrapping_add(frames))
    }

    /// The link to this frame in a list of frames (class queues, the
    /// mailbox, the pool): its index + 1, so that 0 ends a list. Frame
    /// indices stay below 2^19 (a 32 GiB region of 64 KiB frames), so this
    /// never wraps.
    #[inline(always)]
    pub(crate) const fn link(self) -> u32 {
        self.0.wrapping_add(1)
    }

    /// The frame a list link names, or `None` at the end of the list.
    #[inline(always)]
    pub(crate) const fn from_link(link: u32) -> Option<Frame> {
        match link.checked_sub(1) {
            Some(index) => Some(Frame(index)),
            None => None,
        }
    }
}
