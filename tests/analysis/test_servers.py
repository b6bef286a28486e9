"""SGLang server launches read from a test's syntax, and the rules they meet."""

from __future__ import annotations

import textwrap
from pathlib import Path

from bot.analysis import launch, servers
from bot.analysis.findings import Severity
from bot.analysis.markers import Marker
from bot.analysis.par import server as par_server
from bot.analysis.snapshot import Snapshot
from bot.analysis.source import Module, parse_python
from bot.analysis.tree import FolderTree
from config.repo import defaults

LAUNCHERS = frozenset({"popen_launch_server"})
KEYWORDS = frozenset({"Engine", "ServerArgs"})


def _module(text: str) -> Module:
    module = parse_python("test/test_s.py", textwrap.dedent(text))
    assert isinstance(module, Module)
    return module


def _find(text: str, backend: str = "rocm") -> list[servers.Server]:
    return servers.find(_module(text), backend, LAUNCHERS, KEYWORDS)


def _one(text: str, backend: str = "rocm") -> servers.Server:
    found = _find(text, backend)
    assert len(found) == 1, found
    return found[0]


def _settings(text: str) -> dict[str, object]:
    return {k: (v.text if isinstance(v, servers.Unresolved) else v)
            for k, v in _one(text).settings.items()}


def test_a_file_without_a_server_word_is_not_parsed_further() -> None:
    assert _find("x = 1\nprint(x)\n") == []
    assert _find("popen_launch_server = None\n") == []  # the name, but no call


def test_other_args_in_every_spelling_later_wins() -> None:
    assert _settings("""
        popen_launch_server(M, U, 60, None, ["--tp", "2", "--tp-size=4", "--dp-size", "2",
                            "--expert-parallel-size", "2", "--pp-size", "1", "--nnodes", "1",
                            "--enable-dp-attention", "--mem-fraction-static", "0.8"])
    """) == {"tp": 4, "dp": 2, "ep": 2, "pp": 1, "nnodes": 1, "dp_attention": True}


def test_values_from_names_classes_functions_and_expressions() -> None:
    assert _settings("""
        TP = 2
        BASE = ["--tp", str(TP)]
        class T(CustomTestCase):
            dp = 2
            @classmethod
            def setUpClass(cls):
                cls.ep = 2
                pp = int("1")
                args = BASE + [*["--dp", str(cls.dp)], f"--ep={cls.ep}", "--pp-size", str(pp)]
                cls.p = popen_launch_server(M, U, other_args=args + ["--nnodes 1"])
    """) == {"tp": 2, "dp": 2, "ep": 2, "pp": 1, "nnodes": 1}


def test_what_the_syntax_does_not_decide_is_unresolved() -> None:
    got = _settings("""
        import os
        X = 1
        X = 2
        def test(tp):
            with open(F) as f:
                pass
            n = 0
            for i in range(2):
                n += 1
            other = ["--mem-fraction-static", 1.5]
            popen_launch_server(M, U, other_args=[
                "--tp", str(tp), "--dp", str(X), "--ep", f"{os.sep}", "--pp-size", str(f),
                "--nnodes", str(n), "--tp-size", str(i), "--ep-size", f"{X!r}",
            ] + other)
    """)
    assert got == {"tp": "str(i)", "dp": "str(X)", "ep": 'f"{X!r}"', "pp": "str(f)",
                   "nnodes": "str(n)"}


def test_odd_words_and_values() -> None:
    got = _settings("""
        popen_launch_server(M, U, other_args=["--tp", "two", "--dp", str(1.5), "--ep", int("x"),
                            "--pp-size", str([1]), "--nnodes", str(True), 3, "--tp-size"])
    """)
    assert got == {"tp": "two", "dp": "str(1.5)", "ep": 'int("x")', "pp": "str([1])",
                   "nnodes": "str(True)"}
    server = _one('popen_launch_server(M, U, other_args=["--log", UNKNOWN, 1.5, A + 1, [] + "x"])')
    assert [u.text for u in server.opaque] == ["1.5", "A + 1", '[] + "x"']


