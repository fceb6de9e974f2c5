"""Shell scripts read as bash reads them: bytes (any encoding), bash's grammar only for bash
and POSIX-shell scripts, CRLF scripts (NPU004), extensionless scripts with a shebang, entry
scripts in variable folders, launch wrappers and ``bash -c`` strings, and suppression with a
``# noqa`` comment line above the command (comments as the parser sees them)."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from conftest import at, codes, parse, pos

# a launch with one requirement finding (NPU504 at --reuse-fp32-param: it needs --bf16)
REUSE = "--reuse-fp32-param --fp16"
GBK = b"\xc4\xe3\xba\xc3"  # two GBK characters: not UTF-8


def sh(lint, src, select=("NPU0", "NPU5"), name="run.sh"):
    return lint({name: src}, select=list(select))


@pytest.fixture
def cli(cli_run):
    def cli(root, args, **kw):
        r = cli_run(list(args), cwd=root, **kw)
        assert r.returncode in (0, 1), (r.returncode, r.stdout, r.stderr)
        assert "Traceback" not in r.stderr, r.stderr
        return r
    return cli


# -------------------------------------------------------------------- bytes, not an encoding


def test_gbk_comments_are_not_an_encoding_error(lint):
    src = b"#!/bin/bash\n# " + GBK + b"\ntorchrun pretrain_gpt.py " + REUSE.encode() + b"  # " + GBK + b"\n"
    found = sh(lint, src)
    assert [(f.code, f.line, f.column) for f in found] == [("NPU504", 3, 26)]
    assert sh(lint, src.replace(b"--fp16", b"--bf16")) == []  # the clean twin


def test_a_byte_that_is_not_utf8_is_one_column(lint):
    # `echo "<4 GBK bytes>"; ` is 13 bytes, 13 columns: the flag is at column 39
    src = b'echo "' + GBK + b'"; torchrun pretrain_gpt.py ' + REUSE.encode() + b"\n"
    found = sh(lint, src)
    assert [(f.code, f.line, f.column, f.end_column) for f in found] == [("NPU504", 1, 39, 57)]
    # UTF-8 characters count one column each, as before
    src = 'echo "你好"; torchrun pretrain_gpt.py --reuse-fp32-param --fp16\n'
    assert [(f.line, f.column) for f in sh(lint, src)] == [(1, 37)]


def test_gbk_in_a_flag_value_is_shown_escaped(cli, project):
    # one GBK character where the `e` should be: two bytes, two edits from the flag
    root = project({"run.sh": b"torchrun pretrain_gpt.py --tensor-model-parallel-siz" + GBK[:2] + b" 2\n"})
    r = cli(root, ["--format", "json", "run.sh"], env={"PYTHONIOENCODING": "utf-8:strict"})
    msgs = [f["message"] for f in json.loads(r.stdout)]
    assert len(msgs) == 1 and "--tensor-model-parallel-siz\\xc4\\xe3: did you mean" in msgs[0], msgs


@pytest.mark.parametrize("fmt", ["text", "full", "json", "github", "sarif"])
def test_gbk_script_in_every_format(cli, project, fmt):
    root = project({"run.sh": b"# " + GBK + b"\ntorchrun pretrain_gpt.py " + REUSE.encode() + b"  # " + GBK + b"\n"})
    r = cli(root, ["--format", fmt, "run.sh"], env={"PYTHONIOENCODING": "utf-8:strict"})
    assert r.returncode == 1 and "NPU504" in r.stdout


# -------------------------------------------------------------------- which shell


@pytest.mark.parametrize("shebang", ["#!/usr/bin/env zsh", "#!/bin/zsh", "#!/usr/bin/fish", "#!/bin/csh -f",
                                     "#!/bin/tcsh", "#!/bin/ksh", "#!/usr/bin/env -S ksh93 -e", "#!/usr/bin/python3"])
def test_other_shells_are_not_read_as_bash(lint, shebang):
    # zsh's `${(j: :)ARGS}` and csh's `set x = (...)` are no bash; nothing is said about them
    src = f"{shebang}\nif [[ -n ${{(j: :)ARGS}} ]] {{ }}\ntorchrun pretrain_gpt.py {REUSE}\n"
    assert sh(lint, src) == []


@pytest.mark.parametrize("shebang", ["#!/bin/bash", "#!/usr/bin/env bash", "#!/bin/sh", "#!/bin/dash",
                                     "#! /bin/sh -e", "#!/usr/bin/env -S bash -x", "#!/bin/busybox sh",
                                     "# !/bin/zsh (a comment, not a shebang)", ""])
def test_bash_and_posix_shells_are_read(lint, shebang):
    src = f"{shebang}\ntorchrun pretrain_gpt.py {REUSE}\n"
    assert codes(sh(lint, src)) == ["NPU504"]
    assert codes(sh(lint, f"{shebang}\nif then fi (\ntorchrun pretrain_gpt.py\n")) == ["NPU001"]


# -------------------------------------------------------------------- CRLF (NPU004)


def test_crlf_script_is_one_npu004_and_nothing_built_from_its_words(lint):
    src = ("#!/bin/bash\r\nGPT_ARGS=\"--seed 1 \\\r\n  --log-throughput\"\r\n"
           "torchrun pretrain_gpt.py $GPT_ARGS \\\r\n  --reuse-fp32-param --fp16\r\n")
    found = sh(lint, src)
    assert [(f.code, f.line, f.column) for f in found] == [("NPU004", 2, 21)]  # the first CR bash reads
    assert "CRLF" in found[0].message
    # the clean twin: the same script with LF line endings has its real finding
    assert codes(sh(lint, src.replace("\r\n", "\n"))) == ["NPU504"]


def test_npu004_quotes_what_the_carriage_return_does_to_the_scripts_own_words(lint):
    # the first CRLF line whose last word is not a `\` (a continuation, which CRLF breaks)
    src = "torchrun pretrain_gpt.py \\\r\n  --lr 1e-4 \\\r\n  --seq-length 4096\r\n"
    (found,) = sh(lint, src, select=["NPU004"])
    assert (found.line, found.column) == (1, 27)
    assert "last word (`4096` becomes `4096\\r`) and" in found.message
    # operators, quotes and expansions are not plain words (bash does not read them as a space
    # split does): the first line with a plain last word is quoted
    src = ('cd /work &&\r\nDATA="/data/my dir"\r\necho $DATA |\r\n'
           'torchrun pretrain_gpt.py --data-path "$DATA" --bf16\r\n')
    (found,) = sh(lint, src, select=["NPU004"])
    assert "last word (`--bf16` becomes `--bf16\\r`) and" in found.message
    # no word to quote: the message says it without an example
    (found,) = sh(lint, "torchrun pretrain_gpt.py \\\r\n  --bf16\n", select=["NPU004"])
    assert "last word and `\\` before CRLF" in found.message


def test_crlf_only_at_the_end_of_comments_is_harmless(lint):
    src = "#!/bin/bash\r\n# launch\r\ntorchrun pretrain_gpt.py --reuse-fp32-param --fp16  # fp16 run\r\n"
    assert codes(sh(lint, src)) == ["NPU504"]


def test_crlf_instead_of_a_syntax_error(lint):
    # bash fails on `then\r`: the cause is the line endings, said once
    src = "if [ -n \"$X\" ]; then\r\n  torchrun pretrain_gpt.py --bf16\r\nfi\r\n"
    assert codes(sh(lint, src)) == ["NPU004"]


def test_npu004_selected_alone(lint):
    src = "torchrun pretrain_gpt.py --bf16\r\n"
    assert codes(sh(lint, src, select=["NPU004"])) == ["NPU004"]
    assert sh(lint, src, select=["NPU5"]) == []
    # the script's one finding is NPU004: NPU001 or NPU005 alone say nothing about it, not even
    # where bash cannot parse it (`then\r` is no keyword)
    for alone in ("NPU001", "NPU005"):
        assert sh(lint, src, select=[alone]) == []
        assert sh(lint, "if true; then\r\n  torchrun pretrain_gpt.py --bf16\r\nfi\r\n", select=[alone]) == []
    assert sh(lint, src.replace("\r\n", "\n"), select=["NPU004"]) == []  # the clean twin


def test_npu001_selected_alone(lint):
    src = "torchrun pretrain_gpt.py --bf16\necho )\n"
    assert [(f.code, f.line, f.column) for f in sh(lint, src, select=["NPU001"])] == [("NPU001", 2, 6)]
    assert sh(lint, src, select=["NPU004"]) == [] and sh(lint, src, select=["NPU005"]) == []
    assert sh(lint, src.replace("echo )", "echo ')'"), select=["NPU001"]) == []  # the clean twin


def test_the_engine_reads_only_the_scripts_a_launch_rule_would(lint):
    # no launch in it (the prefilter's tokens): its CRLF line endings and its syntax error are
    # not looked at, whichever codes are on
    assert sh(lint, "echo hi\r\nif then fi (\r\n", select=["ALL"]) == []
    assert sh(lint, "echo hi\nif then fi (\n", select=["ALL"]) == []
    assert codes(sh(lint, "torchrun pretrain_gpt.py --bf16\nif then fi (\n", select=["ALL"])) == ["NPU001"]


def test_noqa_npu004_anywhere_in_the_script_suppresses_it(lint):
    # a comment's own carriage return is harmless and not counted: NPU004 is reported at the first
    # line bash reads one on (line 2), and adding a comment to that line would move it to the next;
    # so a `# noqa: NPU004` anywhere in the script suppresses the script's one finding
    src = "torchrun pretrain_gpt.py --bf16\r\ntorchrun pretrain_gpt.py --fp16\r\n"
    assert [(f.code, f.line, f.column) for f in sh(lint, src, select=["NPU0"])] == [("NPU004", 1, 32)]
    assert sh(lint, "# noqa: NPU004\r\n" + src, select=["NPU0"]) == []
    assert sh(lint, src + "# noqa: NPU0\r\n", select=["NPU0"]) == []  # a prefix of the code
    # the twins: a blanket `# noqa`, or one for another code, elsewhere does not
    assert codes(sh(lint, "# noqa\r\n" + src, select=["NPU0"])) == ["NPU004"]
    assert codes(sh(lint, "# noqa: NPU501\r\n" + src, select=["NPU0"])) == ["NPU004"]
    # per-file-ignores too (or LF line endings)
    assert lint({"run.sh": src}, select=["NPU0"], config="[tool.npulint.per-file-ignores]\n'run.sh' = ['NPU004']\n") == []


# -------------------------------------------------------------------- extensionless scripts


def test_extensionless_bash_script_is_found_by_walk(cli, project):
    root = project({
        "bin/train": f"#!/usr/bin/env bash\ntorchrun pretrain_gpt.py {REUSE}\n",
        "bin/train_sh": f"#!/bin/sh\ntorchrun pretrain_gpt.py {REUSE}\n",
        "bin/helper": f"#!/usr/bin/env python3\nimport subprocess\nsubprocess.run(['torchrun', 'pretrain_gpt.py', "
                      f"'--reuse-fp32-param', '--fp16'])\n",
        "bin/zsh_train": f"#!/usr/bin/env zsh\ntorchrun pretrain_gpt.py {REUSE}\n",
        "bin/no_shebang": f"torchrun pretrain_gpt.py {REUSE}\n",
        "notes.txt": f"#!/bin/bash\ntorchrun pretrain_gpt.py {REUSE}\n",
        ".hidden_rc": f"#!/bin/bash\ntorchrun pretrain_gpt.py {REUSE}\n",
    })
    r = cli(root, ["--select", "NPU0,NPU5"])
    assert [(p, c) for p, _, _, c in parse(r.stdout)] == [("bin/train", "NPU504"), ("bin/train_sh", "NPU504")]


def test_extensionless_script_ignored_by_gitignore_is_not_read(cli, project):
    root = project({"bin/train": f"#!/bin/bash\ntorchrun pretrain_gpt.py {REUSE}\n", ".gitignore": "bin/\n"})
    (root / ".git").mkdir()
    assert cli(root, ["--select", "NPU5"]).stdout == ""


def test_extensionless_script_named_explicitly(cli, project):
    root = project({
        "train": f"#!/bin/bash\ntorchrun pretrain_gpt.py {REUSE}\n",
        "ztrain": "#!/usr/bin/env zsh\nprint -l ${(f)\"$(ls)\"}\ntorchrun pretrain_gpt.py --bf16\n",
    })
    assert [(p, c) for p, _, _, c in parse(cli(root, ["train"]).stdout)] == [("train", "NPU504")]
    # a zsh script is a shell script (not Python), and not bash: nothing, not NPU001
    assert cli(root, ["ztrain"]).stdout == ""
    # through standard input, the shebang says the language too
    r = cli(root, ["--stdin-filename", "train", "-"], stdin=f"#!/bin/bash\ntorchrun pretrain_gpt.py {REUSE}\n")
    assert [(p, c) for p, _, _, c in parse(r.stdout)] == [("train", "NPU504")]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_extensionless_fifo_in_a_walk_does_not_hang(cli, project):
    root = project({"run.sh": f"torchrun pretrain_gpt.py {REUSE}\n"})
    os.mkfifo(root / "pipe")
    r = cli(root, ["--select", "NPU5"])
    assert [(p, c) for p, _, _, c in parse(r.stdout)] == [("run.sh", "NPU504")]


# -------------------------------------------------------------------- entry in a variable folder


@pytest.mark.parametrize("entry", ["$basepath/pretrain_gpt.py", "${DIR}/posttrain_gpt.py",
                                   '"$MindSpeed_LLM_PATH"/pretrain_gpt.py', "$(dirname $0)/../pretrain_gpt.py"])
def test_entry_in_a_variable_folder_is_recognised_by_its_name(lint, entry):
    src = f"basepath=$(cd `dirname $0`; pwd)\ntorchrun $DISTRIBUTED_ARGS {entry} {REUSE}\n"
    found = sh(lint, src)
    assert codes(found) == ["NPU504"] and pos(found[0]) == at(src, "--reuse")
    assert sh(lint, src.replace("--fp16", "--bf16")) == []
    assert codes(sh(lint, f"python {entry} {REUSE}\n")) == ["NPU504"]


@pytest.mark.parametrize("entry", ["${PREFIX}pretrain_gpt.py", "$SCRIPT", "$DIR/$NAME.py", "$DIR/pretrain_gpt.sh"])
def test_entry_whose_name_is_unknown_is_not_an_entry(lint, entry):
    assert sh(lint, f"torchrun {entry} {REUSE}\n") == []


# -------------------------------------------------------------------- launch wrappers


@pytest.mark.parametrize("wrapper", [
    "timeout 2h", "timeout -s KILL 10m", "timeout --signal=TERM -k 30 3600", "timeout --kill-after 5 --preserve-status 1d",
    "timeout -sKILL 10", "nohup", "nohup --", "env", "env A=1 B=2", "env -u HCCL_IF_IP A=1", "env -i PATH=/bin",
    "env - A=1", "env --unset=X --chdir /tmp", "numactl --cpunodebind=0 --membind=0", "numactl -N 0 -m 0",
    "numactl --interleave all", "numactl -C 0-23 -l", "taskset -c 0-15", "taskset 0xff", "taskset -ac 0-3",
    "stdbuf -oL -eL", "nohup timeout 2h env A=1 numactl -N 0", "exec", "time", "time -p"])
def test_wrappers_are_looked_through(lint, wrapper):
    src = f"{wrapper} torchrun --nproc_per_node 8 pretrain_gpt.py {REUSE} > log 2>&1 &\n"
    found = sh(lint, src)
    assert codes(found) == ["NPU504"], wrapper
    assert pos(found[0]) == at(src, "--reuse")
    assert sh(lint, src.replace("--fp16", "--bf16")) == []


@pytest.mark.parametrize("wrapper", [
    "taskset -p 1234",  # an existing process: runs nothing
    "env -S 'A=1'",  # a string env splits itself: not read
    "timeout --no-such-option 10", "numactl --show", "nohup -x", "timeout $T",
    "env $EXTRA", "numactl $NUMA_OPTS", "sudo",
])
def test_wrappers_whose_options_cannot_be_read_say_nothing(lint, wrapper):
    assert sh(lint, f"{wrapper} torchrun pretrain_gpt.py {REUSE}\n") == []


def test_wrappers_in_python_launch_lists(lint):
    src = ("import subprocess\n"
           "subprocess.run(['timeout', '2h', 'torchrun', 'pretrain_gpt.py', '--reuse-fp32-param', '--fp16'])\n")
    assert codes(lint(src, select=["NPU5"])) == ["NPU504"]


# -------------------------------------------------------------------- bash -c


def test_bash_c_string_is_a_script(lint):
    src = f'bash -c "torchrun pretrain_gpt.py {REUSE}"\n'
    found = sh(lint, src)
    assert codes(found) == ["NPU504"] and pos(found[0]) == at(src, "--reuse")
    assert sh(lint, src.replace("--fp16", "--bf16")) == []


@pytest.mark.parametrize("outer", ["bash -lc", "sh -c", "/bin/bash -e -c", "bash -o pipefail -c", "nohup bash -c",
                                   "timeout 2h bash -xc", "bash --login -c"])
def test_bash_c_after_options_and_wrappers(lint, outer):
    src = f"{outer} 'cd /work && torchrun pretrain_gpt.py {REUSE}' &\n"
    found = sh(lint, src)
    assert codes(found) == ["NPU504"], outer
    assert pos(found[0]) == at(src, "--reuse")


def test_bash_c_string_expanded_by_the_outer_shell(lint):
    src = f'ARGS="{REUSE}"\nbash -c "torchrun pretrain_gpt.py $ARGS"\n'
    found = sh(lint, src)
    assert codes(found) == ["NPU504"] and pos(found[0]) == at(src, "--reuse")  # in the assignment


def test_bash_c_traps(lint):
    assert sh(lint, 'CMD="$1"\nbash -c "$CMD"\n') == []  # unknown string
    assert sh(lint, f"bash run.sh {REUSE}\n") == []  # a script file, not a string
    assert sh(lint, f"echo \"bash -c 'torchrun pretrain_gpt.py {REUSE}'\"\n") == []  # text
    # single quotes: $ARGS is the inner shell's (its environment), unknown here
    assert sh(lint, f"ARGS='--bf16'\nbash -c 'torchrun pretrain_gpt.py --reuse-fp32-param $ARGS'\n") == []
    assert sh(lint, f"bash -c 'if then fi (' ; true\n") == []  # an inner syntax error: nothing


# -------------------------------------------------------------------- noqa above the command

LAUNCH = """\
GPT_ARGS="
    --reuse-fp32-param
    --fp16
