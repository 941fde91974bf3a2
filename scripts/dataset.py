#!/usr/bin/env python3
"""The labelled-position archive: teacher-labelled sets kept in the repository (issue 19).

Labelling is the expensive part of a generation (fairy-stockfish at depth 9 labels 65-90
positions a second on 2 cores, docs/history.md), and a working directory does not outlive its
machine. So each labelled set a generation makes is packed here, xz-compressed (a 38-byte HCPE
record takes about 13 bytes), with a manifest line saying what it is and how it was made;
later generations train on every set in the archive, whatever machine they run on.

  scripts/dataset.py pack gen9/labels-d9.hcpe --name sp9-gen6-d9 \\
      --describe "1,600 games of gen 6, 128 simulations, depth 9" --command "scripts/generation.py ..."
  scripts/dataset.py list                    # what the archive holds (--json for scripts)
  scripts/dataset.py unpack --all --to work/ # NAME.hcpe for every set, checked against its sha256
  scripts/dataset.py verify                  # every archived file decompresses to its recorded bytes

The archive is data/labels/ (--archive DIR for another). Its manifest.json lists each set:
name, file, records, sha256 of the uncompressed HCPE, compressed bytes, date, description and
the commands that made it. Writes are atomic (a temporary file, then a rename): an interrupted
pack leaves the archive as it was. Packing a set whose name is taken is refused unless the
content is the same (then nothing is done). `scripts/generation.py --extra-data` takes the
archived `.hcpe.xz` files directly.
"""

import argparse
import datetime
import hashlib
import json
import lzma
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ARCHIVE = os.path.join(os.path.dirname(HERE), "data", "labels")
HCPE_BYTES = 38
CHUNK = 1 << 20
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


class DatasetError(Exception):
    """A refusal that names the problem (printed on one line; exit status 2)."""


def manifest_path(archive):
    return os.path.join(archive, "manifest.json")


def read_manifest(archive):
    path = manifest_path(archive)
    if not os.path.exists(path):
        return {"format": "HCPE records (38 bytes each, cshogi's HuffmanCodedPosAndEval), xz-compressed",
                "sets": []}
    try:
        with open(path) as f:
            manifest = json.load(f)
    except (OSError, ValueError) as e:
        raise DatasetError(f"{path} cannot be read as JSON ({e}); restore it from git")
    if not isinstance(manifest.get("sets"), list):
        raise DatasetError(f"{path} has no list of sets; restore it from git")
    return manifest


def write_atomically(path, data):
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def write_manifest(archive, manifest):
    manifest["sets"].sort(key=lambda s: s["name"])
    write_atomically(manifest_path(archive), (json.dumps(manifest, indent=1) + "\n").encode())


def find(manifest, name):
    for s in manifest["sets"]:
        if s["name"] == name:
            return s
    return None


def hash_file(path):
    """(sha256, bytes) of a plain file, read in chunks."""
    h, n = hashlib.sha256(), 0
    with open(path, "rb") as f:
        while chunk := f.read(CHUNK):
            h.update(chunk)
            n += len(chunk)
    return h.hexdigest(), n


def read_xz(source, out=None, limit=None):
    """(sha256, bytes) of what an .xz file decompresses to, streamed (and written to the open
    file out, if given); refused when it is missing, damaged, or longer than limit bytes."""
    if not os.path.isfile(source):
        raise DatasetError(f"{source} is missing; restore it from git")
    h, n = hashlib.sha256(), 0
    try:
        with lzma.open(source, "rb") as f:
            while chunk := f.read(CHUNK):
                h.update(chunk)
                n += len(chunk)
                if limit is not None and n > limit:
                    raise DatasetError(f"{source} holds more than the {limit} bytes its manifest records")
                if out is not None:
                    out.write(chunk)
    except (lzma.LZMAError, EOFError) as e:
        raise DatasetError(f"{source} is not a complete xz file ({e}); restore it from git")
    return h.hexdigest(), n


def decompress(source, dest, want_sha=None, want_bytes=None):
    """Decompresses an .xz file into dest atomically; with want_sha/want_bytes, a file whose
    content differs is refused (and nothing is written)."""
    tmp = dest + ".tmp"
    try:
        with open(tmp, "wb") as out:
            sha, n = read_xz(source, out, want_bytes)
        if want_sha is not None and (sha != want_sha or n != want_bytes):
            raise DatasetError(f"{source} decompresses to {n} bytes with sha256 {sha[:16]}…, "
                               f"not the manifest's {want_bytes} bytes, {want_sha[:16]}…: restore it from git")
        if n % HCPE_BYTES:
            raise DatasetError(f"{source} holds {n} bytes, not a whole number of {HCPE_BYTES}-byte HCPE records")
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
    os.replace(tmp, dest)
    return sha, n


def entry_for_file(xz_path):
    """The manifest entry of an archived file (by its directory's manifest), or None."""
    archive = os.path.dirname(os.path.abspath(xz_path))
    if not os.path.exists(manifest_path(archive)):
        return None
    base = os.path.basename(xz_path)
    for s in read_manifest(archive)["sets"]:
        if s["file"] == base:
            return s
    return None


def is_archived(archive, name, labels):
    """Whether the archive holds a set NAME with exactly the records of the file labels."""
    entry = find(read_manifest(archive), name) if os.path.exists(manifest_path(archive)) else None
    return entry is not None and entry["sha256"] == hash_file(labels)[0]