def test_an_unknown_word_may_set_any_size() -> None:
    server = _one('popen_launch_server(M, U, other_args=["--tp", "2", *EXTRA])')
    assert server.value("tp") == servers.Unresolved("*EXTRA", 1)  # EXTRA may set it again
    assert _one('popen_launch_server(M, U, other_args=["--tp", "2", *EXTRA, "--tp", "4"])'
                ).value("tp") == 4
    assert isinstance(server.value("dp"), servers.Unresolved)
    assert _one('popen_launch_server(M, U, other_args=ARGS)').opaque[0].text == "ARGS"
    assert _one("popen_launch_server(M, U, **KW)").opaque
    assert _one("popen_launch_server(*A)").opaque
    assert _one('popen_launch_server(M, U, other_args="--tp 2 --dp 2")').settings == {"tp": 2, "dp": 2}
    assert _one('popen_launch_server(M, U, other_args="--tp " + "2")').settings == {"tp": 2}
    assert _one("popen_launch_server(M, U, other_args=7)").opaque
    assert _one('popen_launch_server(M, U, other_args=["--a"] + 3)').opaque
    assert _one("popen_launch_server(M, U)").value("dp_attention") is False


def test_keyword_forms() -> None:
    engine = _one("""
        import sglang as sgl
        def test():
            sgl.Engine(model_path=M, tp_size=2, dp_size=X, enable_dp_attention=True, ep_size="2",
                       nnodes=None, pp_size=True, mem_fraction_static=0.8)
    """)
    assert engine.takes_gpus and engine.settings["tp"] == 2 and engine.settings["dp_attention"] is True
    assert {k for k, v in engine.settings.items() if isinstance(v, servers.Unresolved)} == {
        "dp", "ep", "nnodes", "pp"}
    assert _one("Engine(enable_dp_attention=1, **KW)").opaque
    args = _one("ServerArgs(model_path=M, tp_size=8)")
    assert not args.takes_gpus
    assert _find("""
        def test(self):
            with self.assertRaises(AssertionError):
                ServerArgs(tp_size=4, dp_size=3, enable_dp_attention=True)
    """) == []
    assert _find("""
        def test(self):
            with open(X):
                ServerArgs(tp_size=4)
    """) != []


def test_command_lines() -> None:
    server = _one("""
        import subprocess
        def test():
            cmd = ["python3", "-m", "sglang.launch_server", "--tp", "2"]
            subprocess.Popen(cmd)
            subprocess.run("python -m sglang.launch_server --dp 2".split())
            print("sglang.launch_server")
            run(["sglang.launch_server", "--tp", "8"])
    """)
    assert server.settings == {"tp": 2} and server.form == "sglang.launch_server"
    assert _one('os.system("python3 -m sglang.launch_server --tp 4 --dp=2")').settings == {
        "tp": 4, "dp": 2}


def test_ci_skips_and_unknown_guards() -> None:
    source = """
        import unittest
        @unittest.skip("broken")
        class A(CustomTestCase):
            def test(self):
                popen_launch_server(M, U, other_args=["--tp", "1"])
        class B(CustomTestCase):
            @unittest.skipIf(is_in_ci(), "slow")
            def test(self):
                popen_launch_server(M, U, other_args=["--tp", "2"])
            @unittest.skipUnless(not is_in_ci(), "slow")
            def test_b(self):
                popen_launch_server(M, U, other_args=["--tp", "3"])
            @skipIf(is_hip(), "CUDA only")
            def test_c(self):
                popen_launch_server(M, U, other_args=["--tp", "4"])
            def test_d(self):
                if is_in_amd_ci():
                    self.skipTest("not on AMD")
                popen_launch_server(M, U, other_args=["--tp", "5"])
            def test_e(self):
                if not is_in_ci():
                    return
                x = 1
                if is_in_ci():
                    print(x)
                if is_in_ci():
                    raise unittest.SkipTest("x")
                popen_launch_server(M, U, other_args=["--tp", "6"])
            @unittest.skipIf(get_device_sm() < 90, "old GPU")
            @unittest.skip
            def test_f(self):
                popen_launch_server(M, U, other_args=["--tp", "7"])
            @unittest.skipIf(True, "off")
            def test_g(self):
                popen_launch_server(M, U, other_args=["--tp", "8"])
            @unittest.skipIf(get_device_sm() < 90, "old GPU")
            @other(1)
            @unittest.skipIf(False, "on")
            @unittest.skipIf(not X, "unknown")
            def test_h(self):
                popen_launch_server(M, U, other_args=["--tp", "9"])
            @staticmethod
            def test_i():
                popen_launch_server(M, U, other_args=["--tp", "10"])
    """
    on_rocm = _find(source, "rocm")
    assert [(s.settings["tp"], s.guard) for s in on_rocm] == [(9, "get_device_sm() < 90"), (10, None)]
    on_cuda = _find(source, "cuda")
    assert [s.settings["tp"] for s in on_cuda] == [4, 5, 9, 10]


