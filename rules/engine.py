"""NPU000-NPU005: what the engine itself reports about a file. These rules run over no file
(they are :class:`RuleBase`, not checkers): the engine makes their findings through their
classes (``SyntaxErrorInFile.finding(...)``), and this module imports nothing heavy, so that a
run answered from the cache can report NPU003."""

from npulint.rulebase import Invalid, RuleBase


class InternalError(RuleBase):
    CODE = "NPU000"
    NAME = "internal-error"
    SEVERITY = "error"
    SUMMARY = "A rule failed on this file (a bug in npulint)."
    EXPLANATION = (
        "A rule raised an exception while checking this file. The message names the rule family "
        "and the exception. The file's other findings and the other files are still reported. "
        "This is never expected: please report it with the file (or a reduced copy)."
    )
    SOURCE = "npulint engine"
    HOW_TO_FIX = "Report the bug; suppress with `# noqa: NPU000` on the reported line meanwhile."


class SyntaxErrorInFile(RuleBase):
    CODE = "NPU001"
    NAME = "syntax-error"
    SEVERITY = "error"
    SUMMARY = "The file cannot be parsed."
    EXPLANATION = (
        "npulint could not parse the file, so no other rule checked it. Reported at the error "
        "position. Also reported for files nested more deeply than Python itself accepts "
        "(more than 200 nested brackets). Only files that mention an API some rule checks are "
        "parsed (the prefilter), so a syntax error elsewhere is left to your other tools. The "
        "parser is that of the Python npulint runs on: syntax newer than it (3.12's `type` "
        "statements under 3.11, say) is reported too, and where the error's line uses such syntax the "
        "message says so (\"as Python 3.11 reads it; type parameter lists and `type` statements came "
        "with Python 3.12, PEP 695\"); run npulint with the Python your code targets."
    )
    SOURCE = "npulint engine"
    # a merge left unresolved: CPython says plain "invalid syntax" (for a Python 2 `print 'x'`
    # it suggests a fix, worded differently before 3.10)
    INVALID = (Invalid("from npu_bridge.hccl import hccl_ops\n<<<<<<< HEAD\nrank = 0\n=======\nrank = 1\n"
                       ">>>>>>> main\n", range=(2, 1, 2, 1), message="syntax error: invalid syntax"),)
    VALID = ("from npu_bridge.hccl import hccl_ops\nrank = 0\n",)
    HOW_TO_FIX = "Fix the syntax error; the file does not run as it is."


class UnreadableFile(RuleBase):
    CODE = "NPU002"
    NAME = "unreadable-file"
    SEVERITY = "error"
    SUMMARY = "The file cannot be read or decoded."
    EXPLANATION = (
        "The file could not be read (permissions, deleted during the run) or decoded. Python "
        "files are decoded as the interpreter does: UTF-8 by default, a UTF-8 BOM, or a PEP 263 "
        "coding declaration; a file CPython's `compile()` accepts is never reported (bytes that are "
        "not UTF-8 inside comments of a UTF-8 file are accepted, as CPython's tokenizer accepts them; "
        "run directly as `python file.py`, such a file also needs a `# -*- coding: utf-8 -*-` line). "
        "Shell scripts are bytes to bash: their encoding is never an error. Binary files (with NUL "
        "bytes) found while walking a folder are skipped silently; named explicitly on the command "
        "line, they are reported."
    )
    SOURCE = "npulint engine; PEP 263"
    HOW_TO_FIX = "Save the file as UTF-8, or declare its encoding with `# -*- coding: <name> -*-`."


class UnusedNoqa(RuleBase):
    CODE = "NPU003"
    NAME = "unused-noqa"
    SEVERITY = "info"
    SUMMARY = "A `# noqa` code that suppressed nothing."
    EXPLANATION = (
        "A `# noqa: NPUxxx` comment names a code that reported nothing on that line in this run, so the "
        "comment no longer does anything (the code was fixed, or the finding moved). Like ruff's RUF100, "
        "off by default: enable it with `--extend-select NPU003`. Only npulint's own codes that are "
        "enabled for the file are judged; other tools' codes (`E501`) and a blanket `# noqa` are left "
        "alone. Codes written as prefixes (`# noqa: NPU1`) count as used when any code they cover was "
        "suppressed. A file its rules could not read (a syntax error, a CRLF shell script, another shell's "
        "script) is not judged: its directives may be needed once it reads. A run over some of a program's "
        "files (a pre-commit hook's, an editor's buffer) judges only the engine's own codes (NPU000-NPU005): "
        "a rule's finding may come from what the files it does not lint hold (a value another module binds, a "
        "launch script that enables AMO), so a run over the whole program judges those. Only real comments "
        "count (in a shell script, as tree-sitter-bash reads it: not a string or a here-document). The "
        "automatic fix removes the unused codes, or the whole directive."
    )
    SOURCE = "npulint engine (after ruff RUF100)"
    INVALID = (Invalid("import torchair\nx = 1  # noqa: NPU304\n", range=(2, 8, 2, 22),
                       message="unused `noqa` directive: NPU304 suppressed nothing on this line",
                       fixed="import torchair\nx = 1\n"),)
    VALID = ("import torchair as tng\nwith tng.scope.npu_stream_switch('1', 2):  # noqa: NPU304\n    pass\n",)
    HOW_TO_FIX = "Remove the unused code from the comment (`npulint --fix --extend-select NPU003` does it)."
    AUTOFIX = True