def unpack_file(xz_path, dest):
    """NAME.hcpe.xz to dest, checked against its manifest entry where it has one; a dest that
    already holds exactly those bytes is kept. Returns the number of records."""
    entry = entry_for_file(xz_path)
    if entry and os.path.exists(dest):
        sha, n = hash_file(dest)
        if sha == entry["sha256"] and n == entry["bytes"]:
            return n // HCPE_BYTES
    sha, n = decompress(xz_path, dest, entry["sha256"] if entry else None, entry["bytes"] if entry else None)
    return n // HCPE_BYTES


def pack(args):
    source = args.labels
    if not NAME.match(args.name):
        raise DatasetError(f"--name {args.name!r}: use letters, digits, '.', '_' and '-' (at most 64)")
    if not os.path.isfile(source):
        raise DatasetError(f"{source} is not a file")
    sha, n = hash_file(source)
    if n == 0 or n % HCPE_BYTES:
        raise DatasetError(f"{source} holds {n} bytes, not a whole, non-zero number of "
                           f"{HCPE_BYTES}-byte HCPE records (a labelled set from `manaka label --format hcpe`)")
    archive = args.archive
    os.makedirs(archive, exist_ok=True)
    manifest = read_manifest(archive)
    old = find(manifest, args.name)
    if old:
        if old["sha256"] == sha:
            print(f"dataset: {args.name} is already archived with these {n // HCPE_BYTES:,} records")
            return
        raise DatasetError(f"a set named {args.name} is archived with other content "
                           f"({old['records']:,} records); choose another --name")
    file = args.name + ".hcpe.xz"
    dest = os.path.join(archive, file)
    tmp = dest + ".tmp"
    with open(source, "rb") as f, lzma.open(tmp, "wb", preset=9) as out:
        while chunk := f.read(CHUNK):
            out.write(chunk)
    os.replace(tmp, dest)
    entry = {"name": args.name, "file": file, "records": n // HCPE_BYTES, "bytes": n, "sha256": sha,
             "xz_bytes": os.path.getsize(dest), "date": datetime.date.today().isoformat(),
             "description": args.describe or "", "commands": args.command}
    manifest["sets"].append(entry)
    write_manifest(archive, manifest)
    print(f"dataset: packed {n // HCPE_BYTES:,} records of {source} into {dest} "
          f"({entry['xz_bytes']:,} bytes, {entry['xz_bytes'] / (n // HCPE_BYTES):.1f} a record)")


def selected(manifest, args):
    if args.all:
        return list(manifest["sets"])
    if not args.names:
        raise DatasetError("name the sets to unpack, or give --all")
    sets = []
    for name in args.names:
        s = find(manifest, name)
        if s is None:
            known = ", ".join(x["name"] for x in manifest["sets"]) or "none"
            raise DatasetError(f"no set named {name} in the archive (it has: {known})")
        sets.append(s)
    return sets


def unpack(args):
    manifest = read_manifest(args.archive)
    os.makedirs(args.to, exist_ok=True)
    for s in selected(manifest, args):
        dest = os.path.join(args.to, s["name"] + ".hcpe")
        n = unpack_file(os.path.join(args.archive, s["file"]), dest)
        print(f"dataset: {dest} ({n:,} records)")


def verify(args):
    manifest = read_manifest(args.archive)
    for s in manifest["sets"]:
        src = os.path.join(args.archive, s["file"])
        if read_xz(src) != (s["sha256"], s["bytes"]):
            raise DatasetError(f"{src} does not decompress to its manifest's bytes; restore it from git")
        print(f"dataset: {s['name']} ok ({s['records']:,} records)")


def list_sets(args):
    manifest = read_manifest(args.archive)
    if args.json:
        print(json.dumps(manifest, indent=1))
        return
    sets = manifest["sets"]
    if not sets:
        print(f"dataset: the archive {args.archive} holds no sets yet")
        return
    print("| set | records | xz MB | date | description |")
    print("|---|---|---|---|---|")
    for s in sets:
        print(f"| {s['name']} | {s['records']:,} | {s['xz_bytes'] / 1e6:.1f} | {s['date']} | {s['description']} |")
    print(f"| all | {sum(s['records'] for s in sets):,} | {sum(s['xz_bytes'] for s in sets) / 1e6:.1f} | | |")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--archive", default=ARCHIVE, help="the archive's directory (default: data/labels)")
    sub = ap.add_subparsers(dest="command", required=True)
    p = sub.add_parser("pack", help="compress a labelled HCPE set into the archive")
    p.add_argument("labels", help="the labelled set (HCPE, e.g. a generation's labels-d9.hcpe)")
    p.add_argument("--name", required=True, help="the set's name, e.g. sp9-gen6-d9")
    p.add_argument("--describe", default="", help="what it is: games, network, simulations, teacher depth")
    p.add_argument("--command", action="append", default=[], help="a command that made it (repeatable)")
    p.set_defaults(run=pack)
    p = sub.add_parser("unpack", help="decompress sets to NAME.hcpe, checked against the manifest")
    p.add_argument("names", nargs="*")
    p.add_argument("--all", action="store_true")
    p.add_argument("--to", required=True, help="the directory for the .hcpe files")
    p.set_defaults(run=unpack)
    p = sub.add_parser("list", help="the archive's sets")
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=list_sets)
    p = sub.add_parser("verify", help="check every archived file against its manifest entry")
    p.set_defaults(run=verify)
    args = ap.parse_args()
    try:
        args.run(args)
    except DatasetError as e:
        print(f"dataset: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
