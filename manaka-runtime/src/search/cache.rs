//! The one direct-mapped table keyed by a 64-bit hash ([`DirectMapped`]), and the search's
//! transposition cache of network evaluations built on it ([`EvalCache`]).
//!
//! Two caches use the table: [`EvalCache`] here, keyed by the position's Zobrist key, and the
//! accumulator-state cache of [`crate::network::NetworkEvaluator`], keyed by a leaf's lineage
//! (a hash of the position keys since its anchor). Both want the same thing: a fixed number of
//! slots, the key's low bits choosing the slot, a newer entry replacing an older one, memory
//! bounded by the slot count times the entry size, and no abort when the allocator refuses.
//!
//! The network's answer depends on the position only (board, hands, side to move), so a
//! position reached again — by transposition inside one search, or in the next search of the
//! same game — need not be evaluated twice. Only evaluations are shared: visit counts and
//! values stay with each tree node (the seed: "tree/visit statistics remain node-local").
//! Repetition and other path-dependent verdicts are decided before the cache is asked.
//!
//! The slots are allocated fallibly and never beyond what the machine has
//! ([`available_memory_bytes`]): a cache asked for more than it can get is smaller, never an
//! abort.

/// A direct-mapped table from 64-bit keys to values: `2^k` slots, a key's low `k` bits choose
/// its slot, and an insert replaces whatever held that slot. The keys must be well mixed in
/// their low bits (Zobrist keys and SplitMix64 outputs are). A lookup returns the value stored
/// under exactly that key; callers that need more (a move count, a second key) keep it in the
/// value and check it, since two positions can share a 64-bit key.
pub struct DirectMapped<V> {
    slots: Vec<Option<(u64, V)>>,
}

impl<V> DirectMapped<V> {
    /// A table of the largest power of two slots not above `slots` (0: a table that stores
    /// nothing). An allocation the allocator refuses is halved until it succeeds, down to no
    /// slots at all, so that asking for too much gives a smaller table, never an abort.
    pub fn with_slots(slots: usize) -> DirectMapped<V> {
        let mut n = if slots == 0 {
            0
        } else {
            1usize << (usize::BITS - 1 - slots.leading_zeros())
        };
        let mut table = Vec::new();
        while n > 0 && table.try_reserve_exact(n).is_err() {
            n /= 2;
        }
        table.resize_with(n, || None);
        DirectMapped { slots: table }
    }

    /// Slots (a power of two, or 0).
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    fn slot(&self, key: u64) -> usize {
        (key as usize) & (self.slots.len() - 1)
    }

    /// The value stored under `key`, if its slot still holds it.
    pub fn get(&self, key: u64) -> Option<&V> {
        if self.slots.is_empty() {
            return None;
        }
        match &self.slots[self.slot(key)] {
            Some((k, v)) if *k == key => Some(v),
            _ => None,
        }
    }

    /// Stores `value` under `key`, replacing what its slot held (nothing, in a table of no
    /// slots).
    pub fn insert(&mut self, key: u64, value: V) {
        if self.slots.is_empty() {
            return;
        }
        let i = self.slot(key);
        self.slots[i] = Some((key, value));
    }

    /// Empties every slot (the allocation stays).
    pub fn clear(&mut self) {
        for s in &mut self.slots {
            *s = None;
        }
    }
}

/// One cached evaluation. The move count travels with it: a position whose key collides with
/// another's but has another number of legal moves is told apart.
struct Evaluated {
    value_logit: f32,
    policy_logits: Box<[f32]>,
}

/// The search's transposition cache of evaluations, keyed by the position's Zobrist key.
pub struct EvalCache {
    table: DirectMapped<Evaluated>,
    hits: u64,
}

/// Rough bytes per cached evaluation (key, value, ~80 logits): for sizing from a memory
/// budget.
pub const APPROX_ENTRY_BYTES: usize = 48 + 80 * 4;

impl EvalCache {
    /// A cache with room for about `entries` evaluations (rounded down to a power of two;
    /// 0 disables caching). Fewer when the machine cannot hold them: a full cache takes at
    /// most a quarter of the memory available, and an allocation the allocator refuses is
    /// halved until it succeeds (down to no cache at all).
    pub fn new(entries: usize) -> EvalCache {
        // Full, the cache holds about `APPROX_ENTRY_BYTES` per slot (the slot and its logits).
        // Caches of up to 64 MiB are made as asked, so that their size never depends on the
        // machine.
        let entries = if entries > (64 << 20) / APPROX_ENTRY_BYTES {
            let limit = available_memory_bytes().map_or(usize::MAX, |b| {
                usize::try_from(b / 4).unwrap_or(usize::MAX) / APPROX_ENTRY_BYTES
            });
            entries.min(limit)
        } else {
            entries
        };
        EvalCache {
            table: DirectMapped::with_slots(entries),
            hits: 0,
        }
    }

    pub fn capacity(&self) -> usize {
        self.table.capacity()
    }

