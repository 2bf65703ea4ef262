"""Writes images/debian-base.lock from the versions a Debian root was built with.

Called by scripts/build-images after scripts/build-debian-root, with the
"package version" lines dpkg reported. Debian's mirrors keep only the newest
version of each package, so the root cannot be pinned in advance; instead the
lock records what each build got, and a change shows up as a diff to commit
(and is printed here, so the build log says which packages moved).

    python scripts/debian-lock.py VERSIONS LOCK
"""

from __future__ import annotations

import sys
from pathlib import Path

HEADER = (
    "# The Debian packages in plimsoll-debian-root (scripts/build-debian-root), one\n"
    "# 'package version' a line. Written by scripts/build-images on every root\n"
    "# build: commit it, so a change of version is a reviewed diff.\n"
)


def read_versions(text: str) -> dict[str, str]:
    versions = {}
    for line in text.splitlines():
        if line.strip() and not line.startswith("#"):
            package, version = line.split()
            versions[package] = version
    return versions


def main(versions_path: str, lock_path: str) -> None:
    built = read_versions(Path(versions_path).read_text())
    lock = Path(lock_path)
    locked = read_versions(lock.read_text()) if lock.exists() else {}
    changes = [
        f"   {name}: {locked.get(name, '(none)')} -> {built.get(name, '(none)')}"
        for name in sorted(built.keys() | locked.keys())
        if built.get(name) != locked.get(name)
    ]
    if locked and changes:
        print(f"== {lock_path}: the mirror gave other versions (commit the new lock):")
        print("\n".join(changes))
    lines = "".join(f"{name} {built[name]}\n" for name in sorted(built))
    lock.write_text(HEADER + lines)


if __name__ == "__main__":
    main(*sys.argv[1:])
