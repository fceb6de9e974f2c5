"""Values and bindings npulint cannot be sure of (a report-only probe of Python's binding
constructs, /tmp/probe-s20bind): each repro is silent, and a twin that differs only where the
value becomes certain is still reported."""

import textwrap

import pytest

d = textwrap.dedent

AGMM = "import torch_npu\n"


def _codes(found):
    return [(f.code, f.line) for f in found]


# -- a class body's binding read through an instance, or through the class -----------------

FIELD_CLASSES = {
    # the generated __init__ stores each field's argument on the instance
    "dataclass": "from dataclasses import dataclass\n\n@dataclass\nclass Par:\n",
    "attrs": "import attrs\n\n@attrs.define\nclass Par:\n",
    "namedtuple": "from typing import NamedTuple\n\nclass Par(NamedTuple):\n",
    "pydantic": "from pydantic import BaseModel\n\nclass Par(BaseModel):\n",
    "metaclass": "from mylib import Meta\n\nclass Par(metaclass=Meta):\n",
    "library base": "from mylib import Config\n\nclass Par(Config):\n",
    "through a base of the file": "from dataclasses import dataclass\n\n@dataclass\nclass Base:\n    pass\n\n"
                                  "class Par(Base):\n",
}


@pytest.mark.parametrize("head", list(FIELD_CLASSES.values()), ids=list(FIELD_CLASSES))
def test_a_field_read_through_the_instance_is_unknown(lint, head):
    src = AGMM + head + ("    world_size: int = 1\n\n"
                         "    def run(self, x, w, hcom):\n"
                         "        return torch_npu.npu_all_gather_base_mm(x, w, hcom, self.world_size)\n\n"
                         "p = Par(world_size=8)\n")
    assert lint({"t.py": src}, select=["NPU401"]) == []


def test_a_plain_class_attribute_read_through_the_instance_is_still_known(lint):
    # no base, and under `object`, a base of the file, and torch.nn.Module
    for bases in ("", "(object)", "(Base)", "(torch.nn.Module)", "(nn.Module)"):
        src = AGMM + "import torch\nfrom torch import nn\n\nclass Base:\n    pass\n\n" + d(f"""\
            class Par{bases}:
                world_size = 3

                def run(self, x, w, hcom):
                    return torch_npu.npu_all_gather_base_mm(x, w, hcom, self.world_size)
        """)
        assert _codes(lint({"t.py": src}, select=["NPU401"])) == [("NPU401", 12)], bases


def test_a_class_made_by_type_may_override_any_class_attribute(lint):
    src = AGMM + d("""\
        class Base:
            WORLD = 1

            def run(self, x, w, h):
                return torch_npu.npu_all_gather_base_mm(x, w, h, self.WORLD)

        Sub = type("Sub", (Base,), {"WORLD": 8})
        Sub().run(1, 2, 3)
    """)
    assert lint({"t.py": src}, select=["NPU401"]) == []
    assert _codes(lint({"t.py": src.replace('Sub = type("Sub", (Base,), {"WORLD": 8})', "Sub = Base")},
                       select=["NPU401"])) == [("NPU401", 6)]


@pytest.mark.parametrize("head", [
    "from typing import NamedTuple\n\nclass Par(NamedTuple):\n",  # Par.rs is a field's getter
    "import enum\n\nclass Par(enum.Enum):\n",  # Par.rs is a member
], ids=["namedtuple", "enum"])
def test_a_class_attribute_that_the_base_replaces_is_unknown_through_the_class(lint, head):
    src = AGMM + head + "    world_size = 8\n    rs = 3\n\ntorch_npu.npu_all_gather_base_mm(x, w, h, Par.rs)\n"
    assert lint({"t.py": src}, select=["NPU401"]) == []
    # the plain class: Par.rs is 3
    plain = AGMM + "class Par:\n    world_size = 8\n    rs = 3\n\ntorch_npu.npu_all_gather_base_mm(x, w, h, Par.rs)\n"
    assert _codes(lint({"t.py": plain}, select=["NPU401"])) == [("NPU401", 6)]