    /// Hits since creation.
    pub fn hits(&self) -> u64 {
        self.hits
    }

    /// The cached evaluation of the position with `key` and `num_moves` legal moves.
    /// A stored entry for a different move count is ignored (a key collision).
    pub fn get(&mut self, key: u64, num_moves: usize) -> Option<(f32, &[f32])> {
        let e = self
            .table
            .get(key)
            .filter(|e| e.policy_logits.len() == num_moves)?;
        self.hits += 1;
        Some((e.value_logit, &e.policy_logits))
    }

    pub fn insert(&mut self, key: u64, value_logit: f32, policy_logits: &[f32]) {
        self.table.insert(
            key,
            Evaluated {
                value_logit,
                policy_logits: policy_logits.into(),
            },
        );
    }

    pub fn clear(&mut self) {
        self.table.clear();
    }
}

/// Bytes of memory this process can still use, where the system says (Linux: the kernel's
/// `MemAvailable`, and the cgroup's limit less its usage when one is set); `None` elsewhere.
/// Sizes taken from options (`USI_Hash`) are capped by it, so that no table is allocated
/// beyond what the machine has.
pub fn available_memory_bytes() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let kib = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemAvailable:"))?
        .trim()
        .strip_suffix("kB")?
        .trim()
        .parse::<u64>()
        .ok()?;
    let mut available = kib.saturating_mul(1024);
    let read = |p: &str| std::fs::read_to_string(p).ok()?.trim().parse::<u64>().ok();
    if let (Some(max), Some(used)) = (
        read("/sys/fs/cgroup/memory.max"),
        read("/sys/fs/cgroup/memory.current"),
    ) {
        available = available.min(max.saturating_sub(used));
    }
    Some(available)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stores_replaces_and_checks_length() {
        let mut c = EvalCache::new(5);
        assert_eq!(c.capacity(), 4);
        c.insert(7, 0.5, &[1.0, 2.0]);
        assert_eq!(c.get(7, 2), Some((0.5, &[1.0f32, 2.0][..])));
        assert_eq!(c.get(7, 3), None);
        assert_eq!(c.get(3, 2), None); // same slot, other key
        c.insert(3, -1.0, &[0.0, 0.0]);
        assert_eq!(c.get(7, 2), None);
        assert_eq!(c.hits(), 1);
        let mut off = EvalCache::new(0);
        off.insert(1, 0.5, &[1.0, 2.0]);
        assert_eq!(off.get(1, 2), None);
    }

    /// The table against a map of what was inserted last per slot (an independent model of
    /// direct mapping): a key is found exactly when it was the last one inserted into its slot.
    #[test]
    fn direct_mapped_keeps_the_last_key_of_each_slot() {
        let mut t = DirectMapped::with_slots(100);
        assert_eq!(t.capacity(), 64);
        let mut rng = crate::random::SplitMix64::new(3);
        let mut last = std::collections::HashMap::new();
        let mut keys = Vec::new();
        for i in 0..500u32 {
            // 500 keys in 64 slots: every slot is shared and replaced several times.
            let key = rng.next_u64();
            t.insert(key, i);
            last.insert(key % 64, (key, i));
            keys.push(key);
        }
        for &key in &keys {
            let want = last
                .get(&(key % 64))
                .filter(|(k, _)| *k == key)
                .map(|(_, v)| v);
            assert_eq!(t.get(key), want, "{key:#x}");
        }
        assert_eq!(t.get(keys[0] ^ (1 << 40)), None);
        t.clear();
        assert!(keys.iter().all(|&k| t.get(k).is_none()));
        let mut none = DirectMapped::with_slots(0);
        none.insert(5, 1u8);
        assert_eq!((none.capacity(), none.get(5)), (0, None));
        assert_eq!(DirectMapped::<u8>::with_slots(1).capacity(), 1);
    }

    /// Issue 16, fault 3: a cache asked for far more than any machine has (what the largest
    /// `USI_Hash` asked for, and beyond) is made as large as the machine allows instead of
    /// aborting the process on the allocation, and still works.
    #[test]
    fn an_impossible_size_gives_a_smaller_working_cache() {
        for entries in [usize::MAX, (1 << 40) / APPROX_ENTRY_BYTES] {
            // The other tests run beside this one and allocate too: the cache read the
            // available memory somewhere between these two readings.
            let before = available_memory_bytes();
            let mut c = EvalCache::new(entries);
            let after = available_memory_bytes();
            assert!(c.capacity() < entries, "{entries}");
            assert!(c.capacity().is_power_of_two(), "{}", c.capacity());
            if let Some(bytes) = before.max(after) {
                assert!((c.capacity() * APPROX_ENTRY_BYTES) as u64 <= bytes / 4);
            }
            c.insert(9, 0.25, &[3.0]);
            assert_eq!(c.get(9, 1), Some((0.25, &[3.0f32][..])));
        }
    }
}
