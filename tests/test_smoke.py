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
