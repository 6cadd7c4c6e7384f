//! The stream table: every open stream's state, found by id.
//!
//! A stream enters on [`ClientConn::open`](super::ClientConn::open) and
//! leaves when its response ends, it is reset, cancelled or failed, or a
//! GOAWAY leaves it unprocessed. Lookups happen once per frame on the hot
//! path, hence the hash index over a slab instead of a `HashMap`.

use std::sync::Arc;

/// What a stream is and how far it got: a set of bits, so a `Stream`
/// stays small and the table dense.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) struct State(u8);

impl State {
    /// The caller asked for this response's head and body bytes.
    pub const CAPTURE: State = State(1);
    /// The request is HEAD: the response has no body.
    pub const HEAD_REQUEST: State = State(2);
    /// The final head arrived: DATA and trailers may follow.
    pub const GOT_HEAD: State = State(4);
    /// HEAD, 204 or 304: DATA must be empty whatever content-length says.
    pub const NO_BODY: State = State(8);
    /// Our END_STREAM is queued.
    pub const END_SENT: State = State(16);
    /// In `blocked`, waiting for window to send the rest of the body.
    pub const BLOCKED: State = State(32);

    #[inline]
    pub fn contains(self, s: State) -> bool {
        self.0 & s.0 == s.0
    }

    #[inline]
    pub fn insert(&mut self, s: State) {
        self.0 |= s.0;
    }

    #[inline]
    pub fn remove(&mut self, s: State) {
        self.0 &= !s.0;
    }
}

#[derive(Debug, Default)]
pub(super) struct Stream {
    /// 0: an empty slot of the table.
    pub(super) id: u32,
    pub(super) token: u32,
    pub(super) state: State,
    /// May go negative when the server lowers SETTINGS_INITIAL_WINDOW_SIZE.
    pub(super) send_window: i64,
    /// Received since our last WINDOW_UPDATE for the stream.
    pub(super) recv_consumed: u32,
    pub(super) content_length: Option<u64>,
    pub(super) received: u64,
    /// Bytes of interim (1xx) heads, reported with the final head.
    pub(super) wire: u32,
    /// The request body, kept only while some of it waits for window.
    pub(super) body: Option<Arc<[u8]>>,
    pub(super) body_off: usize,
}

/// Open streams by id: a slab of streams and an index of (id, slab slot)
/// pairs, linear probing with backward-shift deletion (no tombstones).
/// Ids are spread by a Fibonacci hash: client ids are consecutive, and
/// placed by `id / 2` they would form one long run that every deletion has
/// to walk to its end.
#[derive(Debug)]
pub(super) struct Streams {
    index: Vec<Slot>,
    /// 64 − log2(index.len()).
    shift: u32,
    slab: Vec<Stream>,
    free: Vec<u32>,
    len: usize,
}

#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    /// 0: empty.
    id: u32,
    at: u32,
}

impl Streams {
    pub(super) fn new(capacity: usize) -> Streams {
        debug_assert!(capacity.is_power_of_two() && capacity >= 2);
        Streams {
            index: vec![Slot::default(); capacity],
            shift: 64 - capacity.trailing_zeros(),
            slab: Vec::new(),
            free: Vec::new(),
            len: 0,
        }
    }

    #[inline]
    fn home(&self, id: u32) -> usize {
        ((id as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> self.shift) as usize
    }

    /// Position in `index` of `id`.
    #[inline]
    fn find(&self, id: u32) -> Option<usize> {
        if id == 0 {
            return None;
        }
        let mask = self.index.len() - 1;
        let mut i = self.home(id);
        loop {
            match self.index[i].id {
                s if s == id => return Some(i),
                0 => return None,
                _ => i = (i + 1) & mask,
            }
        }
    }

    /// Open streams.
    #[inline]
    pub(super) fn len(&self) -> usize {
        self.len
    }

    #[inline]
    pub(super) fn get(&self, id: u32) -> Option<&Stream> {
        self.find(id).map(|i| &self.slab[self.index[i].at as usize])
    }

    #[inline]
    pub(super) fn get_mut(&mut self, id: u32) -> Option<&mut Stream> {
        self.find(id)
            .map(|i| &mut self.slab[self.index[i].at as usize])
    }

    pub(super) fn insert(&mut self, s: Stream) {
        // At most half full: probes stay short and always find a hole.
        if (self.len + 1) * 2 > self.index.len() {
            let old = std::mem::take(&mut self.index);
            *self = Streams {
                slab: std::mem::take(&mut self.slab),
                free: std::mem::take(&mut self.free),
                ..Streams::new(old.len() * 2)
            };
            for slot in old.into_iter().filter(|s| s.id != 0) {
                self.place(slot);
            }
            self.len = self.slab.len() - self.free.len();
        }
        let id = s.id;
        let at = match self.free.pop() {
            Some(at) => {
                self.slab[at as usize] = s;
                at
            }
            None => {
                self.slab.push(s);
                self.slab.len() as u32 - 1
            }
        };
        self.place(Slot { id, at });
        self.len += 1;
    }

    fn place(&mut self, slot: Slot) {
        let mask = self.index.len() - 1;
        let mut i = self.home(slot.id);
        while self.index[i].id != 0 {
            i = (i + 1) & mask;
        }
        self.index[i] = slot;
    }

    pub(super) fn remove(&mut self, id: u32) -> Option<Stream> {
        let i = self.find(id)?;
        let at = self.index[i].at;
        let s = std::mem::take(&mut self.slab[at as usize]);
        self.free.push(at);
        self.len -= 1;
        self.index[i] = Slot::default();
        let mask = self.index.len() - 1;
        let mut hole = i;
        let mut j = (i + 1) & mask;
        while self.index[j].id != 0 {
            // Move the entry back if the hole lies on its probe path.
            let h = self.home(self.index[j].id);
            if (j.wrapping_sub(h) & mask) >= (j.wrapping_sub(hole) & mask) {
                self.index.swap(hole, j);
                hole = j;
            }
            j = (j + 1) & mask;
        }
        Some(s)
    }

    pub(super) fn iter(&self) -> impl Iterator<Item = &Stream> {
        self.slab.iter().filter(|s| s.id != 0)
    }

    pub(super) fn iter_mut(&mut self) -> impl Iterator<Item = &mut Stream> {
        self.slab.iter_mut().filter(|s| s.id != 0)
    }

    /// Forgets every stream, appending their tokens to `out`.
    pub(super) fn drain_tokens(&mut self, out: &mut Vec<u32>) {
        out.extend(self.iter().map(|s| s.token));
        self.index.fill(Slot::default());
        self.slab.clear();
        self.free.clear();
        self.len = 0;
    }
}
