#!/usr/bin/env python3
"""Independent implementation of sha256-tree-v1 (see packages/skills/README.md).

Usage: tree_hash.py [--listing] DIR...   prints "sha256:<hex> <n>" per DIR (tree hash and
file count), each after its listing with --listing.
Exit 1 with a message on stderr for a tree the algorithm refuses.
Standard library only; shares no code with the TypeScript implementation.
"""
import hashlib
import os
import stat
import sys


def refuse(message):
    sys.stderr.write(f"refused: {message}\n")
    sys.exit(1)


def collect(root):
    files = []
    for directory, subdirectories, names in os.walk(os.fsencode(root)):
        for name in subdirectories + names:
            full = os.path.join(directory, name)
            mode = os.lstat(full).st_mode
            try:
                name.decode("utf-8")
            except UnicodeDecodeError:
                refuse(f"{full!r}: name is not UTF-8")
            if any(byte < 0x20 or byte in (0x5C, 0x7F) for byte in name):
                refuse(f"{full!r}: control character or backslash in name")
            if stat.S_ISLNK(mode):
                refuse(f"{full!r}: symbolic link")
            if stat.S_ISREG(mode):
                files.append(os.path.relpath(full, os.fsencode(root)).replace(os.sep.encode(), b"/"))
            elif not stat.S_ISDIR(mode):
                refuse(f"{full!r}: special file")
    return sorted(files)  # bytes sort = sort by UTF-8 bytes


def tree_hash(root):
    listing = b""
    paths = collect(root)
    for path in paths:
        with open(os.path.join(os.fsencode(root), path), "rb") as handle:
            digest = hashlib.sha256(handle.read()).hexdigest()
        listing += digest.encode() + b"  " + path + b"\n"
    return listing, "sha256:" + hashlib.sha256(listing).hexdigest(), len(paths)


if __name__ == "__main__":
    show_listing = sys.argv[1:2] == ["--listing"]
    for root in sys.argv[2:] if show_listing else sys.argv[1:]:
        listing, digest, count = tree_hash(root)
        if show_listing:
            sys.stdout.buffer.write(listing)
        sys.stdout.write(f"{digest} {count}\n")
        sys.stdout.flush()
