"""Rebuild, from the archive alone (data/labels/), the training and validation files that the
d18 recipes (probe.sh, s2.sh, g15.sh) name, under the names they use: the working directories
of the machine that made them are gone, the archive is not. Usage, from the repository root:

    scripts/dataset.py unpack --all --to /work/arch
    python3 docs/history/2026-12-06-d19/inputs.py /work/arch /work/d11

Held-out sets (docs/history.md): sp93's first 20,000 records (val), vs1's and vs2's first 5,000
(vs1-val, vs2-val). The depth-11 relabels (relabel-d11-s8) replace the depth-9 labels of the
positions they cover, as docs/history/2026-12-05-d11/merge.py did: rest-NAME = the set less those
positions, d11-games / d11-children = the relabels split by whether they are children5's."""
import os, sys
import numpy as np
import cshogi

T = cshogi.HuffmanCodedPosAndEval
arch, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
load = lambda name: np.fromfile(os.path.join(arch, name + ".hcpe"), dtype=T)


def write(records, path):
    tmp = path + ".tmp"
    records.tofile(tmp)
    os.replace(tmp, path)
    print(f"{path}: {len(records)}")


sp93, vs1, vs2 = load("sp93-gen6-d9"), load("vs1-gen6-fs8-d9"), load("vs2-gen9b-fs8-d9")
write(sp93[:20000], os.path.join(arch, "val.hcpe"))
write(vs1[:5000], os.path.join(arch, "vs1-val.hcpe"))
write(vs2[:5000], os.path.join(arch, "vs2-val.hcpe"))
# The fourteenth session's training sets, in pick.py's order, under its file names.
relabelled = {
    "train93": sp93[20000:], "sp91a-gen6-d9": load("sp91a-gen6-d9"),
    "sp91b-gen6-d9": load("sp91b-gen6-d9"), "sp92-gen6-d9": load("sp92-gen6-d9"),
    "vs1-train": vs1[5000:], "vs2-train": vs2[5000:], "s4-d9": load("sp94-gen6-d9-s4"),
    "s4-part-d9": load("sp95-gen6-d9-s4-part"), "children-d9": load("children5-d9"),
}
d11 = load("relabel-d11-s8")
keys = set(bytes(h) for h in d11["hcp"])
children = set(bytes(h) for h in relabelled["children-d9"]["hcp"])
is_child = np.array([bytes(h) in children for h in d11["hcp"]])
write(d11[~is_child], os.path.join(out, "d11-games.hcpe"))
write(d11[is_child], os.path.join(out, "d11-children.hcpe"))
for name, records in relabelled.items():
    keep = np.array([bytes(h) not in keys for h in records["hcp"]])
    write(records[keep], os.path.join(out, "rest-" + name + ".hcpe"))
# The sets that came after the relabelling, as they are.
for name, path in [("sp95-gen6-d9-s4-rest", "s95rest-d9.hcpe"), ("sp96-gen6-d9-s3", "s3-d9.hcpe"),
                   ("sp97-gen6-d9-s4-a", "s4-d9-a.hcpe"), ("sp97-gen6-d9-s4-b", "s4-d9-b.hcpe"),
                   ("childrenvs-d9", "vsc-d9.hcpe")]:
    write(load(name), os.path.join(out, path))