def test_a_dataclass_field_read_by_other_rules_is_unknown(lint):
    # NPU306: two instances with their own tags; NPU304 through a field's default
    tags = d("""\
        from dataclasses import dataclass
        import torchair as tng

        @dataclass
        class Streams:
            tag: str = "ev"

            def make(self):
                return tng.ops.npu_create_tagged_event(self.tag)

        a = Streams(tag="ev0").make()
        b = Streams(tag="ev1").make()
    """)
    assert lint({"t.py": tags}, select=["NPU306"]) == []
    # the twin: a plain class attribute is the tag of both instances
    plain = tags.replace("@dataclass\n", "").replace("tag: str = ", "tag = ").replace('(tag="ev0")', "()") \
        .replace('(tag="ev1")', "()")
    assert [f.code for f in lint({"t.py": plain}, select=["NPU306"])] == ["NPU306"]


# -- NPU306: what a call of a class makes, and loops that run a creation at most once --------

EVENTS = d("""\
    class Events:
        def __init__(self):
            self.ev = tng.ops.npu_create_tagged_event(tag="a")
""")

SINGLETONS = {
    # the decorator caches the instance: __init__ runs once
    "decorator": "def singleton(cls):\n    inst = {}\n    def get(*a, **k):\n        if cls not in inst:\n"
                 "            inst[cls] = cls(*a, **k)\n        return inst[cls]\n    return get\n\n@singleton\n" + EVENTS,
    # the metaclass's __call__ caches it
    "metaclass": "class Singleton(type):\n    _inst = {}\n    def __call__(cls, *a, **k):\n"
                 "        if cls not in cls._inst:\n            cls._inst[cls] = super().__call__(*a, **k)\n"
                 "        return cls._inst[cls]\n\n" + EVENTS.replace("class Events:", "class Events(metaclass=Singleton):"),
    # ... and is inherited by a subclass
    "inherited metaclass": "from mylib import Singleton\n\nclass Base(metaclass=Singleton):\n    pass\n\n"
                           + EVENTS.replace("class Events:", "class Events(Base):"),
    # the name is a function returning the one instance where it is called
    "name rebound": EVENTS + "\n_inst = Events()\n\ndef Events():\n    return _inst\n",
}


@pytest.mark.parametrize("src", list(SINGLETONS.values()), ids=list(SINGLETONS))
def test_a_class_whose_call_may_not_make_an_instance_is_not_counted(lint, src):
    src = "import torchair as tng\n" + src + "\ne1 = Events()\ne2 = Events()\n"
    assert lint({"t.py": src}, select=["NPU306"]) == []


def test_a_plain_class_instantiated_twice_is_still_reported(lint):
    src = "import torchair as tng\n" + EVENTS + "\ne1 = Events()\ne2 = Events()\n"
    assert [f.code for f in lint({"t.py": src}, select=["NPU306"])] == ["NPU306"]


LEAVING = {
    "break": "for i in range(4):\n    ev = CREATE\n    break\n",
    "while True ... break": "while True:\n    ev = CREATE\n    break\n",
    "raise": "for i in range(4):\n    ev = CREATE\n    raise SystemExit\n",
    "sys.exit": "import sys\nfor i in range(4):\n    ev = CREATE\n    sys.exit(0)\n",
    "return": "def f():\n    for i in range(4):\n        return CREATE\n",
    "builtin exit": "for i in range(4):\n    ev = CREATE\n    exit(0)\n",
    "one line": "for i in range(4):\n    ev = CREATE; break\n",
}


@pytest.mark.parametrize("body", list(LEAVING.values()), ids=list(LEAVING))
def test_a_loop_that_leaves_after_the_creation_runs_it_once(lint, body):
    src = "import torchair as tng\n" + body.replace("CREATE", 'tng.ops.npu_create_tagged_event(tag="a")')
    assert lint({"t.py": src}, select=["NPU306"]) == []


@pytest.mark.parametrize("body", [
    "for i in range(4):\n    ev = CREATE\n    if i:\n        continue\n    break\n",  # a continue before the break
    "for j in range(2):\n    for i in range(4):\n        ev = CREATE\n        break\n",  # the break leaves the inner loop
    "for i in range(4):\n    ev = CREATE\n",
    "for i in range(4):\n    ev = CREATE\n    print(0)\n",  # a call that does not exit
    "def exit(code):\n    pass\n\nfor i in range(4):\n    ev = CREATE\n    exit(0)\n",  # not the builtin
], ids=["continue first", "outer loop", "no exit", "a call", "a function named exit"])
def test_a_loop_that_may_go_on_after_the_creation_is_still_reported(lint, body):
    src = "import torchair as tng\n" + body.replace("CREATE", 'tng.ops.npu_create_tagged_event(tag="a")')
    assert [f.code for f in lint({"t.py": src}, select=["NPU306"])] == ["NPU306"]