def _check(text: str, gpus: int | None = 4) -> par_server.Checked:
    return par_server.check(_one(text), "test/test_s.py", gpus)


def test_placement_against_the_runner() -> None:
    over = _check('popen_launch_server(M, U, other_args=["--tp", "4", "--pp-size", "2"])')
    assert [(f.rule, f.severity) for f in over.findings] == [("PAR003", Severity.ERROR)]
    assert "needs 8 GPUs (TP 4 x PP 2)" in over.findings[0].message and over.state == "checked"
    dp = _check('Engine(tp_size=2, dp_size=4, enable_dp_attention=False)')
    assert "TP 2 x PP 1 x DP 4" in dp.findings[0].message
    # DP copies are not counted unless DP attention is explicitly off
    assert _check('popen_launch_server(M, U, other_args=["--tp", "4", "--dp", "2"])').findings == []
    assert _check('popen_launch_server(M, U, other_args=["--tp", "8"])', None).findings == []
    assert _check('popen_launch_server(M, U, other_args=["--tp", "8", "--nnodes", "2"])').findings == []
    assert _check('popen_launch_server(M, U, other_args=["--tp", "0"])').findings == []
    assert _check("ServerArgs(tp_size=8)").findings == []


def test_ep_and_dp_attention_constraints() -> None:
    ep = _check('popen_launch_server(M, U, other_args=["--tp", "4", "--ep", "8"])', 8)
    assert [(f.rule, f.severity) for f in ep.findings] == [("PAR005", Severity.ERROR)]
    assert ep.findings[0].message.startswith("tp_size 4 must be divisible by ep_size 8: ")
    odd = _check('popen_launch_server(M, U, other_args=["--tp", "6", "--ep", "4"])', 8)
    assert [(f.rule, f.severity) for f in odd.findings] == [("PAR005", Severity.WARNING)]
    assert _check('Engine(tp_size=4, ep_size=4)').findings == []
    attention = _check('Engine(tp_size=4, dp_size=3, enable_dp_attention=True)')
    assert [f.rule for f in attention.findings] == ["PAR020"]
    assert _check('Engine(tp_size=4, dp_size=0, enable_dp_attention=True)').findings[0].rule == "PAR020"
    assert _check('Engine(tp_size=4, dp_size=2, enable_dp_attention=True)').findings == []
    assert "DP attention" in par_server.describe(_one('Engine(tp_size=4, enable_dp_attention=True)'))


def test_ep_spanning_all_to_all_backends_set_ep_to_tp() -> None:
    # SGLang sets ep_size := tp_size for these backends (arg_groups/overrides.py: _a2a_ep_size)
    for backend in ("deepep", "mori", "mooncake", "flashinfer"):
        args = f'["--tp", "4", "--ep", "8", "--moe-a2a-backend", "{backend}"]'
        assert _check(f"popen_launch_server(M, U, other_args={args})", 8).findings == []
    assert _check('Engine(tp_size=4, ep_size=8, moe_a2a_backend="deepep")').findings == []
    assert _check('Engine(tp_size=4, ep_size=8, enable_waterfill=True)').findings == []
    other = _check('popen_launch_server(M, U, other_args=["--tp", "4", "--ep", "8", '
                   '"--moe-a2a-backend=none"])', 8)
    assert [f.rule for f in other.findings] == ["PAR005"]
    unknown = _check('popen_launch_server(M, U, other_args=["--tp", "4", "--ep", "8", '
                     '"--moe-a2a-backend", BACKEND])', 8)
    assert [f.rule for f in unknown.findings] == ["PAR019"] and unknown.state == "partial"


def test_an_unknown_tp_leaves_par005_checked_when_there_is_no_ep() -> None:
    unknown_tp = _check("popen_launch_server(M, U, other_args=['--tp', str(TP)])")
    assert [f.rule for f in unknown_tp.findings] == ["PAR019"]
    assert "PAR003 not checked" in unknown_tp.findings[0].message


