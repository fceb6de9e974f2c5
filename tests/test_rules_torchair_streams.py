"""NPU301-NPU308: TorchAir in-graph multi-stream (``torchair.scope``, ``torchair.ops``), and NPU010
for their signatures (RULES.md "NPU3xx", NPU010 and the general semantics; docs/002;
research/npu-api-constraints.md §B).

Positions are computed on the dedented source with :func:`at` (1-based line and column of
the first character of a needle), so a source can be edited without renumbering.
"""

import textwrap
from pathlib import Path

import pytest

from conftest import at, codes, pos

SEL = ["NPU010", "NPU3"]
FIXTURES = Path(__file__).resolve().parent / "fixtures"

HEADER = "import torch\nimport torchair as tng\n"


def mk(*bodies, header=HEADER):
    """A module: imports, then each of *bodies* (dedented on its own)."""
    return header + "".join(textwrap.dedent(b) for b in bodies)


def where(found):
    return [(f.path, f.line, f.column, f.code) for f in found]


def says_runtime_and_fix(msg, runtime, fix):
    """The message names what happens at run time and what to do."""
    return any(w in msg for w in runtime) and any(w in msg for w in fix)


# ======================================================================================
# The vendor example (docs/002) lints clean
# ======================================================================================

def test_doc002_multistream_example_is_clean(lint):
    src = (FIXTURES / "doc002_multistream.py").read_text(encoding="utf-8")
    assert codes(lint(src, select=["NPU010", "NPU2", "NPU3"])) == []


def test_doc002_example_split_over_model_and_run_files_is_clean(lint):
    src = (FIXTURES / "doc002_multistream.py").read_text(encoding="utf-8")
    cut = src.index("model = Model()")
    run = "import torch\nimport torchair as tng\nfrom torchair.configs.compiler_config import CompilerConfig\n" \
          "from model import Model\n" + src[cut:]
    assert codes(lint({"model.py": src[:cut], "run.py": run}, select=["NPU010", "NPU2", "NPU3"])) == []


# ======================================================================================
# NPU301 event-wait-without-record
# ======================================================================================

