"""A finding carries the file the run read (``Finding.file``), besides the path it displays:
``--fix`` writes, and the reporters quote, that file."""

from __future__ import annotations

import dataclasses
import os

from npulint import pipeline, registry
from npulint.config import Settings

SOURCE = ("import torch\n"
          "import torchair\n"
          "config = torchair.CompilerConfig()\n"
          "backend = torchair.get_npu_backend(compiler_config=config)\n"
          "opt_model = torch.compile(model, backend=backend, mode=\"max-autotune\")\n")
FIXED = SOURCE.replace(', mode="max-autotune"', "")


def _run(path, cwd, monkeypatch):
    monkeypatch.chdir(cwd)
    rules, checkers = registry.load()
    codes = {r.code for r in rules}
    return pipeline.run([(str(path), "python", True)], Settings(root=str(cwd)), checkers, codes)


def test_findings_carry_the_file_they_are_in_besides_the_displayed_path(tmp_path, monkeypatch):
    (tmp_path / "sub").mkdir()
    target = tmp_path / "sub" / "train.py"
    target.write_text(SOURCE)
    inside = _run(target, tmp_path, monkeypatch).findings
    assert [(f.code, f.path, f.file) for f in inside] == [("NPU208", os.path.join("sub", "train.py"), str(target))]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    outside = _run(target, elsewhere, monkeypatch).findings
    assert [(f.path, f.file) for f in outside] == [(str(target), str(target))]
    # ``file`` is not part of a finding's identity (equality, order, the reporters' dedup)
    assert dataclasses.replace(outside[0], path=inside[0].path, file="elsewhere") == inside[0]


def test_fix_writes_the_file_and_full_output_quotes_it(tmp_path, cli_run):
    (tmp_path / "sub").mkdir()
    target = tmp_path / "sub" / "train.py"
    target.write_text(SOURCE)
    shown = cli_run(["--select", "NPU208", "--format", "full", "--no-cache", "sub/train.py"], tmp_path)
    assert 'opt_model = torch.compile(model, backend=backend, mode="max-autotune")' in shown.stdout
    fixed = cli_run(["--select", "NPU208", "--fix", "--no-cache", "sub/train.py"], tmp_path)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert target.read_text() == FIXED
