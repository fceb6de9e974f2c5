"""The paths through a shell script, as bash runs it: which branch a condition takes, what a
function's ``local`` variables hide, which commands assign variables, ``unset`` of array
elements, and the commands of ``if``/``while``/``until`` conditions."""

from __future__ import annotations

import shlex
import shutil
import subprocess

import pytest

from conftest import codes

# core_r0.8.0-era MindSpeed, whose validator rejects AMO with any recompute flag
LEGACY = '[tool.npulint.releases]\nmindspeed = ["2.0.0_core_r0.8.0", "2.1.0_core_r0.8.0"]\n'
AMO = "--adaptive-memory-optimization"
LAUNCH = "torchrun pretrain_gpt.py"
# the requirement of --recompute-in-bubble: pipeline size > 1 (and a virtual pipeline)
# AMO conflicts with an ampipe degree other than 1 (NPU501: a conflict on one path is reported)
AMPIPE = f"{LAUNCH} {AMO} --ampipe-degree $D\n"
BUBBLE = f"{LAUNCH} --pipeline-model-parallel-size $PP --num-layers-per-virtual-pipeline-stage 2 " \
         "--recompute-in-bubble --num-layers 32\n"


def sh(lint, src):
    return codes(lint({"run.sh": src}, select=["NPU0", "NPU5"], config=LEGACY))


# -------------------------------------------------------------------- paths


def test_paths_whose_arrays_differ_are_not_merged(lint):
    # the two branches give A different arrays: two paths, and the second one conflicts
    src = f'if [ -n "$X" ]; then A=(--bf16); else A=(--swap-attention); fi\n{LAUNCH} "${{A[@]}}" {AMO}\n'
    assert sh(lint, src) == ["NPU501"]
    assert sh(lint, src.replace("A=(--swap-attention)", "A=(--fp16)")) == []


# -------------------------------------------------------------------- conditions bash decides

RECOMPUTE = "--recompute-granularity full --recompute-method uniform"


def test_a_test_of_known_values_takes_one_branch(lint):
    src = f"""\
    ENABLE_RECOMPUTE=0
    GPT_ARGS="--bf16"
    if [ "$ENABLE_RECOMPUTE" -eq 1 ]; then
        GPT_ARGS="$GPT_ARGS {RECOMPUTE}"
    fi
    {LAUNCH} $GPT_ARGS {AMO}
    """
    assert sh(lint, src) == []
    assert sh(lint, src.replace("ENABLE_RECOMPUTE=0", "ENABLE_RECOMPUTE=1")) == ["NPU501", "NPU501"]
    # test's integers may have blanks and leading zeros; a word that is no integer is an error
    # in bash: unknown, both branches stay
    assert sh(lint, src.replace("ENABLE_RECOMPUTE=0", "ENABLE_RECOMPUTE=' 01'")) == ["NPU501", "NPU501"]
    assert sh(lint, src.replace("ENABLE_RECOMPUTE=0", "ENABLE_RECOMPUTE=yes")) == ["NPU501", "NPU501"]


def test_and_or_lists_of_known_tests(lint):
    src = f"""\
    activation_checkpoint="false"
    ds_args="{AMO}"
    [[ $activation_checkpoint == true ]] && ds_args="$ds_args --recompute-activations"
    test "$activation_checkpoint" = true || [ -z "$activation_checkpoint" ] && ds_args="$ds_args --swap-attention"
    {LAUNCH} $ds_args
    """
    assert sh(lint, src) == []
    assert sh(lint, src.replace('="false"', '="true"')) == ["NPU501", "NPU501"]
    assert sh(lint, src.replace('="false"', '=""')) == ["NPU501"]  # only the second list runs its right side


def test_true_and_false_as_a_variable_s_value(lint):
    src = f"""\
    USE_AMO=true
    if $USE_AMO; then
        MEM="{AMO}"
    else
        MEM="{RECOMPUTE}"
    fi
    if ! $USE_AMO; then
        MEM="$MEM --swap-attention"
    fi
    {LAUNCH} $MEM --bf16
    """
    assert sh(lint, src) == []
    assert sh(lint, src.replace("USE_AMO=true", "USE_AMO=$1")) == ["NPU501"]  # unknown: every path


def test_elif_and_else_after_a_decided_condition(lint):
    src = f"""\
    MODE=amo
    if [[ "$MODE" == swap ]]; then ARGS="--swap-attention"
    elif [[ $MODE = amo && -n $MODE ]]; then ARGS=""
    else ARGS="{RECOMPUTE}"
    fi
    {LAUNCH} $ARGS {AMO}
    """
    assert sh(lint, src) == []
    assert sh(lint, src.replace("MODE=amo", "MODE=swap")) == ["NPU501"]
    assert sh(lint, src.replace("MODE=amo", "MODE=other")) == ["NPU501", "NPU501"]  # the else branch only


def test_a_launch_in_a_branch_bash_skips_is_not_checked(lint):
    src = f"DEBUG=0\nif [ $DEBUG = 1 ]; then\n  {LAUNCH} {AMO} --swap-attention\nfi\n"
    assert sh(lint, src) == []
    assert sh(lint, src.replace("DEBUG=0", "DEBUG=1")) == ["NPU501"]


