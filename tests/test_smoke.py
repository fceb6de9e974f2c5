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


def test_parse_compare_bench_runs_on_the_files_the_prefilter_selects(tmp_path):
    """bench/parse_compare.py (ast against LibCST, docs/benchmarks.md) counts only the files
    npulint would parse, and times both parsers on them."""
    import subprocess
    import sys

    from conftest import REPO

    (tmp_path / "uses.py").write_text("import torchair\nwith torchair.scope.npu_stream_switch('1', 0):\n    pass\n")
    (tmp_path / "plain.py").write_text("print('nothing to see')\n")
    out = subprocess.run([sys.executable, str(REPO / "bench" / "parse_compare.py"), str(tmp_path), "--rounds", "1"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "1 files the prefilter parses, 3 lines" in out.stdout
    assert "ast parse" in out.stdout and "LibCST parse" in out.stdout
