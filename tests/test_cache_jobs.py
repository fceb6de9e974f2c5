"""The result cache (``.npulint_cache/``), worker processes (``--jobs``) and the size limit:
none of them changes a finding."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import textwrap

import pytest

from conftest import parse

from npulint import cache as cache_mod
from npulint import pipeline, registry, workers
from npulint.analyse import FileResult
from npulint.config import Settings, enabled_codes
from npulint.model import Edit, Finding, Fix

IMPORT = "from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope\n"
INVALID_ID = IMPORT + "with npu_weight_prefetch_scope(-1):\n    pass\n"  # NPU103 at 2:6
FIXABLE = textwrap.dedent("""\
    import torch
    import torchair
    from torchair.configs.compiler_config import CompilerConfig

    config = CompilerConfig()
    config.mode = "reduce-overhead"
    config.aclgraph_config.use_custom_pool = torch.npu.graph_pool_handle()
    config.debug.aclgraph.disable_mempool_reuse_in_same_fx = False
    backend = torchair.get_npu_backend(compiler_config=config)
    opt = torch.compile(model, backend=backend, mode="reduce-overhead")
    """)  # NPU202 and NPU208 with fixes (tests/test_fixes.py)
# cross-file: layers.py creates a tagged event in a class; run.py (no torchair token) makes two
LAYERS = ("import torch\nimport torchair as tng\nclass Layer(torch.nn.Module):\n    def __init__(self):\n"
          "        super().__init__()\n        self.ev = tng.ops.npu_create_tagged_event(tag='x')\n")
RUN_TWO = "from layers import Layer\na = Layer()\nb = Layer()\n"


@pytest.fixture
def run(cli_run):
    def run(root, args=(), env=None):
        r = cli_run(list(args), cwd=root, env=env)
        assert r.returncode in (0, 1), (r.returncode, r.stdout, r.stderr)
        assert "Traceback" not in r.stderr
        return r
    return run


def cache_entries(root, kind=None):
    out = []
    for folder, _, names in os.walk(os.path.join(str(root), ".npulint_cache")):
        out.extend(os.path.join(folder, n) for n in names
                   if n.endswith(".pickle") and (kind is None or os.sep + kind + os.sep in folder + os.sep))
    return out


def test_cache_folder_is_created_with_its_own_gitignore(run, project):
    root = project({"a.py": INVALID_ID})
    first = run(root)
    assert parse(first.stdout) == [("a.py", 2, 6, "NPU103")]
    folder = root / ".npulint_cache"
    assert (folder / ".gitignore").read_text().strip().endswith("*")
    assert (folder / "CACHEDIR.TAG").exists()
    assert cache_entries(root, "file") and cache_entries(root, "run")
    second = run(root)
    assert second.stdout == first.stdout and second.returncode == first.returncode


def test_no_cache_writes_nothing_and_cache_dir_moves_it(run, project, tmp_path_factory):
    root = project({"a.py": INVALID_ID})
    r = run(root, ["--no-cache"])
    assert parse(r.stdout) == [("a.py", 2, 6, "NPU103")]
    assert not (root / ".npulint_cache").exists()
    elsewhere = tmp_path_factory.mktemp("cache")
    r = run(root, ["--cache-dir", str(elsewhere / "c")])
    assert parse(r.stdout) == [("a.py", 2, 6, "NPU103")]
    assert not (root / ".npulint_cache").exists() and (elsewhere / "c" / ".gitignore").exists()
    r = run(root, env={"NPULINT_CACHE_DIR": str(elsewhere / "env")})
    assert (elsewhere / "env" / ".gitignore").exists()


def test_a_changed_file_is_linted_again(run, project):
    root = project({"a.py": INVALID_ID, "b.py": INVALID_ID})
    assert len(parse(run(root).stdout)) == 2
    (root / "b.py").write_text(IMPORT + "with npu_weight_prefetch_scope(0):\n    pass\n")
    assert parse(run(root).stdout) == [("a.py", 2, 6, "NPU103")]


def test_a_changed_config_invalidates(run, project):
    root = project({"a.py": INVALID_ID})
    assert parse(run(root).stdout) == [("a.py", 2, 6, "NPU103")]
    (root / "pyproject.toml").write_text("[tool.npulint]\nignore = ['NPU103']\n")
    assert run(root).stdout == ""
    (root / "pyproject.toml").write_text("[tool.npulint]\nselect = ['NPU1']\n")
    assert parse(run(root).stdout) == [("a.py", 2, 6, "NPU103")]
    assert run(root, ["--ignore", "NPU103"]).stdout == ""


def test_a_changed_engine_invalidates(run, project, monkeypatch):
    root = project({"a.py": INVALID_ID})
    key = cache_mod.engine_key()
    monkeypatch.setattr(cache_mod, "__version__", "9.9", raising=False)
    import npulint

    monkeypatch.setattr(npulint, "__version__", "9.9")
    assert cache_mod.engine_key() != key
    # a stale engine folder is removed when a new engine writes
    stale = root / ".npulint_cache" / "0123456789abcdef0123" / "file"
    stale.mkdir(parents=True)
    run(root)
    assert not stale.exists()


def test_corrupt_cache_entries_are_ignored(run, project):
    root = project({"a.py": INVALID_ID})
    expected = run(root).stdout
    for path in cache_entries(root):
        with open(path, "wb") as fh:
            fh.write(b"\x80\x04not a pickle")
    r = run(root)
    assert r.stdout == expected
    for path in cache_entries(root):
        with open(path, "wb") as fh:
            pickle.dump(("another key", [1, 2, 3]), fh)
    assert run(root).stdout == expected
    for path in cache_entries(root):
        os.truncate(path, 3)
    assert run(root).stdout == expected


def test_unwritable_cache_folder_is_not_an_error(run, project):
    root = project({"a.py": INVALID_ID})
    blocker = root / "blocker"
    blocker.write_text("a file where the cache folder would go")
    r = run(root, ["--cache-dir", str(blocker / "cache")])
    assert parse(r.stdout) == [("a.py", 2, 6, "NPU103")]


def test_noqa_and_per_file_ignores_apply_to_cached_results(run, project):
    root = project({"a.py": INVALID_ID.replace("(-1):", "(-1):  # noqa: NPU103"), "b.py": INVALID_ID})
    assert parse(run(root).stdout) == [("b.py", 2, 6, "NPU103")]
    assert parse(run(root).stdout) == [("b.py", 2, 6, "NPU103")]
    (root / "pyproject.toml").write_text("[tool.npulint.per-file-ignores]\n'b.py' = ['NPU103']\n")
    assert run(root).stdout == ""


def test_cross_file_findings_survive_the_cache(run, project):
    root = project({"layers.py": LAYERS, "run.py": RUN_TWO})
    first = parse(run(root).stdout)
    assert [c for *_, c in first] == ["NPU306"]
    assert parse(run(root).stdout) == first
    # the instantiating file changes: the follow-up result is not taken from the cache
    (root / "run.py").write_text("from layers import Layer\na = Layer()\n")
    assert run(root).stdout == ""
    (root / "run.py").write_text(RUN_TWO)
    assert parse(run(root).stdout) == first


def test_fixes_come_back_from_the_cache(run, project):
    root = project({"m.py": FIXABLE})
    first = run(root, ["--format", "json"])
    second = run(root, ["--format", "json"])
    assert first.stdout == second.stdout
    r = run(root, ["--diff"])
    assert r.stdout.startswith("--- a/m.py")


def test_stdin_is_never_cached(cli_run, project):
    root = project({"a.py": INVALID_ID})
    r = cli_run(["-", "--stdin-filename", "a.py"], cwd=root, stdin=INVALID_ID)
    assert parse(r.stdout) == [("a.py", 2, 6, "NPU103")]
    assert not cache_entries(root, "file") and not cache_entries(root, "run")


def test_a_warm_run_imports_neither_libcst_nor_the_rules(run, project):
    # run.sh: the shell rules record facts that are objects of a rule module
    root = project({"a.py": INVALID_ID, "b.py": "print('hello')\n", "layers.py": LAYERS, "run2.py": RUN_TWO,
                    "run.sh": "#!/bin/bash\ntorchrun --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size 2\n"})
    run(root)
    code = ("import sys\nfrom npulint.cli import main\ntry:\n    main(['.'])\nexcept SystemExit:\n    pass\n"
            "heavy = sorted(m for m in sys.modules if m == 'libcst' or m.startswith('npulint.rules'))\n"
            "print('HEAVY', heavy, file=sys.stderr)\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=str(root), capture_output=True, text=True, timeout=120)
    assert "a.py:2:6: NPU103" in r.stdout
    assert "HEAVY []" in r.stderr, r.stderr


def test_cache_key_covers_the_package_layout(run, project):
    # the same bytes resolve differently once the folder becomes a package
    root = project({"pkg/a.py": INVALID_ID})
    first = run(root).stdout
    (root / "pkg" / "__init__.py").write_text("")
    assert run(root).stdout == first  # same finding, recomputed
    assert len(cache_entries(root, "file")) == 2


# --------------------------------------------------------------------------- in-process: jobs


def _lint(tmp_path, files, **options):
    for name, text in files.items():
        p = tmp_path / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    rules, checkers = registry.load()
    enabled = enabled_codes(rules, None, [], [])
    paths = sorted((str(tmp_path / n), "python", False) for n in files)
    return pipeline.run(paths, Settings(root=str(tmp_path)), checkers, enabled,
                        options=pipeline.RunOptions(**options))


def _corpus():
    files = {f"m{i:02d}.py": INVALID_ID for i in range(12)}
    files.update({"layers.py": LAYERS, "run.py": RUN_TWO, "fix.py": FIXABLE, "bad.py": IMPORT + "x = (\n",
                  "deep.py": IMPORT + "x = " + "(" * 300 + "1" + ")" * 300 + "\n"})
    return files


@pytest.mark.skipif(not workers._can_fork(), reason="worker processes need fork")
def test_two_jobs_find_exactly_what_one_finds(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    one = _lint(tmp_path, _corpus(), jobs=1)
    two = _lint(tmp_path, _corpus(), jobs=2)
    assert one.findings == two.findings and one.parsed == two.parsed
    assert [f.fix for f in one.findings] == [f.fix for f in two.findings]
    assert any(f.fix is not None for f in two.findings)
    assert {f.code for f in two.findings} >= {"NPU103", "NPU306", "NPU001"}


def test_auto_jobs_stays_in_process_for_small_runs():
    assert workers.auto_jobs(10_000, 50, cpus=8) == 1
    assert workers.auto_jobs(workers.AUTO_JOBS_BYTES * 2, 50, cpus=2) == 2
    assert workers.auto_jobs(workers.AUTO_JOBS_BYTES * 14 // 10, 50, cpus=2) == 1  # rounded to the nearest
    assert workers.auto_jobs(workers.AUTO_JOBS_BYTES * 19 // 10, 50, cpus=2) == 2
    assert workers.auto_jobs(workers.AUTO_JOBS_BYTES * 100, 3, cpus=8) == 3
    assert workers.auto_jobs(workers.AUTO_JOBS_BYTES * 100, 300, cpus=2) == 2


def test_jobs_option_is_validated(run, cli_run, project):
    root = project({"a.py": INVALID_ID})
    for bad in ("0.5", "-1", "many"):
        r = cli_run(["--jobs", bad], cwd=root)
        assert r.returncode == 2 and "--jobs" in r.stderr
    assert parse(run(root, ["--jobs", "2", "--no-cache"]).stdout) == [("a.py", 2, 6, "NPU103")]


def test_results_and_fixes_pickle():
    f = Finding("a.py", 1, 2, "NPU202", "m", 1, 3, (("b.py", 1, 1),),
                Fix("d", (Edit(1, 1, 1, 2, "x"),)))
    r = FileResult("/a.py", "a.py", "python", findings=[f], facts={"T": [("x", 1)]}, noqa={3: None})
    back = pickle.loads(pickle.dumps(r))
    assert back == r and back.findings[0].fix == f.fix


# --------------------------------------------------------------------------- size limit


def test_a_file_over_the_size_limit_is_named_and_not_analysed(run, cli_run, project):
    big = INVALID_ID + "# " + "x" * 1_200_000 + "\n"  # 1.2 MB, cheap to parse
    root = project({"big.py": big, "good.py": INVALID_ID})
    r = run(root)
    assert parse(r.stdout) == [("good.py", 2, 6, "NPU103")]
    assert "big.py: not analysed" in r.stderr and "--max-file-size" in r.stderr
    # a file not analysed is not counted as checked (the cached run says the same)
    assert "Found 1 finding in 1 file (1 file checked, 1 file skipped)." in r.stderr
    assert "(1 file checked, 1 file skipped)." in run(root).stderr
    r = run(root, ["--max-file-size", "2M"])
    assert parse(r.stdout) == [("big.py", 2, 6, "NPU103"), ("good.py", 2, 6, "NPU103")]
    assert "not analysed" not in r.stderr and "(2 files checked)." in r.stderr
    r = run(root, ["big.py", "--exit-zero"])
    assert "All checks passed (0 files checked, 1 file skipped)." in r.stderr
    assert cli_run(["--max-file-size", "lots"], cwd=root).returncode == 2


def test_a_big_file_no_rule_looks_at_costs_nothing(run, project):
    root = project({"data.py": "x = 1\n" * 200_000, "good.py": INVALID_ID})
    r = run(root)
    assert parse(r.stdout) == [("good.py", 2, 6, "NPU103")] and "not analysed" not in r.stderr


@pytest.mark.skipif(not workers._can_fork(), reason="worker processes need fork")
@pytest.mark.parametrize("where", ["batch", "share"])
def test_a_worker_crash_costs_only_the_file_that_caused_it(tmp_path, monkeypatch, where):
    """Files go to the workers in batches (or, over many files, the workers take shares of
    the whole first pass); a worker that dies (as a crash in native code would kill it)
    breaks the pool, and the files of every failed batch or share are done again, so only
    the file that crashes its worker is reported (NPU000), once."""
    if where == "batch":
        monkeypatch.setattr(workers, "BATCH_BYTES", 10 ** 9)  # everything in one batch
    else:
        monkeypatch.setattr(pipeline, "FIRST_PASS_PARALLEL_FILES", 4)
    corpus = _corpus()
    crash = "bad.py"  # a syntax error: no facts, so the other files' findings stay the same
    real_task = workers._task

    def task(inp, text, active):
        if inp.path.endswith(crash) and os.getpid() != parent:
            os._exit(3)
        return real_task(inp, text, active)

    parent = os.getpid()
    monkeypatch.setattr(workers, "_task", task)
    one = _lint(tmp_path, corpus, jobs=1)
    two = _lint(tmp_path, corpus, jobs=2)
    crashed = [f for f in two.findings if f.code == "NPU000"]
    assert len(crashed) == 1 and crashed[0].path.endswith(crash)
    assert "worker process" in crashed[0].message
    assert [f for f in two.findings if f.code != "NPU000"] == \
        [f for f in one.findings if not f.path.endswith(crash)]


@pytest.mark.skipif(not workers._can_fork(), reason="worker processes need fork")
@pytest.mark.parametrize("per_job", [pipeline.FIRST_PASS_SHARES_PER_JOB, 2])  # 2: the last shares are cut smaller
def test_the_first_pass_in_shares_finds_exactly_what_one_process_finds(tmp_path, monkeypatch, per_job):
    """Over many files the workers read, prefilter and analyse shares of the files (the
    main process only merges): same findings, fixes, notes, cross-file facts and cache."""
    monkeypatch.setattr(pipeline, "FIRST_PASS_PARALLEL_FILES", 4)
    monkeypatch.setattr(pipeline, "FIRST_PASS_SHARES_PER_JOB", per_job)
    steps = {step for _, step in pipeline._shares(20, 2)}  # (the corpus below: 20 files, two workers)
    assert (len(steps) == 2) == (per_job == 2)  # a second step: the last shares cut smaller
    split = []
    real = pipeline._first_pass_in_pool
    monkeypatch.setattr(pipeline, "_first_pass_in_pool", lambda *a: split.append(a[7]) or real(*a))  # (a[7]: jobs)
    big = INVALID_ID + "# " + "x" * 300_000 + "\n"
    corpus = dict(_corpus(), **{"big.py": big, "a_big.py": big, "m10_big.py": big})  # (m10_big.py in a share before big.py's)
    one = _lint(tmp_path, corpus, jobs=1)
    assert split == []
    two = _lint(tmp_path, corpus, jobs=2)
    assert split == [2]
    assert one.findings == two.findings and one.parsed == two.parsed and one.files == two.files
    assert [f.fix for f in one.findings] == [f.fix for f in two.findings]
    assert one.notes == two.notes and len([n for n in one.notes if "big.py" in n]) == 3
    assert {f.code for f in two.findings} >= {"NPU103", "NPU306", "NPU001"}
    cache = cache_mod.Cache(str(tmp_path / "cache"))
    cold = _lint(tmp_path, corpus, jobs=2, cache=cache)
    corpus["m00.py"] = "x = 1\n"  # one file changed: the others come from the cache
    warm = _lint(tmp_path, corpus, jobs=2, cache=cache_mod.Cache(str(tmp_path / "cache")))
    assert cold.findings == two.findings and not cold.cached and not warm.cached
    assert warm.findings == [f for f in two.findings if not f.path.endswith("m00.py")]
    assert warm.parsed == two.parsed - 1


@pytest.mark.parametrize("n", [1, 2, 7, 47, 48, 191, 192, 193, 1000, 7460])
@pytest.mark.parametrize("jobs", [1, 2, 3, 8])
def test_the_first_pass_shares_hold_each_input_once(n, jobs):
    shares = pipeline._shares(n, jobs)
    held = sorted(i for first, step in shares for i in range(n)[first::step])
    assert held == list(range(n)) and all(range(n)[first::step] for first, step in shares)  # once each, none empty


def _run_in_process(root, names, cache=None, jobs=1, walked=()):
    rules, checkers = registry.load()
    enabled = enabled_codes(rules, None, [], [])
    paths = [(str(root / n), "python", True) for n in names]
    return pipeline.run(paths, Settings(root=str(root)), checkers, enabled,
                        options=pipeline.RunOptions(jobs=jobs, cache=cache, walked=walked))


def test_the_first_pass_lets_go_of_the_files_it_does_not_parse(tmp_path, monkeypatch):
    """A file no checker parses keeps no bytes after the prefilter (they were a third of a
    big run's memory, and every worker inherited them); the follow-up reads it again."""
    for name, text in {"layers.py": LAYERS, "run.py": RUN_TWO, "other.py": "x = 1\n"}.items():
        (tmp_path / name).write_text(text)
    held = {}
    real = pipeline._follow_up

    def spy(results, configs, checkers, enabled, overrides=None, by_path=None, **kw):
        held.update({os.path.basename(p): i.data for p, i in by_path.items()})
        return real(results, configs, checkers, enabled, overrides, by_path=by_path, **kw)

    monkeypatch.setattr(pipeline, "_follow_up", spy)
    result = _run_in_process(tmp_path, ["layers.py", "other.py", "run.py"])
    assert [f.code for f in result.findings] == ["NPU306"]  # run.py, read again, makes two
    assert held["layers.py"] is not None and held["run.py"] is None and held["other.py"] is None


@pytest.mark.parametrize("runs_cached", [False, True])
def test_a_file_changed_between_the_passes_does_not_go_into_the_cache(tmp_path, monkeypatch, runs_cached):
    """The digests are taken before the first pass (a cache that holds runs: the run's key is
    asked first) or by it (one that holds none): either way a file that changes before the
    follow-up reads it again leaves the run's result and its own out of the cache."""
    for name, text in {"layers.py": LAYERS, "run.py": RUN_TWO}.items():
        (tmp_path / name).write_text(text)
    real = pipeline._first_pass

    def first_pass(inputs, *a, **kw):
        out = real(inputs, *a, **kw)
        (tmp_path / "run.py").write_text("from layers import Layer\na = Layer()\n")
        return out

    monkeypatch.setattr(pipeline, "_first_pass", first_pass)
    cache = cache_mod.Cache(str(tmp_path / ".cache"))
    if runs_cached:
        os.makedirs(os.path.join(cache.base, "run"))
    assert cache.has("run") is runs_cached
    puts = []
    monkeypatch.setattr(cache, "put", lambda kind, key, value: puts.append(kind))
    result = _run_in_process(tmp_path, ["layers.py", "run.py"], cache=cache)
    assert result.findings == []  # what run.py says now: one instance
    assert "run" not in puts and puts.count("file") == 1  # layers.py only


def test_a_file_changed_after_its_digest_does_not_go_into_the_cache(tmp_path, monkeypatch):
    """With a cache that holds runs, every file is read once for the run's key; on a miss the
    first pass reads it again (so the bytes are not all held at once). If it changed in
    between, what the run found is not what the key says: nothing is stored under it."""
    (tmp_path / "a.py").write_text(INVALID_ID)
    real = pipeline._first_pass

    def first_pass(inputs, *a, **kw):
        assert all(i.data is None and i.digest is not None for i in inputs)  # let go after the key was made
        (tmp_path / "a.py").write_text(IMPORT)
        return real(inputs, *a, **kw)

    monkeypatch.setattr(pipeline, "_first_pass", first_pass)
    cache = cache_mod.Cache(str(tmp_path / ".cache"))
    os.makedirs(os.path.join(cache.base, "run"))  # (a cache that holds no run is not asked: below)
    puts = []
    monkeypatch.setattr(cache, "put", lambda kind, key, value: puts.append(kind))
    result = _run_in_process(tmp_path, ["a.py"], cache=cache)
    # (the stat index records what was read for the digest: true of those bytes, never a result)
    assert result.findings == [] and puts == ["stats"]


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_cache_that_holds_no_run_is_not_asked_and_each_file_is_read_by_the_first_pass(tmp_path, monkeypatch, jobs):
    """A cache with no run's result cannot answer the run's key: the files are not read for it
    before the first pass; the first pass (in the workers, over many files) reads each file
    and takes its digest from the bytes it lints, and the next run over the same files is one
    cache hit."""
    if jobs == 2:
        if not workers._can_fork():
            pytest.skip("worker processes need fork")
        monkeypatch.setattr(pipeline, "FIRST_PASS_PARALLEL_FILES", 4)
    corpus = _corpus()
    for name, text in corpus.items():
        (tmp_path / name).write_text(text)
    real = pipeline._first_pass
    entered = []

    def first_pass(inputs, *a, **kw):
        entered.append([(i.data, i.digest) for i in inputs])
        return real(inputs, *a, **kw)

    monkeypatch.setattr(pipeline, "_first_pass", first_pass)
    cache = cache_mod.Cache(str(tmp_path / ".cache"))
    # (the whole folder, as `npulint DIR` gives it: a run over part of a program that asks what
    # its other files change stores no whole-run entry, tests/test_program.py)
    whole = (str(tmp_path),)
    first = _run_in_process(tmp_path, sorted(corpus), cache=cache, jobs=jobs, walked=whole)
    assert entered[0] == [(None, None)] * len(corpus)  # nothing read before it
    again = _run_in_process(tmp_path, sorted(corpus), cache=cache, jobs=jobs, walked=whole)
    assert again.cached and again.findings == first.findings and first.findings


def test_a_cached_result_holds_only_while_what_other_modules_change_is_the_same(tmp_path):
    """NPU303 judges a held container's elements only while no other module of the run changes
    it in place (rules/torchair_streams.py _run_texts): a cached result of the model's file must
    not outlive a change of another file that starts changing it."""
    from test_rules_torchair_streams import LIST, holds

    cache = cache_mod.Cache(str(tmp_path / "cache"))
    model = holds(LIST, "for layer in self.layers:\n            x = layer(x)")
    files = {"model.py": model, "other.py": "def count(m):\n    return len(m.layers)\n"}
    first = _lint(tmp_path, files, jobs=1, cache=cache)
    assert [f.code for f in first.findings if f.code == "NPU303"] == ["NPU303"]
    files["other.py"] = "def shrink(m):\n    m.layers.pop()\n"
    second = _lint(tmp_path, files, jobs=1, cache=cache_mod.Cache(str(tmp_path / "cache")))
    assert [f.code for f in second.findings if f.code == "NPU303"] == []


def test_a_cached_npu305_result_holds_only_while_no_other_file_quotes_its_tag(tmp_path):
    """NPU305 stays silent when another file of the program holds the record's tag between
    quotes (it may pass it to a wrapper of the switch: RunModules.quoting): the record's
    file's cached result depends on that answer, and is not served after it changes."""
    record = ("import torch\nimport torchair as tng\n\n\ndef f(x):\n"
              "    with tng.scope.npu_stream_switch(\"side\"):\n        y = x + 1\n"
              "    tng.ops.npu_record_tagged_stream(y, \"t9\")\n    return y\n")
    cache = cache_mod.Cache(str(tmp_path / "cache"))
    first = _lint(tmp_path, {"rec.py": record, "other.py": "x = 1\n"}, cache=cache)
    assert [f.code for f in first.findings] == ["NPU305"]
    again = _lint(tmp_path, {"rec.py": record, "other.py": "x = 1\nswitch_to(\"t9\")\n"}, cache=cache)
    assert [f.code for f in again.findings] == []


@pytest.mark.skipif(not workers._can_fork(), reason="worker processes need fork")
def test_the_workers_stat_records_reach_the_index(tmp_path, monkeypatch):
    """With a cache that holds no run, the workers read the files and take their digests: what
    they record for the stat index comes back to it, so the next run over unchanged files reads
    none of them (its whole-run entry is found by their times)."""
    from npulint import source, stat_index

    monkeypatch.setattr(pipeline, "FIRST_PASS_PARALLEL_FILES", 4)
    monkeypatch.setattr(stat_index, "RACY_NS", 0)  # files just written are taken on their times
    corpus = _corpus()
    for name, text in corpus.items():
        (tmp_path / name).write_text(text)
    cache = cache_mod.Cache(str(tmp_path / ".cache"))
    whole = (str(tmp_path),)
    first = _run_in_process(tmp_path, sorted(corpus), cache=cache, jobs=2, walked=whole)
    reads = []
    real = source.read_regular_stat
    monkeypatch.setattr(source, "read_regular_stat",
                        lambda path, *a, **kw: reads.append(os.path.basename(path)) or real(path, *a, **kw))
    again = _run_in_process(tmp_path, sorted(corpus), cache=cache, jobs=2, walked=whole)
    assert again.cached and again.findings == first.findings
    assert not [r for r in reads if r in corpus]