def test_conditions_that_stay_unknown(lint):
    body = f'then ARGS="--swap-attention"; fi\n{LAUNCH} $ARGS {AMO}\n'
    for cond in ('[ -f "$CONF" ]', '[ "$X" = 1 -a 2 = 2 ]', 'grep -q amo cfg', 'X=abc; [ "$X" -lt 1 ]',
                 'M=abc; [[ $M == a* ]]', "M='a*'; [[ abc == $M ]]", 'M=x; [[ $M =~ x ]]', 'X="a b"; [ $X = a ]',
                 'f() { :; }; true', '[ "${A[@]}" = a ]'):
        assert sh(lint, f"if {cond}; {body}") == ["NPU501"], cond
    # quoted, the pattern is a string
    assert sh(lint, f"if M=abc; [[ $M == \"a*\" ]]; {body}") == []


def test_case_on_a_known_word_takes_one_item(lint):
    src = f"""\
    MODE=amo
    case "$MODE" in
      swap) MEM="--swap-attention" ;;
      amo|adaptive) MEM="" ;;
      *) MEM="{RECOMPUTE}" ;;
    esac
    {LAUNCH} $MEM {AMO}
    """
    assert sh(lint, src) == []
    assert sh(lint, src.replace("MODE=amo", "MODE=adaptive")) == []
    assert sh(lint, src.replace("MODE=amo", "MODE=swap")) == ["NPU501"]
    assert sh(lint, src.replace("MODE=amo", "MODE=other")) == ["NPU501", "NPU501"]
    assert sh(lint, src.replace("MODE=amo", "MODE=$1")) == ["NPU501", "NPU501", "NPU501"]
    # a pattern with pattern characters is not read: the items after it stay alternatives
    assert sh(lint, src.replace("swap)", "sw*)")) == ["NPU501"]
    other = src.replace("MODE=amo", "MODE=other")
    assert sh(lint, other.replace('"$MODE" in', '"$MODE" in\n  o*) MEM="" ;;')) == ["NPU501", "NPU501"]


# -------------------------------------------------------------------- what a condition tells


def test_a_condition_tested_again_takes_the_branch_it_took(lint):
    # MODE is unknown, but on each path the two tests agree: no path has both flags
    src = f"""\
    if [ "$MODE" = amo ]; then MEM="{AMO}"; fi
    if [ "$MODE" != amo ]; then OPT="--swap-attention"; fi
    {LAUNCH} $MEM $OPT --bf16
    """
    assert sh(lint, src) == []
    assert sh(lint, src.replace('!= amo', '!= swap')) == ["NPU501"]  # a path with both: MODE=amo
    same = f"""\
    if [[ $N -gt 4 ]]; then A="{AMO}"; else A=""; fi
    if [[ 4 -lt $N ]]; then B=""; else B="--swap-attention"; fi
    [ -z "$V" ] || C="{AMO}"
    [ "$V" ] || D="--recompute-activations"
    {LAUNCH} $A $B
    {LAUNCH} $C $D
    """
    assert sh(lint, same) == []
    assert sh(lint, same.replace('[ "$V" ]', '[ "$W" ]')) == ["NPU501"]


def test_what_a_condition_tells_lasts_until_the_variable_changes(lint):
    src = f"""\
    if [ "$MODE" = amo ]; then MEM="{AMO}"; fi
    MODE=$1
    if [ "$MODE" != amo ]; then OPT="--swap-attention"; fi
    {LAUNCH} $MEM $OPT --bf16
    """
    assert sh(lint, src) == ["NPU501"]
    # a value that passed `=` is the value: PP is 1 where the launch runs
    pp = 'if [ "$PP" = 1 ]; then ' + BUBBLE.strip() + "; fi\n"
    assert sh(lint, pp) == ["NPU504"]
    assert sh(lint, pp.replace("= 1", "= 2")) == []


def test_what_conditions_told_does_not_multiply_paths(lint):
    # ten tests whose branches assign nothing: one path, not 1024 (past MAX_PATHS nothing is said)
    checks = "".join(f'[ -z "$V{i}" ] && echo "V{i} is not set"\n' for i in range(10))
    assert sh(lint, f"{checks}{LAUNCH} {AMO} --swap-attention\n") == ["NPU501"]
    # and a path keeps what it was told where the branches differ: D is 2 on one path, where
    # the launch conflicts (a conflict on one path is reported; a requirement that fails on
    # one path only is not known to fail, so NPU501 shows what a path was told)
    told = f'{checks}if [ "$D" = 2 ]; then X=1; fi\n{AMPIPE}'
    assert sh(lint, told) == ["NPU501"]
    assert sh(lint, told.replace("= 2", "= 1")) == []
    assert sh(lint, f'{checks}if [ "$PP" = 1 ]; then X=1; fi\n{BUBBLE}') == []  # PP is 1 on one path only


# -------------------------------------------------------------------- function-local variables


def test_a_local_variable_is_gone_when_its_function_returns(lint):
    src = f"""\
    ARGS="{AMO}"
    print_full() {{
        local ARGS="$ARGS --recompute-granularity full"
        echo "a full-recompute run would use: $ARGS"
    }}
    print_full
    {LAUNCH} $ARGS
    """
    assert sh(lint, src) == []
    assert sh(lint, src.replace("local ARGS", "ARGS")) == ["NPU501"]  # not local: the caller's ARGS
    for keyword in ("declare", "typeset", "local -x"):
        assert sh(lint, src.replace("local ARGS", f"{keyword} ARGS")) == [], keyword
    assert sh(lint, src.replace("local ARGS", "declare -g ARGS")) == ["NPU501"]


def test_a_local_is_seen_by_the_functions_its_function_calls(lint):
    src = f"""\
    ARGS="--bf16"
    run() {{ {LAUNCH} $ARGS; }}
    with_amo() {{ local ARGS="$ARGS {AMO} --swap-attention"; run; }}
    with_amo
    run
    """
    assert sh(lint, src) == ["NPU501"]  # the run inside with_amo
    assert sh(lint, src.replace("    with_amo\n", "")) == []
    # a new local without a value is empty, not the caller's value
    empty = f'ARGS="{AMO} --swap-attention"\nf() {{ local ARGS; {LAUNCH} $ARGS; }}\nf\n'
    assert sh(lint, empty) == []
    assert sh(lint, empty.replace("local ARGS; ", "")) == ["NPU501"]


