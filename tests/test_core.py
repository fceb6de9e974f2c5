"""The pure core: lint_source(path, text, settings) reads and writes no file and gives what a
run over that one file gives."""

import builtins
import os

from conftest import codes
from npulint.config import Settings
from npulint.core import lint_source

BAD = "from npu_bridge.hccl import hccl_ops\nout = hccl_ops.allgather(w)\n"
LEGACY_ONLY = "torchrun pretrain_gpt.py --use-fused-swiglu\n"  # needs --swiglu on the core_r0.8.0 releases only


def test_lint_source_reads_and_writes_no_file():
    lint_source("warm.py", BAD, Settings(root="/nowhere"))  # the rules and their data, loaded once
    accessed = []

    def no_io(*args, **kwargs):
        accessed.append(args)
        raise OSError("no file access in lint_source")

    names = ((builtins, "open"), (os, "open"), (os, "listdir"), (os, "scandir"), (os, "stat"))
    saved = [getattr(mod, name) for mod, name in names]
    for mod, name in names:
        setattr(mod, name, no_io)
    try:
        found = lint_source("/nowhere/pkg/t.py", BAD, Settings(root="/nowhere",
                                                              config_path="/nowhere/pyproject.toml"))
    finally:
        for (mod, name), old in zip(names, saved):
            setattr(mod, name, old)
    assert accessed == []
    assert [(f.path, f.line, f.column, f.code) for f in found] == [("/nowhere/pkg/t.py", 2, 7, "NPU010")]


def test_lint_source_is_what_a_run_reports(lint):
    src = BAD + "y = hccl_ops.allgather(w)  # noqa: NPU010\n"
    assert [(f.line, f.code, f.message) for f in lint_source("t.py", src, Settings(root="."))] == \
        [(f.line, f.code, f.message) for f in lint({"t.py": src})]


def test_lint_source_takes_the_releases_from_the_settings_and_infers_none():
    assert lint_source("run.sh", LEGACY_ONLY, Settings(root=".")) == []
    configured = Settings(root=".", releases={"mindspeed": ("2.1.0_core_r0.8.0",)})
    assert codes(lint_source("run.sh", LEGACY_ONLY, configured)) == ["NPU504"]
    legacy = Settings(root=".", mindspeed_stack="legacy")
    assert codes(lint_source("run.sh", LEGACY_ONLY, legacy)) == ["NPU504"]