def test_npu301_self_event_never_recorded(lint):
    src = mk("""
        class M(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.ev = tng.ops.npu_create_tagged_event(tag="a")

            def forward(self, x):
                with tng.scope.npu_stream_switch("1"):
                    tng.ops.npu_tagged_event_wait(self.ev)
                    y = x * 2
                return y
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU301"]
    assert pos(found[0]) == at(src, "tng.ops.npu_tagged_event_wait")
    msg = found[0].message
    assert "self.ev" in msg and "never recorded" in msg
    assert says_runtime_and_fix(msg, ("does not synchronise", "no synchronisation", "race"),
                                ("npu_tagged_event_record",))


def test_npu301_clean_twin_recorded_in_another_method(lint):
    src = mk("""
        class M(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.ev = tng.ops.npu_create_tagged_event(tag="a")

            def produce(self, x):
                y = x + 1
                tng.ops.npu_tagged_event_record(self.ev)
                return y

            def forward(self, x):
                y = self.produce(x)
                with tng.scope.npu_stream_switch("1"):
                    tng.ops.npu_tagged_event_wait(self.ev)
                    z = y * 2
                return z
    """)
    assert codes(lint(src, select=SEL)) == []


@pytest.mark.parametrize("header, create, wait", [
    ("from torchair.ops import npu_create_tagged_event, npu_tagged_event_wait\n",
     "npu_create_tagged_event", "npu_tagged_event_wait"),
    ("from torchair.ops import npu_create_tagged_event as mk_ev, npu_tagged_event_wait as wait_ev\n",
     "mk_ev", "wait_ev"),
    ("from torchair import ops\n", "ops.npu_create_tagged_event", "ops.npu_tagged_event_wait"),
    ("import torchair.ops\n", "torchair.ops.npu_create_tagged_event", "torchair.ops.npu_tagged_event_wait"),
])
def test_npu301_import_aliases(lint, header, create, wait):
    src = mk(f"""
        def step(x):
            ev = {create}(tag="a")
            {wait}(ev)
            return x
    """, header="import torch\n" + header)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU301"]
    assert pos(found[0]) == at(src, f"{wait}(ev)")


def test_npu301_local_event_clean_twin(lint):
    src = mk("""
        def step(x):
            ev = tng.ops.npu_create_tagged_event(tag="a")
            tng.ops.npu_tagged_event_record(ev)
            with tng.scope.npu_stream_switch("1"):
                tng.ops.npu_tagged_event_wait(ev)
            return x
    """)
    assert codes(lint(src, select=SEL)) == []


def test_npu301_event_waited_on_by_keyword_is_still_never_recorded(lint):
    # the keyword's name (``event=``) is not a use of a variable of that name: the event
    # does not escape through it (the LibCST engine counted it as one and said nothing)
    src = mk("""
        def step(x):
            event = tng.ops.npu_create_tagged_event(tag="a")
            with tng.scope.npu_stream_switch("1"):
                tng.ops.npu_tagged_event_wait(event=event)
            return x
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU301"] and "'event'" in found[0].message
    assert pos(found[0]) == at(src, "tng.ops.npu_tagged_event_wait")


def test_npu302_a_dict_evaluates_key_value_pairs_in_order(lint):
    # the record (a value) runs before the wait (the next key): nothing to report
    src = mk("""
        def step(x):
            ev = tng.ops.npu_create_tagged_event(tag="a")
            return {"r": tng.ops.npu_tagged_event_record(ev), tng.ops.npu_tagged_event_wait(ev): 1}
    """)
    assert codes(lint(src, select=SEL)) == []
    found = lint(src.replace('{"r": tng.ops.npu_tagged_event_record(ev), tng.ops.npu_tagged_event_wait(ev): 1}',
                             '{tng.ops.npu_tagged_event_wait(ev): tng.ops.npu_tagged_event_record(ev)}'), select=SEL)
    assert codes(found) == ["NPU302"]


def test_npu301_module_level_event_recorded_in_another_function_is_clean(lint):
    src = mk("""
        EV = tng.ops.npu_create_tagged_event(tag="m")

        def consume(x):
            tng.ops.npu_tagged_event_wait(EV)
            return x

        def produce(x):
            tng.ops.npu_tagged_event_record(EV)
            return x
    """)
    assert codes(lint(src, select=SEL)) == []


def test_npu301_module_level_event_never_recorded(lint):
    src = mk("""
        EV = tng.ops.npu_create_tagged_event(tag="m")

        class M(torch.nn.Module):
            def forward(self, x):
                tng.ops.npu_tagged_event_wait(EV)
                return x
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU301"]
    assert pos(found[0]) == at(src, "tng.ops.npu_tagged_event_wait")
    assert "'EV'" in found[0].message


def test_npu301_closure_event_recorded_in_nested_function_is_clean(lint):
    # the event is created at function scope and used through closures
    src = mk("""
        def build():
            ev = tng.ops.npu_create_tagged_event(tag="c")

            def producer(x):
                tng.ops.npu_tagged_event_record(ev)
                return x

            def consumer(x):
                with tng.scope.npu_stream_switch("1"):
                    tng.ops.npu_tagged_event_wait(ev)
                return x

            return producer, consumer
    """)
    assert codes(lint(src, select=SEL)) == []


def test_npu301_closure_recorded_in_nested_function_waited_in_outer_is_clean(lint):
    src = mk("""
        def run(x):
            ev = tng.ops.npu_create_tagged_event(tag="c")

            def producer():
                tng.ops.npu_tagged_event_record(ev)

            producer()
            tng.ops.npu_tagged_event_wait(ev)
            return x
    """)
    assert codes(lint(src, select=SEL)) == []


def test_npu301_closure_never_recorded(lint):
    src = mk("""
        def build():
            ev = tng.ops.npu_create_tagged_event(tag="c")

            def consumer(x):
                tng.ops.npu_tagged_event_wait(ev)
                return x

            return consumer
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU301"]
    assert pos(found[0]) == at(src, "tng.ops.npu_tagged_event_wait")


def test_npu301_same_name_in_another_function_is_another_event(lint):
    src = mk("""
        def f(x):
            ev = tng.ops.npu_create_tagged_event(tag="c")
            tng.ops.npu_tagged_event_record(ev)
            return x

        def g(x):
            ev = tng.ops.npu_create_tagged_event(tag="d")
            tng.ops.npu_tagged_event_wait(ev)
            return x
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU301"]
    assert pos(found[0]) == at(src, "tng.ops.npu_tagged_event_wait")


def test_npu301_same_attribute_in_an_unrelated_class_is_another_event(lint):
    src = mk("""
        from torch import nn

        class A(nn.Module):
            def __init__(self):
                super().__init__()
                self.ev = tng.ops.npu_create_tagged_event(tag="a")

            def forward(self, x):
                tng.ops.npu_tagged_event_wait(self.ev)
                return x

        class B(nn.Module):
            def __init__(self):
                super().__init__()
                self.ev = tng.ops.npu_create_tagged_event(tag="b")

            def forward(self, x):
                tng.ops.npu_tagged_event_record(self.ev)
                return x
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU301"]
    assert pos(found[0]) == at(src, "tng.ops.npu_tagged_event_wait")


def test_npu301_base_class_records_subclass_waits_is_clean(lint):
    src = mk("""
        class Base(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.ev = tng.ops.npu_create_tagged_event(tag="a")

            def produce(self, x):
                tng.ops.npu_tagged_event_record(self.ev)
                return x

        class Sub(Base):
            def forward(self, x):
                tng.ops.npu_tagged_event_wait(self.ev)
                return x
    """)
    assert codes(lint(src, select=SEL)) == []


def test_npu301_subscript_and_parameter_events_are_unknown(lint):
    src = mk("""
        EVENTS = [tng.ops.npu_create_tagged_event(tag=f"e{i}") for i in range(4)]

        class M(torch.nn.Module):
            def __init__(self, n):
                super().__init__()
                self.evs = [tng.ops.npu_create_tagged_event(tag=f"m{i}") for i in range(n)]

            def forward(self, x, i, ev):
                tng.ops.npu_tagged_event_wait(self.evs[i])
                tng.ops.npu_tagged_event_wait(EVENTS[i])
                tng.ops.npu_tagged_event_wait(ev)
                return x

        def step(events, i, ev):
            tng.ops.npu_tagged_event_wait(events[i])
            tng.ops.npu_tagged_event_wait(ev)
    """)
    assert codes(lint(src, select=SEL)) == []


def test_npu301_event_stored_from_a_parameter_or_subscript_is_unknown(lint):
    # the event object comes from outside (a parameter, a subscript): it may be recorded there,
    # e.g. a model creates the events and hands them to its layers, which only wait on them
    src = mk("""
        class Layer(torch.nn.Module):
            def __init__(self, ev, events):
                super().__init__()
                self.ev = ev
                self.first = events[0]

            def forward(self, x):
                tng.ops.npu_tagged_event_wait(self.ev)
                tng.ops.npu_tagged_event_wait(self.first)
                return x

        def step(events, i, ev, x):
            picked = events[i]
            alias = ev
            tng.ops.npu_tagged_event_wait(picked)
            tng.ops.npu_tagged_event_wait(alias)
            return x
    """)
    assert codes(lint(src, select=SEL)) == []


def test_npu301_event_passed_to_another_function_escapes(lint):
    src = mk("""
        def produce(event):
            tng.ops.npu_tagged_event_record(event)

        def step(x):
            ev = tng.ops.npu_create_tagged_event(tag="esc")
            produce(ev)
            tng.ops.npu_tagged_event_wait(ev)
            return x

        class M(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.ev = tng.ops.npu_create_tagged_event(tag="a")
                self.producer = Producer(self.ev)

            def forward(self, x):
                tng.ops.npu_tagged_event_wait(self.ev)
                return x
    """)
    assert codes(lint(src, select=SEL)) == []


def test_npu301_event_copied_to_another_name_escapes(lint):
    src = mk("""
        def step(x):
            ev = tng.ops.npu_create_tagged_event(tag="esc")
            other = ev
            tng.ops.npu_tagged_event_record(other)
            tng.ops.npu_tagged_event_wait(ev)
            return x
    """)
    assert codes(lint(src, select=SEL)) == []


# npu_create_tagged_event returns a torch.npu.Event (research §B.1): its own record(stream=None)
# records it (Ascend/pytorch@9e73e708 torch_npu/npu/streams.py:209-217). RULES.md NPU301 names
# npu_tagged_event_record only; the method is a record all the same. Any other attribute but the
# methods that record nothing makes the event unknown (it may record it).
@pytest.mark.parametrize("record", ["self.e.record()", "self.e.record(torch.npu.current_stream())",
                                    "self.e.record(stream=s)",
                                    "self.e.ipc_handle()", "self.e.custom_record()",
                                    "r = self.e.record\n                r()", "getattr(self.e, 'record')()"])
def test_npu301_the_events_own_record_method_records_it(lint, record):
    src = mk(f"""
        class M(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.e = tng.ops.npu_create_tagged_event(tag="a")

            def forward(self, x, s=None):
                {record}
                tng.ops.npu_tagged_event_wait(self.e)
                return x

        def step(x):
            ev = tng.ops.npu_create_tagged_event(tag="b")
            ev.record()
            tng.ops.npu_tagged_event_wait(ev)
            return x
    """)
    assert codes(lint(src, select=SEL)) == []


@pytest.mark.parametrize("use", ["self.e.query()", "self.e.synchronize()", "self.e.wait()",
                                 "t = self.e.elapsed_time(self.f)", "self.f.record()", "self.rec.record()"])
def test_npu301_a_method_that_records_nothing_or_another_objects_record_twin(lint, use):
    # torch.npu.Event's wait, query, elapsed_time, recorded_time, synchronize record nothing
    # (streams.py:219-258); a record of another attribute is another event's
    src = mk(f"""
        class M(torch.nn.Module):
            def __init__(self, rec):
                super().__init__()
                self.e = tng.ops.npu_create_tagged_event(tag="a")
                self.f = tng.ops.npu_create_tagged_event(tag="f")
                self.rec = rec

            def forward(self, x):
                {use}
                tng.ops.npu_tagged_event_wait(self.e)
                return x
    """)
    found = lint(src, select=["NPU301"])
    assert where(found) == [("t.py",) + at(src, "tng.ops.npu_tagged_event_wait(self.e)") + ("NPU301",)]


def test_npu302_the_events_own_record_after_the_wait(lint):
    src = mk("""
        def step(x):
            ev = tng.ops.npu_create_tagged_event(tag="b")
            tng.ops.npu_tagged_event_wait(ev)
            ev.record()
            return x
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU302"]
    assert f"(line {at(src, 'ev.record()')[0]})" in found[0].message


def test_npu301_class_with_unseen_base_is_silent(lint):
    # the base is neither nn.Module nor in this file: it may record self.ev
    src = mk("""
        from mylib.layers import BaseLayer

        class M(BaseLayer):
            def __init__(self):
                super().__init__()
                self.ev = tng.ops.npu_create_tagged_event(tag="a")

            def forward(self, x):
                tng.ops.npu_tagged_event_wait(self.ev)
                return x
    """)
    assert codes(lint(src, select=SEL)) == []


NESTED_RECORD = """
    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.ev = tng.ops.npu_create_tagged_event(tag="33")
            self.other = tng.ops.npu_create_tagged_event(tag="34")
            self.produce = lambda: tng.ops.npu_tagged_event_record(self.{lam})

        def forward(self, x):
            def branch1(xx):
                tng.ops.npu_tagged_event_record(self.{nested})
                return xx @ xx

            out1 = branch1(x)
            self.produce()
            tng.ops.npu_tagged_event_record(self.other)
            with tng.scope.npu_stream_switch("2"):
                tng.ops.npu_tagged_event_wait(self.ev)
                out2 = x - 1
            return out1 + out2
"""


@pytest.mark.parametrize("nested, lam", [("ev", "other"), ("other", "ev")])
def test_npu301_recorded_in_a_nested_function_or_lambda_of_a_method_is_clean(lint, nested, lam):
    # torchair's own tests record in a function nested in forward (tests/st/torchair_aclgraph_st.py):
    # self is the method's, a closure variable there
    assert codes(lint(mk(NESTED_RECORD.format(nested=nested, lam=lam)), select=SEL)) == []


def test_npu301_nested_functions_that_record_other_events_clean_twin(lint):
    src = mk(NESTED_RECORD.format(nested="other", lam="other"))
    found = lint(src, select=SEL)
    assert where(found) == [("t.py",) + at(src, "tng.ops.npu_tagged_event_wait(self.ev)") + ("NPU301",)]


@pytest.mark.parametrize("produce, attr", [
    ("for m in [self]:\n            tng.ops.npu_tagged_event_record(m.{attr})", "ev"),
    ("Model.rec(self)", "ev"),
    ("tng.ops.npu_tagged_event_record(self.sub.{attr})", "ev"),
    # the same attribute name of something else: still the only record of self.ev is missing
    ("for m in [self]:\n            tng.ops.npu_tagged_event_record(m.{attr})", "other_ev"),
])
def test_npu301_the_attribute_of_an_object_that_may_be_the_instance(lint, produce, attr):
    src = mk("""
        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.ev = tng.ops.npu_create_tagged_event(tag="e")

            @staticmethod
            def rec(m):
                tng.ops.npu_tagged_event_record(m.{attr})

            def forward(self, x):
                {produce}
                tng.ops.npu_tagged_event_wait(self.ev)
                return x
    """).replace("{produce}", produce).replace("{attr}", attr)
    assert codes(lint(src, select=SEL)) == ([] if attr == "ev" else ["NPU301"])


BASE_EVENTS = """
    MOE_EVENT = tng.ops.npu_create_tagged_event(tag="moe_ev")

    def wait_moe():
        tng.ops.npu_tagged_event_wait(MOE_EVENT)

    class BaseAttn(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.ev = tng.ops.npu_create_tagged_event(tag="attn_ev")

        def consume(self, x):
            with tng.scope.npu_stream_switch("1"):
                tng.ops.npu_tagged_event_wait(self.ev)
                return x + 1
"""
IMPL = """
    import torchair as tng
    from pkg.base import BaseAttn, MOE_EVENT, wait_moe

    class Attn(BaseAttn):
        def forward(self, x):
            tng.ops.npu_tagged_event_record(self.{attr})
            return self.consume(x * 2)

    def moe(x):
        tng.ops.npu_tagged_event_record({name})
        wait_moe()
        return x
"""


def test_npu301_an_event_another_module_records_escapes_the_file(lint):
    files = {"pkg/__init__.py": "", "pkg/base.py": mk(BASE_EVENTS),
             "pkg/impl.py": IMPL.format(attr="ev", name="MOE_EVENT")}
    assert codes(lint(files, select=SEL)) == []


def test_npu301_another_module_that_records_other_events_clean_twin(lint):
    base = mk(BASE_EVENTS)
    files = {"pkg/__init__.py": "", "pkg/base.py": base, "pkg/impl.py": IMPL.format(attr="other", name="OTHER")}
    found = lint(files, select=SEL)
    assert where(found) == [("pkg/base.py",) + at(base, "tng.ops.npu_tagged_event_wait(MOE") + ("NPU301",),
                            ("pkg/base.py",) + at(base, "tng.ops.npu_tagged_event_wait(self") + ("NPU301",)]


def test_npu301_same_named_wrappers_are_not_torchair(lint):
    src = mk("""
        from mylib.events import npu_create_tagged_event, npu_tagged_event_wait

        def step(x):
            ev = npu_create_tagged_event(tag="a")
            npu_tagged_event_wait(ev)
            return x
    """)
    assert codes(lint(src, select=SEL)) == []


# ======================================================================================
# NPU302 event-wait-before-record
# ======================================================================================

def test_npu302_wait_before_the_only_record(lint):
    src = mk("""
        def step(x):
            ev = tng.ops.npu_create_tagged_event(tag="b")
            with tng.scope.npu_stream_switch("1"):
                tng.ops.npu_tagged_event_wait(ev)
                y = x + 1
            tng.ops.npu_tagged_event_record(ev)
            return y
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU302"]
    assert pos(found[0]) == at(src, "tng.ops.npu_tagged_event_wait")
    msg = found[0].message
    assert f"line {at(src, 'tng.ops.npu_tagged_event_record')[0]}" in msg
    assert says_runtime_and_fix(msg, ("synchronises nothing", "not yet recorded"), ("record before",))


def test_npu302_clean_twin_record_first(lint):
    src = mk("""
        def step(x):
            ev = tng.ops.npu_create_tagged_event(tag="b")
            tng.ops.npu_tagged_event_record(ev)
            with tng.scope.npu_stream_switch("1"):
                tng.ops.npu_tagged_event_wait(ev)
                y = x + 1
            return y
    """)
    assert codes(lint(src, select=SEL)) == []


def test_npu302_self_event_in_one_method(lint):
    src = mk("""
        from torchair.ops import npu_create_tagged_event as mk_ev
        from torchair.ops import npu_tagged_event_record as rec, npu_tagged_event_wait as wait

        class M(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.ev = mk_ev("b")

            def forward(self, x):
                wait(self.ev)
                y = x + 1
                rec(self.ev)
                return y
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU302"]
    assert pos(found[0]) == at(src, "wait(self.ev)")


def test_npu302_another_function_also_records_is_silent(lint):
    src = mk("""
        class M(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.ev = tng.ops.npu_create_tagged_event(tag="b")

            def prepare(self, x):
                tng.ops.npu_tagged_event_record(self.ev)
                return x

            def forward(self, x):
                tng.ops.npu_tagged_event_wait(self.ev)
                y = x + 1
                tng.ops.npu_tagged_event_record(self.ev)
                return y
    """)
    assert codes(lint(src, select=SEL)) == []


def test_npu302_for_loop_enclosing_wait_and_record_is_silent(lint):
    # from the second iteration on, the wait follows the previous iteration's record
    src = mk("""
        def run(xs):
            ev = tng.ops.npu_create_tagged_event(tag="b")
            out = []
            for x in xs:
                tng.ops.npu_tagged_event_wait(ev)
                out.append(x + 1)
                tng.ops.npu_tagged_event_record(ev)
            return out
    """)
    assert codes(lint(src, select=SEL)) == []


def test_npu302_while_loop_enclosing_wait_and_record_is_silent(lint):
    src = mk("""
        class M(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.ev = tng.ops.npu_create_tagged_event(tag="b")

            def forward(self, x, n):
                i = 0
                while i < n:
                    tng.ops.npu_tagged_event_wait(self.ev)
                    x = x + 1
                    tng.ops.npu_tagged_event_record(self.ev)
                    i += 1
                return x
    """)
    assert codes(lint(src, select=SEL)) == []


def test_npu302_loop_around_the_wait_only_still_reported(lint):
    src = mk("""
        def run(xs):
            ev = tng.ops.npu_create_tagged_event(tag="b")
            for x in xs:
                tng.ops.npu_tagged_event_wait(ev)
            tng.ops.npu_tagged_event_record(ev)
            return xs
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU302"]
    assert pos(found[0]) == at(src, "tng.ops.npu_tagged_event_wait")


# ======================================================================================
# NPU303 tagged-event-outside-aclgraph
# ======================================================================================

EVENT_MODEL = """
    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.ev = tng.ops.npu_create_tagged_event(tag="e")

        def forward(self, x):
            y = x + 1
            tng.ops.npu_tagged_event_record(self.ev)
            with tng.scope.npu_stream_switch("1"):
                tng.ops.npu_tagged_event_wait(self.ev)
                z = y * 2
            tng.ops.npu_record_tagged_stream(y, "1")
            return z
"""


def test_npu303_default_mode_is_max_autotune(lint):
    src = mk(EVENT_MODEL, """
        config = tng.CompilerConfig()
        backend = tng.get_npu_backend(compiler_config=config)
        model = torch.compile(Model(), backend=backend)
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU303"] * 3
    assert [pos(f) for f in found] == [at(src, "tng.ops.npu_tagged_event_record"),
                                       at(src, "tng.ops.npu_tagged_event_wait"),
                                       at(src, "tng.ops.npu_record_tagged_stream")]
    msg = found[0].message
    assert "max-autotune" in msg and f"line {at(src, 'model = torch.compile')[0]}" in msg
    assert says_runtime_and_fix(msg, ("NotImplementedError",), ("reduce-overhead",))


def test_npu303_explicit_mode_through_constant_and_config_import(lint):
    src = mk(EVENT_MODEL, """
        MODE = "max-autotune"
        config = CompilerConfig()
        config.mode = MODE
        model = Model()
        model = torch.compile(model, backend=tng.get_npu_backend(compiler_config=config))
    """, header=HEADER + "from torchair.configs.compiler_config import CompilerConfig\n")
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU303"] * 3


def test_npu303_from_imports(lint):
    src = mk("""
        from torchair.ops import npu_create_tagged_event, npu_tagged_event_record, npu_record_tagged_stream
        from torchair.scope import npu_stream_switch as s

        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.ev = npu_create_tagged_event("e")

            def forward(self, x):
                npu_tagged_event_record(self.ev)
                with s("1"):
                    y = x + 1
                npu_record_tagged_stream(y, "1")
                return y

        model = torch.compile(Model(), backend=tng.get_npu_backend())
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU303"] * 2
    assert [pos(f) for f in found] == [at(src, "npu_tagged_event_record(self"), at(src, "npu_record_tagged_stream(y")]


@pytest.mark.parametrize("mode", ["reduce-overhead", "npugraph_ex"])
def test_npu303_clean_twin_aclgraph_modes(lint, mode):
    src = mk(EVENT_MODEL, f"""
        config = tng.CompilerConfig()
        config.mode = "{mode}"
        model = torch.compile(Model(), backend=tng.get_npu_backend(compiler_config=config))
    """)
    assert codes(lint(src, select=SEL)) == []


def test_npu303_creating_events_is_fine_in_max_autotune(lint):
    src = mk("""
        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.ev = tng.ops.npu_create_tagged_event(tag="e")

            def forward(self, x):
                return x

        model = torch.compile(Model(), backend=tng.get_npu_backend(compiler_config=tng.CompilerConfig()))
    """)
    assert codes(lint(src, select=SEL)) == []


def test_npu303_mode_set_under_if_is_unknown(lint):
    src = mk(EVENT_MODEL, """
        import os
        config = tng.CompilerConfig()
        if os.environ.get("ACLGRAPH"):
            config.mode = "reduce-overhead"
        model = torch.compile(Model(), backend=tng.get_npu_backend(compiler_config=config))
    """)
    assert codes(lint(src, select=SEL)) == []


@pytest.mark.parametrize("use", ["eager = Model()", 'inductor = torch.compile(Model(), backend="inductor")',
                                 "compiled = torch.compile(Model())"])
def test_npu303_not_compiled_or_other_backend_is_silent(lint, use):
    src = mk(EVENT_MODEL, use + "\n")
    assert codes(lint(src, select=SEL)) == []


RUN_TEMPLATE = """
    import torch
    import torchair as tng
    from {module} import Model

    config = tng.CompilerConfig()
    config.mode = "{mode}"
    npu_backend = tng.get_npu_backend(compiler_config=config)
    model = torch.compile(Model(), backend=npu_backend)
"""


@pytest.mark.parametrize("model_path, module", [
    ("model.py", "model"),                  # a plain module
    ("model/__init__.py", "model"),          # a package
    ("pkg/model.py", "pkg.model"),           # a module of a package
])
def test_npu303_cross_file_model_and_run(lint, model_path, module):
    files = {model_path: mk(EVENT_MODEL), "run.py": RUN_TEMPLATE.format(module=module, mode="max-autotune")}
    if model_path.startswith("pkg/"):
        files["pkg/__init__.py"] = ""
    found = lint(files, select=SEL)
    assert where(found) == [
        (model_path,) + at(files[model_path], "tng.ops.npu_tagged_event_record") + ("NPU303",),
        (model_path,) + at(files[model_path], "tng.ops.npu_tagged_event_wait") + ("NPU303",),
        (model_path,) + at(files[model_path], "tng.ops.npu_record_tagged_stream") + ("NPU303",),
    ]
    assert f"run.py:{at(RUN_TEMPLATE, 'model = torch.compile')[0]}" in found[0].message


def test_npu303_cross_file_clean_twin(lint):
    files = {"model.py": mk(EVENT_MODEL), "run.py": RUN_TEMPLATE.format(module="model", mode="reduce-overhead")}
    assert codes(lint(files, select=SEL)) == []


def test_npu303_cross_file_mode_under_if_is_unknown(lint):
    run = """
        import sys
        import torch
        from torchair.configs.compiler_config import CompilerConfig
        import torchair
        from model import Model

        config = CompilerConfig()
        if sys.argv[1] == "graph":
            config.mode = "reduce-overhead"
        model = torch.compile(Model(), backend=torchair.get_npu_backend(compiler_config=config))
    """
    assert codes(lint({"model.py": mk(EVENT_MODEL), "run.py": run}, select=SEL)) == []


def test_npu303_submodule_instantiated_in_init_is_compiled(lint):
    model = mk("""
        class Layer(torch.nn.Module):
            def forward(self, x):
                tng.ops.npu_record_tagged_stream(x, "1")
                return x

        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.layer = Layer()

            def forward(self, x):
                with tng.scope.npu_stream_switch("1"):
                    return self.layer(x)
    """)
    found = lint({"model.py": model, "run.py": RUN_TEMPLATE.format(module="model", mode="max-autotune")},
                 select=SEL)
    assert where(found) == [("model.py",) + at(model, "tng.ops.npu_record_tagged_stream") + ("NPU303",)]
    assert "Layer" in found[0].message


@pytest.mark.parametrize("made, compiled", [
    # in a method __init__ calls: a submodule, which the graph calls
    ("    def __init__(self):\n        super().__init__()\n        self._build()\n\n"
     "    def _build(self):\n        self.layer = Layer()\n\n"
     "    def forward(self, x):\n        return self.layer(x)\n", True),
    # a submodule the graph never calls (held for a caller outside) is not in it
    ("    def __init__(self):\n        super().__init__()\n        self._build()\n\n"
     "    def _build(self):\n        self.layer = Layer()\n\n"
     "    def forward(self, x):\n        return x\n", False),
    # in a method forward names (under a condition too): it may run in the graph
    ("    def forward(self, x):\n        if x is None:\n            return self._draft()(x)\n        return x\n\n"
     "    def _draft(self):\n        return Layer()\n", True),
    # in a method neither the construction nor the graph runs (a factory called from outside):
    # the instance it makes is not a submodule of the compiled one
    ("    def forward(self, x):\n        return x\n\n    def make_draft(self):\n        return Layer()\n", False),
])
def test_npu303_an_instance_made_where_the_compiled_one_runs_is_compiled_with_it(lint, made, compiled):
    model = mk("""
        class Layer(torch.nn.Module):
            def forward(self, x):
                tng.ops.npu_record_tagged_stream(x, "1")
                return x

        class Model(torch.nn.Module):
    """) + made
    found = lint({"model.py": model, "run.py": RUN_TEMPLATE.format(module="model", mode="max-autotune")},
                 select=["NPU303"])
    expected = [("model.py",) + at(model, "tng.ops.npu_record_tagged_stream") + ("NPU303",)]
    assert where(found) == (expected if compiled else [])


def test_npu303_subclass_inherits_the_compiled_methods(lint):
    model = mk(EVENT_MODEL, """
        class Big(Model):
            pass
    """)
    run = RUN_TEMPLATE.format(module="model", mode="max-autotune").replace("Model", "Big")
    found = lint({"model.py": model, "run.py": run}, select=SEL)
    assert codes(found) == ["NPU303"] * 3
    assert found[0].path == "model.py"


def test_npu303_submodule_in_a_file_without_stream_apis(lint):
    # model.py only composes layers; the layer with the tagged-event API lives in layers.py
    layers = mk("""
        class Layer(torch.nn.Module):
            def forward(self, x):
                tng.ops.npu_record_tagged_stream(x, "1")
                return x
    """)
    model = """
        import torch
        from layers import Layer

        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.layer = Layer()

            def forward(self, x):
                return self.layer(x)
    """
    found = lint({"layers.py": layers, "model.py": model,
                  "run.py": RUN_TEMPLATE.format(module="model", mode="max-autotune")}, select=["NPU303"])
    assert where(found) == [("layers.py",) + at(layers, "tng.ops.npu_record_tagged_stream") + ("NPU303",)]


@pytest.mark.parametrize("mode, api, code", [
    ("max-autotune", "torchair.ops.npu_tagged_event_record(self.ev)", "NPU303"),
    ("reduce-overhead", "torchair.scope.npu_wait_tensor(x, x)", "NPU308"),
])
def test_npu303_npu308_class_defined_inside_a_function(lint, mode, api, code):
    # torchair's own tests define the model class inside the test method
    # (tests/st/torchair_aclgraph_st.py test_ge_with_multi_stream_event)
    src = mk(f"""
        from torchair.configs.compiler_config import CompilerConfig

        def test_multi_stream():
            config = CompilerConfig()
            config.mode = "{mode}"
            npu_backend = torchair.get_npu_backend(compiler_config=config)

            class Model(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.ev = torchair.ops.npu_create_tagged_event(tag="44")

                def forward(self, x):
                    {api}
                    return x

            model = Model()
            opt_model = torch.compile(model, backend=npu_backend, fullgraph=True, dynamic=False)
            return opt_model
    """, header="import torch\nimport torchair\n")
    found = lint(src, select=SEL)
    assert where(found) == [("t.py",) + at(src, api) + (code,)]


DUAL_MODEL = """
    class Attn(torch.nn.Module):
        def __init__(self, use_aclgraph):
            super().__init__()
            self.use_aclgraph = use_aclgraph
            self.ev = tng.ops.npu_create_tagged_event(tag="attn")

        def forward(self, x):
            {body}
            return y
"""
DUAL_RUN = """
    import torch
    import torchair as tng
    from model import Attn

    def main():
        config = tng.CompilerConfig()
        config.mode = "{mode}"
        return torch.compile(Attn({flag}), backend=tng.get_npu_backend(compiler_config=config))

    if __name__ == "__main__":
        main()
"""
# the tagged events on one path, npu_wait_tensor on the other: each script compiles one
GUARDED = {
    "if": """
            if self.use_aclgraph:
                tng.ops.npu_tagged_event_record(self.ev)
                tng.ops.npu_tagged_event_wait(self.ev)
                y = x * 2
            else:
                y = tng.scope.npu_wait_tensor(x * 2, x)""",
    "elif-and-match": """
            y = x
            if not self.use_aclgraph:
                y = tng.scope.npu_wait_tensor(x * 2, x)
            elif x.dim() == 2:
                tng.ops.npu_tagged_event_record(self.ev)
            match self.use_aclgraph:
                case True:
                    tng.ops.npu_tagged_event_wait(self.ev)""",
    "try": """
            try:
                tng.ops.npu_tagged_event_record(self.ev)
                y = x
            except NotImplementedError:
                y = tng.scope.npu_wait_tensor(x * 2, x)""",
    "expressions": """
            self.use_aclgraph and tng.ops.npu_tagged_event_record(self.ev)
            y = x if self.use_aclgraph else tng.scope.npu_wait_tensor(x * 2, x)""",
    "loops": """
            y = x
            for _ in range(int(self.use_aclgraph)):
                tng.ops.npu_tagged_event_record(self.ev)
            while not self.use_aclgraph:
                y = tng.scope.npu_wait_tensor(x * 2, x)
                break
            waits = [tng.ops.npu_tagged_event_wait(self.ev) for _ in range(int(self.use_aclgraph))]""",
}
UNGUARDED = """
            tng.ops.npu_tagged_event_record(self.ev)
            tng.ops.npu_tagged_event_wait(self.ev)
            y = tng.scope.npu_wait_tensor(x * 2, x)"""


def _dual(body):
    return {"model.py": mk(DUAL_MODEL.replace("{body}", textwrap.dedent(body).strip().replace("\n", "\n" + " " * 12))),
            "run_ge.py": DUAL_RUN.format(mode="max-autotune", flag="False"),
            "run_acl.py": DUAL_RUN.format(mode="reduce-overhead", flag="True")}


@pytest.mark.parametrize("guard", sorted(GUARDED))
def test_npu303_npu308_calls_under_a_condition_of_their_method_are_not_judged(lint, guard):
    # Dynamo traces the branch the run takes: one class, compiled in max-autotune by one
    # script and in reduce-overhead by another, takes the branch of each mode
    assert codes(lint(_dual(GUARDED[guard]), select=["NPU303", "NPU308"])) == []


def test_npu303_npu308_calls_that_run_whenever_their_method_runs_are_judged(lint):
    files = _dual(UNGUARDED)
    found = lint(files, select=["NPU303", "NPU308"])
    model = files["model.py"]
    assert where(found) == [
        ("model.py",) + at(model, "tng.ops.npu_tagged_event_record") + ("NPU303",),
        ("model.py",) + at(model, "tng.ops.npu_tagged_event_wait") + ("NPU303",),
        ("model.py",) + at(model, "tng.scope.npu_wait_tensor") + ("NPU308",),
    ]


PHASES = """
    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.ev = tng.ops.npu_create_tagged_event(tag="dec")

        def prefill(self, x, y):
            with tng.scope.npu_stream_switch("1"):
                z = tng.scope.npu_wait_tensor(x, y)
            return z

        def decode(self, x, y):
            self._sync()
            with tng.scope.npu_stream_switch("1"):
                tng.ops.npu_tagged_event_wait(self.ev)
                z = x + y
            return z

        def _sync(self):
            tng.ops.npu_tagged_event_record(self.ev)

    def main():
        model = Model()
        ge = tng.CompilerConfig()
        acl = tng.CompilerConfig()
        acl.mode = "reduce-overhead"
        model.prefill = torch.compile(model.prefill, backend=tng.get_npu_backend(compiler_config={prefill}))
        model.decode = torch.compile(model.decode, backend=tng.get_npu_backend(compiler_config={decode}))
"""


def test_npu303_npu308_a_compiled_method_runs_in_its_own_mode_only(lint):
    # prefill compiled in max-autotune, decode in reduce-overhead: each is fine in its mode
    assert codes(lint(mk(PHASES.format(prefill="ge", decode="acl")), select=SEL)) == []


def test_npu303_npu308_a_compiled_method_and_the_methods_it_calls(lint):
    src = mk(PHASES.format(prefill="acl", decode="ge"))
    found = lint(src, select=SEL)
    assert where(found) == [
        ("t.py",) + at(src, "tng.scope.npu_wait_tensor") + ("NPU308",),
        ("t.py",) + at(src, "tng.ops.npu_tagged_event_wait") + ("NPU303",),
        ("t.py",) + at(src, "tng.ops.npu_tagged_event_record") + ("NPU303",),  # in _sync, which decode calls
    ]


SUBMODULE = """
    EV = tng.ops.npu_create_tagged_event(tag="attn")

    class Attn(torch.nn.Module):
        def forward(self, x):
            tng.ops.npu_tagged_event_record(EV)
            return x

    class Model(torch.nn.Module):
        def __init__(self, big):
            super().__init__()
            {init}

        def decode(self, x):
            return {call}

    def main():
        model = Model(True)
        model.decode = torch.compile(model.decode, backend=tng.get_npu_backend(compiler_config=tng.CompilerConfig()))
"""


def test_npu303_a_compiled_method_runs_the_forward_of_the_submodules_it_calls(lint):
    src = mk(SUBMODULE.format(init="self.attn = Attn()", call="self.attn(x)"))
    found = lint(src, select=["NPU303"])
    assert where(found) == [("t.py",) + at(src, "tng.ops.npu_tagged_event_record") + ("NPU303",)]


@pytest.mark.parametrize("init, call", [
    ("self.attn = Attn()", "x"),  # held, not called by the compiled method
    ("self.attn = Attn() if big else None", "self.attn(x)"),  # not certainly an Attn
    ("self.attn = Attn()\n        if big:\n            self.attn = Other()", "self.attn(x)"),  # bound twice
])
def test_npu303_a_submodule_the_compiled_method_may_not_run_is_not_judged(lint, init, call):
    src = mk(SUBMODULE.format(init=init, call=call))
    assert codes(lint(src, select=["NPU303"])) == []


@pytest.mark.parametrize("elsewhere", ["model.attn = Other()", "model.attn, n = Other(), 1", "del model.attn",
                                       "setattr(model, 'attn', Other())"])
def test_npu303_a_submodule_attribute_assigned_elsewhere_is_not_known(lint, elsewhere):
    # any other store of the attribute name in the file, on any object: the holder may hold another
    src = mk(SUBMODULE.format(init="self.attn = Attn()", call="self.attn(x)")) + \
        f"\n\ndef swap(model):\n    {elsewhere}\n"
    assert codes(lint(src, select=["NPU303"])) == []


HELD = """
    class Sampler(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.ev = tng.ops.npu_create_tagged_event(tag="sample")

        def forward(self, logits):
            tng.ops.npu_tagged_event_record(self.ev)
            return logits

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.sampler = Sampler()

        def forward(self, x):
            return {body}

    model = Model()
    compiled = torch.compile(model, backend=tng.get_npu_backend(compiler_config=tng.CompilerConfig()))
"""


def test_npu303_a_submodule_the_compiled_model_never_calls_is_not_in_its_graph(lint):
    # held as self.sampler, called from outside (model.sampler(logits)), never by Model's code
    assert codes(lint(mk(HELD.format(body="x")), select=["NPU303"])) == []


@pytest.mark.parametrize("body", [
    "x if skip else self.sampler(x)",  # (an operand that may not run)
    "x\n        return self.sampler(x)",  # after a return: never runs
])
def test_npu303_a_submodule_the_compiled_model_may_not_call_is_not_judged(lint, body):
    src = mk(HELD.format(body=body).replace("def forward(self, x):", "def forward(self, x, skip=True):"))
    assert codes(lint(src, select=["NPU001", "NPU303"])) == []


def test_npu303_a_submodule_called_after_an_arm_that_may_end_the_method_is_not_judged(lint):
    src = mk(HELD.format(body="self.sampler(x)").replace(
        "def forward(self, x):", "def forward(self, x, skip=True):\n            if skip:\n                return x"))
    assert codes(lint(src, select=["NPU001", "NPU303"])) == []
    # the clean twin's violation: the arm does not end the method
    src = mk(HELD.format(body="self.sampler(x)").replace(
        "def forward(self, x):", "def forward(self, x, skip=True):\n            if skip:\n                x = x + 1"))
    assert codes(lint(src, select=["NPU001", "NPU303"])) == ["NPU303"]


def test_npu303_a_submodule_the_compiled_model_calls_is_in_its_graph(lint):
    src = mk(HELD.format(body="self.sampler(x)"))
    assert where(lint(src, select=["NPU303"])) == [
        ("t.py",) + at(src, "tng.ops.npu_tagged_event_record") + ("NPU303",)]


HOLDS = """
    EV = tng.ops.npu_create_tagged_event(tag="layer")

    class Layer(torch.nn.Module):
        def forward(self, x):
            tng.ops.npu_tagged_event_record(EV)
            return x

    class Dense(torch.nn.Module):
        def forward(self, x):
            return x

    class Model(torch.nn.Module):
        def __init__(self, cfg, n=4):
            super().__init__()
            {init}

        def forward(self, x, i=0):
            {body}
            return x

    model = Model(object())
    compiled = torch.compile(model, backend=tng.get_npu_backend(compiler_config=tng.CompilerConfig()))
"""


def holds(init, body, template=HOLDS):
    """HOLDS with *init* and *body*, whose later lines are indented as in a method body."""
    return mk(template.format(init=init.replace("\n", "\n    "), body=body.replace("\n", "\n    ")))


LIST = "self.layers = torch.nn.ModuleList([Layer() for _ in range(n)])"
APPENDED = "self.layers = torch.nn.ModuleList()\n        for k in range(n):\n            self.layers.append(Layer())"
CALLED = [  # (how __init__ holds Layers, how forward calls them)
    (LIST, "for layer in self.layers:\n            x = layer(x)"),
    (LIST, "for k, layer in enumerate(self.layers):\n            x = layer(x)"),
    (LIST, "x = self.layers[0](x)"),
    (LIST, "layer = self.layers[i]\n        x = layer(x)"),
    (APPENDED, "for layer in self.layers:\n            x = layer(x)"),
    ("self.heads = torch.nn.ModuleDict({'a': Layer()})", "x = self.heads['a'](x)"),
    ("self.heads = torch.nn.ModuleDict({'a': Layer()})", "for head in self.heads.values():\n            x = head(x)"),
    ("self.body = torch.nn.Sequential(Layer(), Dense())", "x = self.body(x)"),
    ("if cfg.extra:\n            self.extra = Layer()", "x = self.extra(x)"),
    ("self.layers = torch.nn.ModuleList([Layer() if k % 2 else Dense() for k in range(n)])",
     "for layer in self.layers:\n            x = layer(x)"),
    (LIST, "for k in range(len(self.layers)):\n            x = self.layers[k](x)"),  # every element
    ("self.layers: torch.nn.ModuleList = torch.nn.ModuleList([Layer() for _ in range(n)])",
     "for layer in self.layers:\n            x = layer(x)"),
    (LIST, "print(f'{self.layers}')\n        for layer in self.layers:\n            x = layer(x)"),  # reads it
]


@pytest.mark.parametrize("init, body", CALLED)
def test_npu303_a_submodule_its_graph_calls_through_what_holds_it_is_compiled_with_the_model(lint, init, body):
    src = holds(init, body)
    assert where(lint(src, select=["NPU303"])) == [
        ("t.py",) + at(src, "tng.ops.npu_tagged_event_record") + ("NPU303",)]


@pytest.mark.parametrize("init, body, after", [
    (LIST, "x = self.layers[0](x)", "model.layers[0] = Dense()"),  # an item replaced after construction
    (LIST, "x = self.layers[0](x)", "model.layers[0], model.layers[1] = Dense(), Dense()"),
    (LIST + "\n        if cfg.dense:\n            self.layers[0] = Dense()", "for layer in self.layers:\n            x = layer(x)",
     ""),  # replaced in the construction itself, or not
    (LIST, "x = self.layers[0](x)", "def grow(m):\n    m.layers.insert(0, Dense())"),  # changed elsewhere
    (LIST, "for layer in self.layers:\n            x = layer(x)", "prune(model.layers)"),  # passed on: anything
    ("self.extra = Layer()", "x = self.extra(x)", "model.register_module('extra', Dense())"),  # replaced by name
])
def test_npu303_a_held_submodule_changed_after_construction_is_not_judged(lint, init, body, after):
    src = holds(init, body)
    if after:
        assert where(lint(src, select=["NPU303"])) == [
            ("t.py",) + at(src, "tng.ops.npu_tagged_event_record") + ("NPU303",)]  # (the twin, unchanged)
    assert codes(lint(src + after + "\n", select=["NPU001", "NPU303"])) == []


@pytest.mark.parametrize("after", [
    "names = [n for n, _ in model.named_modules()]",  # reads only
    "target_modules = ['q_proj', 'v_proj']",
    "model.add_module('other', Dense())",  # another name
])
def test_npu303_reading_or_naming_other_submodules_keeps_the_held_one_judged(lint, after):
    src = holds("self.extra = Layer()", "x = self.extra(x)") + after + "\n"
    assert where(lint(src, select=["NPU303"])) == [("t.py",) + at(src, "tng.ops.npu_tagged_event_record") + ("NPU303",)]


@pytest.mark.parametrize("other, reported", [
    ("def shrink(model):\n    model.layers.pop()\n", False),  # changed in place there
    ("def swap(model):\n    model.register_module('layers', None)\n", False),  # replaced by name there
    ("def count(model):\n    return len(model.layers)\n", True),  # only read there
])
def test_npu303_a_held_container_another_module_changes(lint, other, reported):
    files = {"t.py": holds(LIST, "for layer in self.layers:\n            x = layer(x)"), "other.py": other}
    assert bool(lint(files, select=["NPU303"])) is reported


@pytest.mark.parametrize("init, body", [(init, "x = x + 1") for init in dict.fromkeys(init for init, _ in CALLED)] + [
    (LIST, "if cfg.deep:\n            x = self.layers[0](x)"),  # the branch the run takes: unknown
    (LIST, "x = run_all(self.layers, x)"),  # passed on: whether they run is unknown
    (LIST, "for layer in self.layers:\n            x = layer.norm(x)"),  # another attribute, not its forward
    # which element self.layers[0] is (a Layer or a Dense) is unknown
    ("self.layers = torch.nn.ModuleList([Layer() if k % 2 else Dense() for k in range(n)])",
     "x = self.layers[0](x)"),
    # stored again elsewhere: what the attribute holds when called is unknown
    ("self.extra = Layer()", "self.extra = Dense()\n        x = self.extra(x)"),
    # one class or the other: which one the attribute holds is unknown
    ("self.mlp = Layer() if cfg.moe else Dense()", "x = self.mlp(x)"),
    ("if cfg.moe:\n            self.mlp = Layer()\n        else:\n            self.mlp = Dense()", "x = self.mlp(x)"),
    ("self.mlp = Layer()\n        if not cfg.moe:\n            self.mlp = Dense()", "x = self.mlp(x)"),
    # a loop that may not run (range(k), a slice) or may leave an iteration before the call
    (LIST, "for k in range(n):\n            x = self.layers[k](x)"),
    ("self.layers = [Layer() for _ in range(n)]", "for layer in self.layers[1:]:\n            x = layer(x)"),
    (LIST, "for layer in self.layers:\n            if not cfg.moe:\n                continue\n            x = layer(x)"),
    (LIST, "for layer in self.layers:\n            if x is None:\n                return x\n            x = layer(x)"),
    (LIST, "for k, layer in enumerate(self.layers):\n            if k > cfg.stop:\n                break\n"
           "            x = layer(x)"),
    # stored again from what we cannot read: which class self.layers[0] is, is unknown
    (LIST + "\n        self.layers = torch.nn.ModuleList([Dense()] + list(self.layers))", "x = self.layers[0](x)"),
    ("blocks = [Layer() for _ in range(n)]\n        self.layers = torch.nn.ModuleList(blocks)",
     "x = self.layers[0](x)"),
])
def test_npu303_a_submodule_its_graph_does_not_certainly_call_is_not_compiled_with_the_model(lint, init, body):
    # a drafter or sampler held for callers outside, layers the graph never runs: not in its graph
    assert codes(lint(holds(init, body), select=["NPU303"])) == []


def test_npu308_shares_what_a_compiled_model_runs_of_its_submodules(lint):
    acl = HOLDS.replace("tng.ops.npu_tagged_event_record(EV)", "x = tng.scope.npu_wait_tensor(x, x)").replace(
        "compiler_config=tng.CompilerConfig()", "compiler_config=cfg").replace(
        "model = Model(", "cfg = tng.CompilerConfig()\n    cfg.mode = 'reduce-overhead'\n    model = Model(")
    assert codes(lint(holds(LIST, "x = x + 1", acl), select=["NPU308"])) == []
    called = holds(LIST, "for layer in self.layers:\n            x = layer(x)", acl)
    assert where(lint(called, select=["NPU308"])) == [("t.py",) + at(called, "tng.scope.npu_wait_tensor") + ("NPU308",)]


OVERRIDE = """
    class GeAttention(torch.nn.Module):
        def forward(self, x, y):
            with tng.scope.npu_stream_switch("1"):
                z = tng.scope.npu_wait_tensor(x, y)
            return z

    class AclAttention(GeAttention):
        def __init__(self):
            super().__init__()
            self.ev = tng.ops.npu_create_tagged_event(tag="acl_attn")

        def forward(self, x, y):
            tng.ops.npu_tagged_event_record(self.ev)
            tng.ops.npu_tagged_event_wait(self.ev)
            {tail}

    config = tng.CompilerConfig()
    config.mode = "reduce-overhead"
    model = torch.compile(AclAttention(), backend=tng.get_npu_backend(compiler_config=config))
"""


def test_npu308_an_overridden_base_method_does_not_run(lint):
    assert codes(lint(mk(OVERRIDE.format(tail="return x + y")), select=SEL)) == []


@pytest.mark.parametrize("tail", ["return super().forward(x, y)", "return super(AclAttention, self).forward(x, y)"])
def test_npu308_an_overridden_base_method_called_through_super_runs(lint, tail):
    src = mk(OVERRIDE.format(tail=tail))
    found = lint(src, select=SEL)
    assert where(found) == [("t.py",) + at(src, "tng.scope.npu_wait_tensor") + ("NPU308",)]


def test_npu308_a_base_method_another_base_may_override_is_unknown(lint):
    # Mixin is not a class of the run: it comes first in the method resolution order
    src = mk("""
        from somewhere import Mixin

        class Base(torch.nn.Module):
            def forward(self, x, y):
                return tng.scope.npu_wait_tensor(x, y)

        class Model(Mixin, Base):
            pass

        config = tng.CompilerConfig()
        config.mode = "reduce-overhead"
        model = torch.compile({cls}(), backend=tng.get_npu_backend(compiler_config=config))
    """)
    assert codes(lint(src.format(cls="Model"), select=SEL)) == []
    assert codes(lint(src.format(cls="Base"), select=SEL)) == ["NPU308"]


# ======================================================================================
# NPU304 stream-priority-reserved
# ======================================================================================

def test_npu304_positional_priority(lint):
    src = mk("""
        with tng.scope.npu_stream_switch("1", 3):
            y = x + 1
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU304"]
    assert pos(found[0]) == at(src, "3)")
    msg = found[0].message
    assert "stream_priority=3" in msg and "reserved" in msg
    assert says_runtime_and_fix(msg, ("modes ignore it",), ("keep the default 0", "drop")) and "max-autotune passes it on" in msg


@pytest.mark.parametrize("header, call", [
    ("from torchair.scope import npu_stream_switch as s\n", 's("1", stream_priority=PRIO)'),
    ("from torchair.scope import npu_stream_switch\n", 'npu_stream_switch("1", PRIO)'),
    ("from torchair import scope\n", 'scope.npu_stream_switch(stream_tag="1", stream_priority=PRIO)'),
    ("import torchair\n", 'torchair.ops.NpuStreamSwitch("1", PRIO)'),
    ("from torchair.ops import NpuStreamSwitch\n", 'NpuStreamSwitch("1", stream_priority=PRIO)'),
])
def test_npu304_aliases_legacy_name_and_constant(lint, header, call):
    src = mk(f"""
        PRIO = 1 + 1
        with {call}:
            y = x + 1
    """, header=header)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU304"]
    assert pos(found[0]) == at(src, "PRIO)")


@pytest.mark.parametrize("call", ['tng.scope.npu_stream_switch("1")', 'tng.scope.npu_stream_switch("1", 0)',
                                  'tng.scope.npu_stream_switch("1", stream_priority=0)',
                                  'tng.ops.NpuStreamSwitch("1", 0)'])
def test_npu304_clean_twin(lint, call):
    src = mk(f"""
        with {call}:
            y = x + 1
    """)
    assert codes(lint(src, select=SEL)) == []


def test_npu304_unknown_priority_is_silent(lint):
    src = mk("""
        import os
        def step(x, prio):
            with tng.scope.npu_stream_switch("1", prio):
                y = x + 1
            with tng.scope.npu_stream_switch("2", int(os.environ["PRIO"])):
                y = y + 1
            return y
    """)
    assert codes(lint(src, select=SEL)) == []


def test_npu304_same_named_wrappers_are_not_torchair(lint):
    src = """
        from vllm_ascend.utils import npu_stream_switch as vllm_switch

        def npu_stream_switch(flag, tag, prio):
            return tag

        with npu_stream_switch(True, "1", 3):
            pass
        with vllm_switch("mla_secondary", 3, enabled=True):
            pass
        with vllm_switch(aux_stream, enabled=True):
            pass
    """
    assert codes(lint(src, select=SEL)) == []


# ======================================================================================
# NPU305 record-stream-unknown-tag
# ======================================================================================

def test_npu305_tag_no_switch_uses(lint):
    src = mk("""
        with tng.scope.npu_stream_switch("1"):
            y = x + 1
        tng.ops.npu_record_tagged_stream(y, "2")
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU305"]
    assert pos(found[0]) == at(src, '"2"')
    msg = found[0].message
    assert "'2'" in msg and "'1'" in msg
    assert says_runtime_and_fix(msg, ("new, idle stream",), ("use the tag",))


@pytest.mark.parametrize("tag", ['"1"', '"default"', 'TAG'])
def test_npu305_clean_twin(lint, tag):
    src = mk(f"""
        TAG = "1"
        with tng.scope.npu_stream_switch(TAG):
            y = x + 1
        tng.ops.npu_record_tagged_stream(y, {tag})
    """)
    assert codes(lint(src, select=SEL)) == []


def test_npu305_aliases_and_constant(lint):
    src = mk("""
        from torchair.scope import npu_stream_switch as s
        from torchair.ops import npu_record_tagged_stream as keep
        import torchair

        SIDE = "side"
        OTHER = "oth" + "er"
        with s(SIDE):
            y = x + 1
        with torchair.ops.NpuStreamSwitch("legacy"):
            z = x + 2
        keep(y, SIDE)
        keep(z, "legacy")
        keep(y, tagged_stream=OTHER)
    """, header="")
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU305"]
    assert pos(found[0]) == at(src, "OTHER)")
    assert "'other'" in found[0].message


def test_npu305_a_switch_with_an_unknown_tag_makes_it_silent(lint):
    src = mk("""
        def side(x, tag):
            with tng.scope.npu_stream_switch(tag):
                return x + 1

        def main(y):
            tng.ops.npu_record_tagged_stream(y, "2")
    """)
    assert codes(lint(src, select=SEL)) == []


def test_npu305_unknown_record_tag_is_silent(lint):
    src = mk("""
        def main(y, tag):
            with tng.scope.npu_stream_switch("1"):
                z = y + 1
            tng.ops.npu_record_tagged_stream(z, tag)
    """)
    assert codes(lint(src, select=SEL)) == []


# hicann/cann-recipes-infer (models/deepseek-v3.2-exp/models/indexer.py:252 at 07067b7, f55a9e9,
# 90b45af, 5df82b1): the project's own npu_stream_switch (executor/utils/common_utils.py:111-113)
# passes its tag on to torchair's; torchair keeps the streams by tag for the whole process
# (Ascend/torchair@fced8842 python/torchair/scope/_scope_attr.py:95-108)
CR_WRAPPER = """
    import torchair as tng


    class FakeContextManager:
        def __enter__(self):
            pass

        def __exit__(self, *a):
            pass


    def npu_stream_switch(switch_flag: bool, stream_tag: str, stream_priority: int = 0):
        if switch_flag:
            return tng.scope.npu_stream_switch(stream_tag, stream_priority)
        return FakeContextManager()
"""
CR_MODEL = """
    import torch
    import torchair as tng
    from executor.su import npu_stream_switch


    class Indexer(torch.nn.Module):
        def forward(self, qr, enable_multi_streams):
            tng.ops.npu_record_tagged_stream(qr, "22")
            with npu_stream_switch(enable_multi_streams, "22"):
                y = qr * 2
            return y
"""


def test_npu305_a_tag_a_wrapper_of_the_run_passes_on_is_silent(lint):
    """The repro: the wrapper's torchair switch takes a parameter as its tag, so which tags the
    program's switches use is unknown; the call passes "22" on besides."""
    assert codes(lint({"model.py": CR_MODEL, "executor/__init__.py": "", "executor/su.py": CR_WRAPPER},
                      select=SEL)) == []
    # the model alone: the literal it passes on to a function npulint does not read
    assert codes(lint({"model.py": CR_MODEL}, select=SEL)) == []


@pytest.mark.parametrize("passed, reported", [
    ('"22"', False), ('TAG', False), ('("22", 0)', False), ('"2"', True)])
def test_npu305_a_literal_passed_to_a_function_outside_the_run(lint, passed, reported):
    """vllm-ascend's npu_stream_switch took a tag and called torchair's switch up to v0.9
    (vllm_ascend/utils.py: ``_npu_stream_switch(tag, priority)``), a torch.npu.Stream since:
    which one runs is unknown, so the tag it is passed may be a switch's. A tag it is not passed
    is still reported."""
    src = mk(f"""
        from vllm_ascend.utils import npu_stream_switch

        TAG = "22"
        with npu_stream_switch({passed}, 0):
            y = x + 1
        tng.ops.npu_record_tagged_stream(y, "22")
    """)
    found = lint(src, select=SEL)
    assert codes(found) == (["NPU305"] if reported else [])
    if reported:
        assert pos(found[0]) == at(src, '"22")')


ATTN = """
    import torch
    import torchair as tng

    STREAM = "kv_stream"


    class Attn(torch.nn.Module):
        def forward(self, x):
            with tng.scope.npu_stream_switch(STREAM):
                y = x * 2
            return y
"""


def _layer(tag):
    return f"""
    import torch
    import torchair as tng
    from attn import Attn


    class Layer(torch.nn.Module):
        def forward(self, x):
            y = Attn()(x)
            tng.ops.npu_record_tagged_stream(y, "{tag}")
            return y
    """


def test_npu305_the_switch_of_another_file_of_the_run_counts(lint):
    """The tag of a switch in another linted file (through its module's constant) is known: the
    record uses that stream; a tag no switch of the run uses is reported, in the record's file,
    with the run's tags."""
    assert codes(lint({"layer.py": _layer("kv_stream"), "attn.py": ATTN}, select=SEL)) == []
    found = lint({"layer.py": _layer("kv_stram"), "attn.py": ATTN}, select=SEL)
    assert where(found) == [("layer.py",) + at(textwrap.dedent(_layer("kv_stram")), '"kv_stram"') + ("NPU305",)]
    assert "'kv_stram'" in found[0].message and "'kv_stream'" in found[0].message


@pytest.mark.parametrize("other, reported", [
    (ATTN, False),  # names torchair's switch: its tags are unknown to a run that does not read it
    ('TAGS = ["kv_stram"]\n', False),  # holds the tag: it may pass it to a switch
    ('TAGS = ["kv_stream"]\n', True),  # neither
])
def test_npu305_a_file_of_the_program_the_run_does_not_read(tmp_path, cli_run, other, reported):
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "layer.py").write_text(textwrap.dedent(_layer("kv_stram")))
    (tmp_path / "attn.py").write_text(textwrap.dedent(other))
    out = cli_run(["layer.py", "--select", "NPU305", "--no-cache"], tmp_path).stdout
    assert ("layer.py:10:45: NPU305" in out) == reported, out


# ======================================================================================
# NPU306 tagged-event-tag-reused
# ======================================================================================

def test_npu306_two_creations_with_one_tag(lint):
    src = mk("""
        TAG = "x"
        a = tng.ops.npu_create_tagged_event(tag="x")
        b = tng.ops.npu_create_tagged_event(TAG)
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU306"]
    assert pos(found[0]) == at(src, "tng.ops.npu_create_tagged_event(TAG)")
    msg = found[0].message
    assert f"line {at(src, 'a = ')[0]}" in msg
    assert says_runtime_and_fix(msg, ("ValueError",), ("own tag",))


@pytest.mark.parametrize("body", [
    "if fast:\n    ev = tng.ops.npu_create_tagged_event(tag='x')\nelse:\n    ev = tng.ops.npu_create_tagged_event(tag='x')\n",
    "ev = tng.ops.npu_create_tagged_event(tag='x') if fast else tng.ops.npu_create_tagged_event(tag='x')\n",
    "def make(fast):\n    if fast:\n        return tng.ops.npu_create_tagged_event(tag='x')\n"
    "    return tng.ops.npu_create_tagged_event(tag='x')\n",
    "def make():\n    ev = tng.ops.npu_create_tagged_event(tag='x')\n    return ev\n"
    "    tng.ops.npu_create_tagged_event(tag='x')\n",
])
def test_npu306_two_creations_that_never_both_run(lint, body):
    # the arms of one if or x if c else y, an if arm that returns and what follows, dead code
    assert codes(lint(mk("import torchair as tng\n") + body, select=SEL)) == []


@pytest.mark.parametrize("body", [
    "if fast:\n    ev = tng.ops.npu_create_tagged_event(tag='x')\nev2 = tng.ops.npu_create_tagged_event(tag='x')\n",
    "def a():\n    if fast:\n        return tng.ops.npu_create_tagged_event(tag='x')\n\n\n"
    "def b():\n    if not fast:\n        return tng.ops.npu_create_tagged_event(tag='x')\n",
])
def test_npu306_two_creations_that_may_both_run_clean_twin(lint, body):
    # after an if (not in another arm), or in two functions: both may run
    assert codes(lint(mk("import torchair as tng\n") + body, select=SEL)) == ["NPU306"]


NESTED = """
    class MoE(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.ev = tng.ops.npu_create_tagged_event(tag="moe")

    class Layer(torch.nn.Module):
        def __init__(self, i):
            super().__init__()
            {make}

    class Big(Layer):
        pass

    {build}
"""


@pytest.mark.parametrize("build", [
    "layers = torch.nn.ModuleList([Layer(i) for i in range(4)])",
    "a = Layer(0)\n    b = Big(1)",  # a subclass runs the base's __init__
])
def test_npu306_a_class_made_once_per_instance_of_a_class_made_twice(lint, build):
    src = mk(NESTED.format(make="self.moe = MoE()", build=build))
    found = lint(src, select=["NPU306"])
    assert where(found) == [("t.py",) + at(src, "tng.ops.npu_create_tagged_event") + ("NPU306",)]


@pytest.mark.parametrize("make, build", [
    ("self.moe = MoE()", "layer = Layer(0)"),  # one Layer: one MoE
    ("if i == 0:\n                self.moe = MoE()", "layers = [Layer(i) for i in range(4)]"),  # may run once
])
def test_npu306_a_class_made_once_per_instance_clean_twins(lint, make, build):
    assert codes(lint(mk(NESTED.format(make=make, build=build)), select=["NPU306"])) == []



FACTORY = """
    class MoE(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.ev = tng.ops.npu_create_tagged_event(tag="moe")

    {factory}

    {build}
"""


@pytest.mark.parametrize("factory, build", [
    ("def make():\n        return MoE()", "layers = torch.nn.ModuleList([make() for _ in range(4)])"),
    ("def make(i):\n        m = MoE()\n        return m", "for i in range(2):\n        make(i)"),
    ("def make():\n        return MoE()\n\n    def build():\n        return [make(), make()]", "net = build()"),
])
def test_npu306_a_class_made_in_a_function_called_more_than_once(lint, factory, build):
    src = mk(FACTORY.format(factory=factory, build=build))
    found = lint(src, select=["NPU306"])
    assert where(found) == [("t.py",) + at(src, "tng.ops.npu_create_tagged_event") + ("NPU306",)]


@pytest.mark.parametrize("factory, build", [
    ("def make():\n        return MoE()", "layer = make()"),  # called once
    ("def make(i):\n        if i == 0:\n            return MoE()", "layers = [make(i) for i in range(4)]"),  # may run once
    ("@functools.lru_cache(maxsize=None)\n    def make():\n        return MoE()",
     "layers = [make() for _ in range(4)]"),  # a decorator may run it once for many calls
    ("def make():\n        yield MoE()", "gens = [make() for _ in range(4)]"),  # a generator runs when iterated
    ("async def make():\n        return MoE()", "coros = [make() for _ in range(4)]"),  # a coroutine when awaited
    ("_m = None\n\n    def make():\n        return MoE()\n\n    def get():\n        global _m\n"
     "        _m = _m or make()\n        return _m", "a = get()\n    b = get()"),  # an operand of or may not run
    ("SHARED = {}\n\n    class Layer(torch.nn.Module):\n        def __init__(self):\n            super().__init__()\n"
     "            self.moe = SHARED.get('moe') or SHARED.setdefault('moe', MoE())",
     "layers = torch.nn.ModuleList([Layer() for _ in range(4)])"),  # (in an __init__ too)
    # two functions that each call it, which may never both run (train or eval, a helper nobody calls)
    ("def make():\n        return MoE()\n\n    def train():\n        return make()\n\n    def evaluate():\n"
     "        return make()", "if __name__ == '__main__':\n        train()"),
    ("def make(m=MoE()):\n        return m", "a = make()\n    b = make()"),  # a default: made once, at def
    ("REG = []\n\n    def make():\n        for m in REG:\n            return m\n        m = MoE()\n"
     "        REG.append(m)\n        return m", "a = make()\n    b = make()"),  # the second call returns the first
])
def test_npu306_a_class_made_in_a_function_called_more_than_once_clean_twins(lint, factory, build):
    src = mk(FACTORY.format(factory=factory, build=build), header=HEADER + "import functools\n")
    assert codes(lint(src, select=["NPU001", "NPU306"])) == []


MAKER = """
    {factory}

    {build}
"""
CREATE = "tng.ops.npu_create_tagged_event(tag='ev')"


@pytest.mark.parametrize("factory, build", [
    (f"def make():\n        return {CREATE}", "events = [make() for _ in range(4)]"),
    (f"def make(i):\n        ev = {CREATE}\n        return ev", "for i in range(2):\n        make(i)"),
    (f"def make():\n        return {CREATE}", "a = make()\n    b = make()"),
    (f"def make():\n        return {CREATE}\n\n    def build():\n        return [make(), make()]", "net = build()"),
    # an entry point nothing in the run calls runs as written
    (f"def make():\n        return {CREATE}\n\n    def main():\n        a = make()\n        b = make()", ""),
])
def test_npu306_a_creation_in_a_function_called_more_than_once(lint, factory, build):
    src = mk(MAKER.format(factory=factory, build=build))
    found = lint(src, select=["NPU306"])
    assert where(found) == [("t.py",) + at(src, "tng.ops.npu_create_tagged_event") + ("NPU306",)]
    assert found[0].message == (
        "npu_create_tagged_event(tag='ev') runs once per call of make(), which is called more than once: the second "
        "creation raises ValueError('tagged event tag ev is already in use'); create the event once and share it, "
        "or give each call its own tag")


@pytest.mark.parametrize("factory, build", [
    (f"def make():\n        return {CREATE}", "ev = make()"),  # called once
    (f"def make(i):\n        if i == 0:\n            return {CREATE}", "evs = [make(i) for i in range(4)]"),  # may run once
    (f"def make(skip):\n        if skip:\n            return None\n        return {CREATE}",
     "a = make(True)\n    b = make(False)"),  # after an if arm that returns: may not run
    (f"@functools.lru_cache(maxsize=None)\n    def make():\n        return {CREATE}",
     "evs = [make() for _ in range(4)]"),  # a decorator may run it once for many calls
    (f"def make():\n        yield {CREATE}", "gens = [make() for _ in range(4)]"),  # a generator runs when iterated
    (f"async def make():\n        return {CREATE}", "coros = [make() for _ in range(4)]"),  # a coroutine when awaited
    (f"_e = None\n\n    def make():\n        return {CREATE}\n\n    def get():\n        global _e\n"
     "        _e = _e or make()\n        return _e", "a = get()\n    b = get()"),  # an operand of or may not run
    (f"def make():\n        return {CREATE}", "if fast:\n        a = make()\n    else:\n        b = make()"),
    # two functions that each call its caller, which may never both run (as for a class made in a function)
    (f"def make():\n        return {CREATE}\n\n    def build():\n        return make()\n\n    def train():\n"
     "        return build()\n\n    def evaluate():\n        return build()",
     "if __name__ == '__main__':\n        train()"),
    (f"def make(e={CREATE}):\n        return e", "a = make()\n    b = make()"),  # a default: made once, at def
    (f"REG = []\n\n    def make():\n        for e in REG:\n            return e\n        e = {CREATE}\n"
     "        REG.append(e)\n        return e", "a = make()\n    b = make()"),  # the second call returns the first
])
def test_npu306_a_creation_in_a_function_called_more_than_once_clean_twins(lint, factory, build):
    src = mk(MAKER.format(factory=factory, build=build), header=HEADER + "import functools\n")
    assert codes(lint(src, select=["NPU001", "NPU306"])) == []


@pytest.mark.parametrize("early", [
    "if small:\n            return",
    "if small:\n            raise ValueError('small')",
])
def test_npu306_a_creation_after_an_if_arm_that_ends_the_init_may_not_run(lint, early):
    # Layer(True) returns before it creates: only one of the two instances makes the event
    layer = """
        class Layer(torch.nn.Module):
            def __init__(self, small):
                super().__init__()
                {early}
                self.ev = {create}

        a = Layer(True)
        b = Layer(False)
    """
    assert codes(lint(mk(layer.format(early=early, create=CREATE)), select=["NPU306"])) == []
    # the twin: no early exit, two instances, two creations
    assert codes(lint(mk(layer.format(early="pass", create=CREATE)), select=["NPU306"])) == ["NPU306"]


def test_npu306_a_creation_in_a_methods_default_runs_once_where_the_def_runs(lint):
    # the default is evaluated once, when the class body runs, not per instance
    layer = """
        class Layer(torch.nn.Module):
            def __init__(self, {param}):
                super().__init__()
                self.ev = {value}

        a = Layer()
        b = Layer()
    """
    clean = mk(layer.format(param=f"ev={CREATE}", value="ev"))
    assert codes(lint(clean, select=["NPU306"])) == []
    twin = mk(layer.format(param="ev=None", value=CREATE))
    assert codes(lint(twin, select=["NPU306"])) == ["NPU306"]


VARIANTS = """
    class DeepseekMoE(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.ev = tng.ops.npu_create_tagged_event(tag="shared_expert")

    class QwenMoE(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.ev = tng.ops.npu_create_tagged_event(tag="shared_expert")

    {build}
"""


@pytest.mark.parametrize("build", [
    "if __name__ == '__main__':\n        if sys.argv[1] == 'deepseek':\n            m = DeepseekMoE()\n"
    "        else:\n            m = QwenMoE()",  # one of the two per run
    "",  # a library: neither class is made here
])
def test_npu306_one_tag_in_two_classes_never_both_made(lint, build):
    assert codes(lint(mk(VARIANTS.format(build=build)), select=["NPU306"])) == []


def test_npu306_one_tag_in_two_classes_both_made_clean_twin(lint):
    src = mk(VARIANTS.format(build="a = DeepseekMoE()\n    b = QwenMoE()"))
    assert codes(lint(src, select=["NPU306"])) == ["NPU306"]


def test_npu306_clean_twin_distinct_tags(lint):
    src = mk("""
        a = tng.ops.npu_create_tagged_event(tag="x")
        b = tng.ops.npu_create_tagged_event(tag="y")
    """)
    assert codes(lint(src, select=SEL)) == []


def test_npu306_same_tag_in_two_files_reported_in_the_later_file(lint):
    first = mk("""
        EV = tng.ops.npu_create_tagged_event(tag="shared")
    """)
    second = mk("""
        import a_model
        from torchair.ops import npu_create_tagged_event as mk_ev
        class M(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.ev = mk_ev("shared")

        m = M()
    """)
    # z_model.py imports a_model.py: one process. z_model.py is written first here, but
    # a_model.py comes first in sorted path order
    found = lint({"z_model.py": second, "a_model.py": first}, select=SEL)
    assert where(found) == [("z_model.py",) + at(second, 'mk_ev("shared")') + ("NPU306",)]
    assert "a_model.py:%d:%d" % at(first, "tng.ops.npu_create_tagged_event") in found[0].message


def test_npu306_same_tag_in_a_package_and_a_module(lint):
    src = mk("""
        EV = tng.ops.npu_create_tagged_event(tag="shared")
    """)
    importer = "import a\n" + src
    found = lint({"b.py": importer, "a/__init__.py": src}, select=SEL)
    assert where(found) == [("b.py",) + at(importer, "tng.ops") + ("NPU306",)]
    assert "a/__init__.py" in found[0].message


def test_npu306_same_tag_in_two_independent_entry_points_is_clean(lint):
    # two scripts that do not import each other run in two processes (each its own registry)
    src = mk("""
        EV = tng.ops.npu_create_tagged_event(tag="shared")
    """)
    assert codes(lint({"test_a.py": src, "test_b.py": src}, select=SEL)) == []


def test_npu306_same_tag_in_two_modules_imported_by_one_entry_point(lint):
    src = mk("""
        EV = tng.ops.npu_create_tagged_event(tag="shared")
    """)
    run = mk("""
        import enc, dec
    """)
    found = lint({"enc.py": src, "dec.py": src, "run.py": run}, select=SEL)
    assert where(found) == [("enc.py",) + at(src, "tng.ops") + ("NPU306",)]


LAYER = """
    class Layer(torch.nn.Module):
        def __init__(self, i=0):
            super().__init__()
            self.ev = tng.ops.npu_create_tagged_event(tag="layer")
"""


def test_npu306_class_in_module_list_comprehension(lint):
    src = mk(LAYER, """
        class Model(torch.nn.Module):
            def __init__(self, n):
                super().__init__()
                self.layers = torch.nn.ModuleList([Layer() for _ in range(n)])
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU306"]
    assert pos(found[0]) == at(src, "tng.ops.npu_create_tagged_event")
    msg = found[0].message
    assert "Layer" in msg and "more than once" in msg
    assert says_runtime_and_fix(msg, ("ValueError",), ("index", "share"))


def test_npu306_class_instantiated_at_two_call_sites(lint):
    src = mk(LAYER, """
        first = Layer()
        second = Layer()
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU306"]
    assert pos(found[0]) == at(src, "tng.ops.npu_create_tagged_event")


def test_npu306_class_instantiated_in_a_for_loop(lint):
    src = mk(LAYER, """
        layers = []
        for i in range(4):
            layers.append(Layer(i))
    """)
    assert codes(lint(src, select=SEL)) == ["NPU306"]


def test_npu306_subclass_instance_runs_the_base_init(lint):
    src = mk(LAYER, """
        class Sub(Layer):
            pass

        a = Sub()
        b = Layer()
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU306"]
    assert pos(found[0]) == at(src, "tng.ops.npu_create_tagged_event")


SKIPS_INIT = """
    class Sub(Layer):
        def __init__(self):
            {init}
            self.w = 1

    a = Sub()
    b = Layer()
"""


@pytest.mark.parametrize("init", ["super().__init__()", "Layer.__init__(self)", "super(Sub, self).__init__()"])
def test_npu306_a_subclass_init_that_calls_the_base_init_runs_it(lint, init):
    src = mk(LAYER, SKIPS_INIT.format(init=init))
    found = lint(src, select=SEL)
    assert where(found) == [("t.py",) + at(src, "tng.ops.npu_create_tagged_event") + ("NPU306",)]


@pytest.mark.parametrize("init", ["torch.nn.Module.__init__(self)", "pass",
                                  "if big:\n                super().__init__()"])
def test_npu306_a_subclass_init_that_does_not_call_the_base_init_does_not_run_it(lint, init):
    # Python runs Layer.__init__ for a Sub only when Sub.__init__ calls it: one Layer creation
    src = mk("big = 1\n", LAYER, SKIPS_INIT.format(init=init))
    assert codes(lint(src, select=SEL)) == []


def test_npu306_a_class_made_in_a_base_init_that_a_subclass_skips(lint):
    # Layer.__init__ makes an MoE; Dense(Layer) instances do not run it: one MoE in all
    src = mk(NESTED.format(make="self.moe = MoE()", build="""class Dense(Layer):
        def __init__(self):
            {init}

    first = Layer(0)
    layers = torch.nn.ModuleList([Dense() for _ in range(3)])"""))
    assert codes(lint(src.format(init="torch.nn.Module.__init__(self)"), select=["NPU306"])) == []
    found = lint(src.format(init="Layer.__init__(self, 0)"), select=["NPU306"])
    assert where(found) == [("t.py",) + at(src, "tng.ops.npu_create_tagged_event") + ("NPU306",)]


def test_npu306_one_tag_in_a_base_init_a_subclass_skips_and_in_another_class(lint):
    src = mk("""
        class Base(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.ev = tng.ops.npu_create_tagged_event(tag="x")

        class Plain(Base):
            def __init__(self):
                {init}

        class Other(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.ev2 = tng.ops.npu_create_tagged_event(tag="x")

        a = Plain()
        b = Other()
    """)
    assert codes(lint(src.format(init="torch.nn.Module.__init__(self)"), select=["NPU306"])) == []
    found = lint(src.format(init="super().__init__()"), select=["NPU306"])
    assert where(found) == [("t.py",) + at(src, "tng.ops.npu_create_tagged_event(tag=\"x\")\n", 1) + ("NPU306",)]


def test_npu306_class_instantiated_once_is_clean(lint):
    src = mk(LAYER, """
        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.layer = Layer()

        model = Model()
    """)
    assert codes(lint(src, select=SEL)) == []


def test_npu306_tag_from_fstring_with_index_is_clean(lint):
    src = mk("""
        class Layer(torch.nn.Module):
            def __init__(self, i):
                super().__init__()
                self.ev = tng.ops.npu_create_tagged_event(tag=f"layer{i}")

        layers = torch.nn.ModuleList([Layer(i) for i in range(4)])
        events = [tng.ops.npu_create_tagged_event(tag=f"ev_{i}") for i in range(4)]
        for i in range(4):
            tng.ops.npu_create_tagged_event(tag="loop_" + str(i))
    """)
    assert codes(lint(src, select=SEL)) == []


def test_npu306_creation_directly_in_a_loop(lint):
    src = mk("""
        from torchair.ops import npu_create_tagged_event

        events = []
        for i in range(4):
            events.append(npu_create_tagged_event(tag="loop"))
        more = [npu_create_tagged_event("comp") for _ in range(2)]
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU306"] * 2
    assert [pos(f) for f in found] == [at(src, 'npu_create_tagged_event(tag="loop")'),
                                       at(src, 'npu_create_tagged_event("comp")')]
    assert "loop" in found[0].message and "ValueError" in found[0].message


GUARDED_INITS = [
    # only the first layer makes it
    """
    if layer_id == 0:
        self.ev = tng.ops.npu_create_tagged_event(tag="first_layer")
    """,
    # a cache on the class: made by the first instance only
    """
    if Layer._shared is None:
        Layer._shared = tng.ops.npu_create_tagged_event(tag="shared")
    """,
    # the second creation's ValueError is handled
    """
    try:
        self.ev = tng.ops.npu_create_tagged_event(tag="mlp")
    except ValueError:
        self.ev = None
    """,
    """
    self.ev = tng.ops.npu_create_tagged_event(tag="first") if layer_id == 0 else None
    """,
    """
    self.evs = [tng.ops.npu_create_tagged_event(tag="x") for i in range(2) if i == layer_id]
    """,
]


def _layers(init):
    return HEADER + (
        "class Layer(torch.nn.Module):\n"
        "    _shared = None\n\n"
        "    def __init__(self, layer_id):\n"
        "        super().__init__()\n"
        + textwrap.indent(textwrap.dedent(init).strip("\n") + "\n", " " * 8) +
        "\n\nlayers = torch.nn.ModuleList([Layer(i) for i in range(4)])\n")


@pytest.mark.parametrize("init", GUARDED_INITS)
def test_npu306_a_creation_that_may_not_run_is_not_known_to_run_twice(lint, init):
    assert codes(lint(_layers(init), select=SEL)) == []


def test_npu306_a_creation_that_runs_in_every_instance_clean_twin(lint):
    src = _layers('self.ev = tng.ops.npu_create_tagged_event(tag="every")')
    found = lint(src, select=SEL)
    assert where(found) == [("t.py",) + at(src, "tng.ops.npu_create_tagged_event") + ("NPU306",)]


def test_npu306_a_creation_in_a_guarded_loop_is_not_known_to_run_twice(lint):
    src = mk("""
        from torchair.ops import npu_create_tagged_event
        import os

        if os.environ.get("MULTI_STREAM"):
            for i in range(4):
                npu_create_tagged_event(tag="loop")
            more = [npu_create_tagged_event("comp") for _ in range(2)]
        most = [npu_create_tagged_event("filtered") for i in range(2) if i == 0]
    """)
    assert codes(lint(src, select=SEL)) == []


def test_npu306_unknown_tag_is_silent(lint):
    src = mk("""
        def make(tag):
            return tng.ops.npu_create_tagged_event(tag=tag)

        for name in names:
            tng.ops.npu_create_tagged_event(tag=name)
    """)
    assert codes(lint(src, select=SEL)) == []


def test_npu306_wrapper_with_same_name_is_not_torchair(lint):
    src = """
        from mylib import npu_create_tagged_event
        a = npu_create_tagged_event(tag="x")
        b = npu_create_tagged_event(tag="x")
    """
    assert codes(lint(src, select=SEL)) == []


def test_npu306_cross_file_module_list(lint):
    layer = mk(LAYER)
    model = """
        import torch
        from layer import Layer

        class Model(torch.nn.Module):
            def __init__(self, n):
                super().__init__()
                self.layers = torch.nn.ModuleList([Layer() for _ in range(n)])
    """
    found = lint({"layer.py": layer, "model.py": model}, select=SEL)
    assert where(found) == [("layer.py",) + at(layer, "tng.ops.npu_create_tagged_event") + ("NPU306",)]


def test_npu306_cross_file_two_call_sites(lint):
    layer = mk(LAYER)
    run = """
        from layer import Layer
        first = Layer()
        second = Layer()
    """
    found = lint({"layer.py": layer, "run.py": run}, select=SEL)
    assert where(found) == [("layer.py",) + at(layer, "tng.ops.npu_create_tagged_event") + ("NPU306",)]


def test_npu306_cross_file_instantiated_once_is_clean(lint):
    run = """
        from layer import Layer
        only = Layer()
    """
    assert codes(lint({"layer.py": mk(LAYER), "run.py": run}, select=SEL)) == []


SCRIPT_AT_TOP = """
    from mypkg.layer import Layer
    layer = Layer()
"""
SCRIPT_IN_MAIN = """
    from mypkg.layer import Layer

    def main():
        return Layer()

    if __name__ == "__main__":
        main()
"""


@pytest.mark.parametrize("first", [SCRIPT_AT_TOP, SCRIPT_IN_MAIN])
def test_npu306_one_instance_in_each_of_two_entry_scripts_is_two_processes(lint, first):
    # two scripts that do not import each other run in two processes, each with one Layer
    files = {"mypkg/__init__.py": "", "mypkg/layer.py": mk(LAYER), "run_prefill.py": first,
             "run_decode.py": SCRIPT_IN_MAIN}
    assert codes(lint(files, select=SEL)) == []


@pytest.mark.parametrize("imported, importer", [
    ("run_prefill", "import run_prefill"),  # one script imports the other
    ("mypkg.defaults", "import mypkg.defaults"),  # both import a module that makes one
    ("mypkg.defaults", "from mypkg import defaults"),
])
def test_npu306_instances_of_one_process_add_up(lint, imported, importer):
    layer = mk(LAYER)
    files = {"mypkg/__init__.py": "", "mypkg/layer.py": layer, "run_prefill.py": SCRIPT_AT_TOP,
             "run_decode.py": importer + "\n" + textwrap.dedent(SCRIPT_IN_MAIN),
             "mypkg/defaults.py": "from mypkg.layer import Layer\nDEFAULT = Layer()\n"}
    if imported == "run_prefill":
        del files["mypkg/defaults.py"]
    found = lint(files, select=SEL)
    assert where(found) == [("mypkg/layer.py",) + at(layer, "tng.ops.npu_create_tagged_event") + ("NPU306",)]


# one module name in two folders run as scripts (probe-user zoo2/, mono2/): Python never loads
# both files as module `model` in one process
ZOO_MODEL = mk("""
    class Attn(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.evt = tng.ops.npu_create_tagged_event(tag="attn_ready")
""")
ZOO_RUN = "from model import Attn\n\nif __name__ == \"__main__\":\n    m = Attn()\n"
KV = mk("""
    EVT = tng.ops.npu_create_tagged_event(tag="kv_ready")
""")


def test_npu306_one_module_name_in_two_script_folders_is_two_processes(lint):
    files = {"zoo2/qwen/model.py": ZOO_MODEL, "zoo2/qwen/run.py": ZOO_RUN,
             "zoo2/llama/model.py": ZOO_MODEL, "zoo2/llama/run.py": ZOO_RUN}
    assert codes(lint(files, select=SEL)) == []
    assert codes(lint({"mono2/a/infer.py": KV, "mono2/b/infer.py": KV}, select=SEL)) == []


def test_npu306_an_import_of_a_shared_name_reaches_the_importer_s_own_folder(lint):
    # qwen/run.py's `import infer` is qwen/infer.py: its own creation of the tag meets that one
    run = "import infer\n" + KV
    files = {"zoo2/qwen/infer.py": KV, "zoo2/qwen/run.py": run, "zoo2/llama/infer.py": KV,
             "zoo2/llama/run.py": "import infer\n"}
    found = lint(files, select=SEL)
    assert where(found) == [("zoo2/qwen/run.py",) + at(run, "tng.ops") + ("NPU306",)]
    assert "zoo2/qwen/infer.py" in found[0].message


def test_npu306_one_folder_importing_two_of_its_modules_is_one_process(lint):
    files = {"a/infer.py": KV, "a/infer2.py": KV, "a/run.py": "import infer, infer2\n", "b/infer.py": KV}
    found = lint(files, select=SEL)
    assert where(found) == [("a/infer2.py",) + at(KV, "tng.ops") + ("NPU306",)]
    assert "a/infer.py" in found[0].message


def test_npu306_a_shared_name_from_another_folder_reaches_neither(lint):
    # tools/run.py imports `infer`, which a/ and b/ both hold: neither is known to be its module
    files = {"a/infer.py": KV, "b/infer.py": KV, "tools/run.py": "import infer\nimport other\n",
             "tools/other.py": KV}
    assert codes(lint(files, select=SEL)) == []


def test_npu306_packages_compare_their_distinct_dotted_names(lint):
    # trap: pkg.qwen.model and pkg.llama.model are two modules one process may import
    files = {"pkg/__init__.py": "", "pkg/qwen/__init__.py": "", "pkg/llama/__init__.py": "",
             "pkg/qwen/model.py": KV, "pkg/llama/model.py": KV,
             "main.py": "import pkg.qwen.model\nimport pkg.llama.model\n"}
    found = lint(files, select=SEL)
    assert where(found) == [("pkg/qwen/model.py",) + at(KV, "tng.ops") + ("NPU306",)]


TWICE = ZOO_RUN.replace("m = Attn()", "m = Attn()\n    n = Attn()")


@pytest.mark.parametrize("twice", ["qwen", "llama"])
def test_npu306_class_of_a_shared_module_name_is_counted_by_its_file(lint, twice):
    # the model zoo: one run.py makes two Attn of its own folder's model.py (the second creation
    # of "attn_ready" raises); the other folder's Attn, one qualified name with it, is made once
    # in its own process and counted apart (never one from the other's)
    once = "llama" if twice == "qwen" else "qwen"
    files = {"zoo2/qwen/model.py": ZOO_MODEL, "zoo2/llama/model.py": ZOO_MODEL,
             f"zoo2/{twice}/run.py": TWICE, f"zoo2/{once}/run.py": ZOO_RUN}
    found = lint(files, select=SEL)
    assert where(found) == [(f"zoo2/{twice}/model.py",) + at(ZOO_MODEL, "tng.ops.npu_create_tagged_event")
                            + ("NPU306",)]
    assert "once per instance of Attn, which is instantiated more than once" in found[0].message


@pytest.mark.parametrize("run", [
    "from model import Attn as A\nA()\nA()\n",                        # an alias
    "import model\nmodel.Attn()\nmodel.Attn()\n",                     # through the module
    "import model as m\nm.Attn()\nm.Attn()\n",
    "from model import Attn\nLAYERS = [Attn() for _ in range(2)]\n",   # in a loop
    "from model import Attn\n\nclass Big(Attn):\n    pass\n\nBig()\nBig()\n",  # a subclass
    "from model import Attn\n\ndef build():\n    return Attn()\n\nbuild()\nbuild()\n",
])
def test_npu306_shared_module_name_aliases_and_values(lint, run):
    files = {"zoo2/qwen/model.py": ZOO_MODEL, "zoo2/qwen/run.py": run,
             "zoo2/llama/model.py": ZOO_MODEL, "zoo2/llama/run.py": ZOO_RUN}
    assert [f.path for f in lint(files, select=SEL)] == ["zoo2/qwen/model.py"]
    # twin: the same made once in each folder
    once = {"zoo2/qwen/model.py": ZOO_MODEL, "zoo2/qwen/run.py": ZOO_RUN,
            "zoo2/llama/model.py": ZOO_MODEL, "zoo2/llama/run.py": ZOO_RUN}
    assert codes(lint(once, select=SEL)) == []


def test_npu306_subclass_in_each_folder_is_counted_by_its_file(lint):
    # each folder's run.py subclasses its own Attn and makes it once: no process makes two
    run = "from model import Attn\n\nclass Big(Attn):\n    pass\n\nBig()\n"
    files = {"zoo2/qwen/model.py": ZOO_MODEL, "zoo2/qwen/run.py": run,
             "zoo2/llama/model.py": ZOO_MODEL, "zoo2/llama/run.py": run}
    assert codes(lint(files, select=SEL)) == []


ZOO_BASE = mk("""
    class Base(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.evt = tng.ops.npu_create_tagged_event(tag="attn_ready")

    class Attn(Base):
        def __init__(self):
            super().__init__()
""")


@pytest.mark.parametrize("twice, report", [("llama", False), ("qwen", True)])
def test_npu306_methods_of_a_shared_module_name_are_their_file_s(lint, twice, report):
    # trap: llama's Attn.__init__ never runs Base.__init__ (qwen's does): two llama Attn create
    # no event. Keyed by name, one file's methods would stand for the other's
    llama = ZOO_BASE.replace("class Attn(Base):\n    def __init__(self):\n        super().__init__()\n",
                             "class Attn(Base):\n    def __init__(self):\n        pass\n")
    assert llama != ZOO_BASE
    once = "llama" if twice == "qwen" else "qwen"
    files = {"zoo2/qwen/model.py": ZOO_BASE, "zoo2/llama/model.py": llama,
             f"zoo2/{twice}/run.py": TWICE, f"zoo2/{once}/run.py": ZOO_RUN}
    assert [f.path for f in lint(files, select=SEL)] == (["zoo2/qwen/model.py"] if report else [])


def test_npu306_class_of_a_shared_name_from_another_folder_is_unknown(lint):
    # tools/run.py makes two Attn of `model`, which qwen/ and llama/ both hold: which one (and so
    # whether its __init__ creates the event) is not known
    files = {"zoo2/qwen/model.py": ZOO_MODEL, "zoo2/llama/model.py": ZOO_MODEL,
             "zoo2/tools/run.py": TWICE}
    assert codes(lint(files, select=SEL)) == []


def test_npu306_package_layout_is_keyed_by_its_dotted_names(lint):
    # trap: pkg.qwen.model and pkg.llama.model are two module names (not one shared): their
    # classes keep their qualified names, counted as before
    init = {"pkg/__init__.py": "", "pkg/qwen/__init__.py": "", "pkg/llama/__init__.py": ""}
    twice = "from pkg.qwen.model import Attn\nAttn()\nAttn()\nfrom pkg.llama.model import Attn as L\n"
    files = dict(init, **{"pkg/qwen/model.py": ZOO_MODEL, "pkg/llama/model.py": ZOO_MODEL, "main.py": twice})
    assert where(lint(files, select=SEL)) == [("pkg/qwen/model.py",) + at(ZOO_MODEL, "tng.ops.npu_create_tagged_event")
                                              + ("NPU306",)]
    # both classes made once in one process: their creations of one tag meet
    both = "from pkg.qwen.model import Attn\nfrom pkg.llama.model import Attn as L\nAttn()\nL()\n"
    files["main.py"] = both
    found = lint(files, select=SEL)
    assert where(found) == [("pkg/qwen/model.py",) + at(ZOO_MODEL, "tng.ops.npu_create_tagged_event")
                            + ("NPU306",)]
    assert "pkg/llama/model.py" in found[0].message


ZOO_WAIT = mk("""
    class M(torch.nn.Module):
        def forward(self, x, y):
            return tng.scope.npu_wait_tensor(x, y)
""")
ZOO_COMPILE = RUN_TEMPLATE.replace("Model", "M")


def test_npu308_compiled_class_of_a_shared_module_name_is_its_folder_s(lint):
    # qwen/run.py compiles qwen's M in reduce-overhead, llama/run.py llama's in max-autotune:
    # only qwen's npu_wait_tensor runs in an aclgraph mode
    files = {"zoo2/qwen/model.py": ZOO_WAIT, "zoo2/llama/model.py": ZOO_WAIT,
             "zoo2/qwen/run.py": ZOO_COMPILE.format(module="model", mode="reduce-overhead"),
             "zoo2/llama/run.py": ZOO_COMPILE.format(module="model", mode="max-autotune")}
    found = lint(files, select=SEL)
    assert where(found) == [("zoo2/qwen/model.py",) + at(ZOO_WAIT, "tng.scope.npu_wait_tensor") + ("NPU308",)]
    assert "zoo2/qwen/run.py" in found[0].message


def test_npu306_class_of_a_unique_module_name_is_still_counted(lint):
    # twin: one folder, one model.py, made twice
    run = ZOO_RUN.replace("m = Attn()", "m = Attn()\n    n = Attn()")
    found = lint({"zoo2/llama/model.py": ZOO_MODEL, "zoo2/llama/run.py": run}, select=SEL)
    assert [f.path for f in found] == ["zoo2/llama/model.py"]


# ======================================================================================
# NPU307 stream-tag-type
# ======================================================================================

def test_npu307_int_stream_tag(lint):
    src = mk("""
        with tng.scope.npu_stream_switch(1):
            y = x + 1
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU307"]
    assert pos(found[0]) == at(src, "1)")
    assert "not a str" in found[0].message


@pytest.mark.parametrize("body, needle", [
    ('from torchair.scope import npu_stream_switch as s\nTAG = 2\nwith s(TAG):\n    pass\n', "TAG)"),
    ('from torchair.ops import NpuStreamSwitch\nwith NpuStreamSwitch(stream_tag=3.0):\n    pass\n', "3.0"),
    ('import torchair\nwith torchair.ops.NpuStreamSwitch(None):\n    pass\n', "None"),
    ('from torchair.ops import npu_create_tagged_event\nTAG = 5\nev = npu_create_tagged_event(TAG)\n', "TAG)"),
    ('import torchair as tng\nev = tng.ops.npu_create_tagged_event(tag=b"x")\n', 'b"x"'),
    # npu_record_tagged_stream(input, tagged_stream: str) (RULES.md NPU307 "a stream tag")
    ('import torchair as tng\ndef f(x):\n    tng.ops.npu_record_tagged_stream(x, 1)\n', "1)"),
    ('from torchair.ops import npu_record_tagged_stream as rts\nSTREAM = 2\n'
     'def f(x):\n    rts(x, tagged_stream=STREAM)\n', "STREAM)"),
])
def test_npu307_aliases_legacy_and_constants(lint, body, needle):
    found = lint(body, select=SEL)
    assert codes(found) == ["NPU307"]
    assert pos(found[0]) == at(body, needle)


def test_npu307_clean_twin_and_unknown(lint):
    src = mk("""
        TAG = "1"
        with tng.scope.npu_stream_switch(TAG):
            pass
        ev = tng.ops.npu_create_tagged_event(tag="e")

        def step(tag, x):
            with tng.scope.npu_stream_switch(tag):
                tng.ops.npu_record_tagged_stream(x, tag)
                tng.ops.npu_record_tagged_stream(x, TAG)
                tng.ops.npu_record_tagged_stream(x, "1")
                tng.ops.npu_record_tagged_stream(x, tagged_stream="default")
                tng.ops.npu_record_tagged_stream(x)  # does not bind: NPU010's
                return tng.ops.npu_create_tagged_event(tag=tag)
    """)
    assert codes(lint(src, select=["NPU307"])) == []


def test_npu307_wrapper_taking_a_stream_is_not_torchair(lint):
    src = """
        import torch
        from vllm_ascend.utils import npu_stream_switch

        aux_stream = torch.npu.Stream()
        with npu_stream_switch(aux_stream, enabled=True):
            pass
        with npu_stream_switch(1):
            pass
    """
    assert codes(lint(src, select=SEL)) == []


def test_npu307_messages_say_what_happens_and_what_to_do(lint):
    src = mk("""
        with tng.scope.npu_stream_switch(1):
            pass
        ev = tng.ops.npu_create_tagged_event(tag=2)
        def f(x):
            tng.ops.npu_record_tagged_stream(x, 3)
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU307"] * 3
    for f in found:
        assert says_runtime_and_fix(f.message, ("raises", "fails", "error", "TypeError", "RuntimeError"),
                                    ("pass", "use a str", "string")), f.message


def test_npu30x_each_call_is_judged_at_its_own_node_with_the_files_later_bindings(lint):
    # the rules judge in their visit_Call, from the analysis's record of that call: among
    # several calls of one API only the one that breaks the rule is reported, at its own
    # argument; a call in a function body reads the module's constants bound after it
    src = mk("""
        def step(x):
            with tng.scope.npu_stream_switch("1"):
                y = x + 1
            with tng.scope.npu_stream_switch("2", PRIO):
                y = y + 1
            tng.ops.npu_record_tagged_stream(y, "2")
            tng.ops.npu_record_tagged_stream(y, OTHER)
            ok = tng.ops.npu_create_tagged_event(tag="ok")
            bad = tng.ops.npu_create_tagged_event(tag=NUM)
            late = tng.ops.npu_create_tagged_event(tag="late")
            tng.ops.npu_tagged_event_record(ok)
            tng.ops.npu_tagged_event_wait(ok)
            tng.ops.npu_tagged_event_wait(bad)
            tng.ops.npu_tagged_event_wait(late)
            tng.ops.npu_tagged_event_record(late)
            return y
        PRIO = 2
        OTHER = "3"
        NUM = 4
    """)
    found = lint(src, select=SEL)
    assert [(f.line, f.column, f.code) for f in found] == sorted([
        at(src, "PRIO)") + ("NPU304",),
        at(src, "OTHER)") + ("NPU305",),
        at(src, "NUM)") + ("NPU307",),
        at(src, "tng.ops.npu_tagged_event_wait(bad)") + ("NPU301",),
        at(src, "tng.ops.npu_tagged_event_wait(late)") + ("NPU302",),
    ])


# ======================================================================================
# NPU308 wait-tensor-in-aclgraph
# ======================================================================================

WAIT_MODEL = """
    class Model(torch.nn.Module):
        def forward(self, x, y):
            with tng.scope.npu_stream_switch("1"):
                z = tng.scope.npu_wait_tensor(x, y)
            return z
"""


@pytest.mark.parametrize("mode", ["reduce-overhead", "npugraph_ex"])
def test_npu308_wait_tensor_in_aclgraph(lint, mode):
    src = mk(WAIT_MODEL, f"""
        config = tng.CompilerConfig()
        config.mode = "{mode}"
        model = torch.compile(Model(), backend=tng.get_npu_backend(compiler_config=config))
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU308"]
    assert pos(found[0]) == at(src, "tng.scope.npu_wait_tensor")
    msg = found[0].message
    assert mode in msg and f"line {at(src, 'model = torch.compile')[0]}" in msg
    assert says_runtime_and_fix(msg, ("NotImplementedError",), ("npu_tagged_event_wait",))


def test_npu308_clean_twin_max_autotune(lint):
    src = mk(WAIT_MODEL, """
        config = tng.CompilerConfig()
        model = torch.compile(Model(), backend=tng.get_npu_backend(compiler_config=config))
    """)
    assert codes(lint(src, select=SEL)) == []


@pytest.mark.parametrize("header, call", [
    ("from torchair.scope import npu_wait_tensor as wt\n", "wt(x, y)"),
    ("from torchair.ops import npu_wait_tensor\n", "npu_wait_tensor(x, y)"),
    ("import torchair\n", "torchair.ops.npu_wait_tensor(x, dependency=y)"),
])
def test_npu308_aliases_legacy_and_constant_mode(lint, header, call):
    src = mk(f"""
        from torchair.configs.compiler_config import CompilerConfig
        MODE = "reduce-" + "overhead"

        class Model(torch.nn.Module):
            def forward(self, x, y):
                return {call}

        config = CompilerConfig()
        config.mode = MODE
        model = Model()
        model = torch.compile(model, backend=tng.get_npu_backend(compiler_config=config))
    """, header=HEADER + header)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU308"]
    assert pos(found[0]) == at(src, call)


def test_npu308_mode_under_if_is_unknown(lint):
    src = mk(WAIT_MODEL, """
        config = tng.CompilerConfig()
        for m in ("reduce-overhead",):
            config.mode = m
        model = torch.compile(Model(), backend=tng.get_npu_backend(compiler_config=config))
    """)
    assert codes(lint(src, select=SEL)) == []


def test_npu308_wrapper_wait_tensor_is_not_torchair(lint):
    # vllm-ascend v0.9.1-dev's npu_wait_tensor(..., enabled=...) wrapper
    src = mk("""
        from vllm_ascend.utils import npu_wait_tensor

        class Model(torch.nn.Module):
            def forward(self, x, y):
                return npu_wait_tensor(x, y, enabled=True)

        config = tng.CompilerConfig()
        config.mode = "reduce-overhead"
        model = torch.compile(Model(), backend=tng.get_npu_backend(compiler_config=config))
    """)
    assert codes(lint(src, select=SEL)) == []


def test_npu308_cross_file(lint):
    model = mk(WAIT_MODEL)
    found = lint({"model.py": model, "run.py": RUN_TEMPLATE.format(module="model", mode="reduce-overhead")},
                 select=SEL)
    assert where(found) == [("model.py",) + at(model, "tng.scope.npu_wait_tensor") + ("NPU308",)]
    assert f"run.py:{at(RUN_TEMPLATE, 'model = torch.compile')[0]}" in found[0].message


def test_npu308_cross_file_submodule_and_subclass(lint):
    model = mk("""
        class Layer(torch.nn.Module):
            def forward(self, x, y):
                return tng.scope.npu_wait_tensor(x, y)

        class Model(torch.nn.Module):
            def __init__(self, n):
                super().__init__()
                self.layers = torch.nn.ModuleList([Layer() for _ in range(n)])

            def forward(self, x, y):
                for layer in self.layers:
                    x = layer(x, y)
                return x

        class Big(Model):
            pass
    """)
    run = RUN_TEMPLATE.format(module="model", mode="npugraph_ex").replace("Model", "Big").replace("Big()", "Big(4)")
    found = lint({"model.py": model, "run.py": run}, select=SEL)
    assert where(found) == [("model.py",) + at(model, "tng.scope.npu_wait_tensor") + ("NPU308",)]


def test_npu308_cross_file_subclass_in_a_file_without_stream_apis(lint):
    layers = mk(WAIT_MODEL)
    big = """
        from layers import Model

        class Big(Model):
            pass
    """
    run = RUN_TEMPLATE.format(module="big", mode="reduce-overhead").replace("import Model", "import Big") \
        .replace("Model()", "Big()")
    found = lint({"layers.py": layers, "big.py": big, "run.py": run}, select=SEL)
    assert where(found) == [("layers.py",) + at(layers, "tng.scope.npu_wait_tensor") + ("NPU308",)]


# ======================================================================================
# NPU010 for the torchair multi-stream APIs
# ======================================================================================

def test_npu010_torchair_stream_apis(lint):
    src = mk("""
        from torchair.scope import npu_stream_switch as s
        from torchair.ops import NpuStreamSwitch

        with s():
            pass
        ev = tng.ops.npu_create_tagged_event(tag='a', priority=1)
        with s("1", 0, True, 4):
            pass
        with NpuStreamSwitch("1", 0, True):
            pass
        tng.scope.npu_wait_tensor(x)
        tng.ops.npu_tagged_event_record()
        tng.ops.npu_record_tagged_stream(x, "1", tagged_stream="1")
    """)
    found = lint(src, select=SEL)
    assert codes(found) == ["NPU010"] * 7
    assert [pos(f) for f in found] == [at(src, "s()"), at(src, "tng.ops.npu_create_tagged_event"),
                                       at(src, 's("1", 0, True, 4)'), at(src, 'NpuStreamSwitch("1", 0, True)'),
                                       at(src, "tng.scope.npu_wait_tensor"), at(src, "tng.ops.npu_tagged_event_record"),
                                       at(src, "tng.ops.npu_record_tagged_stream")]
    assert "stream_tag" in found[0].message and "TypeError" in found[0].message
    assert "priority" in found[1].message


def test_npu010_clean_twin(lint):
    src = mk("""
        from torchair.scope import npu_stream_switch as s

        with s("1"):
            pass
        with s(stream_tag="1", stream_priority=0, enable_inner_parallel=False):
            pass
        ev = tng.ops.npu_create_tagged_event(tag="a")
        tng.ops.npu_tagged_event_record(ev)
        tng.ops.npu_tagged_event_wait(event=ev)
        y = tng.scope.npu_wait_tensor(x, dependency=ev)
        tng.ops.npu_record_tagged_stream(y, tagged_stream="1")
        with s(*args):
            pass
    """)
    assert codes(lint(src, select=SEL)) == []


def test_npu010_wrappers_are_not_checked(lint):
    src = """
        from vllm_ascend.utils import npu_stream_switch, npu_wait_tensor

        def npu_create_tagged_event(tag, priority):
            return (tag, priority)

        with npu_stream_switch(aux_stream, enabled=True):
            y = npu_wait_tensor(x, dep, enabled=False)
        ev = npu_create_tagged_event(tag="a", priority=1)
    """
    assert codes(lint(src, select=SEL)) == []


def test_npu306_an_instantiation_under_the_main_guard_runs_only_in_its_own_script(lint):
    model = ("import torch\nimport torchair as tng\n\n\nclass Layer(torch.nn.Module):\n    def __init__(self):\n"
             "        super().__init__()\n        self.ev = tng.ops.npu_create_tagged_event(tag='ev1')\n\n\n"
             "if __name__ == \"__main__\":\n    Layer()\n")
    serve = "from model import Layer\n\nlayer = Layer()\n"
    assert lint({"model.py": model, "serve.py": serve}, select=["NPU306"]) == []
    twice = model + "    Layer()\n"
    assert codes(lint({"model.py": twice, "serve.py": serve}, select=["NPU306"])) == ["NPU306"]


# two instantiations that never both run make one instance per process (RULES.md general
# semantics: what is certain), whatever arm of the statement the run takes
@pytest.mark.parametrize("build", [
    # the arms of one if/else
    """
    def build(small):
        if small:
            model = Layer(1)
        else:
            model = Layer()
        return model
    """,
    # the arms of a conditional expression
    """
    def build(small):
        return Layer(1) if small else Layer()
    """,
    # an if arm that returns, and what follows the if
    """
    def build(dtype):
        if dtype is None:
            return Layer()
        return Layer(dtype)
    """,
    # a subclass in one arm, the base after it
    """
    class Big(Layer):
        pass

    def build(big):
        if big:
            return torch.compile(Big())
        return torch.compile(Layer())
    """,
    # after a return: never runs
    """
    def build():
        model = Layer()
        return model
        Layer()
    """,
])
def test_npu306_instantiations_that_never_both_run_are_one_instance(lint, build):
    assert codes(lint(mk(LAYER, build), select=SEL)) == []


@pytest.mark.parametrize("build", [
    # an if after the first: both run
    """
    def build(small):
        model = Layer()
        if small:
            model = Layer(1)
        return model
    """,
    # an if arm that does not always end
    """
    def build(dtype):
        if dtype is None:
            model = Layer()
            if model:
                return model
        return Layer(dtype)
    """,
    # or: both run when the first is falsy
    """
    def build(dtype):
        return Layer() or Layer(dtype)
    """,
    # the arms of an if in a loop take turns
    """
    def build(flags):
        for flag in flags:
            model = Layer(1) if flag else Layer()
        return model
    """,
])
def test_npu306_instantiations_that_may_both_run_clean_twins(lint, build):
    src = mk(LAYER, build)
    found = lint(src, select=SEL)
    assert where(found) == [("t.py",) + at(src, "tng.ops.npu_create_tagged_event") + ("NPU306",)]


GE_ACL = """
    def build_ge():
        return Layer()

    def build_acl():
        return Layer()
"""


PICK = """
    def pick(ge):
        if ge:
            build_ge()
        else:
            build_acl()
"""


# two instantiations in functions that the run calls only under disjoint arms of one statement
# (up the chain of callers) never both run: one process builds one model (torchair's registry,
# _tagged_event.py:137-138, sees the tag once)
@pytest.mark.parametrize("build", [
    # the probe's case: main() picks the benchmark or the inference
    """
    def run_benchmark(args):
        model = Layer()
        return model

    def run_inference(args):
        model = Layer()
        return model

    def main():
        args = parse()
        if args.bench:
            run_benchmark(args)
        else:
            run_inference(args)

    if __name__ == "__main__":
        main()
    """,
    # ge or acl factory, chosen in the main guard
    GE_ACL + """
    if __name__ == "__main__":
        if sys.argv[1] == "ge":
            model = build_ge()
        elif sys.argv[1] == "acl":
            model = build_acl()
        else:
            model = Layer(2)
    """,
    # a conditional expression, and a chain two calls deep
    """
    def make():
        return Layer()

    def build_ge():
        return make()

    def build_acl():
        return Layer()

    model = build_ge() if FLAG else build_acl()
    """,
    # an entry point nobody in the run calls (console_scripts: infer:main) still picks one
    """
    def run_benchmark():
        return Layer()

    def run_inference():
        return Layer()

    def main():
        if parse().bench:
            return run_benchmark()
        return run_inference()
    """,
    # the function that picks one, run once
    GE_ACL + PICK + """
    if __name__ == "__main__":
        pick(FLAG)
    """,
    # two factories nothing in the run calls: entry points of their own, one process may run
    # either (RULES.md's "two call sites" are two that certainly run in one process)
    GE_ACL,
    # factories used other than by a call: whoever gets them may call either
    GE_ACL + """
    BUILDERS = [build_ge, build_acl]
    if FLAG:
        build_ge()
    else:
        build_acl()
    """,
    # subcommands: one process runs the one the command line names
    GE_ACL + """
    def main():
        import argparse
        parser = argparse.ArgumentParser()
        sub = parser.add_subparsers()
        sub.add_parser("ge").set_defaults(func=build_ge)
        sub.add_parser("acl").set_defaults(func=build_acl)
        args = parser.parse_args()
        args.func()

    if __name__ == "__main__":
        main()
    """,
    GE_ACL + """
    COMMANDS = {"ge": build_ge, "acl": build_acl}

    if __name__ == "__main__":
        COMMANDS[sys.argv[1]]()
    """,
    """
    import click

    @click.group()
    def cli():
        pass

    @cli.command()
    def infer():
        model = Layer()

    @cli.command()
    def bench():
        model = Layer()

    if __name__ == "__main__":
        cli()
    """,
    # an entry point the main guard does not call
    GE_ACL + """
    if __name__ == "__main__":
        build_ge()
    """,
])
def test_npu306_instantiations_in_functions_called_in_disjoint_arms_are_one_instance(lint, build):
    src = mk(LAYER, "import sys\nFLAG = bool(sys.argv[1:])\n\ndef parse():\n    return None\n", build)
    assert codes(lint(src, select=SEL)) == []


@pytest.mark.parametrize("build", [
    # two tests under pytest: one process runs both (nothing in the run calls them)
    """
    def test_ge():
        assert build_ge()

    def test_acl():
        assert build_acl()
    """,
    # called in sequence
    """
    def main():
        a = build_ge()
        b = build_acl()

    if __name__ == "__main__":
        main()
    """,
    # one of them also called after the if
    """
    if __name__ == "__main__":
        if FLAG:
            build_ge()
        else:
            build_acl()
        build_acl()
    """,
    # the arms of an if in a loop take turns
    """
    for mode in sys.argv:
        if mode == "ge":
            build_ge()
        else:
            build_acl()
    """,
    # a caller not known as such: a lambda
    """
    pick = lambda: build_ge()
    if FLAG:
        pick()
    else:
        build_acl()
    """,
    # the function that picks one runs twice: each run takes its own arm (two pytest tests, two
    # calls in sequence, a call in a loop), so both are made in one process
    PICK + """
    def test_ge():
        pick(True)

    def test_acl():
        pick(False)
    """,
    PICK + """
    pick(True)
    pick(False)
    """,
    PICK + """
    for flag in (True, False):
        pick(flag)
    """,
    PICK + """
    def main(flag):
        pick(flag)

    main(True)
    main(False)
    """,
])
def test_npu306_instantiations_in_functions_that_may_both_run_clean_twins(lint, build):
    src = mk(LAYER, "import sys\nFLAG = bool(sys.argv[1:])\n", GE_ACL, build)
    found = lint(src, select=SEL)
    assert where(found) == [("t.py",) + at(src, "tng.ops.npu_create_tagged_event") + ("NPU306",)]


@pytest.mark.parametrize("bench, reported", [
    ("import infer\n\ninfer.build_ge()\ninfer.build_acl()\n", True),
    ("import infer\n", False),  # (their entries: bench.py calls neither)
    ("import torch\n", False),
])
def test_npu306_functions_of_a_module_another_module_imports_keep_their_own_branches(lint, bench, reported):
    # bench.py may call build_ge and build_acl both: the arms of infer.py do not tell
    infer = mk(LAYER, "import sys\n", GE_ACL, """
        if __name__ == "__main__":
            if sys.argv[1] == "ge":
                build_ge()
            else:
                build_acl()
    """)
    found = lint({"infer.py": infer, "bench.py": bench}, select=SEL)
    expected = [("infer.py",) + at(infer, "tng.ops.npu_create_tagged_event") + ("NPU306",)]
    assert where(found) == (expected if reported else [])


def test_npu306_one_tag_in_two_classes_made_by_factories_in_disjoint_arms(lint):
    src = mk(VARIANTS.format(build=textwrap.dedent("""
        def deepseek():
            return DeepseekMoE()

        def qwen():
            return QwenMoE()

        def main(name):
            if name == 'deepseek':
                deepseek()
            else:
                qwen()
    """).replace("\n", "\n    ")))
    assert codes(lint(src, select=["NPU306"])) == []
    both = src.replace("    else:\n        qwen()", "    qwen()")
    assert both != src
    assert codes(lint(both, select=["NPU306"])) == ["NPU306"]


# what an imported module runs in the importer's process: its module-level code, and the functions
# that code or the script calls (by name, transitively, __init__ on instantiation); not a function
# nobody calls (RULES.md general semantics: a call not known to run is not counted)
@pytest.mark.parametrize("helpers, bench, reported", [
    # bench.py takes parse_args from infer.py, whose main() (never called here) makes a Layer
    ("def main():\n    return Layer()\n", "from infer import parse_args\nargs = parse_args()\n", False),
    ("def main():\n    return Layer()\n", "from infer import main\n", False),
    ("def main():\n    return Layer()\n", "from infer import main\nmain()\n", True),
    # transitively, through a module attribute
    ("def helper():\n    return Layer()\n\ndef main():\n    return helper()\n", "import infer\ninfer.main()\n", True),
    # module-level code of the imported module calls it
    ("def build():\n    return Layer()\n\nDEFAULT = build()\n", "import infer\n", True),
    # an instantiation runs the class's __init__, and the bases' it calls through super()
    ("class Runner:\n    def __init__(self):\n        self.model = Layer()\n", "from infer import Runner\n", False),
    ("class Runner:\n    def __init__(self):\n        self.model = Layer()\n", "from infer import Runner\nRunner()\n",
     True),
    ("class Base:\n    def __init__(self):\n        self.model = Layer()\n\nclass Runner(Base):\n"
     "    def __init__(self):\n        super().__init__()\n", "from infer import Runner\nRunner()\n", True),
    ("class Base:\n    def __init__(self):\n        self.model = Layer()\n\nclass Runner(Base):\n"
     "    def __init__(self):\n        pass\n", "from infer import Runner\nRunner()\n", False),
])
def test_npu306_an_imported_module_runs_the_functions_its_process_calls(lint, helpers, bench, reported):
    layer = mk(LAYER)
    infer = ("from mypkg.layer import Layer\n\n\ndef parse_args():\n    return None\n\n\n" + helpers
             + "\n\nif __name__ == \"__main__\":\n    parse_args()\n")
    files = {"mypkg/__init__.py": "", "mypkg/layer.py": layer, "infer.py": infer,
             "bench.py": bench + "from mypkg.layer import Layer\nmodel = Layer()\n"}
    found = lint(files, select=SEL)
    expected = [("mypkg/layer.py",) + at(layer, "tng.ops.npu_create_tagged_event") + ("NPU306",)]
    assert where(found) == (expected if reported else [])


@pytest.mark.parametrize("text", [
    "m.layers[0] = x\n",
    "m.layers.append(x)\n",
    "del m.layers[0]\n",
    "del x[0]; self.items.append(y); del z.w[1]\n",  # the del's match hides the append in it
    "del a.b[0]\nself.items.append(y)\n",
    "m.a[c.d[0] = 1]\n",  # the outer store's match hides the inner one
    "modeldel.x[0] = 1\n",  # ``del`` only as a word
    "x . layers \\\n [0] += 1\n",
    "m.layers == 1\nm.layers[0] == 1\n",
])
def test_changed_names_are_one_alternations_findall(text):
    """The names another module's text may change in place are what ``findall`` of the store
    and the ``del`` patterns as one alternation gives (the engine searches for each apart)."""
    import re

    from npulint.rules import torchair_streams as ts

    one = re.compile(ts._CHANGED_TEXT.pattern + "|" + ts._DELETED_TEXT.pattern)
    assert ts._changed_names(text) == {a or b for a, b in one.findall(text)}
