"""Output formats for CI and people: SARIF 2.1.0 (validated against the official schema),
GitHub Actions workflow commands, and ``full`` (source excerpt, caret, colour only on a
terminal and never with NO_COLOR)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from npulint import registry, reporters
from npulint.model import Edit, Finding, Fix

SCHEMA = Path(__file__).parent / "data" / "sarif-schema-2.1.0.json"

BUGS = "import torchair as tng\nwith tng.scope.npu_stream_switch('1', 2):\n    pass\n"
FIXABLE = ("import torch\nimport torchair\nconfig = torchair.CompilerConfig()\nconfig.mode = \"reduce-overhead\"\n"
           "backend = torchair.get_npu_backend(compiler_config=config)\n"
           "opt = torch.compile(model, backend=backend, mode=\"reduce-overhead\")\n")
POOL_A = ("from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope\n"
          "with npu_weight_prefetch_scope(buffer_pool_id=1, buffer_pool_size=1024):\n    pass\n")
POOL_B = POOL_A.replace("1024", "2048") + "import a  # one program: b.py imports a.py\n"


def _project(tmp_path: Path) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_text(POOL_A, encoding="utf-8")
    (tmp_path / "pkg" / "b.py").write_text(POOL_B, encoding="utf-8")
    (tmp_path / "t.py").write_text(BUGS, encoding="utf-8")
    (tmp_path / "fix.py").write_text(FIXABLE, encoding="utf-8")
    return tmp_path


def _rules():
    return {r.code: r for r in registry.load()[0]}


# -- SARIF ------------------------------------------------------------------------------

def _validate(doc):
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft4Validator.check_schema(schema)
    validator = jsonschema.Draft4Validator(schema, format_checker=jsonschema.FormatChecker())
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors[:5])


def test_the_shipped_schema_is_the_official_one():
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    assert schema["title"] == "Static Analysis Results Format (SARIF) Version 2.1.0 JSON Schema"
    assert schema["id"] == reporters.SARIF_SCHEMA


def test_sarif_validates_and_carries_rules_results_related_and_fixes(cli_run, tmp_path):
    root = _project(tmp_path)
    r = cli_run(["--format", "sarif", "."], root)
    assert r.returncode == 1, r.stderr
    assert r.stderr == ""  # no summary line: stdout is the document
    doc = json.loads(r.stdout)
    _validate(doc)
    run = doc["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert [d["id"] for d in rules] == sorted(_rules())
    for d in rules:
        assert d["shortDescription"]["text"] and d["fullDescription"]["text"]
        assert d["help"]["markdown"].startswith(f"# {d['id']} ")
    results = {res["ruleId"]: res for res in run["results"]}
    assert set(results) == {"NPU101", "NPU208", "NPU304"}
    for res in run["results"]:
        assert rules[res["ruleIndex"]]["id"] == res["ruleId"]
        loc = res["locations"][0]["physicalLocation"]
        assert loc["artifactLocation"]["uriBaseId"] == "%SRCROOT%"
    npu304 = results["NPU304"]
    assert npu304["level"] == "warning"
    assert npu304["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "t.py"
    assert npu304["locations"][0]["physicalLocation"]["region"]["startLine"] == 2
    cross = results["NPU101"]
    assert cross["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "pkg/b.py"
    related = cross["relatedLocations"][0]["physicalLocation"]
    assert related["artifactLocation"]["uri"] == "pkg/a.py" and related["region"]["startLine"] == 2
    fix = results["NPU208"]["fixes"][0]
    change = fix["artifactChanges"][0]
    assert change["artifactLocation"]["uri"] == "fix.py"
    assert change["replacements"][0]["insertedContent"]["text"] == ""
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == root.resolve().as_uri() + "/"
    assert run["columnKind"] == "unicodeCodePoints"


def test_sarif_with_no_findings_is_valid(cli_run, tmp_path):
    (tmp_path / "ok.py").write_text("x = 1\n", encoding="utf-8")
    r = cli_run(["--format", "sarif", "."], tmp_path)
    assert r.returncode == 0
    doc = json.loads(r.stdout)
    _validate(doc)
    assert doc["runs"][0]["results"] == []


def test_sarif_help_uri(monkeypatch):
    rules = _rules()
    monkeypatch.setenv("NPULINT_DOCS_URL", "https://docs.example.org/npulint/rules/")
    doc = reporters.to_sarif([], rules)
    uris = {d["id"]: d.get("helpUri") for d in doc["runs"][0]["tool"]["driver"]["rules"]}
    assert uris["NPU101"] == "https://docs.example.org/npulint/rules/NPU101.md"
    monkeypatch.delenv("NPULINT_DOCS_URL")
    doc = reporters.to_sarif([], rules)
    for d in doc["runs"][0]["tool"]["driver"]["rules"]:
        # a source checkout points at its own docs/rules pages; an installed wheel has none
        if "helpUri" in d:
            assert d["helpUri"].startswith("file://") and d["helpUri"].endswith(f"/docs/rules/{d['id']}.md")
            assert Path.from_uri(d["helpUri"]).is_file() if hasattr(Path, "from_uri") else True


def test_sarif_absolute_paths_and_insertions_validate(tmp_path):
    f = Finding(str(tmp_path / "x.py"), 3, 1, "NPU503", "m", 3, 9, ((str(tmp_path / "y.sh"), 4, 5),),
                Fix("wrap", (Edit(3, 1, 3, 9, "w(X, a)"), Edit(1, 1, 1, 1, "from m import w\n"))))
    doc = reporters.to_sarif([f], _rules())
    _validate(doc)
    loc = doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert loc == {"uri": (tmp_path / "x.py").as_uri()}


# -- GitHub -----------------------------------------------------------------------------

def test_github_workflow_commands(cli_run, tmp_path):
    root = _project(tmp_path)
    r = cli_run(["--format", "github", "."], root)
    assert r.returncode == 1
    lines = r.stdout.splitlines()
    assert r.stderr == ""
    assert any(ln.startswith("::warning file=t.py,line=2,col=") and ",title=NPU304 stream-priority-reserved::NPU304 "
               in ln for ln in lines), lines
    assert any(ln.startswith("::error file=pkg/b.py,line=2,col=") and "title=NPU101 " in ln for ln in lines), lines


def test_github_escapes_newlines_commas_and_colons():
    f = Finding("a,b:c.py", 1, 2, "NPU101", "50% done\nnext line", 1, 5)
    out = io.StringIO()
    reporters.write_github([f], _rules(), out)
    assert out.getvalue() == ("::error file=a%2Cb%3Ac.py,line=1,col=2,endLine=1,endColumn=5,"
                              "title=NPU101 prefetch-pool-size-mismatch::NPU101 50%25 done%0Anext line\n")


def test_github_info_rules_are_notices():
    out = io.StringIO()
    reporters.write_github([Finding("t.py", 1, 1, "NPU003", "unused")], _rules(), out)
    assert out.getvalue().startswith("::notice file=t.py,line=1,col=1,")


# -- full -------------------------------------------------------------------------------

def test_full_shows_the_line_and_a_caret(cli_run, tmp_path):
    root = _project(tmp_path)
    r = cli_run(["--format", "full", "t.py", "fix.py"], root)
    assert r.returncode == 1
    out = r.stdout
    assert "\x1b[" not in out  # not a terminal: no colour
    assert "t.py:2:39: NPU304 [warning] stream_priority=2" in out
    assert " 2 | with tng.scope.npu_stream_switch('1', 2):\n   | " + " " * 38 + "^\n" in out
    assert "fix.py:6:45: NPU208 [warning] [*] " in out
    assert "fix: Drop the mode= argument (npulint --fix)" in out
    assert "Found 2 findings" in r.stderr


def test_full_caret_spans_the_range_on_one_line():
    f = Finding("t.py", 1, 5, "NPU304", "m", 1, 9)
    out = io.StringIO()
    reporters.write_full([f], _rules(), out, sources={"t.py": "abc(defgh)\n"})
    assert " 1 | abc(defgh)\n   |     ^~~~\n" in out.getvalue()


def test_full_related_locations():
    f = Finding("b.py", 1, 1, "NPU101", "m", 1, 2, (("a.py", 3, 4),))
    out = io.StringIO()
    reporters.write_full([f], _rules(), out, sources={"b.py": "x\n"})
    assert "note: related location a.py:3:4" in out.getvalue()


class _Tty(io.StringIO):
    def isatty(self):
        return True


def test_colour_only_on_a_terminal_and_never_with_no_color(monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    assert reporters.use_colour(_Tty()) is True
    assert reporters.use_colour(io.StringIO()) is False
    monkeypatch.setenv("NO_COLOR", "1")
    assert reporters.use_colour(_Tty()) is False
    monkeypatch.delenv("NO_COLOR")
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert reporters.use_colour(io.StringIO()) is True
    f = Finding("t.py", 1, 1, "NPU304", "m", 1, 2)
    out = _Tty()
    reporters.write_full([f], _rules(), out, colour=True, sources={"t.py": "x\n"})
    assert "\x1b[" in out.getvalue()


def test_full_colour_through_the_cli(cli_run, tmp_path):
    (tmp_path / "t.py").write_text(BUGS, encoding="utf-8")
    assert "\x1b[" in cli_run(["--format", "full", "t.py"], tmp_path, env={"FORCE_COLOR": "1"}).stdout
    assert "\x1b[" not in cli_run(["--format", "full", "t.py"], tmp_path,
                                  env={"FORCE_COLOR": "1", "NO_COLOR": "1"}).stdout


def test_full_shows_the_stdin_buffer_not_the_file_on_disk(cli_run, tmp_path):
    (tmp_path / "t.py").write_text("# not what is linted\n\n", encoding="utf-8")
    r = cli_run(["--format", "full", "--stdin-filename", "t.py", "-"], tmp_path, stdin=BUGS)
    assert " 2 | with tng.scope.npu_stream_switch('1', 2):" in r.stdout
    r = cli_run(["--format", "full", "--fix", "--stdin-filename", "t.py", "-"], tmp_path, stdin=BUGS)
    assert r.stdout == BUGS  # nothing to fix: the source as it came
    assert " 2 | with tng.scope.npu_stream_switch('1', 2):" in r.stderr


def test_full_survives_a_file_that_is_gone():
    out = io.StringIO()
    reporters.write_full([Finding("/nonexistent/x.py", 3, 1, "NPU304", "m")], _rules(), out)
    assert out.getvalue().startswith("/nonexistent/x.py:3:1: NPU304 [warning] m\n")


def test_unknown_format_is_a_usage_error(cli_run, tmp_path):
    r = cli_run(["--format", "xml", "."], tmp_path)
    assert r.returncode == 2 and "xml" in r.stderr and "Traceback" not in r.stderr
