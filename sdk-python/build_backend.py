"""The package's build backend (PEP 517 and 660), standard library only:
``pip install ./sdk-python`` needs nothing from a package index, not even
setuptools. It packs ductor/ into a pure-Python wheel whose metadata
comes from pyproject.toml's [project] table."""

from __future__ import annotations

import base64
import hashlib
import io
import os
import pathlib
import re
import tarfile
import zipfile
from typing import Any, Optional

ROOT = pathlib.Path(__file__).resolve().parent
PACKAGE = "ductor"


def _project() -> dict[str, str]:
    """The [project] table's string fields (the subset of TOML it uses)."""
    text = (ROOT / "pyproject.toml").read_text()
    table = re.search(r"^\[project\]\n(.*?)(?=^\[|\Z)", text, re.S | re.M)
    if table is None:
        raise RuntimeError("pyproject.toml has no [project] table")
    return dict(re.findall(r'^([\w-]+)\s*=\s*"([^"]*)"', table.group(1), re.M))


def _dist(p: dict[str, str]) -> str:
    return f"{re.sub(r'[-_.]+', '_', p['name'])}-{p['version']}"


def _metadata(p: dict[str, str]) -> str:
    lines = ["Metadata-Version: 2.1", f"Name: {p['name']}", f"Version: {p['version']}",
             f"Summary: {p.get('description', '')}", f"Requires-Python: {p.get('requires-python', '')}",
             "Description-Content-Type: text/markdown", "", (ROOT / p.get("readme", "README.md")).read_text()]
    return "\n".join(lines)


def _files() -> list[pathlib.Path]:
    return sorted(f for f in (ROOT / PACKAGE).rglob("*")
                  if f.is_file() and "__pycache__" not in f.parts and f.suffix in (".py", ".typed"))


def _wheel(directory: str, contents: dict[str, bytes]) -> str:
    p = _project()
    dist = _dist(p)
    info = f"{dist}.dist-info"
    contents = dict(contents)
    contents[f"{info}/METADATA"] = _metadata(p).encode()
    contents[f"{info}/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: ductor build_backend\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    record = []
    for name, data in contents.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(data)}")
    record.append(f"{info}/RECORD,,")
    contents[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    name = f"{dist}-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(directory, name), "w", zipfile.ZIP_DEFLATED) as z:
        for path, data in contents.items():
            z.writestr(zipfile.ZipInfo(path, date_time=(2020, 1, 1, 0, 0, 0)), data)
    return name


def get_requires_for_build_wheel(config_settings: Optional[dict[str, Any]] = None) -> list[str]:
    return []


def get_requires_for_build_sdist(config_settings: Optional[dict[str, Any]] = None) -> list[str]:
    return []


def get_requires_for_build_editable(config_settings: Optional[dict[str, Any]] = None) -> list[str]:
    return []


def build_wheel(wheel_directory: str, config_settings: Optional[dict[str, Any]] = None,
                metadata_directory: Optional[str] = None) -> str:
    return _wheel(wheel_directory, {f.relative_to(ROOT).as_posix(): f.read_bytes() for f in _files()})


def build_editable(wheel_directory: str, config_settings: Optional[dict[str, Any]] = None,
                   metadata_directory: Optional[str] = None) -> str:
    return _wheel(wheel_directory, {f"{PACKAGE}_sdk.pth": (str(ROOT) + "\n").encode()})


def build_sdist(sdist_directory: str, config_settings: Optional[dict[str, Any]] = None) -> str:
    p = _project()
    dist = _dist(p)
    files = _files() + [ROOT / n for n in ("pyproject.toml", "build_backend.py", "README.md")]
    name = f"{dist}.tar.gz"
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz") as tar:
        for f in files:
            tar.add(f, arcname=f"{dist}/{f.relative_to(ROOT).as_posix()}")
        info = tarfile.TarInfo(f"{dist}/PKG-INFO")
        data = _metadata(p).encode()
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return name
