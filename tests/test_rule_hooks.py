"""When a rule's hooks run: after the file's one traversal, once the analyses it reads are
complete, in the traversal's order and at the point of the program where the traversal met each
node (npulint.lintrule; Walker.replay)."""

import pytest

from npulint import registry, rulebase
from npulint.config import Settings
from npulint.core import analyse_file
from npulint.lintrule import Analysis, LintRule


@pytest.fixture
def own_rules(monkeypatch):
    """Rule classes a test defines are not added to the run's rules (which are loaded first:
    a rule module imported while the list is patched would register its rules in the copy)."""
    registry.load()
    monkeypatch.setattr(rulebase, "_RULES", list(rulebase._RULES))


def _run(text, checkers, enabled):
    return analyse_file("/t/m.py", "m.py", "python", text, Settings(root="/t"), checkers, set(enabled),
                        active=[c for c in checkers if issubclass(c, LintRule)], module=("m", False))


class Calls(Analysis):
    def __init__(self, ctx):
        super().__init__(ctx)
        self.calls = []
        self.complete = False

    def visit_Call(self, node):
        self.calls.append(node)

    def finish(self):
        self.complete = True


def test_a_rules_hooks_run_after_its_analyses_are_complete_in_the_walks_order(own_rules):
    log = []

    class Probe(LintRule):
        CODE = "NPU990"
        uses = (Calls,)

        def visit_Call(self, node):
            a = self.ctx.analysis(Calls)
            site = self.ctx.site()
            # a call in a function body resolves with the module's later import: the rule sees
            # every binding of the file, at the call's own point of the program
            q = self.ctx.resolve(node.func, site, {"torch_npu.npu_x"})
            log.append((a.complete, len(a.calls), site.scope.kind, q))
            self.report(node, "probe")

        def leave_FunctionDef(self, node):
            log.append(("leave", node.name.value))

        def finish(self):
            log.append("finish")

    text = "f(x)\ndef g():\n    return torch_npu.npu_x(y)\nimport torch_npu\n"
    result = _run(text, [Calls, Probe], {"NPU990"})
    assert log == [(True, 2, "module", None), (True, 2, "function", "torch_npu.npu_x"), ("leave", "g"), "finish"]
    assert sorted((f.line, f.column, f.code) for f in result.findings) == [(1, 1, "NPU990"), (3, 12, "NPU990")]


def test_a_rule_whose_hook_raises_reports_npu000_and_the_others_still_run(own_rules):
    class Broken(LintRule):
        CODE = "NPU991"
        uses = (Calls,)

        def visit_Call(self, node):
            raise ValueError("boom")

    class Fine(LintRule):
        CODE = "NPU992"
        uses = (Calls,)

        def visit_Call(self, node):
            self.report(node, "fine")

        def finish(self):
            self.report(self.ctx.module.body[0], "finished")

    result = _run("f(x)\ng(y)\n", [Calls, Broken, Fine], {"NPU000", "NPU991", "NPU992"})
    assert sorted((f.line, f.code) for f in result.findings) == [(1, "NPU000"), (1, "NPU992"), (1, "NPU992"),
                                                                (2, "NPU992")]
    assert [f.message for f in result.findings if f.code == "NPU000"][0].count("boom") == 1


def test_a_rule_reading_an_analysis_that_failed_is_not_run(own_rules):
    ran = []

    class Failing(Analysis):
        def finish(self):
            raise ValueError("analysis bug")

    class Reader(LintRule):
        CODE = "NPU993"
        uses = (Failing,)

        def visit_Call(self, node):
            ran.append(node)

    result = _run("f(x)\n", [Failing, Reader], {"NPU000", "NPU993"})
    assert ran == []
    assert [f.code for f in result.findings] == ["NPU000"]


def test_site_outside_a_hook_is_an_error_not_the_end_of_the_file(own_rules):
    # after the traversal there is no current point of the program: a rule that asked for one
    # in finish() would judge at the end of the module, whatever node it meant
    class AsksInFinish(LintRule):
        CODE = "NPU994"
        uses = (Calls,)

        def finish(self):
            self.ctx.site()

    result = _run("f(x)\n", [Calls, AsksInFinish], {"NPU000", "NPU994"})
    assert [f.code for f in result.findings] == ["NPU000"]
    assert "site() is asked outside a hook" in result.findings[0].message
