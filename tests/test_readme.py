"""The README's Python API example runs and prints what its comment says."""

from __future__ import annotations

import contextlib
import io
import os
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_python_api_example_runs(tmp_path: Path) -> None:
    text = (ROOT / "README.md").read_text()
    code = re.search(r"```python\n(.*?)```", text, flags=re.DOTALL).group(1)
    expected = re.search(r"print\(plan\.kpis\.gpus, plan\.status\)\s+# (.+)", code).group(1).strip()
    code = code.replace('"datasets/', f'"{ROOT}/datasets/')
    out = io.StringIO()
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(code, "README.md", "exec"), {})  # noqa: S102 - the README's own example
    finally:
        os.chdir(cwd)
    assert out.getvalue().splitlines()[0] == expected
    assert (tmp_path / "dr-hall.plan.yaml").exists()
