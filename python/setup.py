"""Builds the ecekde package's extension with the project's CMake build (pyproject.toml; docs/python.md).

The C++ sources are the repository around this directory, so build from a checkout. Environment:
ECEKDE_TORCH=ON also builds the LibTorch operator into the package (needs LibTorch; default OFF: ecekde.torch
then uses its Python backend), CMAKE_BUILD_PARALLEL_LEVEL sets the build's parallelism.
"""
import os
import re
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

PROJECT = Path(__file__).resolve().parent.parent  # the ecekde CMake project


def project_version():
    text = (PROJECT / "CMakeLists.txt").read_text()
    return re.search(r"project\(ecekde VERSION ([0-9.]+)", text).group(1)


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    """Configures the project with only the Python module on and builds the assembled package
    (ecekde_python_package) straight into the directory setuptools packs."""

    def build_extension(self, ext):
        if not (PROJECT / "src" / "CMakeLists.txt").exists():
            raise RuntimeError(f"the ecekde C++ sources are not at {PROJECT}: build from a repository checkout")
        package_dir = Path(self.get_ext_fullpath(ext.name)).resolve().parent
        build_dir = Path(self.build_temp).resolve() / "cmake"
        build_dir.mkdir(parents=True, exist_ok=True)
        options = [
            f"-DPython_EXECUTABLE={sys.executable}",
            "-DCMAKE_BUILD_TYPE=Release",
            "-DECEKDE_PYTHON=ON",
            f"-DECEKDE_TORCH={os.environ.get('ECEKDE_TORCH', 'OFF')}",
            f"-DECEKDE_PYTHON_PACKAGE_DIR={package_dir}",
        ]
        for off in ("CLI", "TESTS", "BENCHMARKS", "INSTALL", "EXPERIMENTS"):
            options.append(f"-DECEKDE_{off}=OFF")
        try:  # pybind11's CMake files: from the pybind11 Python package (pip's, or Debian's python3-pybind11)
            import pybind11
            options.append(f"-Dpybind11_DIR={pybind11.get_cmake_dir()}")
        except ImportError:
            pass
        subprocess.run(["cmake", "-S", str(PROJECT), "-B", str(build_dir), *options], check=True)
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 1))
        subprocess.run(["cmake", "--build", str(build_dir), "--target", "ecekde_python_package", "-j", jobs],
                       check=True)


setup(version=project_version(), ext_modules=[CMakeExtension("ecekde._ecekde")], cmdclass={"build_ext": CMakeBuild})