# -- NPU301: an event read by no name (reflection, the instance or namespace passed on) ------

CLASS_WAIT = d("""\
    import torchair as tng
    from mylib import helper

    class M:
        def __init__(self):
            self.ev_0 = tng.ops.npu_create_tagged_event(tag="a")

        def p(self, i):
            USE

        def c(self):
            tng.ops.npu_tagged_event_wait(self.ev_0)
""")


@pytest.mark.parametrize("use", [
    'tng.ops.npu_tagged_event_record(getattr(self, f"ev_{i}"))',
    "for e in vars(self).values(): tng.ops.npu_tagged_event_record(e)",
    'tng.ops.npu_tagged_event_record(self.__dict__["ev_0"])',
    'tng.ops.npu_tagged_event_record(self.__getattribute__("ev_0"))',
    "helper(self)",  # another module's function may record obj.ev_0
])
def test_an_instance_read_by_no_name_may_record_its_events(lint, use):
    assert lint({"t.py": CLASS_WAIT.replace("USE", use)}, select=["NPU301"]) == []


@pytest.mark.parametrize("use", [
    "isinstance(self, M)", "print(self)", "super().__init__()", "pass",
])
def test_an_instance_only_read_by_builtins_keeps_its_events_known(lint, use):
    found = lint({"t.py": CLASS_WAIT.replace("USE", use)}, select=["NPU301"])
    assert [(f.code, f.line) for f in found] == [("NPU301", 12)]


def test_an_instance_passed_to_a_function_of_the_file_is_judged_by_that_function(lint):
    src = CLASS_WAIT.replace("USE", "show(self)") + "\n\ndef show(m):\n    print(m)\n"
    assert [f.code for f in lint({"t.py": src}, select=["NPU301"])] == ["NPU301"]
    src = CLASS_WAIT.replace("USE", "rec(self)") + "\n\ndef rec(m):\n    tng.ops.npu_tagged_event_record(m.ev_0)\n"
    assert lint({"t.py": src}, select=["NPU301"]) == []


@pytest.mark.parametrize("use", [
    'tng.ops.npu_tagged_event_record(globals()["EV"])',
    "tng.ops.npu_tagged_event_record(sys.modules[__name__].EV)",
])
def test_a_module_event_read_through_the_namespace_may_be_recorded(lint, use):
    src = d(f"""\
        import sys
        import torchair as tng

        EV = tng.ops.npu_create_tagged_event(tag="a")

        def p():
            {use}

        def c():
            tng.ops.npu_tagged_event_wait(EV)
    """)
    assert lint({"t.py": src}, select=["NPU301"]) == []
    assert [f.code for f in lint({"t.py": src.replace(use, "pass")}, select=["NPU301"])] == ["NPU301"]


def test_a_local_event_read_through_locals_may_be_recorded(lint):
    src = d("""\
        import torchair as tng

        def f():
            ev = tng.ops.npu_create_tagged_event(tag="a")
            tng.ops.npu_tagged_event_record(locals()["ev"])
            tng.ops.npu_tagged_event_wait(ev)
    """)
    assert lint({"t.py": src}, select=["NPU301"]) == []
    twin = src.replace('    tng.ops.npu_tagged_event_record(locals()["ev"])\n', "")
    assert [f.code for f in lint({"t.py": twin}, select=["NPU301"])] == ["NPU301"]


# -- a walrus in an operand that may not be evaluated ---------------------------------------

@pytest.mark.parametrize("stmt", [
    "if flag and (WS := 3):\n    pass\n",
    "if flag or (WS := 3):\n    pass\n",
    "y = (WS := 3) if flag else 0\n",
    "y = 0 if flag else (WS := 3)\n",
    "assert (WS := 3)\n",  # python -O drops it
])
def test_a_walrus_that_may_not_run_leaves_the_value_unknown(lint, stmt):
    src = AGMM + "import os\nWS = 8\nflag = os.environ.get('F')\n" + stmt + \
        "torch_npu.npu_all_gather_base_mm(x, w, h, WS)\n"
    assert lint({"t.py": src}, select=["NPU401"]) == []


