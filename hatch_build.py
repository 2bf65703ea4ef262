"""Compiles the load generator's hot path with Cython when the wheel is built.

The modules in HOT_PATH stay plain Python: their `.pxd` files beside them declare
which classes become extension types and the C types of their fields and of a few
locals, so Cython compiles the very same source into C (bench/generator.py measured
the closed loop's Python at 1.70-1.74 µs a request before and 1.08-1.19 after, with a
fake transport; docs/reference/generator.md has the live figures). Nothing else in
the project is compiled.

hatchling runs `CustomBuildHook` for a wheel and for an editable install. A wheel
gets the compiled modules beside their sources and a platform tag; an editable
install gets them written into the source tree, where the editable .pth finds them.
`python hatch_build.py` does the editable half on its own: `make` runs it when a
hot-path source changed, so an edit never hides behind a stale build.

PLIMSOLL_PURE_PYTHON=1 builds without a compiler: the same code then runs as Python.
"""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

ROOT = Path(__file__).resolve().parent
PACKAGE_ROOT = ROOT / "generator-image"
PACKAGE = PACKAGE_ROOT / "plimsoll_generator"
HOT_PATH = ("client", "open_model", "recorder", "context", "http_mix")
PURE_PYTHON = "PLIMSOLL_PURE_PYTHON"

_HOW_TO_FIX = (
    "the load generator's hot path is compiled with Cython: install a C compiler and "
    "Python's headers (Debian: apt-get install gcc python3-dev; `make` does it), or set "
    f"{PURE_PYTHON}=1 to build without them (the generator then spends more CPU a request)"
)


def compiled_name(module: str) -> str:
    """The file name of `module` compiled for the interpreter running this build."""
    suffix: str = sysconfig.get_config_var("EXT_SUFFIX")
    return module + suffix


def compile_hot_path(build_dir: Path) -> list[Path]:
    """Cython's C and the compiled modules under `build_dir`; the compiled paths."""
    try:
        from Cython.Build import cythonize
        from setuptools import Distribution, Extension
    except ImportError as exc:
        raise RuntimeError(f"{exc}: {_HOW_TO_FIX}") from exc
    if (
        shutil.which(sysconfig.get_config_var("CC").split()[0]) is None
        or not Path(sysconfig.get_paths()["include"], "Python.h").exists()
    ):
        raise RuntimeError(_HOW_TO_FIX)
    extensions = cythonize(  # type: ignore[no-untyped-call]  # Cython ships no annotations
        [
            # -g0: Python's own flags ask for debug info, which made the five modules
            # 5.6 MB, most of the wheel; nobody steps through Cython's C.
            Extension(
                f"plimsoll_generator.{module}",
                [str(PACKAGE / f"{module}.py")],
                extra_compile_args=["-g0"],
            )
            for module in HOT_PATH
        ],
        build_dir=str(build_dir / "c"),
        include_path=[str(PACKAGE_ROOT)],
        compiler_directives={"language_level": 3},
        quiet=True,
    )
    distribution = Distribution({"ext_modules": extensions})
    build_ext: Any = distribution.get_command_obj("build_ext")
    build_ext.build_lib = str(build_dir / "lib")
    build_ext.build_temp = str(build_dir / "temp")
    build_ext.ensure_finalized()
    build_ext.run()
    return [build_dir / "lib" / "plimsoll_generator" / compiled_name(m) for m in HOT_PATH]


def build_in_place() -> None:
    """The compiled modules into the source tree (an editable install's)."""
    for built in compile_hot_path(ROOT / "build" / "hot-path"):
        shutil.copy2(built, PACKAGE / built.name)


def stale_modules(package: Path = PACKAGE) -> list[str]:
    """Hot-path modules whose compiled file in `package` is older than their source or
    declarations (an import would run the old code), or missing while others exist."""
    compiled = [package / compiled_name(m) for m in HOT_PATH]
    if not any(path.exists() for path in compiled):
        return []  # a pure-Python install: nothing can be stale
    stale = []
    for module, built in zip(HOT_PATH, compiled, strict=True):
        sources = [package / f"{module}.py", package / f"{module}.pxd"]
        newest = max(path.stat().st_mtime for path in sources)
        if not built.exists() or built.stat().st_mtime < newest:
            stale.append(module)
    return stale


class CustomBuildHook(BuildHookInterface):  # type: ignore[type-arg]
    """hatchling's hook: compile, then ship the compiled modules (see the module doc)."""

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if os.environ.get(PURE_PYTHON) == "1":
            return
        if version == "editable":
            build_in_place()
        else:
            for built in compile_hot_path(ROOT / "build" / "hot-path"):
                build_data["force_include"][str(built)] = f"plimsoll_generator/{built.name}"
        build_data["pure_python"] = False
        build_data["infer_tag"] = True


if __name__ == "__main__":
    if os.environ.get(PURE_PYTHON) != "1":
        build_in_place()
    sys.exit(0)
