#!/usr/bin/env bash
# Independent implementation of sha256-tree-v1 with GNU find, sort, xargs and sha256sum.
# Usage: tree_hash.sh DIR...   prints "sha256:<hex>" per DIR. Refuses symbolic links and special files.
# (It does not check names for control characters or invalid UTF-8; the TypeScript and
# Python implementations do.)
set -euo pipefail
for root in "$@"; do
  (
    cd "$root"
    if [ -n "$(find . \( -type l -o \( ! -type f ! -type d \) \) -print -quit)" ]; then
      echo "refused: symbolic link or special file in $root" >&2
      exit 1
    fi
    # Paths keep their "./" for sha256sum (a file named "-" would otherwise be read as
    # standard input); sed drops it from each listing line. Sorting is unaffected: every
    # path carries the same prefix.
    find . -type f -print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum -- \
      | sed 's/^\([0-9a-f]\{64\}\)  \.\//\1  /' | sha256sum | sed 's/ .*//; s/^/sha256:/'
  )
done