def test_declare_g_sets_the_global_a_local_hides(lint):
    src = f"""\
    PP=4
    f() {{ local PP=2; g; }}
    g() {{ declare -g PP=1; }}
    f
    {BUBBLE}"""
    assert sh(lint, src) == ["NPU504"]  # PP is 1 after f returns
    assert sh(lint, src.replace("declare -g PP=1", "PP=1")) == []  # assigns f's local: PP is 4 again


def test_local_outside_a_function_assigns_nothing(lint):
    # bash: "local: can only be used in a function"; PP keeps 1
    assert sh(lint, "PP=1\nlocal PP=4\n" + BUBBLE) == ["NPU504"]
    assert sh(lint, "PP=1\nPP=4\n" + BUBBLE) == []


def test_a_subshell_function_body_keeps_its_assignments(lint):
    src = f'ARGS={AMO}\nf() ( ARGS="$ARGS --swap-attention" )\nf\n{LAUNCH} $ARGS\n'
    assert sh(lint, src) == []
    assert sh(lint, src.replace("f() (", "f() {").replace('" )\n', '"; }\n')) == ["NPU501"]



def test_a_backgrounded_statement_keeps_its_assignments(lint):
    # a statement ended by & runs in a subshell: ARGS stays unset in the script
    for stmt in ('{ ARGS="--recompute-granularity full"; } &', 'ARGS="--recompute-granularity full" &',
                 'f() { ARGS="--recompute-granularity full"; }\nf &', 'true && ARGS="--recompute-granularity full" &',
                 'if true; then ARGS="--recompute-granularity full"; fi &',
                 '{ ARGS="--recompute-granularity full"; } > log 2>&1 &'):
        src = f"{stmt}\n{LAUNCH} {AMO} $ARGS --bf16\n"
        assert sh(lint, src) == [], stmt
        assert sh(lint, src.replace(" &\n", "\n", 1)) == ["NPU501"], stmt  # in the foreground it assigns


# -------------------------------------------------------------------- commands that assign


def test_builtins_that_assign_make_their_variables_unknown(lint):
    # after PP=1 each of these may set PP: the requirement (pipeline size > 1) is not known
    for cmd in ("read PP < pp.txt", "read -r -a PP", "read -p 'pp? ' PP", "mapfile -t PP < f", "readarray PP < f",
                "printf -v PP %d 4", "printf -vPP %d 4", "getopts p: PP", "let PP=4", "let 'PP += 3'", "((PP++))",
                "(( --PP ))", "X=$((PP=4))", "for ((;;PP++)); do :; done", "command read PP", "wait -p PP",
                "mapfile -C cb -c 1 LINES < f"):
        assert sh(lint, f"PP=1\n{cmd}\n{BUBBLE}") == [], cmd
    # the clean twins: other variables, or no assignment
    for cmd in ("read Q < q.txt", "read", "mapfile -t Q < f", "printf -v Q %d 4", "printf '%d' 4",
                "getopts p: Q", "let Q=4", "((PP > 1))", "X=$((PP + 4))", "command -v read", ": ${PP:=4}",
                ": ${Q:=4}", "((Q++))"):
        assert sh(lint, f"PP=1\n{cmd}\n{BUBBLE}") == ["NPU504"], cmd


def test_default_assignment_only_where_bash_assigns(lint):
    # ${PP:=4} assigns only an unset or empty PP; ${PP=4} only an unset one
    assert sh(lint, "PP=1\n: ${PP:=4}\n" + BUBBLE) == ["NPU504"]
    assert sh(lint, "PP=\n: ${PP:=4}\n" + BUBBLE) == []
    assert sh(lint, "PP=\n: ${PP=4}\n" + BUBBLE.replace("$PP", "1")) == ["NPU504"]


def test_eval_runs_its_text_here(lint):
    assert sh(lint, 'PP=1\neval "PP=4"\n' + BUBBLE) == []
    assert sh(lint, 'PP=1\neval "Q=4"\n' + BUBBLE) == ["NPU504"]
    # its launches are the script's (at the eval)
    src = f'ARGS="{AMO} --swap-attention"\neval "{LAUNCH} $ARGS"\n'
    found = lint({"run.sh": src}, select=["NPU5"], config=LEGACY)
    assert codes(found) == ["NPU501"] and found[0].line == 1
    assert sh(lint, src.replace(" --swap-attention", "")) == []
    # unknown text may set any variable, as a sourced file may
    assert sh(lint, 'PP=1\neval "$SETUP"\n' + BUBBLE) == []
    assert sh(lint, 'PP=1\neval "$(cat setup)"\n' + BUBBLE) == []


@pytest.mark.parametrize("text", [
    "'{L} $ARGS'",  # single quotes: the eval text expands ARGS
    '"{L} \\$ARGS"',
    "'{L} \\\n    $ARGS'",  # a continuation inside the text
    "'{L} $ARGS | tee x.log'",
    '"{L} $ARGS"',  # expanded before eval sees it
])
def test_a_value_expanded_in_an_eval_text_keeps_where_it_was_written(lint, text):
    # a value set outside the text points at its assignment (line 1), wherever it is expanded;
    # it was mapped through the text's characters as well, which put it elsewhere or nowhere
    src = f'ARGS="{AMO} --swap-attention"\neval {text.format(L=LAUNCH)}\n'
    found = lint({"run.sh": src}, select=["NPU5"], config=LEGACY)
    assert [(f.code, f.line, f.column) for f in found] == [("NPU501", 1, 38)], found


