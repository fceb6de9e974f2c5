"""Shapes the rules had missed on real code (item 6 of the resolution issue), each with its
clean twins and unknown cases: a view of an aclgraph output is the output (NPU205,
rules/torchair_config.py); ``obj.forward = torch.compile(obj.forward, ...)`` and torchair's
``cache_compile`` are compiles (rules/torchair_config.py publishes them for NPU303/NPU308 in
rules/torchair_streams.py); launch commands built from parts, ``shlex.split`` and
``os.execl*`` (rules/mindspeed.py)."""

import textwrap

import pytest
from conftest import codes

LEGACY = '[tool.npulint.releases]\nmindspeed = ["2.0.0_core_r0.8.0", "2.1.0_core_r0.8.0"]\n'


def d(src):
    return textwrap.dedent(src).lstrip("\n")


def of(found, code):
    return [(f.code, f.line) for f in found if f.code == code]


# -- NPU205: ``y.detach()`` is the output itself (it shares its storage) ----------------------

RO = d("""
    import torch
    import torchair
    config = torchair.CompilerConfig()
    config.mode = "reduce-overhead"
    opt_model = torch.compile(model, backend=torchair.get_npu_backend(compiler_config=config))
    outs = []
    for x in batches:
        out = opt_model(x)
        outs.append(KEEP)
""")


def test_npu205_detach_is_not_a_copy(lint):
    assert of(lint(RO.replace("KEEP", "out.detach()"), select=["NPU2"]), "NPU205") == [("NPU205", 9)]


@pytest.mark.parametrize("keep", ["out.view(-1)", "out[0].detach()", "out.detach().reshape(2, -1).t()",
                                  "out.to()", "out.to(non_blocking=True)", "out.requires_grad_(False)",
                                  "out.split(2)", "opt_model(x).contiguous()"])
def test_npu205_views_are_the_output(lint, keep):
    assert of(lint(RO.replace("KEEP", keep), select=["NPU2"]), "NPU205") == [("NPU205", 9)]


def test_npu205_view_through_a_name(lint):
    src = RO.replace("    outs.append(KEEP)", "    y = out.detach()\n    outs.append(y)")
    assert of(lint(src, select=["NPU2"]), "NPU205") == [("NPU205", 10)]


@pytest.mark.parametrize("keep", ["out.detach().clone()", "out.clone().detach()", "out.detach().cpu()",
                                  "out.detach().sum()",
                                  # unknown: may or may not copy
                                  "out.to(torch.float32)", "out.to(device)", "out.to(dtype=dt)", "out.to(**kw)",
                                  "out.detach().frobnicate()", "postprocess(out.detach())"])
def test_npu205_detach_then_copy_is_clean(lint, keep):
    assert of(lint(RO.replace("KEEP", keep), select=["NPU2"]), "NPU205") == []


# -- compiles npulint does not see yet ---------------------------------------------------------

EVENTS = d("""
    import torch
    import torchair as tng
    from torchair.inference import cache_compile

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.ev = tng.ops.npu_create_tagged_event(tag="e")

        def forward(self, x):
            tng.ops.npu_tagged_event_record(self.ev)
            return x + 1

    config = tng.CompilerConfig()
    model = Model()
""")


def test_npu303_forward_compiled_in_place(lint):
    src = EVENTS + "model.forward = torch.compile(model.forward, backend=tng.get_npu_backend(compiler_config=config))\n"
    assert of(lint(src, select=["NPU3"]), "NPU303") == [("NPU303", 11)]


def test_npu303_cache_compile(lint):
    src = EVENTS + "model.forward = cache_compile(model.forward, config=config)\n"
    assert of(lint(src, select=["NPU3"]), "NPU303") == [("NPU303", 11)]


@pytest.mark.parametrize("compile_line", [
    "model.forward = torch.compile(model.forward, backend=tng.get_npu_backend(compiler_config=config))\n",
    "model.forward = cache_compile(model.forward, config=config)\n",
])
def test_npu303_compiled_in_aclgraph_mode_is_clean(lint, compile_line):
    src = EVENTS.replace("config = tng.CompilerConfig()\n",
                         'config = tng.CompilerConfig()\nconfig.mode = "reduce-overhead"\n') + compile_line
    assert of(lint(src, select=["NPU3"]), "NPU303") == []


def test_npu303_forward_compiled_with_unknown_config_is_silent(lint):
    src = EVENTS + "model.forward = cache_compile(model.forward, config=make_config())\n"
    assert of(lint(src, select=["NPU3"]), "NPU303") == []


def test_npu201_cache_compile_config(lint):
    src = d("""
        import torchair
        from torchair.inference import cache_compile
        config = torchair.CompilerConfig()
        config.mode = "max-autotune"
        config.debug.aclgraph.disable_reinplace_inplaceable_ops_pass = True
        fn = cache_compile(model.forward, config=config)
    """)
    assert of(lint(src, select=["NPU2"]), "NPU201") == [("NPU201", 5)]