def test_unknown_values_leave_rules_unchecked() -> None:
    partial = _check('popen_launch_server(M, U, other_args=["--tp", "2", "--ep", str(EP)])')
    assert [f.rule for f in partial.findings] == ["PAR019"] and partial.state == "partial"
    assert "`str(EP)`" in partial.findings[0].message and "PAR005" in partial.findings[0].message
    unchecked = _check("popen_launch_server(M, U, other_args=ARGS)")
    assert unchecked.state == "unchecked"
    assert par_server.describe(_one("popen_launch_server(M, U, other_args=ARGS)")).startswith("TP?")
    flag = _check("Engine(tp_size=2, enable_dp_attention=X)")
    assert flag.state == "partial"
    guarded = par_server.check(_one("""
        @unittest.skipIf(X, "y")
        def test():
            Engine(tp_size=2)
    """), "test/test_s.py", 4)
    assert guarded.state == "unchecked" and "depends on `X`" in guarded.findings[0].message


def test_deep_self_reference_stops() -> None:
    server = _one("""
        class T:
            a = a
            def test(self):
                Engine(tp_size=self.a)
    """)
    assert isinstance(server.settings["tp"], servers.Unresolved)
    assert isinstance(_one("def test():\n    Engine(tp_size=self.x)\n").settings["tp"],
                      servers.Unresolved)


def _outcome(root: Path, text: str, suite: str = "stage-b-test-1-gpu-small-amd",
             **launch_config: object) -> launch.LaunchOutcome:
    (root / "test").mkdir(parents=True, exist_ok=True)
    (root / "test/test_s.py").write_text(textwrap.dedent(text))
    config = defaults()
    config = config.model_copy(update={"launch": config.launch.model_copy(update=launch_config)})
    marker = Marker("test/test_s.py", 1, "register_amd_ci", "rocm", 0, 60.0, suite, (), False, None,
                    None)
    return launch.analyze_launch(Snapshot(FolderTree(root), config), marker)


def test_a_server_test_is_checked_without_the_evaluator(tmp_path: Path) -> None:
    outcome = _outcome(tmp_path, """
        class T(CustomTestCase):
            @classmethod
            def setUpClass(cls):
                cls.p = popen_launch_server(M, U, other_args=["--tp", "2"])
    """)
    assert not outcome.no_launch and outcome.state == "checked"
    assert [f.rule for f in outcome.findings] == ["PAR003"]
    assert outcome.signature is not None and ("tp", 2) in outcome.signature[0]
    off = _outcome(tmp_path / "off", "popen_launch_server(M, U, other_args=['--tp', '2'])\n",
                   enabled=False)
    assert off.findings == [] and off.state is None
    plain = _outcome(tmp_path / "plain", "def test():\n    assert 1\n")
    assert plain.no_launch


def test_servers_beside_a_training_launch(tmp_path: Path) -> None:
    outcome = _outcome(tmp_path, """
        execute_train(train_args="--actor-num-nodes 1 --actor-num-gpus-per-node 4 --colocate")
        def test():
            Engine(tp_size=2)
    """, suite="stage-c-4-gpu-mi350")
    assert outcome.states == ("checked", "checked") and outcome.findings == []
    assert outcome.signature is not None and len(outcome.signature) == 2


def test_changes_of_the_argument_list_are_replayed() -> None:
    assert _settings("""
        def test():
            args = ["--tp", "2"]
            args.extend(["--dp", "2"])
            args.append("--ep")
            args.append("2")
            args.insert(0, "--mem-fraction-static")
            args.insert(1, "0.8")
            args += ["--pp-size", "1"]
            args.remove("--pp-size")
            args.remove("1")
            if is_hip():
                args.extend(["--tp", "8"])
            else:
                args.extend(["--tp", "4"])
            with ctx():
                args.append("--enable-dp-attention")
            popen_launch_server(M, U, other_args=args)
            args.append("--tp")  # after the launch
            args.append("16")
    """) == {"tp": 8, "dp": 2, "ep": 2, "dp_attention": True}


def test_a_change_under_an_undecided_condition_decides_what_differs() -> None:
    server = _one("""
        def launch(is_tp2, big):
            args = ["--log-level-http", "warning", "--ep", "2"]
            if is_tp2:
                args.extend(["--tp", "2"])
            if big:
                args.append("--trust-remote-code")
            return popen_launch_server(M, U, other_args=args)
    """)
    assert server.settings == {"tp": servers.Unresolved("is_tp2", 4), "ep": 2}
    assert par_server.check(server, "t", 8).state == "partial"


