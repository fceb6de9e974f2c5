from conftest import codes


def test_prefetch_smoke(lint):
    found = lint("""
        from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope
        with npu_weight_prefetch_scope():
            pass
        with npu_weight_prefetch_scope(0, 1024):
            pass
    """)
    assert codes(found) == ["NPU101"]
    assert (found[0].line, found[0].column) == (5, 6)


def test_engine_time_bench_runs_on_the_files_the_prefilter_selects(tmp_path):
    """bench/engine_time.py (docs/benchmarks.md, "LibCST engine") counts only the files npulint
    would parse, and times CPython's compile, LibCST's parse and both traversals on them."""
    import subprocess
    import sys

    from conftest import REPO

    (tmp_path / "uses.py").write_text("import torchair\nwith torchair.scope.npu_stream_switch('1', 0):\n    pass\n")
    (tmp_path / "plain.py").write_text("print('nothing to see')\n")
    out = subprocess.run([sys.executable, str(REPO / "bench" / "engine_time.py"), str(tmp_path), "--rounds", "1"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "1 files parsed (3 lines)" in out.stdout
    assert "LibCST parse" in out.stdout and "npulint's walker" in out.stdout and "LibCST's traversal" in out.stdout


def test_instructions_bench_sums_what_callgrind_collects_over_the_children():
    """bench/instructions.py (docs/benchmarks.md, session 21) counts a command's instructions
    under callgrind, its child processes included."""
    import shutil
    import subprocess
    import sys

    import pytest

    from conftest import REPO

    if shutil.which("valgrind") is None:
        pytest.skip("valgrind is not installed")
    true = shutil.which("true")
    one = subprocess.run([sys.executable, str(REPO / "bench" / "instructions.py"), "--", true],
                         capture_output=True, text=True, timeout=120)
    two = subprocess.run([sys.executable, str(REPO / "bench" / "instructions.py"), "--", "sh", "-c", f"{true}; {true}"],
                         capture_output=True, text=True, timeout=120)
    assert one.returncode == 0 and two.returncode == 0, one.stderr + two.stderr

    def parts(out):  # "TOTAL instructions (FIRST, SECOND, ...)"
        total, per = out.stdout.split(" instructions (")
        return int(total.replace(",", "")), [int(n.replace(",", "")) for n in per.rstrip(")\n").split(", ")]

    (t1, per1), (t2, per2) = parts(one), parts(two)
    assert len(per1) == 1 and t1 == per1[0] > 0
    assert len(per2) == 3 and t2 == sum(per2)  # the shell and its two children
