//! The mate solver's transposition table: what df-pn learned about each position.
//!
//! An entry is one position (board key salted with the attacker's colour, and both hands):
//! its proof and disproof numbers while open, or a fact — *proven* with the length of the
//! mate found (an upper bound on the shortest), or *disproven* for every mate of at most
//! `len` plies (`u16::MAX`: for any length). Facts are absolute: the search never stores a
//! disproof that rests on a repetition of a position above it on the path (`dfpn.rs`).
//!
//! Buckets of four entries; a board's entries, whatever the hands, share a bucket, so a
//! probe also finds facts by hand dominance (a proof holds when the attacker holds at least
//! as much and the defender at most as much; a disproof the other way round). A full bucket
//! gives up the entry with the fewest searched nodes.

use crate::shogi::{Color, Hand};

/// Where an entry stands.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(u8)]
enum Kind {
    /// Zero, so that zeroed memory is a table of empty entries.
    #[default]
    Empty = 0,
    Open,
    Proven,
    Disproven,
}

#[derive(Clone, Copy, Debug, Default)]
struct Entry {
    key: u64,
    hands: [Hand; 2],
    pn: u32,
    dn: u32,
    /// Nodes searched below this position, summed over visits: the replacement priority.
    amount: u32,
    /// Proven: the mate's length. Disproven: no mate of at most this many plies.
    len: u16,
    kind: Kind,
}

const WAYS: usize = 4;

/// Four entries, 128 bytes. Not over-aligned: the system allocator hands out zeroed memory
/// of the natural alignment lazily (calloc), but zeroes an over-aligned block by hand.
#[derive(Clone, Copy, Debug, Default)]
struct Bucket([Entry; WAYS]);

/// The identity of a position in the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Key {
    /// The board key (board and side to move), salted with the attacker's colour.
    pub board: u64,
    /// Both hands, by colour.
    pub hands: [Hand; 2],
}

/// What a probe found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Lookup {
    /// A mate of this many plies.
    Proven(u16),
    /// No mate of at most this many plies.
    Disproven(u16),
    /// Searched before, not settled.
    Open {
        pn: u32,
        dn: u32,
    },
    Miss,
}

/// What to store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Record {
    Proven(u16),
    Disproven(u16),
    Open { pn: u32, dn: u32 },
}

pub(crate) struct Table {
    buckets: Box<[Bucket]>,
}

/// `n` zeroed buckets, or `None` when the allocator refuses. Zeroed memory comes from the
/// system lazily (pages are mapped when first written), so a large table costs nothing
/// until the search fills it.
fn zeroed_buckets(n: usize) -> Option<Box<[Bucket]>> {
    if n == 0 {
        return Some(Box::new([]));
    }
    let layout = std::alloc::Layout::array::<Bucket>(n).ok()?;
    // SAFETY: the layout has a non-zero size. An all-zero `Bucket` is a valid value (every
    // field is an integer, `Hand` wraps one, and `Kind::Empty` is 0), so the zeroed memory
    // holds `n` initialised buckets; the box takes ownership with the same layout
    // (`[Bucket]` of length `n`).
    unsafe {
        let p = std::alloc::alloc_zeroed(layout).cast::<Bucket>();
        if p.is_null() {
            return None;
        }
        Some(Box::from_raw(std::ptr::slice_from_raw_parts_mut(p, n)))
    }
}

impl Table {
    /// A table of at most `bytes` bytes, smaller when the allocator refuses (halving down to
    /// none).
    pub fn new(bytes: usize) -> Table {
        let mut n = bytes / std::mem::size_of::<Bucket>();
        loop {
            if let Some(buckets) = zeroed_buckets(n) {
                return Table { buckets };
            }
            n /= 2;
        }
    }

    pub fn bytes(&self) -> usize {
        self.buckets.len() * std::mem::size_of::<Bucket>()
    }

    pub fn clear(&mut self) {
        self.buckets.fill(Bucket::default());
    }

