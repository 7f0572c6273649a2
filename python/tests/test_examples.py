"""The tight-binding example (examples/python/graphene.py) on a small lattice: every state of the window, the
closed form's (the script exits 0 only then)."""
import pathlib
import runpy
import sys

import pytest

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "python" / "graphene.py"


def test_graphene_window(comm, capsys, monkeypatch):
    monkeypatch.setattr(sys, "argv", [str(EXAMPLE), "12", "10", "0.8"])
    with pytest.raises(SystemExit) as stop:
        runpy.run_path(str(EXAMPLE), run_name="__main__")
    assert stop.value.code == 0
    out = capsys.readouterr().out
    assert "240 sites, 32 states in [-0.8, 0.8] (the closed form: 32;" in out, out
