"""The Python examples of docs/python.md run as written (in order, in one namespace, in a scratch directory
where examples/ is the repository's)."""
import os
import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "python.md"


def test_the_examples_in_docs_python_md_run(tmp_path, monkeypatch, capsys):
    blocks = re.findall(r"^```python\n(.*?)^```", DOC.read_text(), flags=re.M | re.S)
    assert len(blocks) >= 10
    (tmp_path / "examples").symlink_to(os.environ["ECEKDE_EXAMPLES_DIR"])
    monkeypatch.chdir(tmp_path)
    namespace = {}
    for i, block in enumerate(blocks):
        exec(compile(block, f"docs/python.md block {i}", "exec"), namespace)
    out = capsys.readouterr().out
    assert "Result(estimator='crossfit', type='canonical'" in out
    assert (tmp_path / "reliability.png").stat().st_size > 10_000
    assert (tmp_path / "simplex.png").stat().st_size > 10_000


def test_docs_options_md_is_what_ecekde_options_prints():
    """docs/options.md is generated from the library's option tables; regenerate it with
    `build/cli/ecekde options > docs/options.md` after changing an option."""
    import subprocess
    printed = subprocess.run([os.environ["ECEKDE_CLI"], "options"], check=True, capture_output=True, text=True).stdout
    assert (DOC.parent / "options.md").read_text() == printed, "docs/options.md is stale"