def test_a_value_set_in_an_eval_text_points_into_the_text(lint):
    src = f"eval 'ARGS=\"{AMO} --swap-attention\"'\n{LAUNCH} $ARGS\n"
    found = lint({"run.sh": src}, select=["NPU5"], config=LEGACY)
    assert [(f.code, f.line, f.column) for f in found] == [("NPU501", 1, 44)], found
    # and in a bash -c string inside an eval text
    src = f"eval 'bash -c \"{LAUNCH} {AMO} --swap-attention\"'\n"
    found = lint({"run.sh": src}, select=["NPU5"], config=LEGACY)
    assert [(f.code, f.line, f.column) for f in found] == [("NPU501", 1, 72)], found


def test_declarations_of_expanded_words(lint):
    assert sh(lint, 'PP=1\nexport $(grep -v "^#" .env | xargs)\n' + BUBBLE) == []
    assert sh(lint, 'PP=1\ndeclare "$NAME=4"\n' + BUBBLE) == []
    assert sh(lint, 'PP=1\nV="PP=4 Q=2"\nexport $V\n' + BUBBLE) == []  # known: PP=4
    assert sh(lint, 'PP=4\nV="PP=1 Q=2"\nexport $V\n' + BUBBLE) == ["NPU504"]
    assert sh(lint, 'PP=1\nexport Q=$(cat q)\n' + BUBBLE) == ["NPU504"]


def test_name_references(lint):
    assert sh(lint, "PP=1\ndeclare -n R=PP\nR=4\n" + BUBBLE) == []
    assert sh(lint, "PP=1\ndeclare -n R=PP\n" + BUBBLE) == ["NPU504"]  # declaring one assigns nothing
    assert sh(lint, "PP=1\ndeclare -n R=Q\nR=4\n" + BUBBLE) == ["NPU504"]
    assert sh(lint, "PP=1\nset_pp() { local -n ref=$1; ref=4; }\nset_pp PP\n" + BUBBLE) == []  # names any
    assert sh(lint, "PP=1\nset_pp() { local ref=$1; ref=4; }\nset_pp PP\n" + BUBBLE) == ["NPU504"]


def test_assignments_in_loops(lint):
    # a loop may run its body any number of times: what its commands may assign is unknown after it
    for cmd in ("read PP", "((PP++))", 'eval "$line"', "declare -n R=PP; R=4", "unset PP"):
        assert sh(lint, f"PP=1\nwhile true; do {cmd}; done\n{BUBBLE}") == [], cmd
    assert sh(lint, f"PP=1\nwhile true; do read Q; done\n{BUBBLE}") == ["NPU504"]


# -------------------------------------------------------------------- unset


def test_unset_an_array_element(lint):
    src = f"ARGS=({AMO} --swap-attention)\nunset 'ARGS[1]'\n{LAUNCH} \"${{ARGS[@]}}\"\n"
    assert sh(lint, src) == []
    assert sh(lint, src.replace("ARGS[1]", "ARGS[0]")) == []
    assert sh(lint, src.replace("unset 'ARGS[1]'", "unset 'ARGS[2]'")) == ["NPU501"]  # no element 2
    assert sh(lint, src.replace("'ARGS[1]'", '"ARGS[$i]"').replace("unset", "i=1; unset")) == []
    assert sh(lint, src.replace("ARGS[1]", "ARGS[-1]")) == []  # the last one
    # indices stay: after element 0 goes, element 1 is still 1
    sparse = f"ARGS=(--bf16 {AMO} --swap-attention --use-flash-attn)\nunset 'ARGS[0]'\nunset 'ARGS[2]'\n" \
             f"{LAUNCH} \"${{ARGS[@]}}\"\n"
    assert sh(lint, sparse) == []
    assert sh(lint, sparse.replace("'ARGS[2]'", "'ARGS[3]'")) == ["NPU501"]
    # a subscript that is not a known integer, or an unquoted word (a pattern bash may match to
    # file names): the array is unknown
    assert sh(lint, src.replace("'ARGS[1]'", '"ARGS[$i]"')) == []
    assert sh(lint, src.replace("'ARGS[1]'", "ARGS[1]")) == []
    assert sh(lint, f"ARGS=({AMO} --swap-attention)\nunset 'ARGS[1]'\nARGS+=(--swap-attention)\n"
                    f"{LAUNCH} \"${{ARGS[@]}}\"\n") == ["NPU501"]


def test_unset_reads_its_words_as_bash_does(lint):
    assert sh(lint, f"PP=4\nunset 'PP'\n{BUBBLE}") == []  # quoted: PP is unset (unknown)
    assert sh(lint, f"PP=4\nunset -v PP\n{BUBBLE}") == []
    assert sh(lint, f"PP=4\nunset -f PP\n{BUBBLE}") == []  # functions only: PP stays 4
    assert sh(lint, f"PP=1\nunset -f PP\n{BUBBLE}") == ["NPU504"]
    assert sh(lint, f"PP=1\nunset $NAME\n{BUBBLE}") == []  # an unknown name: any variable
    assert sh(lint, f"PP=1\nN=Q\nunset $N\n{BUBBLE}") == ["NPU504"]


# -------------------------------------------------------------------- commands of conditions