@pytest.mark.parametrize("compile_line", [
    # no config: torchair uses CompilerConfig(), max-autotune
    "model.forward = cache_compile(model.forward)\n",
    "model.forward = cache_compile(model.forward, config=None)\n",
    # backend= (forwarded through **kwargs): its compiler_config
    "model.forward = cache_compile(model.forward, backend=tng.get_npu_backend(compiler_config=config))\n",
    # a method the class defines, and the class's own method through the instance
    "model.step = torch.compile(model.step, backend=tng.get_npu_backend(compiler_config=config))\n",
    "fwd = model.forward\ncompiled = torch.compile(fwd, backend=tng.get_npu_backend(compiler_config=config))\n",
    "Model.forward = torch.compile(Model.forward, backend=tng.get_npu_backend(compiler_config=config))\n",
])
def test_npu303_method_compiles(lint, compile_line):
    src = EVENTS.replace("        return x + 1\n", "        return x + 1\n\n    def step(self, x):\n"
                         "        return self(x)\n") + compile_line
    assert of(lint(src, select=["NPU3"]), "NPU303") == [("NPU303", 11)]


def test_npu303_self_forward_compiled_in_a_method(lint):
    src = EVENTS.replace("        return x + 1\n", "        return x + 1\n\n    def compile(self):\n"
                         "        self.forward = torch.compile(self.forward, "
                         "backend=tng.get_npu_backend(compiler_config=config))\n")
    assert of(lint(src, select=["NPU3"]), "NPU303") == [("NPU303", 11)]


@pytest.mark.parametrize("compile_line", [
    # an attribute that is not a method of Model (a sub-module: its own class is compiled)
    "model.encoder = torch.compile(model.encoder, backend=tng.get_npu_backend(compiler_config=config))\n",
    # unknown: a spread may hold config=/backend=; a positional config is a TypeError
    "model.forward = cache_compile(model.forward, **kw)\n",
    "model.forward = cache_compile(model.forward, config)\n",
    "model.forward = cache_compile(model.forward, backend=make_backend())\n",
    # an instance made by a factory function, or a name that may be another object
    "m = make_model()\nm.forward = torch.compile(m.forward, backend=tng.get_npu_backend(compiler_config=config))\n",
    # not torchair's cache_compile
    "model.forward = torch.npu.npugraph_ex.inference.cache_compile(model.forward)\n",
])
def test_npu303_method_compiles_unknown_or_other_class(lint, compile_line):
    assert of(lint(EVENTS + compile_line, select=["NPU3"]), "NPU303") == []


def test_npu308_cache_compile_aclgraph(lint):
    src = EVENTS.replace("tng.ops.npu_tagged_event_record(self.ev)", "tng.scope.npu_wait_tensor(x, x)").replace(
        "config = tng.CompilerConfig()\n", 'config = tng.CompilerConfig()\nconfig.mode = "reduce-overhead"\n')
    src += "model.forward = cache_compile(model.forward, config=config)\n"
    assert of(lint(src, select=["NPU3"]), "NPU308") == [("NPU308", 11)]


CC = d("""
    import torchair
    from torchair.inference import cache_compile
    config = torchair.CompilerConfig()
    config.mode = "reduce-overhead"
""")


def test_npu201_cache_compile_aclgraph_mode_is_clean(lint):
    src = CC + "config.debug.aclgraph.disable_reinplace_inplaceable_ops_pass = True\n" \
               "fn = cache_compile(model.forward, config=config)\n"
    assert of(lint(src, select=["NPU2"]), "NPU201") == []


def test_npu203_two_cache_compiles(lint):
    src = CC + "enc = cache_compile(encoder.forward, config=config)\ndec = cache_compile(decoder.forward, config=config)\n"
    pinned = '[tool.npulint.releases]\ntorchair = "master"\n'  # NPU203 holds from torchair 7.2.0 on
    found = lint(src, select=["NPU2"], config=pinned)
    assert of(found, "NPU203") == [("NPU203", 6)]
    assert "another cache_compile with" in found[0].message
    pool = CC + "config.aclgraph_config.use_custom_pool = pool\n"
    assert of(lint(pool + "enc = cache_compile(e.forward, config=config)\ndec = cache_compile(d.forward, config=config)\n",
                   select=["NPU2"], config=pinned), "NPU203") == []


def test_npu205_cache_compile_output_kept(lint):
    src = CC + "fn = cache_compile(model.forward, config=config)\nouts = []\nfor x in xs:\n    outs.append(fn(x))\n"
    assert of(lint(src, select=["NPU2"]), "NPU205") == [("NPU205", 8)]
    assert of(lint(src.replace("fn(x)", "fn(x).clone()"), select=["NPU2"]), "NPU205") == []


# -- NPU5xx: Python launchers built from parts --------------------------------------------------

CONFLICT = '"--adaptive-memory-optimization", "--swap-attention"'


def test_launch_list_concatenated_from_parts(lint):
    src = d(f"""
        import subprocess
        BASE = ["torchrun", "--nproc_per_node", "8", "pretrain_gpt.py"]
        ARGS = [{CONFLICT}]
        cmd = BASE + ARGS + ["--bf16"]
        subprocess.run(cmd)
    """)
    assert codes(lint(src, select=["NPU5"], config=LEGACY)) == ["NPU501"]