"
torchrun pretrain_gpt.py $GPT_ARGS \\
    --tensor-model-paralel-size 2
"""


def test_noqa_line_above_the_command_covers_the_whole_command(lint):
    assert codes(sh(lint, LAUNCH)) == ["NPU504", "NPU502"]
    src = LAUNCH.replace("torchrun", "# noqa: NPU504\ntorchrun")
    assert codes(sh(lint, src)) == ["NPU502"]  # the NPU504 sits in GPT_ARGS, the command holds it
    src = LAUNCH.replace("torchrun", "# noqa: NPU502, NPU504\n# a second comment line\ntorchrun")
    assert sh(lint, src) == []
    src = LAUNCH.replace("torchrun", "# noqa\ntorchrun")
    assert sh(lint, src) == []


def test_noqa_line_above_the_assignment_holding_the_flag(lint):
    src = LAUNCH.replace('GPT_ARGS="', '# noqa: NPU504\nGPT_ARGS="')
    assert codes(sh(lint, src)) == ["NPU502"]


def test_noqa_line_that_is_not_directly_above_does_nothing(lint):
    for src in (LAUNCH.replace("torchrun", "# noqa: NPU504\n\ntorchrun"),  # a blank line between
                LAUNCH.replace('"\ntorchrun', '"  # noqa: NPU504\ntorchrun'),  # ends the line above
                LAUNCH.replace("torchrun", "# noqa: NPU501\ntorchrun")):  # another code
        assert codes(sh(lint, src, select=["NPU5"])) == ["NPU504", "NPU502"], src


def test_noqa_above_a_block_and_above_a_function_call(lint):
    src = f"# noqa: NPU504\nif true; then\n  torchrun pretrain_gpt.py {REUSE}\nfi\n"
    assert sh(lint, src) == []
    src = f"train() {{\n  torchrun pretrain_gpt.py {REUSE}\n}}\n# noqa: NPU504\ntrain\n"
    assert sh(lint, src) == []
    src = f"train() {{\n  torchrun pretrain_gpt.py {REUSE}\n}}\n# noqa: NPU504\ntrain\ntrain\n"
    assert codes(sh(lint, src, select=["NPU5"])) == ["NPU504"]  # the second call is not covered


def test_noqa_in_a_string_or_heredoc_is_no_comment(lint):
    src = f'echo "keep this # noqa: NPU504"\ncat <<EOF\n# noqa: NPU504\nEOF\ntorchrun pretrain_gpt.py {REUSE}\n'
    assert codes(sh(lint, src)) == ["NPU504"]


def test_npu003_counts_a_used_noqa_line_above(lint):
    src = LAUNCH.replace("torchrun", "# noqa: NPU504\ntorchrun")
    assert codes(sh(lint, src, select=["NPU003", "NPU5"])) == ["NPU502"]
    src = LAUNCH.replace("torchrun", "# noqa: NPU501\ntorchrun")
    assert codes(sh(lint, src, select=["NPU003", "NPU5"])) == ["NPU504", "NPU003", "NPU502"]


def test_npu003_never_sees_strings_or_heredocs(lint):
    src = 'echo "keep this # noqa: NPU504"\ncat <<EOF\n# noqa: NPU504\nEOF\nx=1  # noqa: NPU504\n'
    found = sh(lint, src, select=["NPU003", "NPU5"])
    assert [(f.code, f.line) for f in found] == [("NPU003", 5)]


def test_skip_file_only_as_a_comment(lint):
    src = f"cat <<EOF\n# npulint: skip-file\nEOF\ntorchrun pretrain_gpt.py {REUSE}\n"
    assert codes(sh(lint, src)) == ["NPU504"]
    assert sh(lint, "# npulint: skip-file\n" + src) == []


# -------------------------------------------------------------------- --fix on shell scripts

FIX_ARGS = ["--fix", "--select", "NPU003,NPU5", "--no-cache"]


def test_fix_never_edits_strings_or_heredocs(cli, project):
    src = ('#!/bin/bash\necho "keep this # noqa: NPU502"\ncat <<EOF\nalso # noqa: NPU502\nEOF\n'
           "torchrun pretrain_gpt.py \"--seed 1 # noqa: NPU502\"\nx=1  # noqa: NPU502\n")
    root = project({"run.sh": src})
    cli(root, FIX_ARGS + ["run.sh"])
    assert (root / "run.sh").read_text() == src.replace("x=1  # noqa: NPU502", "x=1")


@pytest.mark.parametrize("odd", ["\x0c", "\x0b", "\x1c", "\x85", "\u2028"])
def test_fix_lands_on_the_line_of_the_finding(cli, project, odd):
    # str.splitlines() breaks at these; bash and npulint's line numbers do not
    src = f"# a{odd}b\ntorchrun pretrain_gpt.py --bf16\nx=1  # noqa: NPU502\necho done\n"
    root = project({"run.sh": src.encode()})
    r = cli(root, ["--select", "NPU003,NPU5", "--no-cache", "run.sh"])
    assert [(ln, c) for _, ln, _, c in parse(r.stdout)] == [(3, "NPU003")]
    cli(root, FIX_ARGS + ["run.sh"])
    assert (root / "run.sh").read_bytes() == src.replace("x=1  # noqa: NPU502", "x=1").encode()


def test_fix_in_a_gbk_script_keeps_its_bytes(cli, project):
    src = b"# " + GBK + b"\necho \"" + GBK + b"\"\nx=1  # noqa: NPU502\n"
    root = project({"run.sh": src})
    cli(root, FIX_ARGS + ["run.sh"])
    assert (root / "run.sh").read_bytes() == src.replace(b"x=1  # noqa: NPU502", b"x=1")


def test_python_fix_lands_on_the_line_of_the_finding(cli, project):
    # a form feed above: the noqa removal must not take the statement with it
    src = "import torchair\n\x0c\nlonger_name = compute(1, 2)  # noqa: NPU304\n"
    root = project({"t.py": src})
    cli(root, ["--fix", "--select", "NPU003,NPU3", "--no-cache", "t.py"])
    assert (root / "t.py").read_text() == src.replace("  # noqa: NPU304", "")


@pytest.mark.parametrize("name, src, left", [
    ("crlf.sh", "torchrun pretrain_gpt.py \\\r\n  --tensor-model-paralel-size 2  # noqa: NPU502\r\n", ["NPU004"]),
    ("bad.sh", "torchrun pretrain_gpt.py --bf16  # noqa: NPU502\nif then fi (\n", ["NPU001"]),
    ("z.sh", "#!/bin/zsh\ntorchrun pretrain_gpt.py --bf16  # noqa: NPU502\n", []),
    ("t.py", "import torchair as tng\nwith tng.scope.npu_stream_switch('1', 2):  # noqa: NPU304\n    x = (1,\n",
     ["NPU001"]),
])
def test_npu003_says_nothing_where_the_rules_could_not_read(cli, project, name, src, left):
    # whether the directive is used is unknown: --fix must not take it away
    root = project({name: src.encode()})
    r = cli(root, ["--extend-select", "NPU003", "--no-cache", name])
    assert [c for _, _, _, c in parse(r.stdout)] == left
    cli(root, ["--fix", "--extend-select", "NPU003", "--no-cache", name])
    assert (root / name).read_bytes() == src.encode()


def test_npu003_still_judges_a_script_that_reads(cli, project):
    root = project({"ok.sh": "torchrun pretrain_gpt.py --bf16  # noqa: NPU502\n"})
    r = cli(root, ["--extend-select", "NPU003", "--no-cache", "ok.sh"])
    assert [c for _, _, _, c in parse(r.stdout)] == ["NPU003"]


@pytest.mark.parametrize("select", [["NPU5", "NPU0"], ["NPU001"], ["NPU5"]])
def test_the_engine_reads_a_script_once_for_its_own_findings_and_the_launch_rules(lint, monkeypatch, select):
    from npulint import shell

    calls = []
    real = shell.parse_script
    monkeypatch.setattr(shell, "parse_script", lambda text: calls.append(text) or real(text))
    found = sh(lint, f"torchrun pretrain_gpt.py {REUSE}\n", select=select)
    assert codes(found) == (["NPU504"] if select != ["NPU001"] else []) and len(calls) == 1


def test_a_script_is_parsed_once_for_its_launches_and_its_comments(lint, monkeypatch):
    from npulint import shell

    real = shell._parser()
    calls = []

    class Counting:
        language = real.language

        def parse(self, data):
            calls.append(data)
            return real.parse(data)

    monkeypatch.setattr(shell, "_parser", lambda: Counting())
    monkeypatch.setattr(shell, "_LAST_PARSE", [None, None, None, None])
    src = "# a comment\ntorchrun pretrain_gpt.py --reuse-fp32-param  # noqa: NPU502\n"
    found = lint({"run.sh": src}, select=["NPU5", "NPU003"])
    assert sorted(f.code for f in found) == ["NPU003", "NPU504"]
    assert len(calls) == 1


def _fake_bash(tmp_path, monkeypatch, body):
    folder = tmp_path / "bin"
    folder.mkdir()
    fake = folder / "bash"
    fake.write_text("#!/bin/sh\n" + body + "\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(folder))


def test_bash_n_decides_by_its_status(tmp_path, monkeypatch):
    from npulint import shell

    _fake_bash(tmp_path, monkeypatch, f"{shutil.which('cat')} >/dev/null; exit 0")
    assert shell._bash_accepts(b"x=<y>\n")
    monkeypatch.setenv("PATH", "")
    assert not shell._bash_accepts(b"x=<y>\n")  # no bash: tree-sitter's verdict stands


def test_bash_n_that_takes_too_long_is_ended(tmp_path, monkeypatch):
    import time

    from npulint import shell

    _fake_bash(tmp_path, monkeypatch, f"exec {shutil.which('sleep')} 30")
    monkeypatch.setattr(shell, "BASH_TIMEOUT", 0.2)
    start = time.monotonic()
    assert not shell._bash_accepts(b"x=1\n")
    assert 0.2 <= time.monotonic() - start < 10