def test_launches_in_conditions_are_checked(lint):
    bad = f"{LAUNCH} {AMO} --swap-attention"
    for src in (f"if ! {bad}; then echo failed; fi\n", f"if {bad}; then :; fi\n",
                f"if [ -f x ]; then :; elif {bad}; then :; fi\n", f"until {bad}; do sleep 1; done\n",
                f"while {bad}; do :; done\n", f"while sleep 1; {bad}; do :; done\n", f"{bad} || echo failed\n"):
        assert sh(lint, src) == ["NPU501"], src
        assert sh(lint, src.replace(" --swap-attention", "")) == [], src


def test_a_loop_body_runs_where_its_condition_lets_it(lint):
    bad = f"{LAUNCH} {AMO} --swap-attention"
    assert sh(lint, f"while false; do {bad}; done\n") == []
    assert sh(lint, f"until true; do {bad}; done\n") == []
    assert sh(lint, f"DONE=1\nuntil [ $DONE -eq 1 ]; do {bad}; done\n") == []
    # a variable the loop assigns is unknown in its condition: the body may run
    assert sh(lint, f"DONE=1\nuntil [ $DONE -eq 1 ]; do {bad}; DONE=1; done\n") == ["NPU501"]
    assert sh(lint, f"while true; do {bad}; break; done\n") == ["NPU501"]


def test_a_condition_is_one_level_of_nesting(lint):
    from npulint import shell

    levels = shell.MAX_NESTING - 1  # the command inside is a level too
    for opening, closing in (("if true; then\n", "fi\n"), ("while true; do\n", "done\n"),
                             ("if [ -f x ]; then\n", "fi\n")):
        src = opening * levels + BUBBLE.replace("$PP", "1") + closing * levels
        assert sh(lint, src) == ["NPU504"], opening


# -------------------------------------------------------------------- paths that end


def test_a_path_that_exits_runs_nothing_after(lint):
    # the checks before the launch end the paths they reject
    for check in ('[ "$D" != 2 ] || { BAD=1; exit 1; }', 'if [ "$D" = 2 ]; then BAD=1; exit 1; fi',
                  'die() { BAD=1; exit 1; }\n[ "$D" != 2 ] || die'):
        assert sh(lint, f"{check}\n{AMPIPE}") == [], check
        # without the exit, the path where D is 2 (it differs from the others: BAD) reaches the launch
        assert sh(lint, f"{check.replace('exit 1', 'true')}\n{AMPIPE}") == ["NPU501"], check
    assert sh(lint, f"PP=1\nexit 0\n{BUBBLE}") == []
    assert sh(lint, f"PP=1\n(exit 0)\n{BUBBLE}") == ["NPU504"]  # a subshell's exit ends the subshell
    assert sh(lint, f"PP=1\nexec {BUBBLE}{BUBBLE}") == ["NPU504"]  # exec runs its command, nothing after
    assert sh(lint, f"PP=1\nexec > log\n{BUBBLE}") == ["NPU504"]


def test_an_exit_in_a_backgrounded_statement_ends_only_its_subshell(lint):
    for stmt in ("{ sleep 3600; exit 1; }", "exit 1", "watchdog() { sleep 7200; exit 1; }\nwatchdog",
                 "if true; then exit 0; fi", "true && exit 0"):
        assert sh(lint, f"PP=1\n{stmt} &\n{BUBBLE}") == ["NPU504"], stmt
        assert sh(lint, f"PP=1\n{stmt}\n{BUBBLE}") == [], stmt  # in the foreground it ends the script
    # a backgrounded condition succeeds: its then-branch runs
    assert sh(lint, f"PP=1\nif sleep 1 & then exit 0; fi\n{BUBBLE}") == []
    assert sh(lint, f"PP=1\nif sleep 1; then exit 0; fi\n{BUBBLE}") == ["NPU504"]


def test_return_leaves_the_function_and_break_the_loop(lint):
    src = f"""\
    PP=4
    set_pp() {{
        if [ "$FAST" = 1 ]; then return; fi
        PP=1
    }}
    set_pp
    {BUBBLE}"""
    assert sh(lint, src) == []  # PP is 1 where FAST is not 1, and 4 where it is: not known to fail
    assert sh(lint, src.replace("PP=4", "PP=1")) == ["NPU504"]  # PP is 1 on both paths
    conflict = src.replace("PP=4", "D=1").replace("PP=1", "D=2").replace(BUBBLE, AMPIPE)
    assert sh(lint, conflict) == ["NPU501"]  # D is 2 where FAST is not 1
    assert sh(lint, conflict.replace("D=2", "D=1")) == []
    loop = f'PP=1\nwhile true; do\n  [ "$PP" = 1 ] && break\n  {BUBBLE}done\n'
    assert sh(lint, loop) == []  # the launch runs only where PP is not 1
    assert sh(lint, loop.replace("break", "true")) == ["NPU504"]


# -------------------------------------------------------------------- arithmetic, as bash computes it

BASH = shutil.which("bash")
needs_bash = pytest.mark.skipif(BASH is None, reason="bash is not installed")


def bash_out(script: str) -> subprocess.CompletedProcess:
    return subprocess.run([BASH, "-c", script], capture_output=True, text=True, timeout=30)


# the variables the expressions below see (as a script assigns them)
ARITH_VARS = {"TP": "16", "NPUS": "8", "NEG": "-3", "EMPTY": "", "SUM": "1+2", "PAD": " 3 ", "HEX": "0x10",
              "OCT": "010", "PAIR": "1,2", "BAD": "1+", "LOOP1": "LOOP2", "LOOP2": "LOOP1", "WORDS": "2 3"}
