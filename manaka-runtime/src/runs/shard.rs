//! A part of a long run for one machine (`--shard i/n` of self-play and labelling), so that a
//! batch scheduler spreads the run over machines that never talk to each other, and the
//! parts' outputs together are exactly the output of one run (issue 19, "runs that scale out").

/// Part `index` of `count` of a run (a Slurm array task or a Kubernetes indexed job each run
/// one). Self-play shard `i` plays the output files whose number `c` has `c mod n == i`;
/// every game depends only on the seed and its number, so the shards' files are exactly the
/// files one unsharded run writes, and copying them into one directory (or training on all
/// of them) needs no merge step. Labelling shard `i` takes a contiguous range of the
/// positions, so the shards' outputs in order are the unsharded output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: u64,
    pub count: u64,
}

impl Default for Shard {
    /// The whole run.
    fn default() -> Shard {
        Shard { index: 0, count: 1 }
    }
}

impl Shard {
    /// Parses `i/n` (0 ≤ i < n).
    pub fn parse(text: &str) -> Result<Shard, String> {
        let bad = || format!("'{text}' is not a shard: give i/n with 0 <= i < n, e.g. 0/4");
        let (i, n) = text.split_once('/').ok_or_else(bad)?;
        let index: u64 = i.trim().parse().map_err(|_| bad())?;
        let count: u64 = n.trim().parse().map_err(|_| bad())?;
        if count == 0 || index >= count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }

    /// Whether output file `c` belongs to this shard (self-play: files dealt round-robin).
    pub fn owns(&self, c: u64) -> bool {
        c % self.count == self.index
    }

    /// Where this shard's contiguous range of `total` items starts (labelling: shard i takes
    /// [i·total/n, (i+1)·total/n), so the shards in order are the whole list).
    pub fn range_start(&self, total: u64) -> u64 {
        self.range_start_of(self.index, total)
    }

    /// Where shard `index`'s range of `total` items starts; `index = count` gives `total`.
    pub fn range_start_of(&self, index: u64, total: u64) -> u64 {
        (u128::from(index) * u128::from(total) / u128::from(self.count)) as u64
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}