@pytest.mark.parametrize("stmt", [
    "if (WS := 3) and flag:\n    pass\n",  # the left operand always runs
    "y = 1 if (WS := 3) else 0\n",  # so does the test
])
def test_a_walrus_that_always_runs_still_binds_for_certain(lint, stmt):
    src = AGMM + "import os\nWS = 8\nflag = os.environ.get('F')\n" + stmt + \
        "torch_npu.npu_all_gather_base_mm(x, w, h, WS)\n"
    assert [f.code for f in lint({"t.py": src}, select=["NPU401"])] == ["NPU401"]


def test_a_nonlocal_declared_before_the_outer_binding_rebinds_the_outer_name(lint):
    src = AGMM + d("""\
        def outer(x, w, h):
            def set_ws():
                nonlocal ws
                ws = 8
            ws = 3
            set_ws()
            torch_npu.npu_all_gather_base_mm(x, w, h, ws)
    """)
    assert lint({"t.py": src}, select=["NPU401"]) == []
    # the twin: the nested function rebinds another name
    twin = src.replace("nonlocal ws\n        ws = 8", "nonlocal other\n        other = 8").replace(
        "    ws = 3\n", "    ws = 3\n    other = 1\n")
    assert [f.code for f in lint({"t.py": twin}, select=["NPU401"])] == ["NPU401"]


@pytest.mark.parametrize("rebind", [
    'globals()["hccl_ops"] = myops',
    "globals().update(hccl_ops=myops)",
    'exec("from myops import hccl_ops")',
])
def test_an_import_rebound_through_the_namespace_is_not_the_api(lint, rebind):
    src = "from npu_bridge.hccl import hccl_ops\nimport myops\n" + rebind + "\nout = hccl_ops.allgather(w)\n"
    assert lint({"t.py": src}, select=["NPU010"]) == []


def test_an_import_beside_another_name_set_through_the_namespace_is_still_the_api(lint):
    src = 'from npu_bridge.hccl import hccl_ops\nglobals()["other"] = 1\nout = hccl_ops.allgather(w)\n'
    assert [f.code for f in lint({"t.py": src}, select=["NPU010"])] == ["NPU010"]


def test_a_nonlocal_rebinds_the_nearest_function_that_binds_the_name_anywhere(lint):
    # b binds ws after c's def: c's nonlocal is b's ws, not a's (which was bound first)
    src = AGMM + d("""\
        def a(x, w, h):
            ws = 1
            def b():
                def c():
                    nonlocal ws
                    ws = 8
                ws = 3
                c()
                return torch_npu.npu_all_gather_base_mm(x, w, h, ws)
            return b()
    """)
    assert lint({"t.py": src}, select=["NPU401"]) == []
    # b binds nothing: the nonlocal goes on to a, which binds ws after b's def
    src = AGMM + d("""\
        def a(x, w, h):
            def b():
                def c():
                    nonlocal ws
                    ws = 8
                c()
            ws = 3
            b()
            return torch_npu.npu_all_gather_base_mm(x, w, h, ws)
    """)
    assert lint({"t.py": src}, select=["NPU401"]) == []


@pytest.mark.parametrize("other", [
    "def build(lr=1):\n    cfg = locals()\n    print(cfg)\n",  # a function's own namespace
    "def build(lr=1):\n    return vars()\n",
    "class C:\n    x = locals()\n",
])
def test_a_function_s_or_class_s_namespace_does_not_rebind_the_module_s_import(lint, other):
    src = "from npu_bridge.hccl import hccl_ops\n" + other + "out = hccl_ops.allgather(w)\n"
    assert [f.code for f in lint({"t.py": src}, select=["NPU010"])] == ["NPU010"]


@pytest.mark.parametrize("head", [
    "def register(cls):\n    REG[cls.__name__] = cls\n    return cls\n\nREG = {}\n\n@register\n",
    "import dataclasses\n\n@dataclasses.dataclass(eq=False)\n",
    "import abc\n\n",  # with metaclass=abc.ABCMeta below
], ids=["a decorator of the file returning the class", "dataclass", "ABCMeta"])
def test_a_class_whose_call_certainly_makes_an_instance_is_counted(lint, head):
    cls = EVENTS.replace("class Events:", "class Events(metaclass=abc.ABCMeta):") if "abc" in head else EVENTS
    src = "import torchair as tng\n" + head + cls + "\ne1 = Events()\ne2 = Events()\n"
    assert [f.code for f in lint({"t.py": src}, select=["NPU306"])] == ["NPU306"]