def test_launch_from_shlex_split(lint):
    src = d("""
        import shlex, subprocess
        subprocess.run(shlex.split("torchrun --nproc_per_node 8 pretrain_gpt.py "
                                   "--adaptive-memory-optimization --swap-attention"))
    """)
    assert codes(lint(src, select=["NPU5"], config=LEGACY)) == ["NPU501"]


def test_launch_from_execlp_varargs(lint):
    src = d(f"""
        import os
        os.execlp("torchrun", "torchrun", "pretrain_gpt.py", {CONFLICT})
    """)
    assert codes(lint(src, select=["NPU5"], config=LEGACY)) == ["NPU501"]


@pytest.mark.parametrize("src", [
    # the clean twins: the same launches without the conflict
    'import subprocess\nBASE = ["torchrun", "pretrain_gpt.py"]\nsubprocess.run(BASE + ["--bf16"])\n',
    'import shlex, subprocess\nsubprocess.run(shlex.split("torchrun pretrain_gpt.py --bf16"))\n',
    'import os\nos.execlp("torchrun", "torchrun", "pretrain_gpt.py", "--bf16")\n',
    # unknown parts: silent
    'import subprocess, sys\nsubprocess.run(["torchrun", "pretrain_gpt.py"] + sys.argv[1:])\n',
    'import shlex, subprocess\nsubprocess.run(shlex.split(line))\n',
])
def test_launchers_from_parts_clean_or_unknown(lint, src):
    assert lint(src, select=["NPU5"], config=LEGACY) == []


def test_launch_parts_keep_their_spans(lint):
    src = d(f"""
        import subprocess
        BASE = ["torchrun", "--nproc_per_node", "8", "pretrain_gpt.py"]
        ARGS = ("--adaptive-memory-optimization",)
        subprocess.run(BASE + [*ARGS, "--swap-attention"])
    """)
    found = lint(src, select=["NPU5"], config=LEGACY)
    assert [(f.code, f.line, f.column) for f in found] == [("NPU501", 4, 31)]


def test_shlex_words_at_the_string(lint):
    src = d("""
        import shlex, subprocess
        LINE = "torchrun pretrain_gpt.py --adaptive-memory-optimization --swap-attention"
        cmd = shlex.split(LINE)
        subprocess.run(cmd)
    """)
    found = lint(src, select=["NPU5"], config=LEGACY)
    assert [(f.code, f.line, f.column) for f in found] == [("NPU501", 2, 8)]


def test_execl_positions_and_env(lint):
    src = d(f"""
        import os
        os.execle("/usr/bin/torchrun", "torchrun", "pretrain_gpt.py", {CONFLICT}, os.environ)
    """)
    found = lint(src, select=["NPU5"], config=LEGACY)
    assert [(f.code, f.line, f.column) for f in found] == [("NPU501", 2, 97)]
    # the last argument of execle/execlpe is the environment, not a word
    src = 'import os\nos.execlpe("torchrun", "torchrun", "pretrain_gpt.py", ' + CONFLICT + ')\n'
    assert lint(src, select=["NPU5"], config=LEGACY) == []


REQ = '"--reuse-fp32-param"'  # needs --bf16


@pytest.mark.parametrize("src, expected", [
    (f'import subprocess\nBASE = ["torchrun", "pretrain_gpt.py"]\nsubprocess.run(BASE + [{REQ}])\n', ["NPU504"]),
    (f'import subprocess\nsubprocess.run(["torchrun", "pretrain_gpt.py"] + [{REQ}] + ["--bf16"])\n', []),
    # an unknown part may hold the companion: requirement checks say nothing
    (f'import subprocess\nBASE = ["torchrun", "pretrain_gpt.py"]\nsubprocess.run(BASE + [{REQ}] + extra)\n', []),
    (f'import subprocess\nsubprocess.run(["torchrun", "pretrain_gpt.py", {REQ}] + make_args())\n', []),
    (f'import subprocess\nEXTRA = [{REQ}]\nEXTRA.append(flag)\nsubprocess.run(["torchrun", "pretrain_gpt.py"] + EXTRA)\n',
     []),
    (f'import shlex, subprocess\nsubprocess.run(["torchrun", "pretrain_gpt.py", {REQ}] + shlex.split(opts))\n', []),
    (f'import os\nos.execlp("torchrun", "torchrun", "pretrain_gpt.py", {REQ}, *rest)\n', []),
    (f'import os\nos.execlp("torchrun", "torchrun", "pretrain_gpt.py", {REQ})\n', ["NPU504"]),
    # other splitting than the defaults: not followed
    ('import shlex, subprocess\nsubprocess.run(shlex.split("torchrun pretrain_gpt.py --reuse-fp32-param", '
     'posix=False))\n', []),
    # a string, not a list
    ('import subprocess\nsubprocess.run("torchrun pretrain_gpt.py " + opts, shell=True)\n', []),
])
def test_launch_parts_requirements(lint, src, expected):
    assert codes(lint(src, select=["NPU5"], config=LEGACY)) == expected
