"""The simulator's policy registry."""

import json

import pytest

from optsched.cli import main
from optsched.exceptions import InvalidOptionError, UnknownNameError
from optsched.sim import FIFO, Policy, get_policy, policy_registry, register_policy
from optsched.sim.registry import _POLICIES


def test_baselines_are_registered_and_names_normalised():
    reg = policy_registry()
    assert list(reg)[:4] == ["fifo", "sjf", "srtf", "las"] and all(reg[n].paper is None for n in list(reg)[:4])
    assert get_policy("SRTF").name == "srtf"


def test_register_a_policy_with_its_needs_and_refuse_a_taken_name():
    class Mine(Policy):
        """My policy."""

        name = "mine"

    try:
        spec = register_policy("my-policy", Mine, needs=("model_profile",), paper="asrpt")
        assert spec.description == "My policy." and policy_registry()["my-policy"].needs == ("model_profile",)
        assert isinstance(get_policy("my_policy"), Mine)
        with pytest.raises(InvalidOptionError, match="registered already"):
            register_policy("my-policy", FIFO)
    finally:
        _POLICIES.pop("my-policy", None)
    with pytest.raises(UnknownNameError, match="Unknown policy 'my-policy'"):
        get_policy("my-policy")


def test_info_lists_the_policies(capsys):
    assert main(["info", "--json"]) == 0
    names = [p["name"] for p in json.loads(capsys.readouterr().out)["policies"]]
    assert {"fifo", "sjf", "srtf", "las"} <= set(names)


BAD_VALUES = [-3, 0, float("nan"), float("inf"), "", "x", None, True, 1e308, [1], {"a": 1}]


def test_every_option_of_every_policy_refuses_bad_values_cleanly():
    """Each registered policy, given each option any policy takes (and one none takes) with each
    malformed value, builds or raises an optsched error, never a TypeError/ValueError from inside
    (CI's hypothesis find: lazer-fixed given period=0; A-SRPT's tau='x', history=0)."""
    import warnings

    import optsched
    from optsched.exceptions import OptschedError
    from optsched.sim.registry import get_policy, policy_options, policy_registry

    optsched.load_plugins()
    names = sorted(policy_registry())
    options = sorted({o for n in names for o in policy_options(n)} | {"nope"})
    raised = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in names:
            for option in options:
                for value in BAD_VALUES:
                    try:
                        get_policy(name, **{option: value})
                    except OptschedError:
                        pass
                    except Exception as e:  # the finding: any other exception
                        raised.append(f"{name}({option}={value!r}): {type(e).__name__}: {e}")
    assert not raised, raised[:10]


def test_paper_policy_found_in_a_fresh_interpreter_without_load_plugins():
    """``get_policy("lazer")`` and the listings work in a new interpreter that imported only the
    registry: a paper's policy is found without the user calling ``optsched.load_plugins()``."""
    import subprocess
    import sys

    code = (
        "from optsched.sim.registry import get_policy, policy_names, policy_options\n"
        "print(type(get_policy('lazer')).__name__)\n"
        "print('asrpt-a-srpt' in policy_names())\n"
        "print(policy_options('elastic_online') is None or isinstance(policy_options('elastic-online'), list))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.split()
    assert lines[1:] == ["True", "True"]
    assert lines[0] != ""


def test_unknown_policy_still_refused_after_loading_the_papers():
    with pytest.raises(UnknownNameError, match="lazer"):
        get_policy("lazr")
