//! A transposition cache of network evaluations, keyed by the position's Zobrist key.
//!
//! The network's answer depends on the position only (board, hands, side to move), so a
//! position reached again — by transposition inside one search, or in the next search of the
//! same game — need not be evaluated twice. Only evaluations are shared: visit counts and
//! values stay with each tree node (the seed: "tree/visit statistics remain node-local").
//! Repetition and other path-dependent verdicts are decided before the cache is asked.
//!
//! Direct-mapped: a fixed number of slots, the key's low bits choose the slot, a newer entry
//! replaces an older one. Memory is bounded by the slot count times the entry size.
//!
//! The slots are allocated fallibly and never beyond what the machine has
//! ([`available_memory_bytes`]): a cache asked for more than it can get is smaller, never an
//! abort.

struct Entry {
    key: u64,
    value_logit: f32,
    policy_logits: Box<[f32]>,
}

pub struct EvalCache {
    slots: Vec<Option<Entry>>,
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
        let mut n = if entries == 0 {
            0
        } else {
            1usize << (usize::BITS - 1 - entries.leading_zeros())
        };
        let mut slots = Vec::new();
        while n > 0 && slots.try_reserve_exact(n).is_err() {
            n /= 2;
        }
        slots.resize_with(n, || None);
        EvalCache { slots, hits: 0 }
    }

    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// Hits since creation.
    pub fn hits(&self) -> u64 {
        self.hits
    }

    fn slot(&self, key: u64) -> usize {
        (key as usize) & (self.slots.len() - 1)
    }

    /// The cached evaluation of the position with `key` and `num_moves` legal moves.
    /// A stored entry for a different move count is ignored (a key collision).
    pub fn get(&mut self, key: u64, num_moves: usize) -> Option<(f32, &[f32])> {
        if self.slots.is_empty() {
            return None;
        }
        let i = self.slot(key);
        match &self.slots[i] {
            Some(e) if e.key == key && e.policy_logits.len() == num_moves => {
                self.hits += 1;
                let e = self.slots[i].as_ref().expect("checked above");
                Some((e.value_logit, &e.policy_logits))
            }
            _ => None,
        }
    }

    pub fn insert(&mut self, key: u64, value_logit: f32, policy_logits: &[f32]) {
        if self.slots.is_empty() {
            return;
        }
        let i = self.slot(key);
        self.slots[i] = Some(Entry {
            key,
            value_logit,
            policy_logits: policy_logits.into(),
        });
    }

    pub fn clear(&mut self) {
        for s in &mut self.slots {
            *s = None;
        }
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

    /// Issue 16, fault 3: a cache asked for far more than any machine has (what the largest
    /// `USI_Hash` asked for, and beyond) is made as large as the machine allows instead of
    /// aborting the process on the allocation, and still works.
    #[test]
    fn an_impossible_size_gives_a_smaller_working_cache() {
        for entries in [usize::MAX, (1 << 40) / APPROX_ENTRY_BYTES] {
            let mut c = EvalCache::new(entries);
            assert!(c.capacity() < entries, "{entries}");
            assert!(c.capacity().is_power_of_two(), "{}", c.capacity());
            if let Some(bytes) = available_memory_bytes() {
                assert!((c.capacity() * APPROX_ENTRY_BYTES) as u64 <= bytes / 4);
            }
            c.insert(9, 0.25, &[3.0]);
            assert_eq!(c.get(9, 1), Some((0.25, &[3.0f32][..])));
        }
    }
}
