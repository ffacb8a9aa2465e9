"""ral_torch.trace: a trace of RAL's work from Python (include/ral/trace.h writes the file;
tests/cli/trace_test.py checks its structure in depth)."""

import json

import pytest
import torch

import ral_torch


def events(path):
    with open(path) as f:
        return json.load(f)["traceEvents"]


def test_trace_records_executions_and_calls_of_modules_loaded_inside(load, tmp_path):
    path = tmp_path / "t.json"
    a, b = torch.randn(2, 3), torch.randn(2, 3)
    with ral_torch.trace(path):
        m = load("add_r2")  # loaded while recording: its RAL calls are wrapped
        assert torch.equal(m(a, b), a + b)
        assert torch.equal(m(b, a), a + b)
    got = events(path)
    executions = [e for e in got if e["cat"] == "execution"]
    assert len(executions) == 2 and all(e["name"] == "add_r2" for e in executions)
    calls = {e["name"] for e in got if e["cat"] == "ral"}
    assert {"ral_recv_input", "ral_alloc", "ral_send_output"} <= calls
    # Stopped: nothing more is recorded, and a new trace can start.
    m(a, b)
    with ral_torch.trace(tmp_path / "u.json"):
        m(a, b)
    assert len([e for e in events(tmp_path / "u.json") if e["cat"] == "execution"]) == 1


def test_trace_records_calls_of_modules_linked_before_it(load, tmp_path):
    m = load("add_r2")
    a, b = torch.randn(2, 3), torch.randn(2, 3)
    assert torch.equal(m(a, b), a + b)  # linked now, with no trace recording
    with ral_torch.trace(tmp_path / "t.json"):
        assert torch.equal(m(a, b), a + b)
    calls = [e["name"] for e in events(tmp_path / "t.json") if e["cat"] == "ral"]
    assert {"ral_recv_input", "ral_alloc", "ral_send_output"} <= set(calls), calls
    assert torch.equal(m(a, b), a + b)  # and unwrapped again afterwards


def test_trace_errors_leave_no_trace_running(load, tmp_path):
    with pytest.raises(RuntimeError, match="already recording"):
        with ral_torch.trace(tmp_path / "outer.json"):
            with ral_torch.trace(tmp_path / "inner.json"):
                pass
    # The outer trace stopped and was written despite the error.
    assert (tmp_path / "outer.json").exists()
    with pytest.raises(RuntimeError, match="cannot open"):
        with ral_torch.trace(tmp_path / "no" / "such" / "dir.json"):
            load("add_r2")(torch.ones(1, 1), torch.ones(1, 1))
    # A failed write still stops recording: the next trace starts.
    with ral_torch.trace(tmp_path / "next.json"):
        pass
    assert (tmp_path / "next.json").exists()
