"""NPU000-NPU002: what the engine itself reports about a file."""

from npulint.model import Rule

INTERNAL_ERROR = Rule(
    code="NPU000",
    name="internal-error",
    severity="error",
    summary="A rule failed on this file (a bug in npulint).",
    explanation=(
        "A rule raised an exception while checking this file. The message names the rule family "
        "and the exception. The file's other findings and the other files are still reported. "
        "This is never expected: please report it with the file (or a reduced copy)."
    ),
    source="npulint engine",
    fix="Report the bug; suppress with `# noqa: NPU000` on the reported line meanwhile.",
)

SYNTAX_ERROR = Rule(
    code="NPU001",
    name="syntax-error",
    severity="error",
    summary="The file cannot be parsed.",
    explanation=(
        "npulint could not parse the file, so no other rule checked it. Reported at the error "
        "position. Also reported for files nested more deeply than Python itself accepts "
        "(more than 200 nested brackets). Only files that mention an API some rule checks are "
        "parsed (the prefilter), so a syntax error elsewhere is left to your other tools."
    ),
    source="npulint engine",
    invalid=("from npu_bridge.hccl import hccl_ops\nprint 'hello'\n",),
    valid=("from npu_bridge.hccl import hccl_ops\nprint('hello')\n",),
    fix="Fix the syntax error; the file does not run as it is.",
)

UNREADABLE_FILE = Rule(
    code="NPU002",
    name="unreadable-file",
    severity="error",
    summary="The file cannot be read or decoded.",
    explanation=(
        "The file could not be read (permissions, deleted during the run) or decoded. Python "
        "files are decoded as the interpreter does: UTF-8 by default, a UTF-8 BOM, or a PEP 263 "
        "coding declaration. Binary files (with NUL bytes) found while walking a folder are skipped "
        "silently; named explicitly on the command line, they are reported."
    ),
    source="npulint engine; PEP 263",
    fix="Save the file as UTF-8, or declare its encoding with `# -*- coding: <name> -*-`.",
)

RULES = (INTERNAL_ERROR, SYNTAX_ERROR, UNREADABLE_FILE)