    /// Per mille of the first thousand buckets' entries in use (USI `hashfull`).
    pub fn hashfull(&self) -> u32 {
        let sample = &self.buckets[..self.buckets.len().min(1000)];
        if sample.is_empty() {
            return 0;
        }
        let used: usize = sample
            .iter()
            .map(|b| b.0.iter().filter(|e| e.kind != Kind::Empty).count())
            .sum();
        (used * 1000 / (sample.len() * WAYS)) as u32
    }

    #[inline(always)]
    fn index(&self, board: u64) -> usize {
        // Lemire's multiply-shift range reduction: any table size, no modulo.
        ((board as u128 * self.buckets.len() as u128) >> 64) as usize
    }

    /// What is known of `key` for a search allowing `plies` more plies: facts that hold at
    /// that depth (directly or by hand dominance), else the open numbers of this very
    /// position.
    pub fn probe(&self, key: &Key, attacker: Color, plies: u16) -> Lookup {
        if self.buckets.is_empty() {
            return Lookup::Miss;
        }
        let (a, d) = (attacker.index(), attacker.flip().index());
        let mut found = Lookup::Miss;
        for e in &self.buckets[self.index(key.board)].0 {
            if e.kind == Kind::Empty || e.key != key.board {
                continue;
            }
            let exact = e.hands == key.hands;
            match e.kind {
                Kind::Proven
                    if e.len <= plies
                        && (exact
                            || key.hands[a].dominates(e.hands[a])
                                && e.hands[d].dominates(key.hands[d])) =>
                {
                    return Lookup::Proven(e.len);
                }
                Kind::Disproven
                    if e.len >= plies
                        && (exact
                            || e.hands[a].dominates(key.hands[a])
                                && key.hands[d].dominates(e.hands[d])) =>
                {
                    return Lookup::Disproven(e.len);
                }
                Kind::Open if exact => found = Lookup::Open { pn: e.pn, dn: e.dn },
                _ => {}
            }
        }
        found
    }

    /// Records what a visit of `key` that searched `amount` nodes learned. A fact is never
    /// replaced by open numbers; of two proofs the shorter stays, of two disproofs the one
    /// covering more plies; a proof and a disproof (both true, for different lengths) give
    /// way to the newer.
    pub fn store(&mut self, key: &Key, record: Record, amount: u32) {
        if self.buckets.is_empty() {
            return;
        }
        let i = self.index(key.board);
        let bucket = &mut self.buckets[i].0;
        if let Some(e) = bucket
            .iter_mut()
            .find(|e| e.kind != Kind::Empty && e.key == key.board && e.hands == key.hands)
        {
            e.amount = e.amount.saturating_add(amount);
            match (e.kind, record) {
                (Kind::Proven, Record::Proven(len)) => e.len = e.len.min(len),
                (Kind::Disproven, Record::Disproven(len)) => e.len = e.len.max(len),
                (Kind::Proven | Kind::Disproven, Record::Open { .. }) => {}
                _ => set(e, record),
            }
            return;
        }
        let victim = bucket
            .iter_mut()
            .min_by_key(|e| (e.kind != Kind::Empty, e.amount))
            .expect("a bucket has entries");
        *victim = Entry {
            key: key.board,
            hands: key.hands,
            amount,
            ..Entry::default()
        };
        set(victim, record);
    }
}