def test_a_decorated_base_leaves_its_subclass_counted(lint):
    # a decorator (here another module's registry) is not inherited; a metaclass is
    src = "import torchair as tng\nfrom mmengine.registry import MODELS\n\n@MODELS.register_module()\n" \
          "class Base:\n    pass\n\n" + EVENTS.replace("class Events:", "class Events(Base):") + \
          "\ne1 = Events()\ne2 = Events()\n"
    assert [f.code for f in lint({"t.py": src}, select=["NPU306"])] == ["NPU306"]


def test_npu303_does_not_take_a_call_of_a_class_that_may_not_make_an_instance_for_one(lint):
    src = d("""\
        import torch
        import torchair as tng
        from mmengine.registry import MODELS

        @MODELS.register_module()
        class M(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.ev = tng.ops.npu_create_tagged_event(tag='m')

            def forward(self, x):
                tng.ops.npu_tagged_event_record(self.ev)
                return x

        cfg = tng.CompilerConfig()
        a = torch.compile(M(), backend=tng.get_npu_backend(compiler_config=cfg))
    """)
    assert lint({"t.py": src}, select=["NPU303"]) == []
    # a decorator of the file that returns the class: M() is an M
    twin = src.replace("from mmengine.registry import MODELS", "def register(cls):\n    return cls").replace(
        "@MODELS.register_module()", "@register")
    assert [f.code for f in lint({"t.py": twin}, select=["NPU303"])] == ["NPU303"]


@pytest.mark.parametrize("use", ["torch.nn.Module.__init__(self)", "nn.Module.__init__(self)"])
def test_an_instance_passed_to_a_plain_base_s_init_keeps_its_events_known(lint, use):
    src = "import torch\nfrom torch import nn\n" + CLASS_WAIT.replace("USE", use)
    assert [f.code for f in lint({"t.py": src}, select=["NPU301"])] == ["NPU301"]


def test_a_membership_test_of_sys_modules_reads_no_module_event(lint):
    src = d("""\
        import sys
        import torchair as tng

        EV = tng.ops.npu_create_tagged_event(tag="a")
        HAS_APEX = "apex" in sys.modules

        def c():
            tng.ops.npu_tagged_event_wait(EV)
    """)
    assert [f.code for f in lint({"t.py": src}, select=["NPU301"])] == ["NPU301"]


def test_a_literal_with_an_invalid_escape_is_read_under_warnings_as_errors(lint):
    import warnings

    src = "import torchair\nconfig = torchair.CompilerConfig()\nconfig.mode = 'reduce_\\overhead'\n"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # as under python -W error: the escape's warning must not lose the value
        assert [f.code for f in lint({"t.py": src}, select=["NPU207"])] == ["NPU207"]


# -- f-strings whose every field is known --------------------------------------------------

CFG = "import torchair\nKIND = 'overhead'\nN = 1\nconfig = torchair.CompilerConfig()\n"


def test_an_f_string_of_known_fields_is_its_value(lint):
    found = lint({"t.py": CFG + "config.mode = f'reduce_{KIND}'\n"}, select=["NPU207"])
    assert [(f.code, f.line) for f in found] == [("NPU207", 5)]
    assert "'reduce_overhead' is not a torchair compile mode" in found[0].message
    # the clean twin: the value is a mode
    assert lint({"t.py": CFG + "config.mode = f'reduce-{KIND}'\n"}, select=["NPU207"]) == []
    # text around fields, doubled braces, a concatenation with a plain string
    found = lint({"t.py": CFG + "config.mode = 'red' f'uce_{{{KIND}}}'\n"}, select=["NPU207"])
    assert "'reduce_{overhead}'" in found[0].message


@pytest.mark.parametrize("value", [
    "f'reduce_{KIND!r}'", "f'reduce_{KIND:>9}'", "f'reduce_{KIND=}'",  # conversion, format spec, =
    "f'reduce_{kind}'",  # an unknown name
    "f'reduce\\\\_{KIND}'",  # text with a backslash
    "f'reduce_{[KIND]}'",  # a list's text
])
def test_an_f_string_with_a_field_npulint_does_not_format_is_unknown(lint, value):
    assert lint({"t.py": CFG + f"config.mode = {value}\n"}, select=["NPU207"]) == []