ERROR = "error"  # bash rejects it (a message, a failing status)
# (expression, bash's value; or ERROR; or ("unread", why): bash gives a value npulint does not claim)
ARITH = [
    ("TP > 1", 1), ("TP>1", 1), ("TP != 1", 1), ("NPUS / 8 >= 1", 1), ("TP * 1", 16), ("", 0), ("  ", 0),
    ("-5 / 2", -2), ("-5 % 2", -1), ("5 % -2", 1), ("-7 / 2", -3), ("7 % -3", 1),
    ("9223372036854775807 + 1", -9223372036854775808), ("2 ** 63", -9223372036854775808), ("2 ** 64", 0),
    ("3 ** 41", -420491770248316829), ("0 ** 0", 1), ("2 ** 3 ** 2", 512), ("-2 ** 2", 4), ("- - 3", 3),
    ("1 << 63", -9223372036854775808), ("-8 >> 1", -4), ("1 << 2 + 1", 8),
    ("010 + 0x1F + 0X1f", 70), ("2#101", 5), ("64#@_", 62 * 64 + 63), ("36#zZ", 35 * 36 + 35), ("37#z", 35),
    ("37#A", 36), ("64#Z", 61), ("64#z", 35), ("16#ff", 255), ("16#FF", 255), ("10#08", 8), ("007", 7), ("00", 0), ("64#0", 0),
    ("1 < 2 == 1", 1), ("7 & 3 == 3", 1), ("1 | 2 ^ 3 & 4", 3), ("5 == 5 != 0", 1), ("5 > 3 > 0", 1),
    ("!5", 0), ("~0", -1), ("!0", 1), ("~TP", -17), ("6 ^ 3", 5), ("6 | 3", 7), ("6 & 3", 2),
    ("1 ? 2 : 3", 2), ("1 ? 2 : 3 ? 4 : 5", 2), ("0 ? 2 : 0 ? 4 : 5", 5), ("0 ? 1 : 2, 7", 7), ("1 ? 2, 3 : 4", 3),
    ("1, 2", 2), ("(1 + 2) * 3", 9), ("1 +\n2", 3), ("\t1", 1),
    # short circuits: the side not needed is not evaluated (no error, its variables not read)
    ("0 && 1/0", 0), ("1 || 1/0", 1), ("0 ? 1/0 : 4", 4), ("1 ? 2 : 1/0", 2), ("0 && (1/0)", 0),
    ("0 && LOOP1", 0), ("0 && BAD", 0), ("1 || BAD", 1),
    # a variable's value is an expression; empty is 0
    ("SUM * 2", 6), ("PAD + 1", 4), ("HEX", 16), ("OCT", 8), ("PAIR", 2), ("EMPTY + 1", 1), ("NEG * 2", -6),
    ("-TP", -16),
    # what bash rejects
    ("1/0", ERROR), ("TP % 0", ERROR), ("4 / 0 ? 1 : 1", ERROR), ("2 ** -1", ERROR), ("0 && 2 ** -1", ERROR),
    ("08", ERROR), ("0 && 08", ERROR), ("8#9", ERROR), ("2#102", ERROR), ("0x1g", ERROR), ("1e3", ERROR),
    ("2#", ERROR), ("1#1", ERROR), ("65#1", ERROR), ("010#1", ERROR), ("10#-8", ERROR), ("1 +", ERROR),
    ("1 +/ 2", ERROR), ("'3' + 1", ERROR), ("BAD", ERROR), ("LOOP1", ERROR), ("WORDS", ERROR), ("(1", ERROR),
    ("1 ?", ERROR), ("1 ? 2", ERROR), ("37#Z", ERROR), ("36#@", ERROR),
    # bash computes these, npulint does not claim them
    ("TP++", ("unread", "assigns")), ("X = 4", ("unread", "assigns")), ("TP += 1", ("unread", "assigns")),
    ("--3", ("unread", "read as a decrement")), ("ARR[0]", ("unread", "an array element")),
    ("UNSET + 1", ("unread", "a variable the script does not assign: the environment's")),
    ("0x", ("unread", "0 in bash 5.2, not in every version")),
    ("9223372036854775808", ("unread", "wraps in bash 5.2, past 64 bits")),
    ("1 << 64", ("unread", "a shift past 63: the machine's")), ("1 >> -1", ("unread", "a negative shift")),
    ("-9223372036854775807 - 1 == -9223372036854775807 - 1", 1),
    ("(-9223372036854775807 - 1) / -1", ("unread", "crashed bash before 4.3 (SIGFPE)")),
]


def _arith_env():
    from npulint.shell import Value

    return {k: Value(v, (None,) * len(v)) for k, v in ARITH_VARS.items()}


@pytest.mark.parametrize("expr,expected", ARITH)
def test_arithmetic_as_bash_computes_it(expr, expected):
    from npulint.shell import arith_value

    assert arith_value(expr, _arith_env()) == (expected if isinstance(expected, int) else None), expr


@needs_bash
def test_the_arithmetic_table_is_bash_s():
    setup = "".join(f"{k}={shlex.quote(v)}; " for k, v in ARITH_VARS.items())
    for expr, expected in ARITH:
        r = bash_out(f"{setup}echo $(( {expr} ))")
        if expected == ERROR:
            assert r.returncode != 0, (expr, r.stdout)
        elif isinstance(expected, int):
            assert (r.returncode, r.stdout.strip()) == (0, str(expected)), (expr, r.stderr)


