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
    src = AGMM + d("""\
        class Par:
            world_size = 3

            def run(self, x, w, hcom):
                return torch_npu.npu_all_gather_base_mm(x, w, hcom, self.world_size)
    """)
    assert _codes(lint({"t.py": src}, select=["NPU401"])) == [("NPU401", 6)]
    # also under a base of the file, under `object`, and under torch.nn.Module
    for bases in ("(object)", "(Base)", "(torch.nn.Module)", "(nn.Module)"):
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
