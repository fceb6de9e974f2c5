"""tools/gen_torchair_releases.py: the compile modes (NPU207) and what the backend does with
torch.compile's ``mode`` (NPU208), read from a release's source, here from small trees committed
to a scratch git repository; and, where the mirror is on this machine, that
rules/torchair_releases.json holds what the generator reads from it."""

import importlib.util
import json
import os
import subprocess
import textwrap

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MIRROR = os.environ.get("NPULINT_MIRRORS", "/work/.mirror") + "/Ascend+torchair/repo"


def _gen():
    spec = importlib.util.spec_from_file_location("gen_torchair_releases",
                                                  os.path.join(REPO, "tools", "gen_torchair_releases.py"))
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    return gen


GET_BACKEND = """
import functools
from torchair.configs.npugraphex_config import _process_kwargs_options

def get_npu_backend(*, compiler_config=None, custom_decompositions={}):
    return functools.partial(_npu_backend, compiler_config=compiler_config)
"""
OPTIONS_ONLY = """
def _process_kwargs_options(config, kwargs):
    if "options" in kwargs:
        pass
"""
READS_MODE = """
def _process_kwargs_options(config, kwargs):
    config.mode = kwargs.get("mode", "max-autotune")
"""


def _commit(tmp_path, files):
    repo = tmp_path / "torchair"
    for path, text in files.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(textwrap.dedent(text))
    if not (repo / ".git").exists():
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "x"],
                   check=True)
    return str(repo)


@pytest.mark.parametrize("backend, consumer, effect", [
    ("def _npu_backend(gm, example_inputs, compiler_config=None, decompositions={}):\n    pass\n",
     OPTIONS_ONLY, "raises"),  # no **kwargs: Python raises TypeError on mode=
    ("def _npu_backend(gm, example_inputs, compiler_config=None, **kwargs):\n"
     "    _process_kwargs_options(compiler_config, kwargs)\n", OPTIONS_ONLY, "ignores"),
    ("def _npu_backend(gm, example_inputs, compiler_config=None, **kwargs):\n"
     "    _process_kwargs_options(compiler_config, kwargs)\n", READS_MODE, "reads"),
    ("def _npu_backend(gm, example_inputs, compiler_config=None, mode=None):\n    pass\n", OPTIONS_ONLY, "reads"),
    ("def _npu_backend(gm, example_inputs, compiler_config=None, **kwargs):\n"
     "    run(**kwargs)\n", OPTIONS_ONLY, "unknown"),  # handed on whole: not followed
    ("def _npu_backend(gm, example_inputs, compiler_config=None, **kwargs):\n"
     "    elsewhere(compiler_config, kwargs)\n", OPTIONS_ONLY, "unknown"),  # a function it cannot read
])
def test_mode_kwarg_effect(tmp_path, backend, consumer, effect):
    repo = _commit(tmp_path, {"python/torchair/npu_fx_compiler.py": GET_BACKEND + "\n" + backend,
                              "python/torchair/configs/npugraphex_config.py": consumer})
    got = _gen().mode_kwarg(repo, "HEAD", "abcdef12")
    assert got["effect"] == effect
    assert got["source"].startswith("Ascend/torchair@abcdef12 python/torchair/")


def test_compile_modes_are_read_from_compiler_config(tmp_path):
    repo = _commit(tmp_path, {"python/torchair/configs/compiler_config.py": """
        class _Other:
            def __init__(self):
                self.mode = OptionValue("a", ["a", "b"])


        class CompilerConfig(NpuBaseConfig):
            def __init__(self):
                self.debug = _DebugConfig()
                self.mode = OptionValue("max-autotune", ["max-autotune", "npugraph_ex"])
        """})
    assert _gen().compile_modes(repo, "HEAD", "abcdef12") == {
        "max-autotune": "Ascend/torchair@abcdef12 python/torchair/configs/compiler_config.py:10",
        "npugraph_ex": "Ascend/torchair@abcdef12 python/torchair/configs/compiler_config.py:10"}


@pytest.mark.skipif(not os.path.isdir(MIRROR), reason="no torchair mirror")
def test_the_json_holds_what_the_mirror_says():
    with open(os.path.join(REPO, "rules", "torchair_releases.json"), encoding="utf-8") as fh:
        data = json.load(fh)
    gen = _gen()
    modes, kwarg = {}, {}
    for rel, commit in data["commits"].items():
        for mode, where in gen.compile_modes(MIRROR, commit, commit[:8]).items():
            modes.setdefault(mode, {})[rel] = where
        kwarg[rel] = gen.mode_kwarg(MIRROR, commit, commit[:8])
    assert modes == data["modes"] and kwarg == data["mode_kwarg"]
