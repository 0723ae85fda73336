"""Builds the ettools wheel through the project's CMake tree: configures a
Release build (or reuses the one ETTOOLS_CMAKE_BUILD_DIR names), builds the
`ettools` target, and packages build/python/ettools (the compiled _ettools
module beside its Python files). pyproject.toml says what pip needs;
docs/python.md how to run it."""
import os
import pathlib
import shutil
import subprocess
import sys

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

ROOT = pathlib.Path(__file__).resolve().parent


class BuildWithCMake(build_py):
    """build_py that first builds the module with CMake and copies it in."""

    def run(self):
        build = pathlib.Path(os.environ.get(
            "ETTOOLS_CMAKE_BUILD_DIR", ROOT / "build-pip" / "cmake")).resolve()
        if not (build / "CMakeCache.txt").exists():
            subprocess.check_call([
                "cmake", "-S", str(ROOT), "-B", str(build),
                "-DCMAKE_BUILD_TYPE=Release", "-DET_BUILD_TESTS=OFF",
                "-DPython_EXECUTABLE=" + sys.executable])
        jobs = os.environ.get("ETTOOLS_BUILD_JOBS", str(os.cpu_count() or 1))
        subprocess.check_call(["cmake", "--build", str(build), "--target",
                               "ettools", "-j", jobs])
        built = build / "python" / "ettools"
        if not any(built.glob("_ettools*.so")):
            raise RuntimeError("%s: no _ettools module built (pybind11-dev "
                               "and python3-dev installed?)" % built)
        target = pathlib.Path(self.build_lib) / "ettools"
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(built, target,
                        ignore=shutil.ignore_patterns("__pycache__"))


class CompiledDistribution(Distribution):
    """A wheel for this platform and Python: the package holds a compiled
    module that setuptools does not build itself."""

    def has_ext_modules(self):
        return True


# setuptools' own files go to build-pip/, not to build/ (the CMake tree
# `make build` uses) nor beside the sources.
(ROOT / "build-pip").mkdir(exist_ok=True)
setup(packages=["ettools"], package_dir={"ettools": "python/ettools"},
      cmdclass={"build_py": BuildWithCMake}, distclass=CompiledDistribution,
      options={"build": {"build_base": "build-pip/setuptools"},
               "egg_info": {"egg_base": "build-pip"}},
      zip_safe=False)
