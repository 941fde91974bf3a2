"""Select about one position in 8 of every training set (a seeded random mask), shuffled so a
partial labelling covers all sets and games, and write them as HCPE (depth-9 labels kept) for
`manaka label --positions sel.hcpe --depth 11` (docs/history.md, "A deeper teacher on one
position in eight"). Paths as on the fourteenth session's machine: A = the unpacked archive."""
import numpy as np, cshogi

FILES = ["/work/arch/train93.hcpe", "/work/arch/sp91a-gen6-d9.hcpe", "/work/arch/sp91b-gen6-d9.hcpe",
         "/work/arch/sp92-gen6-d9.hcpe", "/work/arch/vs1-train.hcpe", "/work/arch/vs2-train.hcpe",
         "/work/d94/s4-d9.hcpe", "/work/d95/s4-part-d9.hcpe", "/work/child/children-d9.hcpe"]
T = cshogi.HuffmanCodedPosAndEval

if __name__ == "__main__":
    rng = np.random.default_rng(111)
    parts = []
    for f in FILES:
        r = np.fromfile(f, dtype=T)
        m = rng.random(len(r)) < 1 / 8
        parts.append(r[m])
        print(f, len(r), m.sum())
    sel = np.concatenate(parts)
    sel = sel[rng.permutation(len(sel))]
    sel.tofile("sel.hcpe")
    print("selected", len(sel))