def test_a_change_that_is_not_replayed_leaves_the_value_unknown() -> None:
    cases = {
        "for x in extra:\n        args.append(x)": "args.append(x)",
        "helper(args)": "helper(args)",
        "args.extend(cls.more)": "args.extend(cls.more)",
        "args[0] = '--dp'": "args",  # a store into it: not bound once
        "del args[0]": "del args[0]",
        "args.sort()": "args.sort()",
        "other = args\n    other.append('4')": "other = args",
        "args.remove('--dp')": "args.remove('--dp')",  # not there: ValueError
        "args.insert(k, '8')": "args.insert(k, '8')",
        "try:\n        args.pop()\n    except E:\n        pass": "args.pop()",
        "def more():\n        args.append('8')\n    more()": "args.append('8')",
    }
    for change, named in cases.items():
        server = _one(f"""
def test(extra, k):
    args = ["--tp", "2"]
    {change}
    popen_launch_server(M, U, other_args=args)
""")
        value = server.value("tp")
        assert isinstance(value, servers.Unresolved) and value.text == named, change
        assert par_server.check(server, "t", 8).state != "checked", change


def test_a_module_list_changed_elsewhere_is_not_known() -> None:
    module_level = """
        ARGS = ["--tp", "2"]
        ARGS.append("--dp")
        ARGS.append("2")
        def test():
            popen_launch_server(M, U, other_args=ARGS)
    """
    assert _settings(module_level) == {"tp": 2, "dp": 2}
    server = _one("""
        ARGS = ["--tp", "2"]
        def setup():
            ARGS.extend(["--tp", "8"])
        def test():
            popen_launch_server(M, U, other_args=ARGS)
    """)
    assert server.value("tp") == servers.Unresolved('ARGS.extend(["--tp", "8"])', 4)
    attribute = _one("""
        class T:
            @classmethod
            def setUpClass(cls):
                cls.args = ["--tp", "2"]
                cls.args.extend(["--tp", "8"])
                popen_launch_server(M, U, other_args=cls.args)
    """)
    assert attribute.value("tp") == servers.Unresolved('cls.args.extend(["--tp", "8"])', 6)


def test_words_added_after_unknown_ones_still_set_their_flags() -> None:
    server = _one("""
        def test(config):
            args = list(config.other_args)
            args.extend(["--dp", "2"])
            args += ["--ep", "2"]
            popen_launch_server(M, U, other_args=args)
    """)
    assert server.settings["dp"] == 2 and server.settings["ep"] == 2
    assert server.value("tp") == servers.Unresolved("list(config.other_args)", 3)
    removed = _one("""
        def test(config):
            args = list(config.other_args)
            args.remove("--tp")
            popen_launch_server(M, U, other_args=args)
    """)
    assert removed.value("tp") == servers.Unresolved('args.remove("--tp")', 4)


def test_arguments_of_unexpected_types_leave_the_launch_unchecked() -> None:
    from bot.analysis import engine  # noqa: F401 - the rules' declarations

    odd = ["7", "None", '{"--tp": 2}', "[None]", "[True]", "[[\"--tp\", \"2\"]]", "1.5",
           "b'--tp 2'", "(x for x in X)", "lambda: 1", '["--tp", 2.0]', "..."]
    for text in odd:
        server = _one(f"popen_launch_server(M, U, other_args={text})")
        checked = par_server.check(server, "test/test_s.py", 8)
        assert checked.state != "checked", text
        assert any(f.rule == "PAR019" and f.line == 1 for f in checked.findings), text
    for text in ['"8"', "8.0", "None", "[8]", "True"]:
        server = _one(f"Engine(model_path=M, tp_size={text})")
        checked = par_server.check(server, "test/test_s.py", 8)
        assert checked.state != "checked", text
        assert any(f.rule == "PAR019" and text in f.message for f in checked.findings), text


