"""ZEHAL_SIM_* variables: a malformed value makes the sim backend unavailable, naming it."""

from __future__ import annotations

from conftest import run_python


def test_a_malformed_sim_variable_is_the_reason_sim_is_unavailable():
    out = run_python(
        "import zehal\n"
        "sim = next(b for b in zehal.backends() if b.name == 'sim')\n"
        "print(sim.available)\nprint(sim.reason)",
        env={"ZEHAL_SIM_COPY_ENGINES": "two"},
    )
    assert out.returncode == 0, out.stderr
    available, reason = out.stdout.splitlines()[:2]
    assert available == "False"
    assert reason.startswith('ZEHAL_SIM_COPY_ENGINES = "two"'), reason


def test_zehal_info_shows_the_malformed_sim_variable():
    out = run_python(
        "import sys\nfrom zehal import cli\nsys.exit(cli.main(['info']))",
        env={"ZEHAL_BACKEND": "sim", "ZEHAL_SIM_MEMORY_BYTES": "1GiB"},
    )
    assert 'ZEHAL_SIM_MEMORY_BYTES = "1GiB"' in out.stdout + out.stderr, (out.stdout, out.stderr)


def test_an_empty_sim_variable_counts_as_unset():
    out = run_python(
        "import zehal\nprint(next(b for b in zehal.backends() if b.name == 'sim').available)",
        env={"ZEHAL_SIM_COPY_ENGINES": ""},
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "True"