# (the script's values, a condition, the branch bash takes: True, False; None where npulint
# keeps both because bash's answer depends on what the script does not hold)
CONDITIONS = [
    ("TP=16", "(( TP > 1 ))", True), ("TP=1", "(( TP > 1 ))", False), ("TP=16", "((TP>1))", True),
    ("TP=16", "(( TP != 1 ))", True), ("TP=1", "(( TP != 1 ))", False), ("NPUS=8", "(( NPUS / 8 >= 1 ))", True),
    ("NPUS=4", "(( NPUS / 8 >= 1 ))", False), ("TP=16", '(( "$TP" > 1 ))', True), ("TP=16", "(( $TP > 1 ))", True),
    ("TP=1", "(( $TP > 1 ))", False), ("TP=16", "! (( TP > 1 ))", False), ("TP=16", "(( 0 ))", False),
    ("TP=16", 'let "TP > 1"', True), ("TP=1", 'let "TP > 1"', False), ("TP=1", 'let "TP > 1" 1', True),
    ("TP=16", "[ $((TP*1)) -gt 1 ]", True), ("TP=1", "[ $((TP*1)) -gt 1 ]", False),
    ("TP=16", '[[ $((TP)) == 16 ]]', True), ("TP=16", '[ "$((TP / 2))" = 8 ]', True),
    ("TP=16", "[ ${TP:-1} -gt 1 ]", True), ("TP=", "[ ${TP:-1} -gt 1 ]", False), ("TP=", "[ ${TP:-2} -gt 1 ]", True),
    ("TP=16", "[ ${TP:=1} -gt 1 ]", True), ("TP=16", "[ ${TP-1} -gt 1 ]", True), ("TP=16", "[ ${TP=1} -gt 1 ]", True),
    ("TP=16; D=4", "[ ${TP:-$D} -gt 1 ]", True), ("TP=; D=1", "[ ${TP:-$D} -gt 1 ]", False),
    ("TP=; D=8", "[ ${TP:-${D:-1}} -gt 1 ]", True), ("TP=", '[ "${TP:-1 1}" = "1 1" ]', True),
    ("TP=", "[ ${TP:-'2'} -gt 1 ]", True),
    ("MC2=on", "[[ ${MC2:+x} == x ]]", True), ("MC2=", "[[ ${MC2:+x} == x ]]", False),
    ("MC2=on", "[[ ${MC2+x} == x ]]", True),
    ("MC2=True", '[[ "${MC2,,}" == "true" ]]', True), ("MC2=False", '[[ "${MC2,,}" == "true" ]]', False),
    ("MC2=True", "[[ ${MC2^^} == TRUE ]]", True), ("MC2=true", "[[ ${MC2^} == True ]]", True),
    ("MC2=TRUE", "[[ ${MC2,} == tRUE ]]", True), ("MC2=True", '[ "${MC2^^}" = TRUE ]', True),
    ("TP=16", "[[ $TP < 8 ]]", True), ("TP=9", "[[ $TP < 8 ]]", False), ("TP=16", "[[ $TP > 8 ]]", False),
    ("TP=8", "[[ $TP < 8 ]]", False), ("TP=16", '[[ $TP -gt "2*4" ]]', True), ("TP=SUM; SUM=3", "[[ $TP -gt 2 ]]", True),
    ("TP=' 3 '", "[[ $TP -eq 3 ]]", True), ("TP=", "[[ $TP -eq 0 ]]", True),
    # already read before: they stay
    ("TP=16", "[[ $TP -gt 1 ]]", True), ("TP=16", '[ "$TP" -ne 1 ]', True), ("TP=16", "test $TP -ge 2", True),
    ("TP=16", "[[ $TP != 1 ]]", True), ("TP=16", "[[ -n ${TP} && ${TP} -gt 1 ]]", True),
    ("TP=16", "[[ $TP =~ ^[2-9]$ ]]", None), ("TP=16", "[[ $TP == [2-9] ]]", None),
    # what bash's answer depends on
    ("TP=16", "(( U > 1 ))", None), ("TP=16", "(( TP / 0 ))", None), ("TP=16", "(( 08 > 1 ))", None),
    ("TP=16", "(( TP++ ))", None), ("TP=16", "[ ${U:-1} -gt 1 ]", None), ("TP=", "[ ${TP-1} -gt 1 ]", None),
    ("TP=", "[ ${TP=2} -gt 1 ]", None), ("TP=", "[ ${TP:=2} -gt 1 ]", None), ("TP=16", "[ ${TP:-~} = x ]", None),
    ("MC2=time", "[[ ${MC2^^} == TIME ]]", None), ("MC2=IN", "[[ ${MC2,,} == in ]]", None),
    ("MC2=True", "[[ ${MC2,,[T]} == true ]]", None), ("MC2=abc", "[[ $MC2 < abd ]]", None),
    ("TP=16", 'let "TP > 1" > /dev/null', None), ("TP=16", "let TP>1", None), ("TP=16", "(( $(echo 2) > 1 ))", None),
    ("TP=16", "[ $((U * 0)) = 0 ]", None), ("TP=16", "[[ 16 -gt U ]]", None),
    # (true in bash: tree-sitter-bash reads this $(( inside (( )) as a command substitution)
    ("TP=16", "(( TP > $((2 * 4)) ))", None),
]


@pytest.mark.parametrize("setup,cond,taken", CONDITIONS)
def test_conditions_bash_decides_from_known_values(lint, setup, cond, taken):
    src = f'{setup}\nMEM="--swap-attention"\nif {cond}; then MEM=""; fi\n{LAUNCH} $MEM {AMO}\n'
    assert sh(lint, src) == ([] if taken else ["NPU501"])


@needs_bash
def test_the_conditions_table_is_bash_s():
    for setup, cond, taken in CONDITIONS:
        if taken is not None:
            r = bash_out(f"cd /; {setup}\nif {cond}; then echo T; else echo F; fi 2>/dev/null")
            assert r.stdout.strip() == ("T" if taken else "F"), (setup, cond, r.stderr)