def test_sglang_launch_helpers_are_server_launches() -> None:
    launchers = frozenset(defaults().launch.servers)
    found = servers.find(_module("""
        def test():
            popen_launch_pd_server(M, P, 60, other_args=["--tp", "4", "--disaggregation-mode",
                                                         "prefill"])
            popen_launch_pd_server(M, D, 60, None, ["--tp", "2", "--dp", "2"])
            run_bench_serving(M, 10, 1.0, ["--tp", "8"])
            run_bench_serving(model=M, num_prompts=1, request_rate=1,
                              other_server_args=["--ep", "2", "--tp", "2"])
        MODELS = [
            ModelLaunchSettings(M, tp_size=8),
            ModelLaunchSettings(M, 2, ["--tp", "4"]),
            ModelLaunchSettings(M, tp_size=8, extra_args=["--tp-size", "4"]),
            ModelLaunchSettings(M),
            ModelLaunchSettings(M, tp_size=N, extra_args=["--dp", "2"]),
            ModelLaunchSettings(M, tp_size=2, extra_args=EXTRA),
        ]
    """), "rocm", launchers, frozenset())
    sizes = [(s.form, s.value("tp"), s.value("dp"), s.value("ep")) for s in found]
    unknown_n = servers.Unresolved("N", 14)
    unknown_extra = servers.Unresolved("EXTRA", 15)
    assert sizes == [
        ("popen_launch_pd_server", 4, 1, 1), ("popen_launch_pd_server", 2, 2, 1),
        ("run_bench_serving", 8, 1, 1), ("run_bench_serving", 2, 1, 2),
        ("ModelLaunchSettings", 8, 1, 1), ("ModelLaunchSettings", 4, 1, 1),
        ("ModelLaunchSettings", 8, 1, 1),  # `--tp-size 4`, then `--tp 8` added after it
        ("ModelLaunchSettings", 1, 1, 1), ("ModelLaunchSettings", unknown_n, 2, 1),
        ("ModelLaunchSettings", unknown_extra, unknown_extra, unknown_extra),
    ]
    assert par_server.check(found[2], "t", 4).findings[0].rule == "PAR003"  # TP 8 on 4 GPUs
    assert [par_server.check(s, "t", 8).state for s in found[-2:]] == ["partial", "unchecked"]


def test_settings_whose_arguments_hold_a_word_not_known_leave_tp_not_known() -> None:
    """SGLang adds `--tp tp_size` only when `extra_args` holds no `--tp`; with a word the reader
    cannot know among them (an imported port, say) the TP is not known: never the default 1,
    which made a false PAR020 (DP 4 over TP 1) on five SGLang tests that ask for TP 4."""
    found = servers.find(_module("""
        MODELS = [
            ModelLaunchSettings(M, tp_size=4, extra_args=["--nccl-port", PORT, "--dp", "4",
                                                           "--enable-dp-attention"]),
            ModelLaunchSettings(M, tp_size=4, extra_args=["--dp", "4", "--enable-dp-attention"]),
        ]
    """), "rocm", frozenset(defaults().launch.servers), frozenset())
    unsure, known = (par_server.check(s, "t", 4) for s in found)
    assert [f.rule for f in unsure.findings if f.severity == Severity.ERROR] == []
    assert unsure.state != "checked"
    assert known.findings == [] and known.state == "checked"


def test_words_not_known_after_a_flag_are_not_its_value_alone() -> None:
    # `*EXTRA` may be `["4", "--tp", "8"]`: the DP size and the TP size are not known
    for args in ('["--dp", *EXTRA]', '["--dp"] + EXTRA', 'ARGS'):
        got = _one(f"""
            ARGS = ["--dp"]
            ARGS.extend(EXTRA)
            def test():
                popen_launch_server(M, U, other_args={args})
        """)
        assert isinstance(got.value("dp"), servers.Unresolved), args
        assert isinstance(got.value("tp"), servers.Unresolved), args
    # one item of a list is one word: the flag's value, nothing more
    one = _one('def test(n):\n    popen_launch_server(M, U, other_args=["--dp", n, "--tp", "2"])\n')
    assert isinstance(one.value("dp"), servers.Unresolved) and one.value("tp") == 2


def test_a_class_attribute_changed_by_a_subclass_through_an_alias_is_not_known() -> None:
    got = _find("""
        class TestA(CustomTestCase):
            items = ["--dp", "2"]
            def test_a(self):
                popen_launch_server(M, U, other_args=self.items)
        class TestB(TestA):
            def test_b(self):
                extra = self.items
                extra.extend(["--dp", "4"])
    """)
    assert len(got) == 1 and isinstance(got[0].value("dp"), servers.Unresolved)