fn set(e: &mut Entry, record: Record) {
    match record {
        Record::Proven(len) => {
            e.kind = Kind::Proven;
            e.len = len;
        }
        Record::Disproven(len) => {
            e.kind = Kind::Disproven;
            e.len = len;
        }
        Record::Open { pn, dn } => {
            e.kind = Kind::Open;
            e.pn = pn;
            e.dn = dn;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shogi::HandKind;

    fn hand(pieces: &[(HandKind, u8)]) -> Hand {
        let mut h = Hand::EMPTY;
        for &(k, n) in pieces {
            h.set(k, n);
        }
        h
    }

    #[test]
    fn entries_are_32_bytes_and_buckets_128() {
        assert_eq!(std::mem::size_of::<Entry>(), 32);
        assert_eq!(std::mem::size_of::<Bucket>(), 128);
    }

    #[test]
    fn size_never_exceeds_the_request() {
        for bytes in [0, 1, 127, 128, 129, 1000, 4096, 1 << 20, (1 << 20) + 77] {
            let t = Table::new(bytes);
            assert!(t.bytes() <= bytes, "{bytes}: {}", t.bytes());
            assert!(
                bytes < 128 || t.bytes() > bytes - 128,
                "{bytes}: {}",
                t.bytes()
            );
        }
    }

    #[test]
    fn facts_by_depth_and_by_hand_dominance() {
        let mut t = Table::new(1 << 12);
        let g = hand(&[(HandKind::Gold, 1)]);
        let gg = hand(&[(HandKind::Gold, 2)]);
        let none = Hand::EMPTY;
        let black = Color::Black;
        // Black attacks; proof with one gold, defender empty-handed.
        let k = Key {
            board: 42,
            hands: [g, none],
        };
        t.store(&k, Record::Proven(7), 10);
        assert_eq!(t.probe(&k, black, 7), Lookup::Proven(7));
        assert_eq!(t.probe(&k, black, 5), Lookup::Miss, "too long for 5 plies");
        let more = Key {
            board: 42,
            hands: [gg, none],
        };
        assert_eq!(t.probe(&more, black, 9), Lookup::Proven(7));
        let less = Key {
            board: 42,
            hands: [none, none],
        };
        assert_eq!(t.probe(&less, black, 9), Lookup::Miss);
        let defender_richer = Key {
            board: 42,
            hands: [g, g],
        };
        assert_eq!(t.probe(&defender_richer, black, 9), Lookup::Miss);
        // With White attacking, the same hands mean the opposite.
        assert_eq!(t.probe(&more, Color::White, 9), Lookup::Miss);
        // A disproof covers poorer attackers.
        t.store(&less, Record::Disproven(9), 10);
        let k2 = Key {
            board: 42,
            hands: [none, g],
        };
        assert_eq!(t.probe(&k2, black, 9), Lookup::Disproven(9));
        assert_eq!(t.probe(&k2, black, 11), Lookup::Miss, "only up to 9 plies");
        // Open numbers never overwrite a fact; a shorter proof does.
        t.store(&k, Record::Open { pn: 3, dn: 4 }, 1);
        assert_eq!(t.probe(&k, black, 7), Lookup::Proven(7));
        t.store(&k, Record::Proven(5), 1);
        assert_eq!(t.probe(&k, black, 5), Lookup::Proven(5));
        t.store(&k, Record::Proven(9), 1);
        assert_eq!(t.probe(&k, black, 5), Lookup::Proven(5));
    }

    #[test]
    fn a_full_bucket_gives_up_its_least_searched_entry() {
        let mut t = Table::new(128); // one bucket
        assert_eq!(t.hashfull(), 0, "a new table is empty");
        let key = |b: u64| Key {
            board: b,
            hands: [Hand::EMPTY; 2],
        };
        for b in 1..=4u64 {
            t.store(&key(b), Record::Open { pn: 1, dn: 1 }, b as u32 * 10);
        }
        t.store(&key(5), Record::Open { pn: 2, dn: 2 }, 1);
        assert_eq!(t.probe(&key(1), Color::Black, 0), Lookup::Miss);
        for b in 2..=5u64 {
            assert!(matches!(
                t.probe(&key(b), Color::Black, 0),
                Lookup::Open { .. }
            ));
        }
        assert_eq!(t.hashfull(), 1000);
        t.clear();
        assert_eq!(t.hashfull(), 0);
    }

    #[test]
    fn no_table_is_a_table_that_remembers_nothing() {
        let mut t = Table::new(0);
        let k = Key {
            board: 1,
            hands: [Hand::EMPTY; 2],
        };
        t.store(&k, Record::Proven(1), 1);
        assert_eq!(t.probe(&k, Color::Black, 1), Lookup::Miss);
        assert_eq!(t.bytes(), 0);
    }
}