def test_arithmetic_expansion_in_a_launch_word(lint):
    # the value bash computes is the word's, written where the $(( is
    from npulint.shell import parse_script

    src = "PP=1\n" + BUBBLE.replace("$PP", "$((PP * 1))")
    assert sh(lint, src) == ["NPU504"]
    word = parse_script(src)[0].commands[0].words[3]
    at = src.splitlines()[1].index("$((") + 1
    assert (word.text, word.span.line, word.span.column, word.span.end_column) == ("1", 2, at, at + 1)
    assert sh(lint, "PP=1\n" + BUBBLE.replace("$PP", "$((PP * 2))")) == []
    assert sh(lint, "PP=1\n" + BUBBLE.replace("$PP", '"$((PP + 0))"')) == ["NPU504"]
    # X=$((X+1)) reads the value X held before
    assert sh(lint, "PP=0\nPP=$((PP + 1))\n" + BUBBLE) == ["NPU504"]
    assert sh(lint, "PP=1\nPP=$((PP + 1))\n" + BUBBLE) == []
    assert sh(lint, "PP=1\n" + BUBBLE.replace("$PP", "$((PP / 0))")) == []  # an error: unknown


def test_default_assignment_of_a_declared_variable(lint):
    # `local PP` declares PP without setting it: ${PP=4} assigns it
    src = f"f() {{\n  local PP\n  : ${{PP=4}}\n  {BUBBLE}}}\nf\n"
    assert bash_out("f() { local PP; : ${PP=4}; echo $PP; }; f").stdout.strip() == "4" if BASH else True
    assert sh(lint, src) == []
    assert sh(lint, src.replace("local PP", "local PP=1")) == ["NPU504"]  # set: not assigned


def test_case_fall_through(lint):
    # `;&` runs the next body too; `;;&` tests the next patterns as if none had matched
    src = f"""\
    MODE=$1
    MEM="--swap-attention"
    case "$MODE" in
      amo) X=1 ;&
      safe) MEM="" ;;
    esac
    if [ "$MODE" = amo ]; then MEM="$MEM {AMO}"; fi
    {LAUNCH} $MEM
    """
    assert sh(lint, src) == []
    assert sh(lint, src.replace(";&", ";;")) == ["NPU501"]  # MODE=amo keeps the swap flag
    assert sh(lint, src.replace(";&", ";;&").replace("safe)", "safe|amo)")) == []
    assert sh(lint, src.replace(";&", ";;&")) == ["NPU501"]  # amo does not match safe
    assert sh(lint, src.replace("MODE=$1", "MODE=safe").replace(";&", ";;&")) == []
    if BASH:
        for mode, terminator, patterns, mem in (("amo", ";&", "safe", ""), ("amo", ";;", "safe", "S"),
                                                ("amo", ";;&", "safe|amo", ""), ("amo", ";;&", "safe", "S"),
                                                ("safe", ";&", "safe", ""), ("x", ";&", "safe", "S")):
            r = bash_out(f'MEM=S; case {mode} in amo) X=1 {terminator} {patterns}) MEM="" ;; esac; echo "[$MEM]"')
            assert r.stdout.strip() == f"[{mem}]", (mode, terminator, patterns)


def test_assignments_before_a_function_call_hold_while_it_runs(lint):
    src = f'MEM=""\nf() {{ MEM="--swap-attention"; }}\nMEM=x f\n{LAUNCH} $MEM {AMO}\n'
    assert sh(lint, src) == []  # MEM is "" again after the call
    assert sh(lint, src.replace("MEM=x f", "f")) == ["NPU501"]
    # inside, the function (and the functions it calls) see the value; `local` keeps it
    assert sh(lint, f'MEM=""\ng() {{ {LAUNCH} $MEM {AMO}; }}\nf() {{ g; }}\nMEM=--swap-attention f\n') == ["NPU501"]
    assert sh(lint, f'h() {{ local MEM; {LAUNCH} $MEM {AMO}; }}\nMEM=--swap-attention h\n') == ["NPU501"]
    assert sh(lint, f'MEM=--swap-attention\nf() {{ :; }}\nMEM= f\n{LAUNCH} $MEM {AMO}\n') == ["NPU501"]
    if BASH:
        for script, out in (("X=2; f(){ X=1; }; X=3 f; echo $X", "2"), ("X=2; f(){ echo $X; }; X=3 f", "3"),
                            ("X=2; g(){ echo $X; }; f(){ g; }; X=3 f", "3"),
                            ("X=2; f(){ local X; echo $X; }; X=3 f", "3"),
                            ("X=2; f(){ declare -g X=5; }; X=3 f; echo $X", "5")):
            assert bash_out(script).stdout.strip() == out, script
            assert subprocess.run([BASH, "--posix", "-c", script], capture_output=True, text=True).stdout.strip() == out


@pytest.mark.parametrize("loop", ["for PP in 2 4; do", "for PP in $(seq 2 8); do", "select PP in 2 4; do",
                                  "for PP; do", "for PP in 2 4\ndo"])
def test_a_for_or_select_loop_assigns_its_variable(lint, loop):
    # bash sets PP before each run of the body: PP=1 from before the loop is not its value
    assert sh(lint, f"PP=1\n{loop}\n{BUBBLE}done\n") == [], loop
    assert sh(lint, f"PP=1\n{loop}\n  :\ndone\n{BUBBLE}") == [], loop  # nor after it
    # the twin: a loop over another variable leaves PP as it was
    assert sh(lint, f"PP=1\n{loop.replace('PP', 'X', 1)}\n{BUBBLE}done\n") == ["NPU504"], loop
