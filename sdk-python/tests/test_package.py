"""The package: standard library only, installable with pip from this
folder, and the guide's quick start is the example files themselves."""

from __future__ import annotations

import ast
import pathlib
import re
import subprocess
import sys
import tempfile
import unittest
import zipfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOC = ROOT.parent / "docs" / "sdk-python.md"


class PackageTest(unittest.TestCase):
    def test_no_dependencies_at_run_or_build_time(self) -> None:
        text = (ROOT / "pyproject.toml").read_text()
        self.assertRegex(text, r"(?m)^dependencies = \[\]$")
        self.assertRegex(text, r"(?m)^requires = \[\]$")
        self.assertNotIn("optional-dependencies", text)

    def test_imports_only_the_standard_library(self) -> None:
        for path in sorted((ROOT / "ductor").glob("*.py")) + [ROOT / "build_backend.py"]:
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0:
                    names = [node.module or ""]
                else:
                    continue
                for name in names:
                    top = name.split(".")[0]
                    self.assertIn(top, sys.stdlib_module_names | {"__future__"}, f"{path.name} imports {name}")

    def test_the_wheel_pip_builds_holds_the_package(self) -> None:
        # pip install ./sdk-python calls build_backend.build_wheel and unpacks
        # its wheel; the quick start's e2e test runs pip itself.
        sys.path.insert(0, str(ROOT))
        try:
            import build_backend
        finally:
            sys.path.remove(str(ROOT))
        with tempfile.TemporaryDirectory() as tmp:
            name = build_backend.build_wheel(tmp)
            self.assertEqual(name, "ductor_sdk-0.1.0-py3-none-any.whl")
            with zipfile.ZipFile(pathlib.Path(tmp) / name) as z:
                names = set(z.namelist())
                self.assertIn("ductor/py.typed", names)
                self.assertIn("ductor/worker.py", names)
                self.assertIn("Requires-Python: >=3.10", z.read("ductor_sdk-0.1.0.dist-info/METADATA").decode())
                z.extractall(tmp)
            res = subprocess.run([sys.executable, "-I", "-c",
                                  f"import sys; sys.path.insert(0, {tmp!r}); import ductor; print(ductor.__file__)"],
                                 capture_output=True, text=True, cwd=tmp)
            self.assertEqual(res.returncode, 0, res.stderr)
            self.assertTrue(res.stdout.startswith(tmp), res.stdout)

    @unittest.skipUnless(DOC.exists(), "docs/sdk-python.md is not beside this folder")
    def test_the_guides_code_is_the_example_files(self) -> None:
        blocks = re.findall(r"<!-- file: (\S+) -->\n```python\n(.*?)```\n", DOC.read_text(), re.S)
        self.assertGreaterEqual(len(blocks), 2)
        for path, code in blocks:
            self.assertEqual(code, (ROOT.parent / path).read_text(), f"the guide's copy of {path} differs from the file")


if __name__ == "__main__":
    unittest.main()
