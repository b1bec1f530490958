#!/bin/sh
# Prints the version this tree builds, for the Makefile (never "unknown"):
#   a checkout at or after a release tag vX.Y.Z   X.Y.Z (or X.Y.Z-N-gHASH after it)
#   a checkout without tags                       VERSION+gHASH (e.g. 0.3.0+g1a2b3c4)
#   no git (a release tarball)                    VERSION
# Only the tree's own .git counts: a tarball unpacked inside another
# repository does not take that repository's commits for its version.
top=$(cd "$(dirname "$0")/.." && pwd)
base=$(sed -n '1{s/[^0-9A-Za-z.+~-]//g;p;}' "$top/VERSION" 2>/dev/null)
[ -n "$base" ] || base=0.0.0
if [ -e "$top/.git" ] && command -v git >/dev/null 2>&1; then
    if tag=$(git -C "$top" describe --tags --match 'v[0-9]*' 2>/dev/null); then
        echo "${tag#v}"
        exit 0
    fi
    if hash=$(git -C "$top" rev-parse --short HEAD 2>/dev/null); then
        echo "$base+g$hash"
        exit 0
    fi
fi
echo "$base"