class ShellCrlf(RuleBase):
    CODE = "NPU004"
    NAME = "shell-crlf-line-endings"
    SEVERITY = "error"
    SUMMARY = "A shell script with CRLF (Windows) line endings."
    EXPLANATION = (
        "bash ends a line at `\\n` alone: the `\\r` of a CRLF line is part of the line's last word, so "
        "`--bf16` reaches the training script as `--bf16\\r` (Megatron rejects it), `then`/`do`/`fi` are "
        "not keywords, and a `\\` before CRLF escapes the `\\r` instead of continuing the command, so the "
        "lines after it run as commands of their own. Reported once per script, at the first such line (a "
        "carriage return that ends a comment is harmless and not counted); the script's launch commands are "
        "then not checked (NPU5xx), since bash would not run the command the script shows. Like NPU001, only "
        "for scripts some rule reads (launch scripts). A `# noqa: NPU004` anywhere in the script suppresses it "
        "(the line it is reported at moves as comments are added). In the example, `^M` marks the carriage return "
        "(as `cat -v` shows it)."
    )
    SOURCE = ("npulint engine; bash(1) DEFINITIONS (`newline` ends a command; a backslash-newline pair is a line "
           "continuation)")
    INVALID = (Invalid("torchrun pretrain_gpt.py --bf16 \\\r\n    --reuse-fp32-param\r\n", range=(1, 34, 1, 35),
                       message="CRLF (Windows) line endings on 2 lines: bash reads the carriage return as part of "
                       "each line's last word (`--reuse-fp32-param` becomes `--reuse-fp32-param\\r`) and `\\` before CRLF "
                       "does not continue the command; convert the file to LF line endings"),)
    VALID = ("torchrun pretrain_gpt.py --bf16 \\\n    --reuse-fp32-param\n",
           "# written on Windows\r\ntorchrun pretrain_gpt.py --bf16 --reuse-fp32-param\n")
    EXAMPLE_LANGUAGE = "shell"
    HOW_TO_FIX = ("Convert the file to LF line endings (`dos2unix run.sh`, `sed -i 's/\\r$//' run.sh`, or "
        "`git config core.autocrlf input` and check the file out again).")


class AnalysisLimit(RuleBase):
    CODE = "NPU005"
    NAME = "analysis-limit-exceeded"
    SEVERITY = "warning"
    SUMMARY = "A file past one of the analysis's bounds: not checked."
    EXPLANATION = (
        "npulint expands a launch script's variables and follows its branches, and bounds that work so that "
        "no input can make it hang or exhaust memory (a pre-commit hook runs on whatever a commit holds). "
        "Past a bound the script is reported once, naming the bound, and nothing else is said about it: "
        "what was read before the bound could be part of a command whose rest was never seen. The bounds, "
        "far above any real launch script (the largest measured: 9 levels of nesting, 312 words in one "
        "command, a 3,545-character word): statements nested more than 64 deep (loops, ifs, groups, "
        "subshells, pipelines, `&&` lists), a variable's "
        "value or an expanded word longer than 65,536 characters, a command or an array of more than 4,096 "
        "words. A Python file is bounded by its number of syntax nodes (more than 60,000; the largest "
        "hand-written file measured has 47,606) and the length of a literal tuple, list, set or dict (more "
        "than 20,000 items; the longest measured, 6,528): past one it is reported once and not analysed. A "
        "file this large is almost always generated or hostile: split it, or suppress the finding with "
        "`# noqa: NPU005` on line 1. A file larger than `--max-file-size` is not NPU005: it is not analysed, "
        "and where a rule would have looked at it (or it is larger than 64 MB, and not read), it is named on "
        "standard error."
    )
    SOURCE = "npulint engine (bounded work on hostile input)"
    INVALID = (Invalid("V0=--bf16\n" + "".join(f'V{i}="$V{i - 1} $V{i - 1}"\n' for i in range(1, 18))
                       + "torchrun pretrain_gpt.py $V17\n", range=(1, 1, 1, 1),
                       message="not checked: a value longer than 65536 characters (MAX_VALUE); nothing else is "
                       "reported for this script"),)
    VALID = ("V0=--bf16\nV1=\"$V0 $V0\"\ntorchrun pretrain_gpt.py $V1\n",)
    EXAMPLE_LANGUAGE = "shell"
    HOW_TO_FIX = "Split the script, or write the values out; suppress with `# noqa: NPU005` on line 1."
