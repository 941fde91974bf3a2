"""Replace depth-9 labels by depth-11 ones where the relabelling reached: writes rest-NAME.hcpe
(each training set less the relabelled positions, matched by packed position),
d11-games.hcpe and d11-children.hcpe (the children have no game result: --teacher-only).
Usage: python3 merge.py sel-d11.hcpe   (a .partial file of an unfinished run works too)"""
import os, sys
import numpy as np
from pick import FILES, T  # this directory's pick.py

d11 = np.fromfile(sys.argv[1], dtype=T)
keys = set(bytes(h) for h in d11["hcp"])
children = set(bytes(h) for h in np.fromfile(FILES[-1], dtype=T)["hcp"])
is_child = np.array([bytes(h) in children for h in d11["hcp"]])
d11[~is_child].tofile("d11-games.hcpe")
d11[is_child].tofile("d11-children.hcpe")
print("d11 games", (~is_child).sum(), "children", is_child.sum())
kept = 0
for f in FILES:
    r = np.fromfile(f, dtype=T)
    m = np.array([bytes(h) not in keys for h in r["hcp"]])
    r[m].tofile("rest-" + os.path.basename(f))
    kept += m.sum()
    print(f, len(r), "kept", m.sum())
print("d11", len(d11), "rest", kept)
